"""Wire mode for Delphi + garbled ReLU: the client, the server and the dealer as processes
over loopback TCP. The garbled circuits are real (the server's process garbles, the client's
evaluates only from the frames it received); every booked message crosses as its booked bits
plus the stated header (the garbled material of Delphi's preprocessing in the offline class,
the labels of the server's share online); the client's logits and the ledger equal the
in-process run with the same seed; the measured rounds equal the ledger's (one fewer when
the network ends with a ReLU); no party waits twice in a round; the client never holds both
labels of a wire (the IKNP OT is run: the receiver columns and the answers in their booked
frames, the base OTs once, unbooked); and steps that read the other party's value fail the
garbage test."""

from __future__ import annotations

import numpy as np
import pytest

import ppnn
from ppnn.core import Ledger, Ring
from ppnn.he import gc as gcmod
from ppnn.he import ot
from ppnn.nn import Dense, Flatten, Network, ReLU, init_params
from ppnn.protocols import gc_act
from ppnn.wire import HEADER_BYTES, WIRE_FAMILIES
from ppnn.wire.delphi import reading_client_share
from ppnn.wire.delphi_gc import BROKEN, GCParty, delphi_gc_job, run_plan
from ppnn.wire.launch import launch
from wirecheck import check_booked_bytes, check_one_label_per_wire, tiny_network

SEED = 3
#: the messages of Delphi's garbled ReLU split (ppnn.he.gc.book_delphi_split)
GC_OFFLINE = {"IKNP OT: receiver columns (client's share fixed offline)",
              "IKNP OT: 2 masked labels per bit", "garbled tables (2 per AND)", "labels of r",
              "output decoding bits"}


@pytest.fixture(scope="module")
def tiny():
    net, params, calib, x = tiny_network()
    return ppnn.compile("delphi_gc", net, params, calib=calib), x


@pytest.fixture(scope="module")
def runs(tiny):
    plan, x = tiny
    return ppnn.run(plan, x, SEED), ppnn.run(plan, x, SEED, transport="tcp")


def test_garbage_test_the_client_gets_the_in_process_logits(runs):
    ref, res = runs
    assert np.array_equal(res.logits, ref.logits)
    assert np.array_equal(res.predictions, ref.predictions)
    assert res.extra["transport"] == "tcp"
    assert "delphi_gc" in WIRE_FAMILIES


def test_wire_ledger_equals_in_process_ledger(runs):
    ref, res = runs
    assert res.ledger.messages == ref.ledger.messages
    assert [(o.op, o.n, o.party) for o in res.ledger.ops] == \
        [(o.op, o.n, o.party) for o in ref.ledger.ops]


def test_every_message_is_its_booked_bits_plus_the_header(runs):
    ref, res = runs
    w = res.extra["wire"]["classes"]
    online, offline = check_booked_bytes(ref.ledger, res.extra["wire"])
    assert online and offline and all(m.sender != Ledger.DEALER for m in ref.ledger.messages)
    assert {m.what for m in online} == {"[x]_c + R_c", "labels of x_s",
                                        "server's share of the logits"}
    assert {m.what for m in offline} == GC_OFFLINE | {"Enc(R_c) (counted HE)",
                                                      "Enc(W R_c + R_s) (counted HE)"}
    # Delphi's masks (not booked: the result of the counted HE), one frame per linear layer
    # and party at the ring's 32 bits: client R_c and -(W R_c + R_s), server R_s. Batch of
    # 2: conv 72 in / 64 out, dense 16 in / 8 out
    assert w["offline ideal"]["frames"] == 2 * 2
    assert w["offline ideal"]["payload bytes"] == 4 * ((72 + 64 + 16 + 8) + (64 + 8))
    assert w["offline dealer"]["frames"] == w["inputs"]["frames"] == 0
    # the base OTs, once per run, unbooked: 128 group elements of 384 bytes and one back
    b = w["unbooked base OT"]
    assert b["frames"] == 2 and b["ledger bytes"] is None
    assert b["payload bytes"] == ot.BASE_REQUEST_BYTES + ot.BASE_REPLY_BYTES == 49536
    assert b["wire bytes"] == 49536 + 2 * HEADER_BYTES


