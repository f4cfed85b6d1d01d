import numpy as np
import pytest

from ppnn.core import FixedPoint, PrimeField, Ring


@pytest.mark.parametrize("k", [1, 8, 13, 32, 63, 64])
def test_ring_arithmetic_matches_python_ints(k):
    rng = np.random.default_rng(k)
    ring = Ring(k)
    a, b = ring.random(rng, 200), ring.random(rng, 200)
    m = 1 << k
    for op, ref in [(ring.add, lambda x, y: (x + y) % m), (ring.sub, lambda x, y: (x - y) % m),
                    (ring.mul, lambda x, y: (x * y) % m)]:
        got = op(a, b)
        want = [ref(int(x), int(y)) for x, y in zip(a, b)]
        assert [int(v) for v in got] == want
    assert int(a.max()) < m


@pytest.mark.parametrize("k", [2, 16, 32, 64])
def test_signed_roundtrip_and_msb(k):
    ring = Ring(k)
    lo, hi = -(1 << (k - 1)), (1 << (k - 1)) - 1
    vals = np.array([lo, -1, 0, 1, hi], dtype=np.int64)
    enc = ring.from_signed(vals)
    assert np.array_equal(ring.to_signed(enc), vals)
    assert list(ring.msb(enc)) == [1, 1, 0, 0, 0]


def test_matmul_exact_mod_2k():
    rng = np.random.default_rng(1)
    ring = Ring(32)
    a, b = ring.random(rng, (3, 5)), ring.random(rng, (5, 2))
    want = [[sum(int(a[i, t]) * int(b[t, j]) for t in range(5)) % (1 << 32) for j in range(2)]
            for i in range(3)]
    assert ring.matmul(a, b).tolist() == want


@pytest.mark.parametrize("k", [0, 65, 128, -1])
def test_ring_rejects_bad_bit_width(k):
    with pytest.raises(ValueError, match="1..64"):
        Ring(k)


def test_ring_rejects_out_of_range_and_floats():
    ring = Ring(8)
    with pytest.raises(ValueError, match="outside Z_2\\^8"):
        ring.check(np.array([256]))
    with pytest.raises(ValueError, match="negative"):
        ring.check(np.array([-1]))
    with pytest.raises(ValueError, match="out of range"):
        ring.from_signed(np.array([128]))
    with pytest.raises(TypeError, match="floating-point"):
        ring.reduce(np.array([1.5]))
    with pytest.raises(TypeError, match="Generator"):
        ring.random(0, 3)


def test_prime_field():
    f = PrimeField(67)
    rng = np.random.default_rng(0)
    a, b = f.random(rng, 100), f.random(rng, 100)
    assert np.array_equal(f.mul(a, b), (a * b) % 67)
    assert np.array_equal(f.add(f.sub(a, b), b), a)
    assert f.bits == 7
    with pytest.raises(ValueError, match="not prime"):
        PrimeField(64)
    with pytest.raises(ValueError, match="2\\^31"):
        PrimeField((1 << 31) + 11)


@pytest.mark.parametrize("k,f", [(64, 16), (32, 13), (32, 16), (16, 8)])
def test_fixed_point_error_bound(k, f):
    rng = np.random.default_rng(k + f)
    fx = FixedPoint(Ring(k), f)
    x = rng.uniform(fx.min_value, fx.max_value, 5000) * 0.999
    err = np.abs(fx.decode(fx.encode(x)) - x)
    assert err.max() <= fx.error_bound() + 1e-12
    # negative values are exact two's complement
    assert fx.decode(fx.encode(np.array([-1.0])))[0] == -1.0


def test_fixed_point_out_of_range_raises():
    fx = FixedPoint(Ring(16), 8)  # range [-128, 127.996]
    with pytest.raises(ValueError, match="out of range"):
        fx.encode(np.array([0.0, 128.0]))
    with pytest.raises(ValueError, match="out of range"):
        fx.encode(np.array([-128.01]))
    with pytest.raises(ValueError, match="NaN"):
        fx.encode(np.array([np.nan]))
    with pytest.raises(ValueError, match="frac_bits"):
        FixedPoint(Ring(16), 16)


@pytest.mark.parametrize("k", [1, 8, 16, 32])
def test_matmul_blas_path_equals_integer_products(k):
    """For k <= 32 Ring.matmul uses BLAS on 16-bit limbs; it must equal exact integer
    products mod 2^k, also for inputs that are not reduced mod 2^k."""
    ring = Ring(k)
    rng = np.random.default_rng(k)
    a = rng.integers(0, 2**63, size=(5, 300), dtype=np.uint64)  # unreduced on purpose
    b = rng.integers(0, 2**63, size=(300, 4), dtype=np.uint64)
    want = (a.astype(object) @ b.astype(object)) % (1 << k)
    assert ring.matmul(a, b).astype(object).tolist() == want.tolist()
    assert ring.matmul(a[0], b).astype(object).tolist() == want[0].tolist()
