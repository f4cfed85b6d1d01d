"""Simulation seeds vs masks that protect real ciphertexts (ppnn.core.randomness)."""

from __future__ import annotations

import numpy as np
import pytest

from ppnn.core import Ledger, Ring, share_additive
from ppnn.core.randomness import SecureRandom, mask_source, seeded_for_tests
from ppnn.he import gc as gcmod
from ppnn.he.bfv.seal import SealBFV
from ppnn.he.bfv.sim import BFVSim
from ppnn.he.paillier import Paillier, SimulatedPaillier, keygen
from ppnn.protocols import gc_act
from ppnn.protocols.gala import GalaMatVec, run_linear
from ppnn.protocols.swann.switching import (
    KeyHolderDecryption,
    Masking,
    Roles,
    phe_to_2pc,
    secure_square,
)
from ppnn.protocols.swann.twopc import TwoPC


@pytest.mark.parametrize("low,high,dtype,endpoint", [
    (0, 2, np.uint64, False), (0, 1032193, np.int64, False), (5, 9, np.int64, True),
    (0, 2**64 - 1, np.uint64, True), (0, 256, np.uint8, False)])
def test_secure_integers_stay_in_range_with_the_asked_dtype(low, high, dtype, endpoint):
    v = SecureRandom().integers(low, high, size=(7, 300), dtype=dtype, endpoint=endpoint)
    assert v.shape == (7, 300) and v.dtype == np.dtype(dtype)
    top = high if endpoint else high - 1
    assert int(v.min()) >= low and int(v.max()) <= top


def test_secure_integers_are_uniform_mod_a_non_power_of_two():
    v = SecureRandom().integers(0, 3, size=60_000)
    freq = np.bincount(v, minlength=3) / v.size
    assert np.all(np.abs(freq - 1 / 3) < 0.01)


def test_secure_integers_reject_bad_ranges():
    with pytest.raises(ValueError, match="high - low"):
        SecureRandom().integers(0, 2**64 + 1, dtype=np.uint64, endpoint=True)
    with pytest.raises(TypeError, match="integer"):
        SecureRandom().integers(0, 5, dtype=float)


def test_secure_source_is_unseeded_unless_a_test_asks():
    a, b = (SecureRandom().integers(0, 2**62, size=8) for _ in range(2))
    assert not np.array_equal(a, b)
    with seeded_for_tests(7):
        c = SecureRandom().integers(0, 2**62, size=8)
    with seeded_for_tests(7):
        d = SecureRandom().integers(0, 2**62, size=8)
    np.testing.assert_array_equal(c, d)
    assert not SecureRandom().seeded


def test_mask_source_keeps_the_simulation_seed_for_simulated_backends():
    rng = np.random.default_rng(0)
    assert mask_source(rng, real=False) is rng
    assert isinstance(mask_source(rng, real=True), SecureRandom)


# -- GALA / GAZELLE share mask --------------------------------------------------------------
def _gala_layer(he, seed):
    rng = np.random.default_rng(5)
    W, x = rng.integers(-30, 31, (4, 16)), rng.integers(-30, 31, 16)
    return run_linear(GalaMatVec(4, 16, 64), he, W, x, np.random.default_rng(seed)), W @ x


def test_gala_share_mask_on_real_seal_differs_between_runs_with_one_seed():
    he = SealBFV(n=64)
    (a, y), (b, _) = _gala_layer(he, 1), _gala_layer(he, 1)
    assert not np.array_equal(a.server_share, b.server_share)
    np.testing.assert_array_equal(a.reveal(), y)
    np.testing.assert_array_equal(b.reveal(), y)


def test_gala_share_mask_on_the_simulator_is_reproducible():
    (a, y), (b, _) = _gala_layer(BFVSim(n=64), 1), _gala_layer(BFVSim(n=64), 1)
    np.testing.assert_array_equal(a.server_share, b.server_share)
    np.testing.assert_array_equal(a.client_share, b.client_share)
    np.testing.assert_array_equal(a.reveal(), y)


# -- SwaNN r (Protocols 1, 2) ---------------------------------------------------------------
@pytest.fixture(scope="module")
def keys():
    return keygen(512)


