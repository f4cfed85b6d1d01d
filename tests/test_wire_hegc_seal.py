"""GAZELLE / GALA + garbled ReLU in wire mode on real SEAL (``backend="real"``): the client's
process makes the keys and keeps the secret key; the server's evaluates with the public and
Galois keys only and cannot decrypt. The client's logits and the ledger equal the in-process
run (slot simulator) with the same seed; ciphertexts cross at exactly their booked size,
Galois keys as SEAL's serialization of their measured size; a step reading the other party's
value fails the garbage test on SEAL too."""

from __future__ import annotations

import numpy as np
import pytest

import ppnn
from ppnn.core import Ledger
from ppnn.he.bfv import BFVSim
from ppnn.he.bfv.seal import SealBFV, SealPublicBFV
from ppnn.wire import HEADER_BYTES, hegc, hegc_seal
from ppnn.wire.hegc import BROKEN, run_plan
from ppnn.wire.hegc_seal import from_residues, residue_layout, residue_parts
from wirecheck import hegc_seal_view_job, hegc_view_job, tiny_network, tiny_plans

SEED = 3
FAMILIES = ("gazelle_gc", "gala_gc")


@pytest.fixture(scope="module")
def tiny():
    plans, x, _ = tiny_plans(FAMILIES)
    return plans, x


@pytest.fixture(scope="module")
def runs(tiny):
    """Per family: the in-process run and the wire run on real SEAL (gala_gc on both images,
    gazelle_gc on the first, to keep the test short)."""
    plans, x = tiny
    out = {}
    for f, p in plans.items():
        xs = x if f == "gala_gc" else x[:1]
        out[f] = (ppnn.run(p, xs, SEED), ppnn.run(p, xs, SEED, backend="real", transport="tcp"))
    return out


# -- the backend the server's process holds ------------------------------------------------
@pytest.fixture(scope="module")
def pair():
    """A client (SealBFV, N = 8192, 64 slots, flooding) and the server's backend built from
    its serialized parameters and public key only."""
    client = SealBFV(poly_degree=8192, n=64, flood_bits=40)
    server = SealPublicBFV(client.public_parameters(), client.public_key_bytes(), n=64,
                           flood_bits=40)
    return client, server


def _ship(src, dst, ct):
    parts = residue_parts(src, ct)
    assert sum(a.size * b for a, b in parts) == ct.size * src.ciphertext_bits
    assert [(a.shape, b) for a, b in parts] == [(s, b) for s, _, b in residue_layout(dst, ct.size)]
    return from_residues(dst, [a for a, _ in parts], ct.shape, ct.noise)


def test_the_server_backend_evaluates_every_operation_like_the_simulator(pair):
    """Every operation secure_inference's server runs (AddPlain, ScMult, sums, rotations,
    hoisted rotations, SubPlain, flooding), on the public-key backend with the client's
    serialized Galois keys: the client decrypts what the slot simulator computes, and both
    book the same operations."""
    client, server = pair
    rng = np.random.default_rng(7)
    steps = [1, 5, 17]
    client.keygen(steps)
    assert server.install_galois_keys(steps, client.galois_key_bytes(steps)) == steps
    sim = BFVSim(n=64, p=client.p, poly_degree=8192, q_bits=174, special_bits=44,
                 key_primes=4, noise_model=server.noise_model, flood_bits=40)
    sim.keygen(steps)
    assert sim.ciphertext_bits == server.ciphertext_bits == client.ciphertext_bits
    x = rng.integers(-200, 200, size=(3, 64))
    w = rng.integers(-200, 200, size=(2, 1, 64))
    mask = rng.integers(0, client.p, size=(2, 64))
    share = rng.integers(0, client.p, size=(3, 64))

    def program(he, ct):
        ct = he.add_plain(ct, he.encode(share))
        prod = he.mul_plain(ct, he.encode(w))                   # (2, 3)
        s = he.sum(prod, axis=1)
        r = he.rotate(s, np.array([1, 17]))
        h = he.rotate_hoisted(ct, [0, 5, 1])
        m = he.mul_plain_sum(ct, he.encode(w), axis=1)
        a = he.add(r, m)
        b = he.sub_plain(a, he.encode(mask))
        return [prod, s, r, h, m, a, b, he.flood(b)]

    led_real, led_sim = Ledger(["client", "server"]), Ledger(["client", "server"])
    received, sim_ct = _ship(client, server, client.encrypt(x)), sim.encrypt(x)
    with server.recording(led_real):
        got = program(server, received)
    with sim.recording(led_sim):
        want = program(sim, sim_ct)
    for g, s in zip(got, want):
        back = _ship(server, client, server._from_ntt(g))
        np.testing.assert_array_equal(client.decrypt(back), sim.decrypt(s))
    assert led_real.op_counts() == led_sim.op_counts()
    assert led_real.op_counts()["Flood"] == 2


