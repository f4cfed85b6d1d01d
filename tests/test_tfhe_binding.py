"""The tfhe-rs binding (`lib/ppnn_tfhe`) against plaintext oracles, on real ciphertexts.

Every gate is checked on all four input combinations at once (one vectorized call), routing
(take / concat / reshape) against numpy indexing, and the counters against the number of
gates evaluated. Keys are module-scoped: Boolean key generation takes about a second and the
5-bit shortint key a few seconds.
"""

import numpy as np
import pytest

try:
    import ppnn_tfhe
except ImportError as exc:  # the binding is required, never skipped
    pytest.fail(
        f"the tfhe-rs binding `ppnn_tfhe` is not importable ({exc}). Build and install it "
        "with `make setup` (needs cargo/rustc), or `.venv/bin/pip install ./lib/ppnn_tfhe`.",
        pytrace=False,
    )

A = np.array([0, 0, 1, 1], dtype=np.uint8)
B = np.array([0, 1, 0, 1], dtype=np.uint8)

ORACLES = {
    "and_": lambda a, b: a & b,
    "or_": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "nand": lambda a, b: 1 - (a & b),
    "nor": lambda a, b: 1 - (a | b),
    "xnor": lambda a, b: 1 - (a ^ b),
}


@pytest.fixture(scope="module")
def key():
    return ppnn_tfhe.BooleanKey.generate()


@pytest.fixture(scope="module")
def other_key():
    return ppnn_tfhe.BooleanKey.generate()


@pytest.fixture(scope="module")
def ab(key):
    return key.encrypt(A), key.encrypt(B)


@pytest.fixture(scope="module")
def skey():
    return ppnn_tfhe.ShortintKey.generate(message_bits=5)


def test_key_metadata(key, other_key):
    assert key.parameters_name == "DEFAULT_PARAMETERS"
    assert key.parameters["lwe_dimension"] > 0
    assert 0 <= key.key_id < 2**64
    assert key.key_id != other_key.key_id
    assert ppnn_tfhe.TFHE_VERSION.startswith("1.")
    assert ppnn_tfhe.num_threads() >= 1


@pytest.mark.parametrize("gate", sorted(ORACLES))
def test_gate_truth_table(key, ab, gate):
    a, b = ab
    out = getattr(key, gate)(a, b)
    assert out.shape == (4,)
    got = key.decrypt(out)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, ORACLES[gate](A, B))


def test_gates_keep_shape(key):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, size=(2, 3), dtype=np.uint8)
    y = rng.integers(0, 2, size=(2, 3)).astype(bool)
    out = key.xor(key.encrypt(x), key.encrypt(y))
    assert out.shape == (2, 3)
    np.testing.assert_array_equal(key.decrypt(out), x ^ y)


def test_not_and_mux(key):
    combos = [(c, a, b) for c in (0, 1) for a in (0, 1) for b in (0, 1)]
    c, a, b = np.array(combos, dtype=np.uint8).T  # all 8 input combinations
    ec, ea, eb = key.encrypt(c), key.encrypt(a), key.encrypt(b)
    np.testing.assert_array_equal(key.decrypt(key.mux(ec, ea, eb)), np.where(c == 1, a, b))
    np.testing.assert_array_equal(key.decrypt(key.not_(ea)), 1 - a)
    np.testing.assert_array_equal(key.decrypt(key.not_(key.not_(ea))), a)


def test_trivial_constants(key, ab):
    a, _ = ab
    ones = key.trivial(np.ones(4, dtype=np.uint8))
    zeros = key.trivial([0, 0, 0, 0])
    np.testing.assert_array_equal(key.decrypt(ones), [1, 1, 1, 1])
    key.reset_counts()
    np.testing.assert_array_equal(key.decrypt(key.and_(a, ones)), A)
    np.testing.assert_array_equal(key.decrypt(key.xor(zeros, a)), A)
    np.testing.assert_array_equal(key.decrypt(key.mux(ones, a, zeros)), A)
    assert key.bootstrap_count == 0  # tfhe-rs shortcuts gates with a trivial input
    assert key.op_count["and"] == 4


def test_gate_counts(key, ab):
    a, b = ab
    key.reset_counts()
    key.and_(a, b)
    key.and_(a, b)
    key.nor(a, b)
    key.not_(a)
    key.mux(a, b, a)
    counts = key.gate_count
    assert counts["and"] == 8
    assert counts["nor"] == 4
    assert counts["mux"] == 4
    assert counts["xor"] == 0
    assert "not" not in counts  # NOT never bootstraps
    assert key.op_count["not"] == 4
    assert key.bootstrap_count == 8 + 4 + 2 * 4
    key.reset_counts()
    assert sum(key.gate_count.values()) == 0
    assert key.bootstrap_count == 0