def _swann(keys, backend, seed):
    pk, sk = keys
    led = Ledger(["client", "server"])
    be = backend(pk, led)
    roles = Roles("server", "client", KeyHolderDecryption(sk))
    x = np.array([-5, 0, 17, 2**20], dtype=object)
    views: list = []
    rng = np.random.default_rng(seed)
    sq = be.decrypt(sk, secure_square(be, be.encrypt(x, "client"), roles, rng, Masking(32),
                                      views=views), "client")
    tpc = TwoPC(led, ("client", "server"), rng)
    sh = phe_to_2pc(be, be.encrypt(x, "client"), roles, tpc, rng, Masking(32), Ring(64))
    masks = [v["value"] for v in views if v["sees"].startswith("r ")]
    return masks, sq, sh.reveal().astype(np.int64).astype(object), x


def test_swann_masks_on_real_paillier_differ_between_runs_with_one_seed(keys):
    m1, sq1, sh1, x = _swann(keys, Paillier, 3)
    m2, sq2, sh2, _ = _swann(keys, Paillier, 3)
    assert m1 != m2
    np.testing.assert_array_equal(sq1, x * x)
    np.testing.assert_array_equal(sq2, x * x)
    np.testing.assert_array_equal(sh1, x)
    np.testing.assert_array_equal(sh2, x)


def test_swann_masks_on_the_simulated_backend_are_reproducible(keys):
    m1, sq1, _, x = _swann(keys, SimulatedPaillier, 3)
    m2, _, _, _ = _swann(keys, SimulatedPaillier, 3)
    assert m1 == m2
    np.testing.assert_array_equal(sq1, x * x)


# -- garbled-circuit output mask ------------------------------------------------------------
def test_gc_output_mask_comes_from_the_csprng_and_the_output_is_unchanged():
    spec = gc_act.ActSpec(16, 2, 1)
    rng = np.random.default_rng(0)
    cs = rng.integers(0, 1 << 16, (50, 1)).astype(np.uint64)
    ss = rng.integers(0, 1 << 16, (50, 1)).astype(np.uint64)
    z1, r1, _ = gc_act.garbled_activation(cs, ss, spec, np.random.default_rng(1))
    z2, r2, _ = gc_act.garbled_activation(cs, ss, spec, np.random.default_rng(1))
    assert not np.array_equal(r1, r2)
    np.testing.assert_array_equal((z1 + r1) % (1 << 16), (z2 + r2) % (1 << 16))


def test_gc_relu_output_mask_comes_from_the_csprng():
    ring = Ring(16)
    x = share_additive(ring.random(np.random.default_rng(0), (40,)), ring,
                       np.random.default_rng(0))
    outs = [gcmod.gc_relu(x, Ledger(["client", "server"]), np.random.default_rng(2))[0]
            for _ in range(2)]
    assert not np.array_equal(outs[0].shares[1], outs[1].shares[1])
    np.testing.assert_array_equal(outs[0].reveal(), outs[1].reveal())


def test_ring_draws_sharings_and_dealers_take_the_secure_source():
    """A process can share and deal from the CSPRNG (wire mode on a real backend): the core's
    draws take a SecureRandom as they take a Generator, and refuse anything else."""
    from ppnn.core import Dealer, Ledger, Ring, share_additive
    from ppnn.core.randomness import check_source, is_source
    from ppnn.core.sharing import share_xor

    ring, src = Ring(32), SecureRandom()
    assert is_source(src) and is_source(np.random.default_rng(0)) and not is_source(7)
    r = ring.random(src, (3, 4))
    assert r.shape == (3, 4) and r.dtype == np.uint64 and int(r.max()) < 1 << 32
    x = np.arange(5, dtype=np.uint64)
    assert np.array_equal(share_additive(x, ring, src).reveal(), x)
    assert np.array_equal(share_xor(x, 8, src).reveal(), x)
    t = Dealer(src, Ledger(["a", "b"]), ["a", "b"]).triple(ring, (6,))
    assert np.array_equal(t.c.reveal(), ring.mul(t.a.reveal(), t.b.reveal()))
    with pytest.raises(TypeError, match="numpy.random.Generator .* or a ppnn.core.randomness"):
        check_source(np.random.RandomState(0))
    with pytest.raises(TypeError, match="SecureRandom, got int"):
        ring.random(3, (2,))
