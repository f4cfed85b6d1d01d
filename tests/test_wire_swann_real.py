"""Wire mode for SwaNN on real Paillier (``backend="real"``): the client's process holds the
key pair (two-server: it makes the secret-key shares and sends each server its own), the
servers' processes hold the public key and a stand-in for the secret key that raises if read,
and the ciphertexts cross as their integers mod N^2 at the booked width. The client's logits
and the ledger equal the in-process real run (and the simulator's) with the same seed, every
message is its booked bits plus the header, no party waits twice in a round, and a 2PC input
that reads the owner's mask instead of the message fails the garbage test. 512-bit keys for
speed, compiled with ``insecure=True`` (the protocol is the same at 2048; one slow test runs
those)."""

from __future__ import annotations

import numpy as np
import pytest

import ppnn
from ppnn.nn import Conv2d, Dense, Flatten, MeanPool, Network, Square, init_params
from ppnn.wire import REAL_WIRE_FAMILIES, WireError
from ppnn.wire.swann import (
    KeyNotHeldError,
    NotHeld,
    SwannWireLedger,
    WireRealPaillier,
    _party_keys,
    reading_owner_mask,
    run_plan,
)
from wirecheck import check_booked_bytes, tiny_network

SEED = 4
KEY_BITS = 512


def _plan(family, key_bits=KEY_BITS):
    net, params, calib, x = tiny_network()
    return ppnn.compile(family, net, params, calib=calib, key_bits=key_bits,
                        insecure=key_bits < 2048), x


@pytest.fixture(scope="module", params=["swann_cs", "swann_2s"])
def runs(request):
    plan, x = _plan(request.param)
    return (plan, x, ppnn.run(plan, x, SEED, backend="real"), ppnn.run(plan, x, SEED),
            ppnn.run(plan, x, SEED, backend="real", transport="tcp"))


def _is_ciphertext(m) -> bool:
    return "[" in m.what or m.what.startswith("partial decryption")


def test_swann_families_run_real_on_the_wire():
    assert {"swann_cs", "swann_2s"} <= set(REAL_WIRE_FAMILIES)


def test_logits_equal_the_in_process_real_and_simulated_runs(runs):
    plan, x, real, sim, res = runs
    assert res.backend == "real" and res.extra["transport"] == "tcp"
    assert np.array_equal(res.logits, real.logits)
    assert np.array_equal(res.logits, sim.logits)
    assert np.array_equal(res.predictions, real.predictions)
    model = plan.impl["model"]
    assert all((res.logits[i] == model.forward_int(model.encode(x[i]))).all()
               for i in range(len(x)))


def test_ledger_equals_the_in_process_real_run(runs):
    _, _, real, _, res = runs
    assert res.ledger.messages == real.ledger.messages
    assert res.ledger.op_counts() == real.ledger.op_counts()


def test_ciphertexts_cross_at_their_booked_width(runs):
    """Every message crosses as its booked bits plus the header; the ciphertext messages'
    frames carry exactly 2 log2 N bits (128 bytes at 512-bit keys) per ciphertext, as many as
    the ledger books, sent and received alike."""
    plan, _, real, _, res = runs
    check_booked_bytes(real.ledger, res.extra["wire"])
    n_bits = int(plan.impl["keys"].public_key.n).bit_length()
    assert n_bits == KEY_BITS
    booked = [m for m in real.ledger.messages if _is_ciphertext(m)]
    info = res.extra["swann"]
    for way in ("sent", "received"):
        c = {k: sum(p["ciphertexts"][way][k] for p in info.values())
             for k in ("messages", "ciphertexts", "booked bits", "payload bytes")}
        assert c["messages"] == len(booked)
        assert c["booked bits"] == sum(m.bits for m in booked)
        assert c["payload bytes"] * 8 == c["booked bits"] == c["ciphertexts"] * 2 * n_bits


def test_no_party_waits_twice_in_a_round(runs):
    _, _, real, _, res = runs
    w = res.extra["wire"]
    assert set(w["extra waits"].values()) == {0}, w["extra wait steps"]
    assert w["measured rounds"] <= real.ledger.rounds("online")


