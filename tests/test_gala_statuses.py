"""GALA's status defects of issue 46 (section 3): DELPHI's communication and the plaintext
model's split are computed, not 'not reproducible here' (D14); the communication rows of
Tables X / XI name what they count, and a paper's-choice row counts it the paper's way
(D8)."""

from __future__ import annotations

import pytest

from galacheck import compare_all, conv_runs, mv_runs, nets
from ppnn import report
from ppnn.experiments import paper_vs_ours as pvo
from ppnn.experiments.gala import paper, runs


def test_d14_delphi_communication_and_the_plaintext_split_are_computed(figures):
    layers, totals = nets()
    compare_all(mv_runs(), conv_runs(), layers, totals)
    rows = []
    for table in ("table6", "table8", "table10", "table11"):
        cmp = pvo.COMPARED[("gala", table)]
        d = cmp[cmp["row"].str.contains("DELPHI") & (cmp["metric"] == "comm")]
        assert (d["status"] != "not reproducible here").all() and d["ours"].notna().all()
        rows += list(d["row"])
    assert len(rows) == 14
    t6 = pvo.COMPARED[("gala", "table6")].set_index(["row", "metric"])
    assert float(t6.loc[("1x2048; DELPHI[46]", "comm"), "ours"]) == pytest.approx(
        runs.delphi_layer_comm_MB(2048, 1)["total"])
    t12 = pvo.COMPARED[("gala", "table12")]
    plain = t12[t12["metric"] == "linear_pct_plaintext"]
    assert len(plain) == 6 and (plain["status"] == "machine-dependent").all()
    assert (t12["metric"] == "linear_pct_plaintext (claim)").sum() == 6


def test_d8_communication_rows_name_the_accounting(figures):
    layers, totals = nets()
    compare_all(mv_runs(), conv_runs(), layers, totals)
    t10 = pvo.COMPARED[("gala", "table10")].set_index(["row", "metric"])
    choice = report.paper_choice("MLP; GAZELLE", paper.PAPER_NET_COMM, inferred=True)
    t = totals["MLP"]
    assert float(t10.loc[(choice, "comm"), "ours"]) == pytest.approx(
        (t["ct_up"] + t["ct_down"]) * 30720 / 1e6)
    assert t10.loc[("MLP; GAZELLE", "comm"), "status"] == "definition differs"
    assert "accounting: ours = " in t10.loc[("MLP; GAZELLE", "comm"), "reason"]
    t11 = pvo.COMPARED[("gala", "table11")].set_index(["row", "metric"])
    r = t11.loc[("ResNet-50; GAZELLE", "comm")]
    assert r["status"] == report.NETWORK_UNSPECIFIED
    assert r["reason"].startswith("network unspecified: accounting: ")
    gc = t["gc_comm_bits"] / (t["gc_comm_bits"] + t["ct_comm_bits"])
    assert f"= {100 * gc:.0f}% of ours" in t10.loc[("MLP; GAZELLE", "comm"), "reason"]