def test_the_garbled_material_crosses_at_its_booked_size(tiny, runs):
    """Per circuit instance: kappa bits of receiver columns and two 128-bit IKNP answers per
    client input wire, two rows per AND gate, one label per bit of r and a decoding bit per
    output offline; online only the labels of the server's share, k labels of 16 bytes per
    ReLU input."""
    plan, _ = tiny
    ref, _ = runs
    st = next(s for s in plan.impl.steps if s.kind == "act")
    c = gc_act.act_circuit(st.spec)
    n = 2 * 2 * 2 * 2  # images x channels x 2 x 2 pooled outputs
    bits = {m.what: m.bits for m in ref.ledger.messages if m.label == st.name}
    assert bits["IKNP OT: 2 masked labels per bit"] == n * 2 * 128 * c.evaluator_inputs.size
    assert bits["IKNP OT: receiver columns (client's share fixed offline)"] == \
        ot.columns_bits(n * c.evaluator_inputs.size)
    assert bits["garbled tables (2 per AND)"] == n * 2 * 128 * c.n_and
    assert bits["labels of r"] == n * 128 * c.outputs.size
    assert bits["output decoding bits"] == n * c.outputs.size
    assert bits["labels of x_s"] == n * st.spec.m * st.spec.k * gcmod.KAPPA


def test_measured_rounds_equal_ledger_rounds(runs):
    """Each online message depends on the one before ([x]_c + R_c, labels of x_s, ...,
    the server's share of the logits): with a linear last layer the causal depth is the
    ledger's rounds."""
    ref, res = runs
    assert res.extra["wire"]["measured rounds"] == ref.ledger.rounds("online") == 4


def test_a_network_ending_with_relu_measures_one_round_fewer():
    """The server's share of the logits is then its last GC mask r: it depends on nothing
    received after the last [x]_c + R_c, so it leaves with the last labels of x_s although
    the ledger books it one round later."""
    net = Network("tiny_relu_end", (1, 4, 4), [Flatten(), Dense(6), ReLU(), Dense(3), ReLU()])
    g = np.random.default_rng(2)
    params = init_params(net, np.random.default_rng(0))
    plan = ppnn.compile("delphi_gc", net, params, calib=g.uniform(0, 1, (8, 1, 4, 4)))
    x = g.uniform(0, 1, (1, 1, 4, 4))
    ref, res = ppnn.run(plan, x, SEED), ppnn.run(plan, x, SEED, transport="tcp")
    assert np.array_equal(res.logits, ref.logits)
    assert res.ledger.messages == ref.ledger.messages
    assert ref.ledger.rounds("online") == 5
    assert res.extra["wire"]["measured rounds"] == ref.ledger.rounds("online") - 1
    assert set(res.extra["wire"]["extra waits"].values()) == {0}


def test_no_party_waits_twice_in_a_round(runs):
    ref, res = runs
    w = res.extra["wire"]
    assert set(w["extra waits"].values()) == {0}, w["extra wait steps"]
    # the client waits for the labels of x_s and the logits, the server for [x]_c + R_c
    # (the receiver columns of a layer arrive with it); the client's third wait is for the
    # base OTs' first message before its first receiver columns: the server sent it at the
    # start of the run, before any protocol frame, so it is there, in the round of
    # [x]_c + R_c in which the client waits for nothing else (no extra wait, no extra depth)
    assert w["waits"] == {"P0": 3, "P1": 2, "dealer": 0}


