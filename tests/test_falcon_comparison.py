"""Falcon private compare, wrap, DReLU, ReLU: exact against plaintext oracles."""

import numpy as np
import pytest

from ppnn.core.ledger import Ledger
from ppnn.protocols.falcon import (
    Deviation,
    Falcon,
    MaliciousAbort,
    bits_of,
    drelu,
    private_compare,
    relu,
    select_share,
    wrap3_protocol,
)
from ppnn.protocols.falcon.algebra import wrap3
from ppnn.protocols.falcon.runtime import PARTIES

EDGE = np.array([0, 1, -1, 2, -2, 2**31 - 1, -2**31, -2**31 + 1, 2**30, -2**30, 8192, -8192],
                dtype=np.int64)


def _inputs(fal, seed, n=40):
    R = fal.ring
    rng = np.random.default_rng(seed)
    return np.concatenate([R.from_signed(EDGE), R.random(rng, n)])


@pytest.mark.parametrize("seed", range(3))
def test_private_compare_exact_including_equality_and_extremes(seed):
    fal = Falcon(np.random.default_rng(seed))
    R, F = fal.ring, fal.field
    rng = np.random.default_rng(seed + 10)
    r = np.concatenate([R.random(rng, 30), [0, 0, 2**32 - 1, 2**32 - 1, 5, 5, 6]]).astype(np.uint64)
    x = np.concatenate([R.random(rng, 30), [0, 2**32 - 1, 0, 2**32 - 1, 5, 4, 5]]).astype(np.uint64)
    x[:10] = r[:10]  # equality cases
    n = r.size
    for beta in (np.zeros(n, np.uint64), np.ones(n, np.uint64), rng.integers(0, 2, n)):
        beta = beta.astype(np.uint64)
        out = private_compare(fal, fal.share(bits_of(R, r), F), x, fal.share(beta, fal.bit),
                              fal.share(beta, F), fal.share(F.random_nonzero(rng, n), F))
        assert np.array_equal(fal.reveal(out), (r > x).astype(np.uint64))


@pytest.mark.parametrize("mal", [False, True])
def test_private_compare_position_major_layout_is_the_same_protocol(mal):
    """Wrap3 hands private compare the bits of r as (ell, n), consumed in place: the same
    outputs, the same messages (sizes, rounds) as the (n, ell) layout, and the material is
    not altered when the ledger records values (the transcript holds it)."""
    R = Falcon(np.random.default_rng(0)).ring
    rng = np.random.default_rng(5)
    n = 300
    r, x = R.random(rng, n), R.random(rng, n)
    x[:20] = r[:20]
    beta, m = rng.integers(0, 2, n).astype(np.uint64), rng.integers(1, 37, n).astype(np.uint64)
    outs, books = [], []
    for major in (False, True):
        fal = Falcon(np.random.default_rng(1), malicious=mal,
                     ledger=Ledger(PARTIES, record_values=major))
        F = fal.field
        bits = bits_of(R, r, dtype=F.dtype)
        rb = fal.share(np.ascontiguousarray(bits.T) if major else bits, F)
        kept = rb.components.copy()
        out = private_compare(fal, rb, x, fal.share(beta, fal.bit), fal.share(beta, F),
                              fal.share(m, F), position_major=major)
        assert np.array_equal(rb.components, kept)  # recorded: a copy was consumed
        outs.append(fal.reveal(out))
        books.append([(mm.sender, mm.receiver, mm.bits, mm.round) for mm in fal.ledger.messages])
    assert np.array_equal(outs[0], (r > x).astype(np.uint64))
    assert np.array_equal(outs[1], outs[0])
    assert books[0] == books[1]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("mal", [False, True])
def test_wrap3_matches_exact_wrap_mod_2(seed, mal):
    fal = Falcon(np.random.default_rng(seed), malicious=mal)
    a = fal.share(_inputs(fal, seed))
    theta = fal.reveal(wrap3_protocol(fal, a))
    assert np.array_equal(theta, wrap3(fal.ring, *a.components))


