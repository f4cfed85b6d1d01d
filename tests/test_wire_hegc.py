"""Wire mode for GAZELLE / GALA + garbled ReLU (issue 29): the client and the server as
processes over loopback TCP. Every booked message crosses as its booked bits plus the stated
header (simulated ciphertexts: their slot values inside the booked size; the client's IKNP
receiver columns; the garbler's message: the IKNP answers for its label pairs, tables,
labels, decoding bits), the client's logits and the ledger equal the in-process run with the
same seed, the client never holds both labels of a wire, the base OTs cross once, unbooked,
and a step that reads the other party's value fails the garbage test."""

from __future__ import annotations

import numpy as np
import pytest

import ppnn
from ppnn.core import Ledger
from ppnn.he import gc as gcmod
from ppnn.he import ot
from ppnn.protocols import gc_act
from ppnn.wire import HEADER_BYTES
from ppnn.wire.hegc import BROKEN, hegc_job, run_plan
from ppnn.wire.launch import launch
from wirecheck import check_booked_bytes, check_one_label_per_wire, tiny_plans

SEED = 3
FAMILIES = ("gazelle_gc", "gala_gc")


@pytest.fixture(scope="module")
def tiny():
    return tiny_plans(FAMILIES)


@pytest.fixture(scope="module")
def runs(tiny):
    plans, x, _ = tiny
    return {f: (ppnn.run(p, x, SEED), ppnn.run(p, x, SEED, transport="tcp"))
            for f, p in plans.items()}


@pytest.mark.parametrize("fam", FAMILIES)
def test_garbage_test_the_client_gets_the_in_process_logits(runs, fam):
    ref, res = runs[fam]
    assert np.array_equal(res.logits, ref.logits)
    assert np.array_equal(res.predictions, ref.predictions)
    assert res.extra["transport"] == "tcp"
    assert "masks r: the run seed in the server's process" in res.provenance["randomness"]


@pytest.mark.parametrize("fam", FAMILIES)
def test_wire_ledger_equals_in_process_ledger(runs, fam):
    ref, res = runs[fam]
    assert res.ledger.messages == ref.ledger.messages
    assert [(o.op, o.n, o.party) for o in res.ledger.ops] == \
        [(o.op, o.n, o.party) for o in ref.ledger.ops]


@pytest.mark.parametrize("fam", FAMILIES)
def test_every_message_is_its_booked_bits_plus_the_header(runs, fam):
    ref, res = runs[fam]
    w = res.extra["wire"]["classes"]
    online, keys = check_booked_bytes(ref.ledger, res.extra["wire"])
    assert online and keys and all(m.sender != Ledger.DEALER for m in ref.ledger.messages)
    for name in ("offline dealer", "inputs", "offline ideal"):  # no dealer, nothing unbooked
        assert w[name]["frames"] == 0
    assert {m.what for m in online} == {"[x]_C", "[y - r]_C", "[x_C]_C (client's share)",
                                        "IKNP OT: receiver columns",
                                        "OT answers, tables, labels",
                                        "server's share of the logits"}