def test_only_the_clients_process_holds_the_secret_key(runs):
    plan, _, _, _, res = runs
    info = res.extra["swann"]
    assert info["P0"]["party"] == "client"
    assert info["P0"]["secret key"] == "PaillierPrivateKey"
    servers = [r for r in info if r != "P0"]
    assert servers and all(info[r]["secret key"] == "NotHeld" for r in servers)
    assert all(p["paillier"] == "WireRealPaillier" for p in info.values())


def test_a_server_trying_to_decrypt_fails():
    """A server's process holds NotHeld for the client's secret key: decrypting as itself
    raises; playing the client's decryption step (SPMD) reads no key and gives garbage."""
    plan, _ = _plan("swann_cs")
    g = np.random.default_rng(0)
    keys = _party_keys(plan.impl["keys"], "server", g)
    assert isinstance(keys.private_key, NotHeld)
    be = WireRealPaillier(keys.public_key, me="server", garbage=g)
    c = be.encrypt(np.array([3, -5, 7]), "server")
    assert not np.array_equal(be.decrypt(keys.private_key, c, "client"), [3, -5, 7])
    with pytest.raises(KeyNotHeldError, match="does not hold the client's secret key"):
        be.decrypt(keys.private_key, c, "server")
    with pytest.raises(KeyNotHeldError):
        keys.private_key.raw_decrypt(int(c.data[0]))
    # the client's process decrypts with the key it holds
    client = WireRealPaillier(keys.public_key, me="client", garbage=g)
    assert client.decrypt(plan.impl["keys"].private_key, c, "client").tolist() == [3, -5, 7]


def test_a_server_with_its_own_key_share_alone_cannot_decrypt():
    """Two-server: a server's process has its own share (received) and garbage for the
    other's; its partial decryption with a garbage share does not combine."""
    plan, _ = _plan("swann_2s")
    keys = plan.impl["keys"]
    g = np.random.default_rng(1)
    held = _party_keys(keys, "server1", g)
    be = WireRealPaillier(keys.public_key, me="server1", garbage=g)
    c = be.encrypt(np.array([11, -2]), "client")
    p1 = be.partial_decrypt(keys.shares[0], c, "server1")
    p2 = be.partial_decrypt(keys.shares[1], c, "server1")
    assert be.combine(p1, p2, "server1").tolist() == [11, -2]
    p2_garbage = be.partial_decrypt(held.shares[1], c, "server1")
    with pytest.raises(ValueError, match="do not combine"):
        be.combine(p1, p2_garbage, "server1")


def test_a_step_reading_the_owners_mask_fails_the_garbage_test():
    plan, x = _plan("swann_cs")
    ref = ppnn.run(plan, x[:1], SEED, backend="real")
    with reading_owner_mask():  # in process the broken 2PC input gives the same logits ...
        assert np.array_equal(ppnn.run(plan, x[:1], SEED, backend="real").logits, ref.logits)
    broken = run_plan(plan, x[:1], SEED, backend="real", broken=True, timeout=20)
    assert not np.array_equal(broken.logits, ref.logits)  # ... the garbage test does not


def test_a_received_ciphertext_beyond_n_squared_is_refused():
    plan, _ = _plan("swann_cs")
    pk = plan.impl["keys"].public_key
    be = WireRealPaillier(pk, me="client", garbage=np.random.default_rng(2))
    c = be.encrypt(np.array([1]), "server")
    width = 2 * KEY_BITS // 8
    too_big = np.frombuffer((int(pk.nsquare) + 1).to_bytes(width, "little"), np.uint8)

    class _Wire:  # the frame the client's process receives from the server
        def enter_round(self, r):
            pass

        def recv(self, peer, layout, step, cls):
            return [too_big.reshape(1, width)]

    led = SwannWireLedger(("client", "server"), _Wire(), "client",
                          {"client": "P0", "server": "P1"})
    with pytest.raises(WireError, match="not below N\\^2"):
        led.transmit("server", "client", c.bits(), "[logits]", c)


def test_bad_backends_are_refused():
    plan, x = _plan("swann_cs")
    with pytest.raises(ValueError, match="backend must be"):
        run_plan(plan, x[:1], SEED, backend="gpu")
    net, params, calib, _ = tiny_network()
    other = ppnn.compile("delphi_tabula", net, params, calib=calib)
    with pytest.raises(ValueError, match="simulated backend only"):
        ppnn.run(other, x[:1], SEED, backend="real", transport="tcp")


