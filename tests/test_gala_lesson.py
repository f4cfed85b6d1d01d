"""02_gala's lessons: one matrix-vector product played with the slot diagram on the same
slider, and the key holder's view of the returned ciphertext with and without flooding."""

import numpy as np
import pytest

from ppnn.experiments.gala import lesson
from ppnn.widgets import protocol_player


@pytest.mark.parametrize("method", ["Naive", "GAZELLE", "GALA"])
def test_the_played_product_is_correct_and_the_slot_diagram_follows_the_steps(method):
    d = lesson.matvec_demo(method, seed=1)
    assert d.correct
    rows = d.rows()
    pos = lesson.trace_position(rows, method, len(d.trace))
    seq = [pos[s] for s in rows["step"]]
    assert seq == sorted(seq) and seq[0] == -1 and seq[-1] == len(d.trace) - 1
    # each operation of the kernel is a step of its own on the server's lane
    ops = rows[(rows["kind"] == "op") & (rows["party"] == "server")]["what"].tolist()
    assert any(w.startswith("ScMult") for w in ops) and all(", " not in w for w in ops)
    first = rows[rows["what"].str.startswith("ScMult")]["step"].iloc[0]
    assert d.panel(int(first) - 1) is None and d.panel(int(first)) is not None
    player = protocol_player(d.ledger, seat="server", split_ops=True, panel=d.panel)
    html = player.static_html()
    assert "ppnn-panel" in html and html.count("<svg") == 2


def test_gazelle_rotates_in_he_where_gala_rotates_the_plaintext_shares():
    ops = {m: lesson.matvec_demo(m, seed=2).ledger.op_counts() for m in ("GAZELLE", "GALA")}
    assert ops["GAZELLE"].get("PlainRaS", 0) == 0 and ops["GALA"]["PlainRaS"] > 0
    assert ops["GAZELLE"]["Perm"] > ops["GALA"]["Perm"]


def test_bad_demo_arguments_are_refused():
    with pytest.raises(ValueError, match="method"):
        lesson.matvec_demo("Cheetah")
    with pytest.raises(ValueError, match="W must be"):
        lesson.matvec_demo("GALA", W=np.ones((3, 3), int))
    with pytest.raises(TypeError, match="panel"):
        protocol_player(lesson.matvec_demo("GALA").ledger, panel="slots")


@pytest.fixture(scope="module")
def he_flood():
    from ppnn.he.bfv import SealBFV

    return SealBFV(poly_degree=8192, n=2048, flood_bits=40, seed=11)


def test_flooded_view_passes_the_ks_test_and_the_unflooded_view_fails_it(he_flood):
    off = lesson.flood_view_experiment(he_flood, flooded=False, seed=3)
    on = lesson.flood_view_experiment(he_flood, flooded=True, seed=3)
    assert off.correct and on.correct
    assert off.test.distinguishes and off.test.statistic > 0.4
    assert not on.test.distinguishes
    assert he_flood.flood_bits == 40  # the experiment restored the backend's setting
    fig = lesson.plot_flood_view([off, on])
    assert len(fig.axes) == 2


def test_flood_view_needs_real_seal():
    with pytest.raises(ValueError, match="real SEAL"):
        lesson.flood_view_experiment(lesson.BFVSim(n=16), flooded=True)