def test_the_client_never_holds_both_labels_of_a_wire(tiny):
    """From what the client's process received in preprocessing: no label in the clear,
    its own label after unmasking, a pseudorandom string in the other place (never the other
    label, never Delta away from its own)."""
    plan, x = tiny
    tasks = {"P0": {"plan": plan.impl, "x": x, "record_ot": True},
             "P1": {"plan": plan.impl, "x_shape": x.shape, "record_ot": True},
             "dealer": {"plan": plan, "x": x, "seed": SEED}}
    launched = launch(delphi_gc_job, tasks, timeout=30)
    sent, got = launched["P1"][0]["ot"], launched["P0"][0]["ot"]
    assert len(sent) == len(got) == sum(st.kind == "act" for st in plan.impl.steps)
    assert sum(check_one_label_per_wire(s, c) for s, c in zip(sent, got)) > 0


def test_only_the_familys_processes_run(runs):
    _, res = runs
    assert set(res.extra["wire"]["party seconds"]) == {"P0", "P1", "dealer"}


@pytest.mark.parametrize("broken", BROKEN)
def test_a_step_reading_the_other_partys_value_fails_the_garbage_test(tiny, runs, broken):
    plan, x = tiny
    ref, _ = runs
    res = run_plan(plan, x[:1], SEED, broken=broken, timeout=20)
    assert not np.array_equal(res.logits, ref.logits[:1])


def test_the_simulation_cannot_tell_the_broken_delphi_step(tiny, runs):
    plan, x = tiny
    ref, _ = runs
    with reading_client_share():
        assert np.array_equal(ppnn.run(plan, x, SEED).logits, ref.logits)


@pytest.mark.parametrize("broken", [None, *BROKEN[1:]])
def test_the_simulation_cannot_tell_the_broken_gc_steps(broken):
    """Both halves in one process, where every copy is the real value: the broken steps give
    the circuit's output like the real one (only the wire's garbage exposes them)."""
    spec = gc_act.ActSpec(16, 4, 4)
    c = gc_act.act_circuit(spec)
    g = np.random.default_rng(5)
    ring = Ring(spec.k)
    x = g.integers(-2000, 2000, (300, spec.m))
    cw = ring.random(g, x.shape)
    sw = ring.sub(ring.from_signed(x), cw)
    r = ring.random(g, 300)
    f = GCParty("server", g, broken).garble(c, spec, sw, r, 0, cw)
    z = GCParty("client", g, broken).evaluate(c, spec, f, cw, 0, sw)
    assert np.array_equal(ring.to_signed(ring.add(z, r)), gc_act.plain_act(x, spec))


def test_bad_arguments_are_refused(tiny):
    plan, x = tiny
    with pytest.raises(ValueError, match="broken must be"):
        run_plan(plan, x, SEED, broken="nope")
    with pytest.raises(ValueError, match="me must be one of"):
        GCParty("P0", np.random.default_rng(0))
    with pytest.raises(TypeError, match="WireLedger"):
        GCParty("client", np.random.default_rng(0))(np.zeros((1, 4), np.uint64),
                                                    np.zeros((1, 4), np.uint64),
                                                    gc_act.ActSpec(16, 4, 4), Ledger(("a", "b")))


def test_cli_runs_delphi_gc_on_the_wire(capsys):
    from ppnn.__main__ import main

    assert main(["wire", "delphi_gc", "minionn_mnist", "--timeout", "60"]) == 0
    out = capsys.readouterr().out
    assert "the client, the server and the dealer as processes" in out
    assert "logits and ledger equal the in-process run: yes" in out


def test_the_dealers_masks_are_fresh_in_each_run(tiny, monkeypatch):
    """The dealer's process draws Delphi's masks from the OS CSPRNG: two runs with the same
    seed deal each party different masks, and give the same logits."""
    from ppnn.wire import delphi_gc as wd
    from wirecheck import received_in, same

    plan, x = tiny
    results = []
    got = [received_in(monkeypatch, wd, lambda: results.append(
        ppnn.run(plan, x, SEED, transport="tcp"))) for _ in range(2)]
    assert np.array_equal(results[0].logits, results[1].logits)
    assert "reaches no party's process" in results[0].provenance["randomness"]
    for role in ("P0", "P1"):
        first, second = ([a for _, what, _, a in g[role] if "Delphi masks" in what] for g in got)
        assert first and len(first) == len(second)
        assert not any(same(a, b) for a, b in zip(first, second))
