"""Noise flooding of the ciphertexts GALA/GAZELLE return (circuit privacy), on real SEAL.

Without flooding the client, who holds the secret key, reads the noise of ``[y - r]`` and it is
a function of the server's weights; with flooding its distribution is the same for any weights
(within the flooding bound) and decryption stays exact."""

import math
import os

import numpy as np
import pytest

from ppnn.core import Ledger
from ppnn.experiments.gala.flooding import ks_2samp, ks_critical
from ppnn.he.bfv import BFVSim, SealBFV
from ppnn.he.bfv.seal_coeffs import ciphertext_from_coeffs, crt_combine, read_coeffs
from ppnn.protocols.gala import GalaConv, GalaMatVec, run_linear
from ppnn.protocols.gazelle import GazelleMatVec

LAMBDA = 40


@pytest.fixture(scope="module")
def he():
    # N = 8192 with SEAL's default 128-bit modulus (174-bit q); seeded (tests only)
    return SealBFV(poly_degree=8192, n=2048, flood_bits=LAMBDA, seed=11)


def _noise(he, W, x, seed, reps=1):
    """The returned ciphertext's noise coefficients (client view) over ``reps`` runs."""
    out = []
    for rep in range(reps):
        res = run_linear(GalaMatVec(*W.shape, he.n), he, W, x, np.random.default_rng(seed + rep))
        assert np.array_equal(res.reveal(), W @ x)
        out.append(he.phase_noise(res.returned).ravel())
    return np.concatenate(out)


def test_4096_and_the_papers_60_bit_q_have_no_room_to_flood_40_bits():
    with pytest.raises(ValueError, match="larger ciphertext modulus"):
        SealBFV(poly_degree=4096, n=2048, flood_bits=LAMBDA, seed=0)
    with pytest.raises(ValueError, match="larger ciphertext modulus"):
        BFVSim(n=2048, q_bits=60, flood_bits=LAMBDA)


def test_coefficients_written_through_serialization_read_back(he):
    rng = np.random.default_rng(0)
    data = np.stack([np.stack([rng.integers(0, q, he.poly_degree, dtype=np.uint64)
                               for q in he._primes]) for _ in range(2)])
    ct = ciphertext_from_coeffs(he.context, he._parms_id, data)
    np.testing.assert_array_equal(read_coeffs(ct, data.shape), data)
    big = [int(v) for v in rng.integers(0, 2**62, 5)]
    res = np.stack([np.mod(np.array(big, dtype=object), q).astype(np.uint64)
                    for q in he._primes])
    assert list(crt_combine(res, he._primes)) == big


def test_flooded_layers_decrypt_exactly_and_book_the_flood(he):
    rng = np.random.default_rng(1)
    cases = [(GalaMatVec(16, 128, he.n), rng.integers(-8, 9, (16, 128)), rng.integers(-8, 9, 128)),
             (GazelleMatVec(2, 1024, he.n), rng.integers(-8, 9, (2, 1024)),
              rng.integers(-8, 9, 1024)),
             (GalaConv(4, 8, 8, 8, 3, he.n, 1, 1), rng.integers(-8, 9, (8, 4, 3, 3)),
              rng.integers(-8, 9, (4, 8, 8)))]
    for kernel, W, x in cases:
        res = run_linear(kernel, he, W, x, rng)
        np.testing.assert_array_equal(res.reveal(), kernel.plaintext(W, x))
        seal_left = he.noise_budget(res.returned)
        assert seal_left.min() >= 1
        # the model predicts SEAL's budget after flooding (integer bits, calibrated constants)
        assert np.all(np.abs(seal_left - he.model_budget(res.returned)) <= 2)
        # and flooding spent about lambda_s + margin bits of it
        spent = he.noise_budget(res.out).min() - seal_left.max()
        assert LAMBDA <= spent <= LAMBDA + he.flood_margin_bits + 12
        counts = res.ledger.op_counts()
        assert counts["Flood"] == res.returned.size


def test_simulator_books_the_same_flooded_counts_and_model_noise(he):
    rng = np.random.default_rng(2)
    W, x = rng.integers(-8, 9, (16, 128)), rng.integers(-8, 9, 128)
    sim = BFVSim(n=he.n, p=he.p, noise_model=he.noise_model, flood_bits=LAMBDA)
    real = run_linear(GalaMatVec(16, 128, he.n), he, W, x, np.random.default_rng(3))
    simr = run_linear(GalaMatVec(16, 128, sim.n), sim, W, x, np.random.default_rng(3))
    assert real.ledger.op_counts() == simr.ledger.op_counts()
    np.testing.assert_allclose(real.returned.noise, simr.returned.noise)
    np.testing.assert_array_equal(real.reveal(), simr.reveal())


