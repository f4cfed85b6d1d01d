"""SHE circuits on the bit simulator: outputs equal plaintext integer results for random inputs,
and gate counts / multiplicative depths equal the closed forms (fully encrypted constants, so
no tfhe-rs shortcut applies); with public (trivial) constants results are the same and never
cost more."""

import math

import numpy as np
import pytest

from ppnn.he.bitsim import BitSimulator
from ppnn.protocols.she import circuits as C


def rand_words(be, rng, width, signed, shape):
    lo, hi = C.word_range(width, signed)
    v = rng.integers(lo, hi + 1, size=shape)
    return v, C.encrypt_word(be, v, width, signed)


def acc_closed_form(k: int, b: int) -> int:
    """Gates of the mixed-bitwidth accumulator: sum_n floor(K_n/2) * (5(b+n) - 3)."""
    total, n = 0, 0
    while k > 1:
        total += (k // 2) * (5 * (b + n) - 3)
        k, n = (k + 1) // 2, n + 1
    return total


@pytest.fixture(params=[False, True], ids=["encrypted-constants", "public-constants"])
def public(request):
    return request.param


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("signed", [True, False])
def test_adder_matches_plaintext_and_closed_form(seed, signed, public):
    rng = np.random.default_rng(seed)
    w = int(rng.integers(2, 12))
    be = BitSimulator(public_constants=public)
    n = int(rng.integers(1, 60))
    xv, x = rand_words(be, rng, w, signed, n)
    yv, y = rand_words(be, rng, w, signed, n)
    be.reset_counts()
    z = C.add(x, y)
    assert z.width == w + 1 and (C.decrypt_word(be, z) == xv + yv).all()
    cf = C.closed_forms(w)
    assert be.hgops == n * cf["add_widen_gates"] and z.md() == cf["add_widen_md"]
    be.reset_counts()
    zm = C.add(x, y, widen=False)
    mod = 1 << w
    ref = (xv + yv) % mod
    if signed:
        ref = np.where(ref >= mod // 2, ref - mod, ref)
    assert (C.decrypt_word(be, zm) == ref).all() and be.hgops == n * cf["add_mod_gates"]
    z1 = C.add(x, y, carry_in=1)
    assert (C.decrypt_word(be, z1) == xv + yv + 1).all()


@pytest.mark.parametrize("signed", [True, False])
def test_one_bit_adders(signed):
    be = BitSimulator()
    xv, yv = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
    if signed:
        xv, yv = -xv, -yv
    x, y = C.encrypt_word(be, xv, 1, signed), C.encrypt_word(be, yv, 1, signed)
    assert (C.decrypt_word(be, C.add(x, y)) == xv + yv).all()
    assert (C.decrypt_word(be, C.add(x, y, carry_in=1)) == xv + yv + 1).all()


@pytest.mark.parametrize("seed", range(4))
def test_mixed_bitwidth_accumulator(seed, public):
    rng = np.random.default_rng(seed)
    b = int(rng.integers(2, 7))
    k = int(rng.integers(1, 40))
    n = int(rng.integers(1, 20))
    be = BitSimulator(public_constants=public)
    v, x = rand_words(be, rng, b, True, (k, n))
    be.reset_counts()
    s = C.accumulate(x)
    levels = math.ceil(math.log2(k)) if k > 1 else 0
    assert (C.decrypt_word(be, s) == v.sum(0)).all()
    assert s.width == b + levels
    assert be.hgops == n * acc_closed_form(k, b)
    # carries ripple through the tree as a wavefront: depth b + levels - 1, not sum of widths
    assert s.md() == (b + levels - 1 if k > 1 else 0)


def test_accumulator_with_per_column_counts():
    rng = np.random.default_rng(7)
    be = BitSimulator(public_constants=False)
    v, x = rand_words(be, rng, 5, True, (17, 30))
    counts = rng.integers(0, 18, size=30)
    be.reset_counts()
    s = C.accumulate(x, counts)
    ref = np.array([v[:c, j].sum() for j, c in enumerate(counts)])
    assert (C.decrypt_word(be, s) == ref).all()
    assert be.hgops == sum(acc_closed_form(int(c), 5) for c in counts)
    with pytest.raises(ValueError, match="counts"):
        C.accumulate(x, np.full(30, 18))


def test_fixed_width_accumulator_costs_more():
    rng = np.random.default_rng(3)
    be = BitSimulator(public_constants=False)
    k, n, w = 25, 8, 16
    v, x = rand_words(be, rng, 5, True, (k, n))
    be.reset_counts()
    s = C.accumulate_fixed(x, w)
    assert (C.decrypt_word(be, s) == v.sum(0)).all() and s.width == w
    fixed = be.hgops
    assert fixed == n * (k - 1) * (5 * w - 6)
    be.reset_counts()
    C.accumulate(x)
    assert be.hgops < fixed / 2


@pytest.mark.parametrize("signed", [True, False])
def test_shift_is_free_and_exact(signed, public):
    rng = np.random.default_rng(11)
    be = BitSimulator(public_constants=public)
    v, x = rand_words(be, rng, 6, signed, 300)
    e = rng.integers(0, 9, size=300)
    be.reset_counts()
    y = C.shift_right(x, e)
    assert (C.decrypt_word(be, y) == (v >> e)).all()
    assert be.hgops == 0 and be.bootstraps == 0
    if signed:  # the vacated positions hold copies of the encrypted sign bit
        big = e >= 5
        assert (C.decrypt_word(be, y)[big] == np.where(v[big] < 0, -1, 0)).all()
    z = C.shift_left(x, 3)
    assert (C.decrypt_word(be, z) == v * 8).all() and be.hgops == 0
    with pytest.raises(ValueError, match="amount"):
        C.shift_right(x, -1)


@pytest.mark.parametrize("w", [2, 3, 5, 9])
def test_relu_unit(w, public):
    rng = np.random.default_rng(w)
    be = BitSimulator(public_constants=public)
    v, x = rand_words(be, rng, w, True, 200)
    be.reset_counts()
    r = C.relu_unit(x)
    assert not r.signed and r.width == w - 1
    assert (C.decrypt_word(be, r) == np.maximum(v, 0)).all()
    cf = C.closed_forms(w)
    assert be.hgops == 200 * cf["relu_gates"] and r.md() == cf["relu_md"]


@pytest.mark.parametrize("out_bits", [1, 3, 5, 8, 12, 14])
def test_relu_saturate_and_signed_saturation(out_bits, public):
    rng = np.random.default_rng(out_bits)
    be = BitSimulator(public_constants=public)
    w = 13
    v, x = rand_words(be, rng, w, True, 400)
    be.reset_counts()
    r = C.relu_saturate(x, out_bits)
    assert r.width == out_bits and not r.signed
    assert (C.decrypt_word(be, r) == np.clip(v, 0, 2**out_bits - 1)).all()
    h = w - 1 - out_bits
    expect = (h - 1 + 2 * out_bits) if h >= 1 else w - 1
    assert be.hgops == 400 * expect
    if out_bits >= 2:
        s = C.saturate_signed(x, out_bits)
        lo, hi = C.word_range(out_bits, True)
        assert (C.decrypt_word(be, s) == np.clip(v, lo, hi)).all()


@pytest.mark.parametrize("signed", [True, False])
@pytest.mark.parametrize("w", [1, 2, 5, 8])
def test_comparator_and_max_unit(w, signed, public):
    rng = np.random.default_rng(w + 10 * signed)
    be = BitSimulator(public_constants=public)
    xv, x = rand_words(be, rng, w, signed, 300)
    yv, y = rand_words(be, rng, w, signed, 300)
    be.reset_counts()
    lt = C.less_than(x, y)
    assert (be.decrypt(lt) == (xv < yv)).all()
    n_lt = be.hgops
    be.reset_counts()
    z = C.max_unit(x, y)
    assert (C.decrypt_word(be, z) == np.maximum(xv, yv)).all()
    if w >= 2:
        cf = C.closed_forms(w)
        assert n_lt == 300 * cf["lt_signed_gates" if signed else "lt_unsigned_gates"]
        if signed:
            assert be.hgops == 300 * cf["max_signed_gates"]
            assert be.bootstraps == 300 * cf["max_signed_bootstraps"]
            assert z.md() == cf["max_signed_md"]


def test_max_reduce_variable_windows():
    rng = np.random.default_rng(5)
    be = BitSimulator()
    v, x = rand_words(be, rng, 5, False, (9, 40))
    counts = rng.integers(1, 10, size=40)
    be.reset_counts()
    m = C.max_reduce(x, counts)
    assert (C.decrypt_word(be, m) == [v[:c, j].max() for j, c in enumerate(counts)]).all()
    assert be.gates["mux"] == 5 * int((counts - 1).sum())  # K-1 max units of 5 MUX each


@pytest.mark.parametrize("a,bw", [(5, 5), (4, 2), (3, 6)])
def test_multiplier(a, bw, public):
    rng = np.random.default_rng(a * bw)
    be = BitSimulator(public_constants=public)
    xv, x = rand_words(be, rng, a, False, 150)
    wv, wenc = rand_words(be, rng, bw, True, 150)
    be.reset_counts()
    p = C.multiply(x, wenc)
    assert p.width == a + bw and (C.decrypt_word(be, p) == xv * wv).all()
    closed = a * bw + (bw - 2) * (5 * a - 3) + 5 * (a + 1) - 6
    if not public:
        assert be.hgops == 150 * closed
    else:
        assert be.hgops <= 150 * closed
    wpub = C.constant_word(be, wv, bw, True)  # PC_Mult: plaintext weights
    be.reset_counts()
    assert (C.decrypt_word(be, C.multiply(x, wpub)) == xv * wv).all()
    if public:  # tfhe-rs skips gates on trivial weight bits
        assert be.hgops < 150 * closed


def _dot_reference(xv, src, e, sign, bias, guard=0):
    valid = src >= 0
    terms = np.where(valid, sign * ((xv[np.where(valid, src, 0)] << guard) >> e), 0)
    return terms.sum(1) + bias


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("signed_input", [False, True])
def test_shift_accumulate_dot_product(seed, signed_input, public):
    rng = np.random.default_rng(seed)
    be = BitSimulator(public_constants=public)
    m, n, k = 40, 12, int(rng.integers(1, 30))
    xv, x = rand_words(be, rng, 5, signed_input, m)
    src = rng.integers(0, m, size=(n, k))
    src[rng.random((n, k)) < 0.2] = -1  # pruned weights / padding
    e = rng.integers(0, 7, size=(n, k))
    sign = rng.choice([-1, 1], size=(n, k))
    bias = rng.integers(-100, 100, size=n)
    for guard in (0, 2):
        for acc in ("mixed", "fixed"):
            out = C.shift_accumulate(x, src, e, sign, bias, guard_bits=guard, accumulator=acc)
            assert (C.decrypt_word(be, out) == _dot_reference(xv, src, e, sign, bias, guard)).all()


def test_shift_accumulate_costs_only_adders():
    """Shifts and negations are free: the dot product costs exactly its accumulator + bias add."""
    rng = np.random.default_rng(2)
    be = BitSimulator(public_constants=False)
    m, n, k = 30, 10, 9
    xv, x = rand_words(be, rng, 5, False, m)
    src = rng.integers(0, m, size=(n, k))
    e = rng.integers(0, 5, size=(n, k))
    sign = rng.choice([-1, 1], size=(n, k))
    be.reset_counts()
    out = C.shift_accumulate(x, src, e, sign, bias=7)
    acc_w = 6 + math.ceil(math.log2(k))  # 5-bit unsigned terms + sign plane, then the tree
    bias_w = max(acc_w, 5)
    assert be.hgops == n * (acc_closed_form(k, 6) + 5 * bias_w - 3)
    assert (C.decrypt_word(be, out) == _dot_reference(xv, src, e, sign, 7)).all()


def test_public_constants_never_cost_more():
    rng = np.random.default_rng(9)
    costs = {}
    for public in (False, True):
        be = BitSimulator(public_constants=public)
        xv, x = rand_words(be, np.random.default_rng(1), 5, False, 50)
        src = rng.integers(0, 50, size=(20, 25))
        e = np.random.default_rng(2).integers(0, 6, size=(20, 25))
        sign = np.random.default_rng(3).choice([-1, 1], size=(20, 25))
        be.reset_counts()
        out = C.shift_accumulate(x, src, e, sign, bias=-3)
        C.relu_saturate(out, 5)
        costs[public] = be.hgops
    assert costs[True] < costs[False]


def test_errors():
    be, other = BitSimulator(), BitSimulator()
    with pytest.raises(ValueError, match="overflow"):
        C.encrypt_word(be, [16], 5, signed=True)
    with pytest.raises(ValueError, match="overflow"):
        C.encrypt_word(be, [-1], 4, signed=False)
    with pytest.raises(TypeError, match="integers"):
        C.encrypt_word(be, [1.5], 4)
    with pytest.raises(ValueError, match="width"):
        C.encrypt_word(be, [1], 0)
    x = C.encrypt_word(be, [1, 2], 4)
    y = C.encrypt_word(other, [1, 2], 4)
    with pytest.raises(ValueError, match="different keys"):
        C.add(x, y)
    with pytest.raises(ValueError, match="another key"):
        C.decrypt_word(other, x)
    with pytest.raises(ValueError, match="equal width"):
        C.add(x, C.encrypt_word(be, [1, 2], 5))
    with pytest.raises(ValueError, match="sign must hold only"):
        C.shift_accumulate(x, np.array([[0, 1]]), [[0, 1]], [[1, 3]])
    with pytest.raises(ValueError, match="src"):
        C.shift_accumulate(x, np.array([[0, 5]]), [[0, 1]], [[1, 1]])
    with pytest.raises(ValueError, match="exponent"):
        C.shift_accumulate(x, np.array([[0, 1]]), [[0, -1]], [[1, 1]])
    with pytest.raises(ValueError, match="signed word"):
        C.relu_unit(C.encrypt_word(be, [1], 3, signed=False))
    with pytest.raises(ValueError, match="signed word of width"):
        C.multiply(x, C.encrypt_word(be, [1, 2], 4, signed=False))


@pytest.mark.parametrize("a,bw", [(5, 5), (3, 2), (6, 4)])
def test_signed_multiplier(a, bw, public):
    rng = np.random.default_rng(a + bw)
    be = BitSimulator(public_constants=public)
    xv, x = rand_words(be, rng, a, True, 200)
    wv, w = rand_words(be, rng, bw, True, 200)
    assert (C.decrypt_word(be, C.multiply(x, w)) == xv * wv).all()
    assert (C.decrypt_word(be, C.multiply(x, C.constant_word(be, wv, bw))) == xv * wv).all()