@pytest.mark.slow
@pytest.mark.parametrize("family", ["swann_cs", "swann_2s"])
def test_2048_bit_keys_on_the_wire(family):
    plan, x = _plan(family, key_bits=2048)
    real = ppnn.run(plan, x, SEED, backend="real")
    res = ppnn.run(plan, x, SEED, backend="real", transport="tcp")
    assert np.array_equal(res.logits, real.logits)
    assert res.ledger.messages == real.ledger.messages
    check_booked_bytes(real.ledger, res.extra["wire"])


@pytest.mark.parametrize("family,setting,optimized", [("swann_2s", "phe", True),
                                                      ("swann_cs", "hybrid", False)])
def test_square_network_phe_setting_and_unoptimized_runs(family, setting, optimized):
    """Protocol 1 (the PHE-only secure square, decrypted by partial decryptions in the
    two-server setting) and the unoptimized path (no packing: one ciphertext per value,
    naive exponentiations) on the wire."""
    net = Network("tiny_square", (1, 6, 6), [Conv2d(2, 3, 1, 0), Square(),
                                             MeanPool(2, scaled=True), Flatten(), Dense(3)])
    g = np.random.default_rng(1)
    params = init_params(net, np.random.default_rng(0))
    plan = ppnn.compile(family, net, params, calib=g.uniform(0, 1, (16, 1, 6, 6)),
                        key_bits=KEY_BITS, insecure=True, setting=setting,
                        optimized=optimized)
    x = g.uniform(0, 1, (2, 1, 6, 6))
    real = ppnn.run(plan, x, SEED, backend="real")
    res = run_plan(plan, x, SEED, backend="real", timeout=20)
    assert np.array_equal(res.logits, real.logits)
    assert res.ledger.messages == real.ledger.messages
    check_booked_bytes(real.ledger, res.extra["wire"])
    assert set(res.extra["wire"]["extra waits"].values()) == {0}



@pytest.mark.parametrize("family", ["swann_cs", "swann_2s"])
def test_the_dealers_triples_and_the_key_shares_are_not_a_function_of_the_seed(
        monkeypatch, family):
    """On real Paillier the dealer's triples come from the OS CSPRNG in its process: two
    wire runs with the same seed deal each 2PC party different shares, and none is the share
    the seed's generator deals (the dealer's in-process simulation with its material drawn
    from ``default_rng(seed)``: what a party that guessed the seed would redraw). Two-server,
    each server's secret-key share (split in the client's process) differs too."""
    from ppnn.wire import swann as ws
    from wirecheck import received_in, same

    plan, x = _plan(family)
    x = x[:2] if family == "swann_2s" else x[:1]
    results = []
    got = [received_in(monkeypatch, ws, lambda: results.append(
        ppnn.run(plan, x, SEED, backend="real", transport="tcp"))) for _ in range(2)]
    assert np.array_equal(results[0].logits, results[1].logits)
    assert "no party's process" in results[0].provenance["randomness"]
    _, _, events = ws._dealer_run(plan, x, SEED)  # material from the seed's generator
    dealt = 0
    for party, role in ws.ROLE_OF[ws.SWANN_FAMILIES[family]].items():
        if role == "dealer":
            continue
        guess = [payload[parties.index(party)] for kind, parties, _, payload in events
                 if kind in ("bit", "arith") and party in parties]
        first, second = ([a for _, what, _, a in g[role] if "triple" in what] for g in got)
        assert len(first) == len(second) == len(guess)
        for a, b, c in zip(first, second, guess):
            assert [v.shape for v in a] == [np.shape(v) for v in c]
            assert not same(a, b)
            assert not same(a, [np.asarray(v) for v in c])
        dealt += len(first)
        keys = [[a for _, what, _, a in g[role] if "secret-key share" in what] for g in got]
        if family == "swann_2s" and party != "client":
            assert len(keys[0]) == len(keys[1]) == 1 and not same(keys[0][0], keys[1][0])
    assert dealt > 0
