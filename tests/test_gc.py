"""Real garbled circuits (half-gates, free-XOR, fixed-key AES): correctness and exact costs."""

import numpy as np
import pytest

from ppnn.core import Ledger, Ring, share_additive
from ppnn.he import gc


def _relu_ring(x, ring):
    return ring.reduce(np.maximum(ring.to_signed(x), 0))


@pytest.mark.parametrize("b", [2, 3, 8, 16, 32])
def test_relu_circuit_in_the_clear(b):
    rng = np.random.default_rng(b)
    ring = Ring(b)
    n = 500
    xc, xs, r = (ring.random(rng, (n,)) for _ in range(3))
    c = gc.relu_circuit(b)
    out = gc.from_bits(gc.plain_eval(c, np.concatenate([gc.bits_of(xs, b), gc.bits_of(r, b)]),
                                     gc.bits_of(xc, b)))
    np.testing.assert_array_equal(out, ring.sub(_relu_ring(ring.add(xc, xs), ring), r))


@pytest.mark.parametrize("b", [2, 8, 16, 32])
def test_and_gate_count_matches_closed_form(b):
    c = gc.relu_circuit(b)
    assert c.n_and == gc.relu_and_gates(b) == 3 * (b - 1)
    assert c.evaluator_inputs.size == b and c.garbler_inputs.size == 2 * b


@pytest.mark.parametrize("b", [4, 8, 16])
@pytest.mark.parametrize("seed", [0, 1])
def test_garbled_relu_equals_plaintext(b, seed):
    rng = np.random.default_rng(seed)
    ring = Ring(b)
    shape = tuple(int(s) for s in rng.integers(1, 30, size=2))
    x = ring.random(rng, shape)
    X = share_additive(x, ring, rng)
    ledger = Ledger(["client", "server"])
    Y, info = gc.gc_relu(X, ledger, rng, chunk=97)  # several garbling batches
    np.testing.assert_array_equal(Y.reveal(), _relu_ring(x, ring))
    n = x.size
    c = gc.relu_circuit(b)
    # AES calls: 4 per AND to garble, 2 to evaluate (half-gates)
    assert info["garble_aes"] == 8 * c.n_and * n  # 4 hashes, 2 AES calls each
    assert info["evaluate_aes"] == 4 * c.n_and * n


def test_ledger_matches_cost_model():
    b, n = 8, 50
    rng = np.random.default_rng(3)
    ring = Ring(b)
    X = share_additive(ring.random(rng, (n,)), ring, rng)
    ledger = Ledger(["client", "server"])
    gc.gc_relu(X, ledger, rng, split="online")
    cost = gc.gc_cost(gc.relu_circuit(b))
    k = gc.KAPPA
    n_and = 3 * (b - 1)
    assert cost.tables == 2 * k * n_and
    assert cost.garbler_labels == 2 * b * k
    assert cost.mask_labels == b * k and cost.share_labels == b * k
    assert cost.ot_receiver + cost.ot_sender == 3 * b * k
    assert cost.decoding == b
    assert ledger.total_bits("online") == n * cost.total
    assert ledger.total_bits("online") == n * (2 * k * n_and + 5 * b * k + b)
    assert ledger.total_bits("offline") == 0
    assert ledger.rounds("online") == 2
    assert ledger.op_count("and_gate") == n * n_and


@pytest.mark.parametrize("b", [8, 16, 32])
def test_delphi_split_books_online_only_the_servers_share_labels(b):
    """Delphi's ReLU (Mishra et al. 2020 §4): online the server's share labels, b kappa bits,
    label by label; tables, OT, decoding bits and the labels of r offline; nothing twice."""
    n = 40
    rng = np.random.default_rng(b)
    ring = Ring(b)
    x = ring.random(rng, (n,))
    delphi, online = Ledger(["client", "server"]), Ledger(["client", "server"])
    Y, _ = gc.gc_relu(share_additive(x, ring, rng), delphi, rng, split="delphi")
    np.testing.assert_array_equal(Y.reveal(), _relu_ring(x, ring))
    gc.gc_relu(share_additive(x, ring, rng), online, rng, split="online")
    cost = gc.gc_cost(gc.relu_circuit(b))
    df = delphi.messages_frame()
    on = df[df["phase"] == "online"]
    assert list(on["what"]) == ["labels of x_s"] and (on["sender"] == "server").all()
    assert delphi.total_bits("online") == n * b * gc.KAPPA == n * cost.online_delphi_relu
    assert delphi.rounds("online") == 1
    assert delphi.total_bits("offline") == n * cost.offline_delphi_relu == n * (
        cost.tables + cost.ot_receiver + cost.ot_sender + cost.decoding + cost.mask_labels)
    # nothing booked twice: offline + online is the all-online total
    assert delphi.total_bits() == online.total_bits("online") == n * cost.total
    assert cost.evaluator_storage_delphi_relu == cost.evaluator_storage + b * gc.KAPPA


def test_gc_relu_rejects_an_unknown_split():
    ring = Ring(8)
    rng = np.random.default_rng(0)
    X = share_additive(ring.random(rng, (4,)), ring, rng)
    with pytest.raises(ValueError, match="split"):
        gc.gc_relu(X, Ledger(["client", "server"]), rng, split="gazelle")


