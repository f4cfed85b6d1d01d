"""Wire mode for SHE (TFHE gate-level inference): the client and the server as processes over
loopback TCP. On the bit simulator every booked message crosses as its booked bits plus the
stated header, the client's logits and the ledger equal the in-process run, and a step that
reads the other party's value fails the garbage test. On real tfhe-rs the client's process
keeps the secret key, the server's evaluates with the server key only (asserted), and the
measured sizes of the serialized ciphertexts equal the ledger's booked ones."""

from __future__ import annotations

import socket

import numpy as np
import pytest

import ppnn
from ppnn.he.bitsim import SIM_CIPHERTEXT_BYTES
from ppnn.nn import Dense, Flatten, Network, ReLU, init_params
from ppnn.protocols.she.quant import QLinear
from ppnn.wire import HEADER_BYTES
from ppnn.wire.she import BROKEN, garbage_model, public_output, run_plan
from ppnn.wire.transport import Wire, WireError
from wirecheck import tiny_network

SEED = 3


@pytest.fixture(scope="module")
def tiny():
    net, params, calib, x = tiny_network()
    return ppnn.compile("she", net, params, calib=calib), x, (net, params, calib)


@pytest.fixture(scope="module")
def runs(tiny):
    plan, x, _ = tiny
    return ppnn.run(plan, x, SEED), ppnn.run(plan, x, SEED, transport="tcp")


def test_garbage_test_the_client_gets_the_in_process_logits(tiny, runs):
    plan, x, _ = tiny
    ref, res = runs
    assert np.array_equal(res.logits, ref.logits)
    assert np.array_equal(res.logits, plan.oracle(x))
    assert np.array_equal(res.predictions, ref.predictions)
    assert res.extra["transport"] == "tcp" and res.backend == "sim"
    assert "the run seed is unused" in res.provenance["randomness"]


def test_wire_ledger_equals_in_process_ledger(runs):
    ref, res = runs
    assert res.ledger.messages == ref.ledger.messages
    assert [(o.op, o.n, o.party) for o in res.ledger.ops] == \
        [(o.op, o.n, o.party) for o in ref.ledger.ops]
    assert res.ledger.depths == ref.ledger.depths


