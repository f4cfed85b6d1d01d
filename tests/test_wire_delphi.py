"""Wire mode for Delphi + Tabula (issue 29, step 2): the client, the server and the dealer as
processes over loopback TCP. Every booked message crosses as its booked bits plus the stated
header, the rounds measured on the wire equal the ledger's, the client's logits and the
ledger equal the in-process run with the same seed (the garbage test: each party's process
holds garbage for everything it does not hold), and a step that reads the other party's
share fails it."""

from __future__ import annotations

import numpy as np
import pytest

import ppnn
from ppnn.core import Ledger
from ppnn.wire import HEADER_BYTES, frame_bytes
from ppnn.wire.delphi import WireLedger, reading_client_share, run_plan
from ppnn.wire.summary import summary_frame
from wirecheck import tiny_network

SEED = 3


@pytest.fixture(scope="module")
def tiny():
    net, params, calib, x = tiny_network()
    return ppnn.compile("delphi_tabula", net, params, calib=calib), x


@pytest.fixture(scope="module")
def runs(tiny):
    plan, x = tiny
    return ppnn.run(plan, x, SEED), ppnn.run(plan, x, SEED, transport="tcp")


def test_garbage_test_the_client_gets_the_in_process_logits(runs):
    ref, res = runs
    assert np.array_equal(res.logits, ref.logits)
    assert np.array_equal(res.predictions, ref.predictions)
    assert res.extra["transport"] == "tcp"


def test_wire_ledger_equals_in_process_ledger(runs):
    ref, res = runs
    assert res.ledger.messages == ref.ledger.messages
    assert res.ledger.rounds("online") == ref.ledger.rounds("online")


def test_every_message_is_its_booked_bits_plus_the_header(runs):
    ref, res = runs
    w = res.extra["wire"]["classes"]
    msgs = ref.ledger.messages
    online = [m for m in msgs if m.phase == "online"]
    dealer = [m for m in msgs if m.sender == Ledger.DEALER]
    he = [m for m in msgs if m.phase == "offline" and m.sender != Ledger.DEALER]
    assert online and dealer and he
    for name, ms in (("online", online), ("offline dealer", dealer), ("offline setup", he)):
        assert w[name]["frames"] == len(ms), name
        assert w[name]["bits"] == sum(m.bits for m in ms), name
        assert w[name]["wire bytes"] == sum(-(-m.bits // 8) + HEADER_BYTES for m in ms), name
        assert w[name]["wire bytes"] == w[name]["expected wire bytes"]
    assert {m.what for m in online} == {"[x]_c + R_c", "x_trunc_0 + s_0 mod 2^b",
                                        "x_trunc_1 + s_1 mod 2^b",
                                        "server's share of the logits"}
    assert w["online"]["wire bytes"] == sum(frame_bytes(m.bits) for m in online)
    # Delphi's masks (not booked: the result of the counted HE), one frame per linear layer
    # and party, 64 bits per element: client R_c and -(W R_c + R_s), server R_s. Batch of 2:
    # conv 72 in / 64 out, dense 16 in / 8 out
    assert w["offline ideal"]["frames"] == 2 * 2
    assert w["offline ideal"]["payload bytes"] == 8 * ((72 + 64 + 16 + 8) + (64 + 8))
    assert w["inputs"]["frames"] == 0  # each party's input is its own


def test_measured_rounds_equal_ledger_rounds(runs):
    ref, res = runs
    assert res.extra["wire"]["measured rounds"] == ref.ledger.rounds("online") >= 4
    table = summary_frame(res.extra["wire"])
    assert "offline ideal bytes" in list(table["quantity"])


def test_no_party_waits_twice_in_a_round(runs):
    """Tabula's exchange of ``x_trunc_i + s_i``: each party sends its half before it waits
    for the other's (the server's receive is deferred to the end of the round); the counted
    HE's filler is not waited for."""
    ref, res = runs
    w = res.extra["wire"]
    assert set(w["extra waits"].values()) == {0}, w["extra wait steps"]
    assert 0 < max(w["waits"].values()) <= ref.ledger.rounds(None)

def test_a_step_reading_the_client_share_fails_the_garbage_test(tiny, runs):
    plan, x = tiny
    ref, _ = runs
    # the simulation cannot tell the broken Delphi step from the real one ...
    with reading_client_share():
        assert np.array_equal(ppnn.run(plan, x, SEED).logits, ref.logits)
    # ... the garbage test can
    broken = run_plan(plan, x, SEED, broken=True, timeout=20)
    assert not np.array_equal(broken.logits, ref.logits)


def test_wire_ledger_checks_its_party():
    with pytest.raises(ValueError, match="me must be one of"):
        WireLedger(("client", "server"), None, "P0")


def test_cli_runs_delphi_tabula_on_the_wire(capsys):
    from ppnn.__main__ import main

    assert main(["wire", "delphi_tabula", "minionn_mnist", "--timeout", "20"]) == 0
    out = capsys.readouterr().out
    assert "the client, the server and the dealer as processes" in out
    assert "logits and ledger equal the in-process run: yes" in out


def test_the_dealers_material_follows_the_seed_only_in_its_process(tiny, monkeypatch):
    """Delphi + Tabula keeps the seed for reproducibility (its logits depend on the shares):
    the dealer's masks and table secrets are the same in two runs with one seed, and the
    provenance says so; the parties' tasks hold no seed; with ``seed=None`` they differ."""
    from ppnn.wire import delphi as wd
    from wirecheck import received_in, same

    plan, x = tiny
    tasks, launch = [], wd.launch

    def material(seed):  # per party: Delphi's masks, the tables' secrets s
        results = []
        got = received_in(monkeypatch, wd, lambda: results.append(
            ppnn.run(plan, x, seed, transport="tcp")))
        return results[0], {r: [a if "masks" in w else a[:1] for _, w, cls, a in got[r]
                                if cls != "online"] for r in ("P0", "P1")}

    def spy(job, t, **kw):
        tasks.append(t)
        return launch(job, t, **kw)

    monkeypatch.setattr(wd, "launch", spy)
    (r1, a), (r2, b) = material(SEED), material(SEED)
    monkeypatch.setattr(wd, "launch", launch)
    assert np.array_equal(r1.logits, r2.logits)
    assert "the run seed in the dealer's process" in r1.provenance["randomness"]
    assert all("seed" not in t[r] for t in tasks for r in ("P0", "P1"))
    assert a["P0"] and all(same(u, v) for r in a for u, v in zip(a[r], b[r]))
    (_, c), (r4, d) = material(None), material(None)
    assert "OS entropy" in r4.provenance["randomness"]
    assert not any(same(u, v) for r in c for u, v in zip(c[r], d[r]))