def test_the_server_backend_holds_no_secret_key_and_cannot_decrypt(pair):
    client, server = pair
    ct = server.encrypt(np.arange(64))  # it can encrypt (public key): its stand-ins
    for call in (lambda: server.decrypt(ct), lambda: server.noise_budget(ct),
                 lambda: server.phase_noise(ct), lambda: server.keygen([3]),
                 lambda: server.galois_key_bytes([3])):
        with pytest.raises(PermissionError, match="no secret key"):
            call()
    assert not server.holds_secret_key and client.holds_secret_key
    assert not any(hasattr(server, a) for a in ("_sk", "_keygen", "decryptor"))
    # the client reads what the server encrypted under its public key
    np.testing.assert_array_equal(client.decrypt(_ship(server, client, ct)), np.arange(64))
    with pytest.raises(ValueError, match="no key for step"):
        server.install_galois_keys([9], client.galois_key_bytes([1]))


# -- the wire run ---------------------------------------------------------------------------
@pytest.mark.parametrize("fam", FAMILIES)
def test_on_real_seal_the_client_gets_the_in_process_logits(runs, fam):
    ref, res = runs[fam]
    assert res.backend == "real" and ref.backend == "sim"
    assert np.array_equal(res.logits, ref.logits)
    assert np.array_equal(res.predictions, ref.predictions)
    assert res.ledger.messages == ref.ledger.messages
    assert [(o.op, o.n, o.party) for o in res.ledger.ops] == \
        [(o.op, o.n, o.party) for o in ref.ledger.ops]


@pytest.mark.parametrize("fam", FAMILIES)
def test_the_server_process_held_no_secret_key(runs, fam):
    _, res = runs[fam]
    info = res.extra["seal"]
    assert info["server_backend"] == "SealPublicBFV"
    assert info["server_holds_secret_key"] is False and info["client_holds_secret_key"]
    assert info["server_decrypt"].startswith("refused: decrypt: this backend holds no secret")
    assert "the run seed is unused and reaches no process" in res.provenance["randomness"]