def test_take_concat_reshape(key):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 2, size=(2, 3), dtype=np.uint8)
    ex = key.encrypt(x)
    assert (len(ex), ex.size, ex.ndim) == (2, 6, 2)
    idx = np.array([[5, 0], [2, -1]], dtype=np.int64)
    taken = ex.take(idx)
    assert taken.shape == (2, 2)
    np.testing.assert_array_equal(key.decrypt(taken), x.ravel()[idx])
    cat = ppnn_tfhe.BitArray.concat([ex, taken, ex.take(np.array([4]))])
    assert cat.shape == (11,)
    np.testing.assert_array_equal(
        key.decrypt(cat), np.concatenate([x.ravel(), x.ravel()[idx].ravel(), x.ravel()[[4]]])
    )
    np.testing.assert_array_equal(key.decrypt(ex.reshape((3, -1))), x.reshape(3, 2))
    np.testing.assert_array_equal(key.decrypt(ex.reshape(-1)), x.ravel())
    with pytest.raises(ValueError, match="reshape"):
        ex.reshape((4, 2))
    with pytest.raises(IndexError, match="out of bounds"):
        ex.take(np.array([6]))
    with pytest.raises(ValueError, match="at least one"):
        ppnn_tfhe.BitArray.concat([])


def test_serialization(key, ab):
    a, _ = ab
    per_bit = a.serialized_size() / a.size
    n = key.parameters["lwe_dimension"]
    assert 4 * (n + 1) <= per_bit < 4 * (n + 1) + 64  # (n + 1) u32 words plus headers
    back = ppnn_tfhe.BitArray.from_bytes(a.to_bytes())
    assert back.shape == a.shape and back.key_id == a.key_id
    np.testing.assert_array_equal(key.decrypt(back), A)


def test_wrong_key_raises(key, other_key, ab):
    a, b = ab
    with pytest.raises(ValueError, match="key"):
        other_key.decrypt(a)
    foreign = other_key.encrypt(B)
    with pytest.raises(ValueError, match="key"):
        key.and_(a, foreign)
    with pytest.raises(ValueError, match="key"):
        ppnn_tfhe.BitArray.concat([a, foreign])


def test_shape_mismatch_raises(key, ab):
    a, _ = ab
    square = key.encrypt(np.zeros((2, 2), dtype=np.uint8))
    with pytest.raises(ValueError, match=r"\(4,\).*\(2, 2\)"):
        key.or_(a, square)
    with pytest.raises(ValueError, match="shape"):
        key.mux(a, a, square)


def test_non_binary_input_raises(key):
    with pytest.raises(ValueError, match="0 and 1.*found 2"):
        key.encrypt(np.array([0, 1, 2], dtype=np.uint8))
    with pytest.raises(ValueError, match="found -1"):
        key.trivial(np.array([-1]))
    with pytest.raises(TypeError, match="dtype"):
        key.encrypt(np.array([0.0, 1.0]))


def test_shortint_lookup_table(skey):
    assert skey.parameters_name == "V1_2_PARAM_MESSAGE_5_CARRY_0_KS_PBS_GAUSSIAN_2M128"
    assert skey.parameters["message_modulus"] == 32
    rng = np.random.default_rng(2)
    table = rng.integers(0, 32, size=32)
    x = np.array([[0, 1, 17], [30, 31, 5]])
    ex = skey.encrypt(x)
    np.testing.assert_array_equal(skey.decrypt(ex), x)
    skey.reset_counts()
    out = skey.apply_lookup_table(ex, table)
    assert out.shape == (2, 3)
    np.testing.assert_array_equal(skey.decrypt(out), table[x])
    assert skey.bootstrap_count == 6


def test_shortint_errors(skey):
    with pytest.raises(ValueError, match=r"\[0, 32\).*found 32"):
        skey.encrypt(np.array([3, 32]))
    ex = skey.encrypt(np.array([3]))
    with pytest.raises(ValueError, match="length"):
        skey.apply_lookup_table(ex, np.arange(16))
    with pytest.raises(ValueError, match=r"\[0, 32\)"):
        skey.apply_lookup_table(ex, np.arange(32) + 1)
    with pytest.raises(ValueError, match="message_bits"):
        ppnn_tfhe.ShortintKey.generate(message_bits=9)
    small = ppnn_tfhe.ShortintKey.generate(message_bits=1)
    with pytest.raises(ValueError, match="key"):
        small.decrypt(ex)
