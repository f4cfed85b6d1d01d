"""Wire mode for GAZELLE / GALA + garbled ReLU (issue 29): the client and the server as
processes over loopback TCP. Every booked message crosses as its booked bits plus the stated
header (simulated ciphertexts: their slot values inside the booked size; the garbler's
message: OT label pairs, tables, labels, decoding bits), the client's logits and the ledger
equal the in-process run with the same seed, and a step that reads the other party's value
fails the garbage test."""

from __future__ import annotations

import numpy as np
import pytest

import ppnn
from ppnn.core import Ledger
from ppnn.he import gc as gcmod
from ppnn.protocols import gc_act
from ppnn.wire.hegc import BROKEN, run_plan
from wirecheck import check_booked_bytes, tiny_network

SEED = 3
FAMILIES = ("gazelle_gc", "gala_gc")


@pytest.fixture(scope="module")
def tiny():
    net, params, calib, x = tiny_network()
    plans = {f: ppnn.compile(f, net, params, calib=calib) for f in FAMILIES}
    return plans, x, (net, params, calib)


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
    two labels per client input wire, two rows per AND gate, one label per garbler input,
    one decoding bit per output -- per circuit instance."""
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
