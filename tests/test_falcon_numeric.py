"""Falcon max-pool, pow, division, inverse sqrt, batch norm vs plaintext oracles."""

import numpy as np
import pytest

from ppnn.protocols.falcon import Falcon
from ppnn.protocols.falcon.numeric import (
    BN_EPS,
    batchnorm_backward,
    batchnorm_forward,
    divide,
    inverse_sqrt,
    pow2_bound,
)
from ppnn.protocols.falcon.pooling import maxpool, maxpool_backward


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("mal", [False, True])
def test_maxpool_and_derivative(seed, mal):
    fal = Falcon(np.random.default_rng(seed), malicious=mal)
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 6))
    v = rng.normal(size=(7, k)) * 3
    v[0] = 0.0  # ties: the later element wins (DReLU(0) = 1)
    v[1, :] = -2.0**17 + 1  # most negative supported difference range
    enc = fal.fp.decode(fal.fp.encode(v))
    mx, ind = maxpool(fal, fal.share_fixed(v))
    assert np.array_equal(fal.reveal_fixed(mx), enc.max(1))
    last_arg = k - 1 - np.argmax(enc[:, ::-1], axis=1)
    assert np.array_equal(fal.reveal(ind), np.eye(k, dtype=np.uint64)[last_arg])
    g = rng.normal(size=7)
    back = fal.reveal_fixed(maxpool_backward(fal, ind, fal.share_fixed(g)))
    assert np.allclose(back, np.eye(k)[last_arg] * fal.fp.decode(fal.fp.encode(g))[:, None])


def test_maxpool_bad_shape():
    fal = Falcon(np.random.default_rng(0))
    with pytest.raises(ValueError, match="windows of shape"):
        maxpool(fal, fal.share_fixed(np.zeros(4)))


@pytest.mark.parametrize("mal", [False, True])
def test_pow_reveals_exactly_the_bounding_power(mal):
    fal = Falcon(np.random.default_rng(1), malicious=mal)
    R = fal.ring
    b = np.array([1, 2, 3, 4, 1023, 1024, 2**20 + 5, 2**30, 2**31 - 1], dtype=np.uint64)
    alpha = pow2_bound(fal, fal.share(b))
    assert np.array_equal(alpha, np.floor(np.log2(b.astype(float))).astype(int))
    # only the alpha bits are opened: 5 openings of one bit per element
    opened = [m for m in fal.ledger.messages if "pow bit" in m.what]
    assert len({m.what for m in opened}) == 5 and all(m.bits == b.size for m in opened)
    assert R.k == 32


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("mal", [False, True])
def test_division_within_bound(seed, mal):
    fal = Falcon(np.random.default_rng(seed), malicious=mal)
    rng = np.random.default_rng(seed)
    a = rng.uniform(-3.9, 3.9, 30)
    b = np.exp(rng.uniform(np.log(2.0**-7), np.log(2.0**15), 30))
    b[:4] = [2.0**-8, 0.5, 1.0, 2.0**15]
    a[0] = 2.0**-8 * 3  # keeps |a/b| in range for the smallest divisor
    q = fal.reveal_fixed(divide(fal, fal.share_fixed(a), fal.share_fixed(b)))
    ea, eb = fal.fp.decode(fal.fp.encode(a)), fal.fp.decode(fal.fp.encode(b))
    ref = ea / eb  # the inputs as encoded (b = 0.03 carries a 0.4% encoding error itself)
    # method error (5e-5 relative) + a few ulps, magnified by the final 2^(f-alpha-1) scaling
    assert np.all(np.abs(q - ref) <= 1e-3 * np.abs(ref) + 8 * 2.0**-13 * np.maximum(1, 1 / b))


@pytest.mark.parametrize("bad", [0.0, -1.0, 2.0**-10, 2.0**17])
def test_division_rejects_divisors_outside_supported_range(bad):
    fal = Falcon(np.random.default_rng(0), malicious=True)
    with pytest.raises(ValueError, match="divisor b outside the supported range"):
        divide(fal, fal.share_fixed([1.0, 1.0]), fal.share_fixed([1.0, bad]))


def test_division_shape_mismatch():
    fal = Falcon(np.random.default_rng(0))
    with pytest.raises(ValueError, match="equal shapes"):
        divide(fal, fal.share_fixed([1.0]), fal.share_fixed([1.0, 2.0]))


@pytest.mark.parametrize("mal", [False, True])
def test_inverse_sqrt(mal):
    fal = Falcon(np.random.default_rng(2), malicious=mal)
    b = np.array([2.0**-6, 0.01, 0.3, 1.0, 2.0, 7.5, 100.0, 1000.0, 60000.0])
    got = fal.reveal_fixed(inverse_sqrt(fal, fal.share_fixed(b)))
    ref = 1 / np.sqrt(b)
    assert np.all(np.abs(got - ref) <= 3e-3 * ref + 4 * 2.0**-13)
    with pytest.raises(ValueError, match="positive input"):
        inverse_sqrt(fal, fal.share_fixed([0.0]))


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("mal", [False, True])
def test_batchnorm_forward_backward(seed, mal):
    fal = Falcon(np.random.default_rng(seed), malicious=mal)
    rng = np.random.default_rng(seed)
    m, C = 32, 3
    x = rng.normal(1.0, [0.2, 1.0, 4.0], size=(m, C))
    gamma, beta = rng.uniform(0.5, 1.5, C), rng.uniform(-0.5, 0.5, C)
    dy = rng.normal(0, 0.2, size=(m, C))
    y, cache = batchnorm_forward(fal, fal.share_fixed(x), fal.share_fixed(gamma),
                                 fal.share_fixed(beta))
    mu, var = x.mean(0), x.var(0)
    inv = 1 / np.sqrt(var + BN_EPS)
    xhat = (x - mu) * inv
    assert np.abs(fal.reveal_fixed(y) - (gamma * xhat + beta)).max() < 0.02
    dx, dg, db = batchnorm_backward(fal, fal.share_fixed(dy), cache)
    dxh = dy * gamma
    dx_ref = inv / m * (m * dxh - dxh.sum(0) - xhat * (dxh * xhat).sum(0))
    assert np.abs(fal.reveal_fixed(dg) - (dy * xhat).sum(0)).max() < 0.02
    assert np.abs(fal.reveal_fixed(db) - dy.sum(0)).max() < 1e-2
    assert np.abs(fal.reveal_fixed(dx) - dx_ref).max() < 0.02


def test_batchnorm_bad_shapes():
    fal = Falcon(np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"\(m, C\)"):
        batchnorm_forward(fal, fal.share_fixed(np.zeros(3)), fal.share_fixed(np.ones(3)),
                          fal.share_fixed(np.zeros(3)))
    with pytest.raises(ValueError, match="gamma and beta"):
        batchnorm_forward(fal, fal.share_fixed(np.zeros((4, 3))), fal.share_fixed(np.ones(2)),
                          fal.share_fixed(np.zeros(3)))