def test_the_garbler_frame_is_label_pairs_tables_labels_and_decoding(tiny, runs):
    """The booked 'OT answers, tables, labels' bits are exactly what the wire frame holds:
    two IKNP answers (128 bits each) per client input wire, two rows per AND gate, one label
    per garbler input, one decoding bit per output -- per circuit instance; the receiver
    columns are kappa bits per client input wire."""
    plans, _, _ = tiny
    ref, _ = runs["gala_gc"]
    st = next(s for s in plans["gala_gc"].impl["plan"].steps if s.kind == "act")
    c = gc_act.act_circuit(st.spec)
    cost = gcmod.gc_cost(c)
    per = 128 * (2 * c.evaluator_inputs.size + 2 * c.n_and + c.garbler_inputs.size) \
        + c.outputs.size
    assert per == cost.ot_sender + cost.tables + cost.garbler_labels + cost.decoding
    m = next(m for m in ref.ledger.messages if m.what == "OT answers, tables, labels")
    assert m.bits % per == 0 and m.bits // per == 2 * 2 * 2  # 2 channels x 2 x 2 windows
    cols = next(m for m in ref.ledger.messages if m.what == "IKNP OT: receiver columns")
    assert cols.bits == ot.columns_bits(c.evaluator_inputs.size * m.bits // per)


@pytest.mark.parametrize("fam", FAMILIES)
def test_the_base_ots_cross_once_unbooked(runs, fam):
    """128 base OTs per run: the server's 128 group elements of 384 bytes, the client's one
    element back, in the class the ledger does not book."""
    _, res = runs[fam]
    b = res.extra["wire"]["classes"]["unbooked base OT"]
    assert b["frames"] == 2 and b["ledger bytes"] is None
    assert b["payload bytes"] == ot.BASE_REQUEST_BYTES + ot.BASE_REPLY_BYTES == 49536
    assert b["wire bytes"] == 49536 + 2 * HEADER_BYTES


def test_the_client_never_holds_both_labels_of_a_wire(tiny):
    """From what the client's process received: no label in the clear, its own label after
    unmasking, a pseudorandom string in the other place (never the other label, never
    Delta away from its own) -- the IKNP OT, not the pairs in the clear."""
    plans, x, _ = tiny
    plan = plans["gala_gc"]
    tasks = {"P0": {"plan": plan, "x": x[:1], "record_ot": True},
             "P1": {"plan": plan, "x_shape": x[:1].shape, "seed": SEED, "record_ot": True}}
    launched = launch(hegc_job, tasks, timeout=30)
    sent, got = launched["P1"][0]["ot"], launched["P0"][0]["ot"]
    acts = sum(st.kind == "act" for st in plan.impl["plan"].steps)
    assert len(sent) == len(got) == acts
    assert sum(check_one_label_per_wire(s, c) for s, c in zip(sent, got)) > 0
    # the check's negative control: the pairs in the clear (as before the OT was run)
    clear = {**got[0], "received": sent[0]["pairs"], "unmasked": sent[0]["pairs"]}
    with pytest.raises(AssertionError):
        check_one_label_per_wire({**sent[0], "answers": sent[0]["pairs"]}, clear)


@pytest.mark.parametrize("fam", FAMILIES)
def test_measured_rounds(runs, fam):
    """The causal depth on the wire is one round per image below the ledger's: the server's
    share of the logits (its last mask plus its bias) does not depend on the returned
    [y - r]_C the ledger books one round before it, so both leave the server together."""
    ref, res = runs[fam]
    images = len(ref.logits)
    assert ref.ledger.rounds("online") == 7 * images
    assert res.extra["wire"]["measured rounds"] == ref.ledger.rounds("online") - images


@pytest.mark.parametrize("fam", FAMILIES)
def test_no_party_waits_twice_in_a_round(runs, fam):
    ref, res = runs[fam]
    w = res.extra["wire"]
    assert set(w["extra waits"].values()) == {0}, w["extra wait steps"]
    assert 0 < max(w["waits"].values()) <= ref.ledger.rounds(None)

@pytest.mark.parametrize("broken", BROKEN)
def test_a_step_reading_the_other_partys_value_fails_the_garbage_test(tiny, runs, broken):
    plans, x, _ = tiny
    ref, _ = runs["gala_gc"]
    res = run_plan(plans["gala_gc"], x[:1], SEED, broken=broken, timeout=20)
    assert not np.array_equal(res.logits, ref.logits[:1])


def test_other_families_and_bad_arguments_are_refused(tiny):
    plans, x, (net, params, calib) = tiny
    noflood = ppnn.compile("gazelle_gc_noflood", net, params, calib=calib)
    with pytest.raises(ValueError, match="transport='tcp' is implemented for"):
        ppnn.run(noflood, x, SEED, transport="tcp")
    with pytest.raises(ValueError, match="broken must be"):
        run_plan(plans["gala_gc"], x, SEED, broken="nope")
    with pytest.raises(ValueError, match="plan must be of"):
        run_plan(noflood, x, SEED)


def test_cli_runs_gala_gc_on_the_wire(capsys):
    from ppnn.__main__ import main

    assert main(["wire", "gala_gc", "minionn_mnist", "--timeout", "60"]) == 0
    out = capsys.readouterr().out
    assert "the client and the server as processes" in out
    assert "logits and ledger equal the in-process run: yes" in out


@pytest.mark.parametrize("fam", FAMILIES)
def test_a_network_ending_in_relu_gets_the_in_process_logits(fam):
    """falcon_lenet ends in Dense -> ReLU: the logits are the last garbled activation's
    shares, on the wire as in process."""
    from ppnn.experiments.compare import resnet
    from ppnn.nn import Conv2d, Dense, Flatten, Network, ReLU

    net = Network("ends_in_relu", (1, 6, 6), (Conv2d(3, 3, 1, 1), ReLU(), Flatten(),
                                               Dense(4), ReLU()))
    rng = np.random.default_rng(0)
    plan = ppnn.compile(fam, net, resnet.random_params(net, rng),
                        calib=rng.random((8, 1, 6, 6)), n=64)
    x = rng.random((1, 1, 6, 6))
    ref = ppnn.run(plan, x, SEED)
    assert np.asarray(ref.logits).min() >= 0
    assert np.array_equal(ppnn.run(plan, x, SEED, transport="tcp").logits, ref.logits)