def test_msb_identity_eq11():
    """MSB(a) = MSB(a0) ^ MSB(a1) ^ MSB(a2) ^ Wrap3(2a0, 2a1, 2a2): checked on plain shares."""
    fal = Falcon(np.random.default_rng(0))
    R = fal.ring
    a = fal.share(R.random(np.random.default_rng(1), 100000))
    C = a.components
    lhs = R.msb(a.reveal())
    rhs = R.msb(C[0]) ^ R.msb(C[1]) ^ R.msb(C[2]) ^ wrap3(R, *R.mul(C, 2)).astype(np.uint8)
    assert np.array_equal(lhs, rhs)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("mal", [False, True])
def test_drelu_and_relu_exact(seed, mal):
    fal = Falcon(np.random.default_rng(seed), malicious=mal)
    R = fal.ring
    x = _inputs(fal, seed)
    sx = fal.share(x)
    signed = R.to_signed(x)
    assert np.array_equal(fal.reveal(drelu(fal, sx)), (signed >= 0).astype(np.uint64))
    y, d = relu(fal, sx)
    assert np.array_equal(R.to_signed(fal.reveal(y)), np.maximum(signed, 0))
    assert np.array_equal(fal.reveal(d), (signed >= 0).astype(np.uint64))


@pytest.mark.parametrize("mal", [False, True])
def test_row_at_a_time_and_whole_array_products_agree(monkeypatch, mal):
    """Z_p products and checks go a row at a time for large rows (ROW_MIN), in whole-array
    steps for small ones: both exact, with the same messages; a tampered product is caught
    either way."""
    from ppnn.protocols.falcon import runtime

    outs, books = [], []
    for row_min in (1, 1 << 30):
        monkeypatch.setattr(runtime, "ROW_MIN", row_min)
        fal = Falcon(np.random.default_rng(2), malicious=mal)
        R = fal.ring
        x = _inputs(fal, 2, n=200)
        y, _ = relu(fal, fal.share(x))
        assert np.array_equal(R.to_signed(fal.reveal(y)), np.maximum(R.to_signed(x), 0))
        outs.append(fal.reveal(y))
        books.append([(m.sender, m.receiver, m.bits, m.round) for m in fal.ledger.messages])
    assert np.array_equal(outs[0], outs[1]) and books[0] == books[1]
    if mal:  # a product of private compare's step 5 sent inconsistently, row at a time
        monkeypatch.setattr(runtime, "ROW_MIN", 1)
        step = "relu/drelu/wrap3/private_compare::pc step 5: u = (-1)^beta (S - T)"
        fal = Falcon(np.random.default_rng(2), malicious=True,
                     deviation=Deviation("P1", step, "inconsistent_send"))
        with pytest.raises(MaliciousAbort, match="multiplication check"):
            relu(fal, fal.share(_inputs(fal, 2, n=200)))
        assert fal.deviation.fired


def test_relu_on_2d_shapes_and_fixed_point_values():
    fal = Falcon(np.random.default_rng(3), malicious=True)
    v = np.random.default_rng(4).normal(size=(3, 4, 5))
    y, _ = relu(fal, fal.share_fixed(v))
    assert np.allclose(fal.reveal_fixed(y), np.maximum(fal.fp.decode(fal.fp.encode(v)), 0))


def test_semi_honest_and_malicious_give_identical_outputs():
    outs = []
    for mal in (False, True):
        fal = Falcon(np.random.default_rng(7), malicious=mal)
        x = fal.share_fixed(np.linspace(-3, 3, 25))
        y, _ = relu(fal, x)
        z = fal.mul_fixed(y, x)
        outs.append((fal.reveal(y), fal.reveal(z)))
    assert np.array_equal(outs[0][0], outs[1][0]) and np.array_equal(outs[0][1], outs[1][1])


def test_select_share():
    fal = Falcon(np.random.default_rng(5), malicious=True)
    R = fal.ring
    rng = np.random.default_rng(6)
    x, y, b = R.random(rng, 30), R.random(rng, 30), rng.integers(0, 2, 30).astype(np.uint64)
    out = select_share(fal, fal.share(x), fal.share(y), fal.share(b, fal.bit))
    assert np.array_equal(fal.reveal(out), np.where(b == 1, y, x))