def test_without_flooding_the_noise_reveals_the_weights(he):
    rng = np.random.default_rng(4)
    x = rng.integers(-1, 2, 128)
    he.set_flooding(0)
    try:
        small = _noise(he, np.ones((16, 128), np.int64), x, seed=5)
        big = _noise(he, np.full((16, 128), 64), x, seed=5)
    finally:
        he.set_flooding(LAMBDA)
    # constant weights c: the encoded plaintext is the constant c and the noise is c e_x
    gap = math.log2(np.abs(big).max()) - math.log2(np.abs(small).max())
    assert abs(gap - 6) < 0.5
    assert ks_2samp(np.abs(small), np.abs(big)) > 0.5 > ks_critical(small.size, big.size)


def test_with_flooding_the_noise_does_not_depend_on_the_weights(he):
    rng = np.random.default_rng(6)
    x = rng.integers(-1, 2, 128)
    W_small = np.ones((16, 128), np.int64)          # noise ~ e_x
    W_big = rng.integers(-8, 9, (16, 128))            # noise ~ 2^24 e_x
    he.set_flooding(0)
    try:
        before = {k: _noise(he, W, x, seed=7) for k, W in (("small", W_small), ("big", W_big))}
    finally:
        he.set_flooding(LAMBDA)
    a = _noise(he, W_small, x, seed=7, reps=3)
    b = _noise(he, W_big, x, seed=7, reps=3)
    # the flooding bound B (noise units) is set from public shapes only: the same for both
    ct = run_linear(GalaMatVec(16, 128, he.n), he, W_big, x, rng).out
    log2_B = math.ceil(he.flood_log2_bound(ct) + he.fresh_noise_log2)
    # the bound really covers the weights' noise: |e_before| <= 2^-lambda_s B
    for e in before.values():
        assert math.log2(np.abs(e).max()) <= log2_B - LAMBDA
    assert math.log2(np.abs(before["big"]).max()) - math.log2(np.abs(before["small"]).max()) > 20
    # after flooding: uniform on [-B, B) for both; indistinguishable (KS at alpha = 1e-3)
    for e in (a, b):
        assert np.abs(e).max() <= 2.0 ** log2_B * (1 + 2.0 ** -30)
        assert abs(np.abs(e).mean() / 2.0 ** log2_B - 0.5) < 0.01
    assert ks_2samp(a, b) < ks_critical(a.size, b.size, alpha=1e-3)
    assert abs(np.abs(a).mean() / np.abs(b).mean() - 1) < 0.02


def test_flooding_off_or_without_budget_raises(he):
    sim = BFVSim(n=64, q_bits=200)
    ct = sim.encrypt(np.zeros(64, np.int64))
    with pytest.raises(ValueError, match="flooding is off"):
        sim.flood(ct)
    with pytest.raises(ValueError, match="bits must be an int"):
        sim.set_flooding(-1)
    sim.set_flooding(LAMBDA)
    noisy = sim.mul_plain(sim.mul_plain(sim.mul_plain(ct, sim.encode(np.ones(64, np.int64))),
                                        sim.encode(np.ones(64, np.int64))),
                          sim.encode(np.ones(64, np.int64)))
    led = Ledger(["client", "server"])
    with sim.recording(led):
        sim.flood(ct)
    assert led.op_counts() == {"Enc": 1, "Add": 2, "Flood": 1}
    with pytest.raises(ValueError, match="decryption would fail"):
        for _ in range(4):
            noisy = sim.mul_plain(noisy, sim.encode(np.ones(64, np.int64)))
        sim.flood(noisy)


_WATCHING: list[tuple] | None = None


def _audit(event, args):
    if _WATCHING is not None and event in ("open", "tempfile.mkstemp", "tempfile.mkdtemp",
                                           "os.rename", "os.link"):
        _WATCHING.append((event, args))


def test_the_flooding_noise_never_reaches_a_file(he, tmp_path, monkeypatch):
    """The flooding term is secret: every SEAL object built from it goes to an anonymous
    in-memory file. An audit hook sees every file Python opens or creates during a flooded
    run (SEAL itself reads only the path it is given), and the temp directory stays empty."""
    global _WATCHING
    import sys
    import tempfile

    watched = tmp_path / "tmp"
    watched.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(watched))
    if not getattr(sys, "_ppnn_flood_audit", False):
        sys.addaudithook(_audit)
        sys._ppnn_flood_audit = True
    rng = np.random.default_rng(3)
    W, x = rng.integers(-8, 9, (16, 128)), rng.integers(-8, 9, 128)
    _WATCHING = []
    try:
        res = run_linear(GalaMatVec(16, 128, he.n), he, W, x, rng)
        seen = list(_WATCHING)
    finally:
        _WATCHING = None
    assert res.ledger.op_counts()["Flood"] == res.returned.size
    assert not [e for e in seen if e[0] != "open"], seen
    written = [a for _, a in seen if a[1] is not None and any(c in str(a[1]) for c in "wax+")
               or (a[2] or 0) & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)]
    assert all(str(a[0]).startswith("/proc/self/fd/") for a in written), written
    assert not list(watched.iterdir())
