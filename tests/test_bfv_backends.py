"""Packed BFV backends: real SEAL vs numpy simulator (same outputs, same counts), noise model,
clear errors."""

import numpy as np
import pytest

from ppnn.core import Ledger
from ppnn.he.bfv import BFVSim, NoiseModel, SealBFV, batching_prime


@pytest.fixture(scope="module")
def seal64():
    return SealBFV(n=64)


def _program(he, rng):
    """A little program touching every operation; returns decrypted outputs."""
    he.keygen([1, 5, 17])
    x = rng.integers(-200, 200, size=(3, he.n))
    ct = he.encrypt(x)
    w = he.encode(rng.integers(-200, 200, size=(2, 1, he.n)))
    prod = he.mul_plain(ct, w)                                  # (2, 3)
    s = he.sum(prod, axis=1)                                    # (2,)
    r = he.rotate(s, np.array([1, 17]))
    h = he.rotate_hoisted(ct, [0, 5, 1])                        # (3, 3)
    m = he.mul_plain_sum(ct, w, axis=1)                         # (2,)
    a = he.add(r, m)
    b = he.sub_plain(a, he.encode(rng.integers(0, he.p, size=(2, he.n))))
    st = he.stack([b, a])
    return [he.decrypt(t) for t in (prod, s, r, h, m, a, b, st)], [t.noise for t in (r, h, a)]


def test_sim_equals_real_outputs_counts_and_model_noise(seal64):
    seed = 7
    real_l, sim_l = Ledger(["client", "server"]), Ledger(["client", "server"])
    sim = BFVSim(n=64, p=seal64.p, noise_model=seal64.noise_model)
    with seal64.recording(real_l):
        out_r, noise_r = _program(seal64, np.random.default_rng(seed))
    with sim.recording(sim_l):
        out_s, noise_s = _program(sim, np.random.default_rng(seed))
    for a, b in zip(out_r, out_s):
        np.testing.assert_array_equal(a, b)
    assert real_l.op_counts() == sim_l.op_counts()
    for a, b in zip(noise_r, noise_s):
        np.testing.assert_allclose(a, b)


def test_slot_semantics_against_numpy(seal64):
    rng = np.random.default_rng(3)
    seal64.keygen([3, 60])
    x = rng.integers(0, seal64.p, size=seal64.n)
    ct = seal64.encrypt(x)
    np.testing.assert_array_equal(seal64.decrypt(seal64.rotate(ct, 3)), np.roll(x, -3))
    np.testing.assert_array_equal(seal64.decrypt(seal64.rotate(ct, -4)), np.roll(x, 4))
    w = rng.integers(0, seal64.p, size=seal64.n)
    np.testing.assert_array_equal(seal64.decrypt(seal64.mul_plain(ct, seal64.encode(w))),
                                  (x * w) % seal64.p)


def test_counts_are_booked_per_operation():
    he = BFVSim(n=16)
    led = Ledger(["client", "server"])
    with he.recording(led):
        he.keygen([1, 2])
        ct = he.encrypt(np.zeros((4, 16), dtype=np.int64))
        he.rotate_hoisted(ct, [0, 1, 2])
        he.rotate(ct, np.array([0, 1, 2, 1]))
        he.mul_plain_sum(ct, he.encode(np.ones((4, 16), dtype=np.int64)), axis=0)
    c = led.op_counts()
    assert (c["DecPerm"], c["HstPerm"], c["Perm"], c["ScMult"], c["Add"]) == (4, 8, 3, 4, 3)
    assert led.op_count("Enc", party="client") == 4


def test_noise_model_rules():
    nm = NoiseModel(eta_mult=100.0, eta_rot=3.0, fresh_bits=40.0)
    he = BFVSim(n=16, noise_model=nm)
    he.keygen([1])
    ct = he.encrypt(np.zeros((2, 16), dtype=np.int64))
    y = he.sum(he.rotate(he.mul_plain(ct, he.encode(np.ones((2, 16), dtype=np.int64))),
                         np.array([0, 1])))
    assert float(y.noise) == pytest.approx(2 * 100.0 + 3.0)
    assert float(he.model_budget(y)) == pytest.approx(40.0 - np.log2(203.0))


def test_real_noise_budget_decreases(seal64):
    rng = np.random.default_rng(0)
    ct = seal64.encrypt(rng.integers(0, 100, size=seal64.n))
    fresh = int(seal64.noise_budget(ct))
    prod = seal64.mul_plain(ct, seal64.encode(rng.integers(0, seal64.p, size=seal64.n)))
    assert 0 < int(seal64.noise_budget(prod)) < fresh


def test_rotation_without_galois_key_raises(seal64):
    for he in (seal64, BFVSim(n=64)):
        ct = he.encrypt(np.zeros(64, dtype=np.int64))
        with pytest.raises(ValueError, match="no Galois key"):
            he.rotate(ct, 2 if 2 not in he.rotation_steps else 63)


def test_values_outside_plain_modulus_raise(seal64):
    for he in (seal64, BFVSim(n=64)):
        with pytest.raises(ValueError, match="plaintext modulus"):
            he.encrypt(np.full(64, he.p, dtype=np.int64))
        with pytest.raises(ValueError, match="plaintext modulus"):
            he.encode(np.full(64, -(he.p // 2) - 1, dtype=np.int64))
        with pytest.raises(TypeError, match="integers"):
            he.encrypt(np.full(64, 0.5))
        with pytest.raises(ValueError, match="n=64"):
            he.encrypt(np.zeros(32, dtype=np.int64))


def test_bad_parameters_and_shapes_raise(seal64):
    with pytest.raises(ValueError, match="power of two"):
        BFVSim(n=48)
    with pytest.raises(ValueError, match="poly_degree"):
        SealBFV(poly_degree=2048)
    with pytest.raises(ValueError, match="n must be a power of two dividing"):
        SealBFV(n=3000)
    with pytest.raises(ValueError, match="plain_bits"):
        SealBFV(plain_bits=40)
    he = BFVSim(n=16)
    a = he.encrypt(np.zeros((2, 16), dtype=np.int64))
    b = he.encrypt(np.zeros((3, 16), dtype=np.int64))
    with pytest.raises(ValueError, match="do not broadcast"):
        he.add(a, b)
    with pytest.raises(TypeError, match="Pt"):
        he.mul_plain(a, a)
    with pytest.raises(ValueError, match="another backend"):
        BFVSim(n=16).add(a, a)
    with pytest.raises(ValueError, match="cannot decrypt"):
        c = BFVSim(n=16, values=False)
        c.decrypt(c.encrypt(np.zeros(16, dtype=np.int64)))


def test_batching_prime_matches_seal(seal64):
    assert batching_prime(20, 4096) == seal64.p
    assert (seal64.p - 1) % (2 * seal64.poly_degree) == 0
    with pytest.raises(ValueError):
        batching_prime(40, 4096)


@pytest.mark.parametrize("real", [True, False])
def test_key_scope_drops_the_keys_made_inside(real):
    he = SealBFV(n=64) if real else BFVSim(n=64)
    v = np.arange(he.n) % he.p
    he.keygen([1])
    with he.key_scope():
        assert he.keygen([2, 3]) == [2, 3]
        np.testing.assert_array_equal(he.decrypt(he.rotate(he.encrypt(v), 2)), np.roll(v, -2))
    assert he.rotation_steps == {1}
    with pytest.raises(ValueError, match="no Galois key"):
        he.rotate(he.encrypt(v), 2)
    np.testing.assert_array_equal(he.decrypt(he.rotate(he.encrypt(v), 1)), np.roll(v, -1))