def test_every_message_is_its_booked_bits_plus_the_header(tiny, runs):
    plan, x, _ = tiny
    ref, res = runs
    w = res.extra["wire"]["classes"]
    msgs = ref.ledger.messages
    assert [m.what for m in msgs] == ["encrypted image bits", "encrypted logits"] * len(x)
    assert all(m.phase == "online" for m in msgs)
    assert w["online"]["frames"] == len(msgs)
    assert w["online"]["bits"] == sum(m.bits for m in msgs)
    assert w["online"]["wire bytes"] == sum(-(-m.bits // 8) + HEADER_BYTES for m in msgs)
    assert w["online"]["wire bytes"] == w["online"]["expected wire bytes"]
    for name in ("offline dealer", "offline setup", "inputs", "offline ideal", "unbooked keys"):
        assert w[name]["frames"] == 0, name  # no dealer, no key on the simulator
    # booked: one tfhe-rs ciphertext per encrypted bit (5-bit pixels and one encrypted 0;
    # the logits word's planes)
    n_in = int(np.prod(plan.net.input_shape))
    fmt = public_output(plan.impl)
    assert msgs[0].bits == 8 * SIM_CIPHERTEXT_BYTES * (plan.impl.in_bits * n_in + 1)
    assert msgs[1].bits == 8 * SIM_CIPHERTEXT_BYTES * int((~fmt["trivial"]).sum())


def test_measured_rounds_are_the_ledger_rounds_two_per_image(runs):
    """Image bits out, logits back: each depends on the one before (the client sends the
    next image after it decrypted the last, as the per-image ledger books it)."""
    ref, res = runs
    w = res.extra["wire"]
    assert ref.ledger.rounds("online") == 2 * len(ref.logits)
    assert w["measured rounds"] == w["ledger rounds"] == ref.ledger.rounds("online")
    assert set(w["extra waits"].values()) == {0}, w["extra wait steps"]


@pytest.mark.parametrize("broken", BROKEN)
def test_a_step_reading_the_other_partys_value_fails_the_garbage_test(tiny, runs, broken):
    plan, x, _ = tiny
    ref, _ = runs
    res = run_plan(plan, x[:1], SEED, broken=broken, timeout=20)
    assert not np.array_equal(res.logits, ref.logits[:1])


def test_the_client_holds_a_garbage_model_of_the_public_shapes(tiny):
    plan, _, _ = tiny
    q = plan.impl
    gq = garbage_model(q, np.random.default_rng(0))
    for a, b in zip(q.ops, gq.ops):
        assert type(a) is type(b) and a.name == b.name
        if isinstance(a, QLinear):
            assert (a.in_shape, a.out_shape, a.shift, a.out_bits, a.act) == \
                (b.in_shape, b.out_shape, b.shift, b.out_bits, b.act)
            for f in ("bias", "w_sign", "w_exp", "w_zero"):
                assert np.shape(getattr(a, f)) == np.shape(getattr(b, f)), f
            assert not np.array_equal(a.w_exp, b.w_exp) or not np.array_equal(a.bias, b.bias)
            assert set(np.unique(b.w_sign)) <= {-1, 1}
    with pytest.raises(TypeError, match="QuantNet"):
        garbage_model(plan, np.random.default_rng(0))


def test_other_families_and_bad_arguments_are_refused(tiny):
    plan, x, (net, params, calib) = tiny
    with pytest.raises(ValueError, match="broken must be"):
        run_plan(plan, x, SEED, broken="nope")
    with pytest.raises(ValueError, match="backend must be"):
        run_plan(plan, x, SEED, backend="gpu")
    with pytest.raises(ValueError, match="transport='tcp' runs one block"):
        ppnn.run(plan, x, SEED, transport="tcp", record_values=True)
    other = ppnn.compile("falcon_sh", net, params, calib=calib)
    with pytest.raises(ValueError, match="plan must be of"):
        run_plan(other, x, SEED)
    with pytest.raises(ValueError, match="simulated backend only"):
        ppnn.run(other, x, SEED, backend="real", transport="tcp")


def test_recv_bytes_takes_the_length_the_frame_states():
    a, b = socket.socketpair()
    g = np.random.default_rng(0)
    sender, receiver = Wire("P0", {"P1": a}, 5.0, g), Wire("P1", {"P0": b}, 5.0, g)
    try:
        blob = bytes(range(256)) * 3
        sender.send("P1", [(np.frombuffer(blob, np.uint8), 8)], "key", "unbooked keys")
        sender.send("P1", [(np.frombuffer(blob, np.uint8), 8)], "key", "unbooked keys")
        assert receiver.recv_bytes("P0", "key", "unbooked keys", 1 << 20) == blob
        assert receiver.received["unbooked keys"].payload == len(blob)
        with pytest.raises(WireError, match="at most 10 bytes"):
            receiver.recv_bytes("P0", "key", "unbooked keys", 10)
    finally:
        a.close()
        b.close()


def test_the_pipeline_table_leaves_out_what_she_cannot_compile(monkeypatch):
    from ppnn import data, nn
    from ppnn.experiments import wire as wire_exp

    for fam, model in wire_exp.NOT_COMPILABLE:
        x, _, _, _ = data.load_mnist()
        with pytest.raises(ValueError, match="cannot compile"):
            ppnn.compile(fam, nn.zoo.get(model), nn.pretrained(model, quick=True, seed=0),
                         calib=np.asarray(x[:64]))
    seen = []
    monkeypatch.setattr(wire_exp, "_measure", lambda st, jobs, seed, log: seen.extend(jobs))
    logs = []
    wire_exp.measure_all(False, log=logs.append)
    pairs = {(f, m) for f, m, _, _ in seen}
    assert ("she", "minionn_mnist") in pairs and ("she", "falcon_lenet") not in pairs
    assert any("she on falcon_lenet: left out" in s for s in logs)


def test_cli_runs_she_on_the_wire(capsys):
    from ppnn.__main__ import main

    assert main(["wire", "she", "minionn_mnist", "--timeout", "60"]) == 0
    out = capsys.readouterr().out
    assert "the client and the server as processes" in out
    assert "logits and ledger equal the in-process run: yes" in out


# -- real tfhe-rs: the secret key stays in the client's process ----------------------------
@pytest.fixture(scope="module")
def tiny_real():
    pytest.importorskip("ppnn_tfhe", reason="build the binding with `make setup`")
    net = Network("she_tiny_wire", (1, 2, 2), (Flatten(), Dense(2), ReLU(), Dense(2)))
    params = init_params(net, np.random.default_rng(0), dtype=np.float64)
    calib = np.random.default_rng(1).random((64, 1, 2, 2))
    return ppnn.compile("she", net, params, calib=calib), calib[:1]


def test_server_backend_has_no_secret_key_and_ciphertexts_cross_without_container():
    tfhe = pytest.importorskip("ppnn_tfhe", reason="build the binding with `make setup`")
    from ppnn.he.tfhe import TfheBackend, TfheServerBackend
    from ppnn.wire.she import _container

    key = tfhe.BooleanKey.generate()
    server = TfheServerBackend(tfhe.BooleanServerKey.from_bytes(key.server_key().to_bytes()))
    assert not server.holds_secret_key and TfheBackend(key).holds_secret_key
    with pytest.raises(RuntimeError, match="cannot encrypt"):
        server.encrypt(np.zeros(2, np.uint8))
    with pytest.raises(TypeError, match="BooleanServerKey"):
        TfheServerBackend(key)
    a = key.encrypt(np.array([1, 0, 1], np.uint8))
    raw = a.to_bytes()
    head = _container(key.key_id, 3)
    assert raw[:len(head)] == head and len(raw) - len(head) == a.serialized_size() \
        == 3 * SIM_CIPHERTEXT_BYTES
    b = tfhe.BitArray.from_bytes(_container(server.key_id, 3) + raw[len(head):])
    assert key.decrypt(server.key.and_(b, a)).tolist() == [1, 0, 1]


def test_real_tfhe_on_the_wire_separates_the_keys(tiny_real):
    plan, x = tiny_real
    ref = ppnn.run(plan, x, SEED)  # the simulator books what tfhe-rs runs (test_distributed)
    res = ppnn.run(plan, x, SEED, backend="real", transport="tcp")
    assert res.backend == "real"
    assert np.array_equal(res.logits, ref.logits)
    assert np.array_equal(res.logits, plan.oracle(x))
    assert res.ledger.messages == ref.ledger.messages
    assert res.ledger.op_counts() == ref.ledger.op_counts()
    she = res.extra["she"]
    # the server's process evaluated with the server key only, every gate on tfhe-rs
    assert she["server_holds_secret_key"] is False
    assert she["server_key_type"] == "BooleanServerKey"
    assert she["server_backend"] == "TfheServerBackend"
    assert she["tfhe_rs_bootstraps"] == ref.ledger.op_count("bootstrap") > 0
    # measured sizes: the serialized ciphertexts are exactly the booked bytes
    w = res.extra["wire"]
    assert she["ciphertext_bytes"] == SIM_CIPHERTEXT_BYTES
    assert w["classes"]["online"]["payload bytes"] == ref.ledger.total_bytes("online")
    assert w["classes"]["online"]["wire bytes"] == w["classes"]["online"]["expected wire bytes"]
    # the server key: unbooked, its serialized bytes measured on both sides
    keys = w["classes"]["unbooked keys"]
    assert keys["frames"] == 1 and keys["ledger bytes"] is None
    assert keys["payload bytes"] == she["server_key_bytes"] == she["server_key_bytes_received"]
    assert keys["wire bytes"] == she["server_key_bytes"] + HEADER_BYTES
    assert w["measured rounds"] == w["ledger rounds"] == 2
    assert set(w["extra waits"].values()) == {0}