@pytest.mark.parametrize("fam", FAMILIES)
def test_ciphertexts_cross_at_exactly_their_booked_size(runs, fam):
    """Online: every message (the ciphertexts as their residues at their primes' widths,
    the garbled circuits, the logits' share) is its booked bits plus the header. SEAL's own
    serialization of a ciphertext would be larger (zstd of 64-bit words)."""
    ref, res = runs[fam]
    online = [m for m in ref.ledger.messages if m.phase == "online"]
    c = res.extra["wire"]["classes"]["online"]
    assert c["frames"] == len(online) and c["bits"] == sum(m.bits for m in online)
    assert c["wire bytes"] == c["expected wire bytes"] == \
        sum(-(-m.bits // 8) + HEADER_BYTES for m in online)
    info = res.extra["seal"]
    assert info["ciphertext_bytes"] == 2 * 8192 * 174 // 8 == 356352
    cts = [m for m in online if m.what.startswith(("[x", "[y"))]
    assert cts and all(m.bits % (8 * info["ciphertext_bytes"]) == 0 for m in cts)
    assert 1.1 * info["ciphertext_bytes"] < info["seal_ciphertext_bytes"] \
        < 1.4 * info["ciphertext_bytes"]


@pytest.mark.parametrize("fam", FAMILIES)
def test_galois_keys_cross_as_their_measured_serialization(runs, fam):
    """Offline: each booked Galois key message is one frame of SEAL's seeded serialization of
    the keys (measured); the class's wire bytes are exactly those bytes plus the headers, and
    the ledger keeps the booked ones (k x 4 x 2 N x 218 bits; the seeded keys are ~0.61 of
    it). The parameters and the public key cross unbooked."""
    ref, res = runs[fam]
    booked = [m for m in ref.ledger.messages if m.phase == "offline"]
    keys = res.extra["seal"]["galois keys"]
    assert booked and len(keys) == len(booked)
    key_bits = 4 * 2 * 8192 * 218
    for m, k in zip(booked, keys):
        assert m.what == f"Galois keys for {k['rotations']} rotations"
        assert m.bits == k["rotations"] * key_bits == 8 * k["booked bytes"]
        assert 0.55 < k["serialized bytes"] / k["booked bytes"] < 0.65
    c = res.extra["wire"]["classes"]["offline setup"]
    assert c["frames"] == len(keys) and c["ledger bytes"] == sum(m.bits for m in booked) / 8
    assert c["payload bytes"] == sum(k["serialized bytes"] for k in keys)
    assert c["wire bytes"] == c["payload bytes"] + len(keys) * HEADER_BYTES
    u = res.extra["wire"]["classes"]["unbooked keys"]
    info = res.extra["seal"]
    assert u["frames"] == 2
    assert u["payload bytes"] == info["parameters_bytes"] + info["public_key_bytes"]
    # the public key: one ciphertext-like pair mod the whole 218-bit modulus, zstd
    assert 0.9 * 2 * 8192 * 218 // 8 < info["public_key_bytes"] < 1.4 * 2 * 8192 * 218 // 8


@pytest.mark.parametrize("fam", FAMILIES)
def test_on_real_seal_the_garbled_circuits_ot_is_real_too(runs, fam):
    """The same IKNP OT as on the simulator: its base OTs cross once per run, unbooked."""
    from ppnn.he import ot
    from ppnn.wire.framing import HEADER_BYTES

    _, res = runs[fam]
    b = res.extra["wire"]["classes"]["unbooked base OT"]
    assert b["frames"] == 2 and b["payload bytes"] == ot.BASE_REQUEST_BYTES + ot.BASE_REPLY_BYTES
    assert b["wire bytes"] == b["payload bytes"] + 2 * HEADER_BYTES
    assert "oblivious transfer (both parties)" in set(res.timings["layer"])


@pytest.mark.parametrize("fam", FAMILIES)
def test_no_party_waits_twice_in_a_round_on_real_seal(runs, fam):
    ref, res = runs[fam]
    w = res.extra["wire"]
    assert set(w["extra waits"].values()) == {0}, w["extra wait steps"]
    assert w["measured rounds"] == ref.ledger.rounds("online") - len(ref.logits)


@pytest.mark.parametrize("broken", [pytest.param(b, marks=pytest.mark.slow)
                                    if b == "client reads logits share" else b for b in BROKEN])
def test_on_real_seal_a_step_reading_the_other_partys_value_fails(tiny, runs, broken):
    """The server evaluating its own encryption of its garbage image instead of the received
    [x]_C (or the client adding its own copy of the server's share) gives wrong logits."""
    plans, x = tiny
    ref, _ = runs["gala_gc"]
    res = hegc_seal.run_plan(plans["gala_gc"], x[:1], SEED, broken=broken, timeout=60)
    assert not np.array_equal(res.logits, ref.logits[:1])


def test_bad_backends_are_refused(tiny):
    plans, x = tiny
    with pytest.raises(ValueError, match="backend must be"):
        run_plan(plans["gala_gc"], x, SEED, backend="gpu")
    net, params, calib, _ = tiny_network()
    noflood = ppnn.compile("gala_gc_noflood", net, params, calib=calib)
    with pytest.raises(ValueError, match="transport='tcp' is implemented for"):
        ppnn.run(noflood, x, SEED, backend="real", transport="tcp")


# -- the server's share mask: the OS CSPRNG, not the run's seed -----------------------------
def _client_views(plan, x, seed, real):
    job = hegc_seal_view_job if real else hegc_view_job
    _, client, _, _ = hegc.launch_pair(job, plan, x, seed, None, 600.0, 600.0)
    return client["views"]


def test_on_real_seal_the_mask_is_not_the_seeds_and_the_seed_gives_no_layer_output(tiny):
    """The attack of a security review: the client, holding its own view ``y - r`` of every
    linear layer and guessing the run's seed, redraws the server's masks as the seeded
    simulation draws them and adds them back. On the slot simulator (masks from the
    simulation seed, as stated) that recovers every layer output ``y``; on real SEAL the
    masks come from the OS CSPRNG: two runs with the same seed use different masks, and the
    seed's masks give back no ``y``."""
    plans, x = tiny
    plan, x1 = plans["gala_gc"], x[:1]
    sim = _client_views(plan, x1, SEED, real=False)
    real = [_client_views(plan, x1, SEED, real=True) for _ in range(2)]
    p = plan.impl["plan"].p
    seeded = np.random.default_rng(SEED)
    guess = [seeded.integers(0, p, size=v.shape, dtype=np.int64) for v in sim]
    y = [(v + r) % p for v, r in zip(sim, guess)]  # what the attack gets on the simulator
    assert len(real[0]) == len(real[1]) == len(y) >= 2
    for k, truth in enumerate(y):
        first, second = real[0][k], real[1][k]
        assert first.shape == second.shape == truth.shape
        assert np.mean(first == second) < 0.01  # fresh masks in each run
        assert np.mean((first + guess[k]) % p == truth) < 0.01  # the seed does not unmask