def test_wrong_labels_do_not_decode_to_the_answer():
    """Evaluating with the labels of other inputs gives the other inputs' result (and tables
    from another garbling give garbage): the labels, not the evaluator, carry the values."""
    b, n = 8, 200
    rng = np.random.default_rng(5)
    c = gc.relu_circuit(b)
    g = gc.garble(c, n, rng)
    ring = Ring(b)
    xc, xs, r = (ring.random(rng, (n,)) for _ in range(3))
    gl = gc.input_labels(g, c.garbler_inputs, np.concatenate([gc.bits_of(xs, b),
                                                              gc.bits_of(r, b)]))
    el = gc.input_labels(g, c.evaluator_inputs, gc.bits_of(xc, b))
    out, _ = gc.evaluate(c, g.tables, gl, el, g.tweak_start, g.nonce)
    want = ring.sub(_relu_ring(ring.add(xc, xs), ring), r)
    np.testing.assert_array_equal(gc.from_bits(gc.decode(out, g.decoding)), want)
    other = gc.garble(c, n, rng)
    bad, _ = gc.evaluate(c, other.tables, gl, el, other.tweak_start, other.nonce)
    assert (gc.from_bits(gc.decode(bad, g.decoding)) != want).mean() > 0.9
    # the tweaks are part of the garbling: other tweaks (or another session nonce) give garbage
    for start, nonce in ((g.tweak_start + 2, g.nonce), (g.tweak_start, g.nonce ^ np.uint64(1))):
        bad, _ = gc.evaluate(c, g.tables, gl, el, start, nonce)
        assert (gc.from_bits(gc.decode(bad, g.decoding)) != want).mean() > 0.9


def test_the_hash_is_the_tweakable_ccr_construction():
    """H(X, i) = pi(pi(X) ^ i) ^ pi(X) with pi fixed-key AES, checked block by block with an
    independent AES."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    aes = gc._FixedKeyAES()
    rng = np.random.default_rng(8)
    X = rng.integers(0, 2**63, (5, 2), dtype=np.uint64)
    tweak = rng.integers(0, 2**63, 5, dtype=np.uint64)
    nonce = np.uint64(123456789)
    H = aes.hash(X, tweak, nonce)
    ecb = Cipher(algorithms.AES(gc._FIXED_KEY), modes.ECB()).encryptor()

    def pi(block: bytes) -> bytes:
        return ecb.update(block)

    for x, t, h in zip(X, tweak, H):
        px = pi(x.tobytes())
        i = np.array([t, nonce], np.uint64).tobytes()
        want = bytes(a ^ b for a, b in zip(pi(bytes(a ^ b for a, b in zip(px, i))), px))
        assert h.tobytes() == want
    assert aes.calls == 2 * len(X)


def test_tweaks_are_unique_across_a_whole_session(monkeypatch):
    """Chunks of one garble_and_evaluate share a session: no (tweak, nonce) is used twice
    by the garbler, and two sessions draw different nonces."""
    seen = []
    real = gc._FixedKeyAES.hash

    def spy(self, X, tweak, nonce):
        seen.append((np.asarray(tweak).copy(), int(nonce)))
        return real(self, X, tweak, nonce)

    monkeypatch.setattr(gc._FixedKeyAES, "hash", spy)
    b, n = 4, 50
    c = gc.relu_circuit(b)
    rng = np.random.default_rng(9)
    xs, xc = rng.integers(0, 2, (2 * b, n)), rng.integers(0, 2, (b, n))
    gc.garble_and_evaluate(c, xs.astype(np.uint8), xc.astype(np.uint8), chunk=7)
    garbler = [(t, k) for t, k in seen if t.shape[0] == 4]  # garble hashes 4 blocks per gate
    nonces = {k for _, k in garbler}
    assert len(nonces) == 1
    tweaks = np.concatenate([t[[0, 2]].ravel() for t, _ in garbler])
    assert tweaks.size == gc.tweaks_used(c, n) and np.unique(tweaks).size == tweaks.size
    seen.clear()
    gc.garble_and_evaluate(c, xs.astype(np.uint8), xc.astype(np.uint8), chunk=7)
    assert {k for _, k in seen}.isdisjoint(nonces)


def test_labels_are_128_bit_and_delta_has_lsb_set():
    g = gc.garble(gc.relu_circuit(4), 10)  # os.urandom labels
    assert g.zero_labels.dtype == np.uint64 and g.zero_labels.shape[-1] == 2
    assert int(g.delta[0]) & 1 == 1
    assert g.tables.shape == (9, 10, 2, 2)


def test_bad_parameters_raise():
    with pytest.raises(ValueError, match="2..64"):
        gc.relu_circuit(1)
    with pytest.raises(TypeError):
        gc.relu_circuit(8.0)
    with pytest.raises(ValueError, match="n must be >= 1"):
        gc.garble(gc.relu_circuit(4), 0)
    g = gc.garble(gc.relu_circuit(4), 3)
    with pytest.raises(ValueError, match="shape"):
        gc.input_labels(g, g.circuit.evaluator_inputs, np.zeros((4, 2), np.uint8))
    ring = Ring(8)
    X = share_additive(np.zeros(3, np.uint64), ring, np.random.default_rng(0))
    with pytest.raises(TypeError):
        gc.gc_relu(X, Ledger(["client", "server"]), rng=1)
