"""GALA's headlines and ladders (issue 46): the paper's printed inputs (Table V / VII counts,
Table I unit costs) give its printed runtimes; every ladder starts from the tables' own
number and ends at the paper's or states its residual; ours for each headline is read off
the compared tables, and every short headline and claim row has a ladder."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from galacheck import UNIT, compare_all, conv_runs, mv_runs
from galacheck import nets as _nets
from ppnn import report
from ppnn.experiments import ladder as lad
from ppnn.experiments import paper_vs_ours as pvo
from ppnn.experiments.gala import ladders, runs
from ppnn.protocols.gala import costs


@pytest.fixture
def nets():
    return _nets()


def _ms(v) -> float:
    return float(v) * 1e3


def _ref(table):
    return report.load_paper("gala", table).set_index(["row", "metric"])["value"].astype(float)


# -- the paper's printed inputs give its printed results ---------------------------------------
def test_paper_unit_costs_are_table1s_and_the_inferred_hoisted_rotation():
    pu = ladders.paper_unit_costs()["seconds"]
    assert pu["Perm"] == pytest.approx(1.96e-3 / 11)
    assert pu["ScMult"] == pytest.approx(0.01e-3 / 2)
    assert pu["Add"] == pytest.approx(0.037e-3 / 11)
    # hoisting: a HstPerm ~ Perm / 9, inferred from the Diagonal rows of Table VI
    assert 15e-6 < pu["HstPerm"] < 25e-6
    assert pu["DecPerm"] == pytest.approx(pu["Perm"] - pu["HstPerm"])


def test_table1_counts_times_its_unit_costs_give_its_totals_and_the_10x():
    pu = ladders.paper_unit_costs()
    t1 = _ref("table1")
    gz, ga = ({"Perm": t1[(r, "perm_count")], "ScMult": t1[(r, "mult_count")],
               "Add": t1[(r, "add_count")]} for r in ("GAZELLE", "Proposed"))
    assert _ms(ladders.kernel_seconds(gz, pu)) == pytest.approx(t1[("GAZELLE", "total_time")],
                                                                rel=0.1)
    assert _ms(ladders.kernel_seconds(ga, pu)) == pytest.approx(t1[("Proposed", "total_time")],
                                                                rel=0.1)
    assert ladders.kernel_seconds(gz, pu) / ladders.kernel_seconds(ga, pu) == pytest.approx(
        10, rel=0.1)


@pytest.mark.parametrize("dims", ["1x2048", "2x1024", "16x128"])
def test_table5_counts_times_table1_costs_give_table6s_gazelle_times(dims):
    t5, t6 = _ref("table5"), _ref("table6")
    r = f"{dims}; GAZELLE"
    counts = {"Perm": t5[(r, "perm")], "HstPerm": t5[(r, "hstperm")],
              "ScMult": t5[(r, "scmult")], "Add": t5[(r, "add")]}
    got = _ms(ladders.kernel_seconds(counts, ladders.paper_unit_costs()))
    assert got == pytest.approx(t6[(f"{dims}; GAZELLE[38]", "lan_time")], rel=0.1)


@pytest.mark.parametrize("dims", [runs.conv_label(*d) for d in runs.CONV_DIMS])
def test_table7_counts_times_table1_costs_give_table8s_times_and_speedups(dims):
    """Table VIII from Table VII's printed counts (in our convention) x Table I's costs: the
    GAZELLE time and GALA's speed-up within 10 % -- including the 14x of the row whose
    printed GALA counts are an erratum."""
    pu = ladders.paper_unit_costs()
    ours = runs.count_conv(dims=[d for d in runs.CONV_DIMS if runs.conv_label(*d) == dims])
    c = {m: {op: int(ours[ours.method == m].iloc[0][op]) for op in costs.HE_OPS}
         for m in ("GAZELLE", "GALA")}
    p = {m: ladders._paper_conv_counts(dims, m, c[m]) for m in c}
    t8 = _ref("table8")
    gz, ga = (ladders.kernel_seconds(p[m], pu) for m in ("GAZELLE", "GALA"))
    assert _ms(gz) == pytest.approx(t8[(f"{dims}; GAZELLE", "lan_time")], rel=0.1)
    assert gz / ga == pytest.approx(t8[(f"{dims}; GAZELLE", "lan_speedup")], rel=0.1)


# -- the time model of the ladders is the tables' ---------------------------------------------
def test_the_network_model_at_step_zero_is_the_tables_projection(nets):
    _, totals = nets
    for net in ("AlexNet", "ResNet-50"):
        t = totals[net]
        for tag in ("lan", "wan"):
            assert ladders._Net(t, UNIT, tag).speedup() == pytest.approx(t[f"{tag}_speedup"])
        assert ladders._Net(t, UNIT, "lan").nonlinear_pct() == pytest.approx(
            100 - t["linear_pct_gazelle"])


def test_a_kernel_ladder_with_the_papers_counts_ends_at_its_printed_speedup():
    """Table VIII 16x16@128 / 1x1@128 (our counts are Table VII's): Table I's unit costs,
    then no LAN transfer, give the printed 9x."""
    conv = conv_runs()
    x = ladders.kernel_ladder("16x16@128; 1x1@128; GAZELLE", "lan_speedup", conv, 9.0)
    row = conv[(conv.dims == "16x16@128; 1x1@128") & (conv.method == "GAZELLE")].iloc[0]
    assert x.ours == pytest.approx(row["lan_speedup"])
    assert [s.assumption for s in x.steps] == ["unit costs", "network model"]
    assert x.reached and x.verdict.startswith("reproduced under the paper's assumptions")
    pu = ladders.paper_unit_costs()
    p = {m: ladders._paper_conv_counts("16x16@128; 1x1@128", m, {"HstPerm": 0})
         for m in ("GAZELLE", "GALA")}
    assert x.end == pytest.approx(ladders.kernel_seconds(p["GAZELLE"], pu)
                                  / ladders.kernel_seconds(p["GALA"], pu))


def test_the_14x_needs_table7s_printed_counts_an_erratum():
    x = ladders.kernel_ladder("16x16@2048; 1x1@512; GAZELLE", "lan_speedup", conv_runs(), 14.0)
    assert x.steps[-1].assumption == "paper's inconsistency"
    assert x.steps[-1].erratum == "Table VII, 16x16@2048 / 1x1@512, GALA"
    assert x.steps[-1].erratum in set(report.load_errata("gala")["where"])
    assert x.reached


def test_network_ladders_reach_table11_with_the_papers_counts_costs_and_shares(nets):
    _, totals = nets
    for net, target in (("AlexNet", 2.5), ("ResNet-50", 8.3)):
        x = ladders.network_ladder(net, "lan_speedup", totals[net], UNIT, target)
        assert x.ours == pytest.approx(totals[net]["lan_speedup"])
        assert x.steps[0].assumption == "operation counts"
        assert x.reached, (net, x.values)
    # CrypTFlow2: the same counts and costs do not give its printed speed-up
    x = ladders.network_ladder("AlexNet", "lan_speedup", totals["AlexNet"], UNIT, 6.5,
                               "CrypTFlow2")
    assert not x.reached and x.verdict.endswith("unexplained")


def test_the_stated_mlp_keeps_its_counts_and_has_no_share_step(nets):
    _, totals = nets
    x = ladders.network_ladder("MLP", "wan_speedup", totals["MLP"], UNIT, 1.0)
    assert x.table == "Table X" and x.ours == pytest.approx(totals["MLP"]["wan_speedup"])
    assert {s.assumption for s in x.steps} <= {"unit costs", "network model"}


def test_fig9_reads_its_layers_on_imagenet_alexnet_and_reaches_nearly_3x():
    x = ladders.fig9_ladder("AlexNet; layer 8", 1.0, UNIT)
    assert [s.assumption for s in x.steps] == ["network geometry", "unit costs"]
    assert "inferred" in x.steps[0].paper_as and x.reached


# -- headlines: ours read off the tables, a ladder for each short one -------------------------
def test_headline_values_are_the_compared_tables_cells(figures, nets):
    layers, totals = nets
    mv, conv = mv_runs(), conv_runs()
    compare_all(mv, conv, layers, totals)
    ours = ladders.headline_values().set_index(["row", "metric"])["value"]
    claims = report.load_paper("gala", "headlines")
    assert set(ours.index) == set(zip(claims["row"], claims["metric"]))
    assert ours.notna().all()
    t6 = pvo.COMPARED[("gala", "table6")].set_index(["row", "metric"])["ours"]
    assert ours[("dot product vs DELPHI and CrypTFlow2 (up to)", "speedup")] == \
        pytest.approx(float(t6[("1x2048; GAZELLE[38]", "lan_speedup")]))
    assert ours[("ResNet-50 vs GAZELLE", "speedup")] == pytest.approx(
        totals["ResNet-50"]["lan_speedup"])
    assert ours[("non-linear share of GAZELLE on VGG", "nonlinear_pct_gazelle")] == \
        pytest.approx(100 - totals["VGG"]["linear_pct_gazelle"])
    assert ours[("Perm vs Add", "perm_over_add")] == pytest.approx(
        UNIT.loc["Perm", "seconds"] / UNIT.loc["Add", "seconds"])
    assert ours[("GAZELLE on ResNet-152", "gazelle_lan_time")] == pytest.approx(
        totals["ResNet-152"]["gazelle_lan_s"])


def test_every_short_row_and_headline_gets_a_ladder(figures, nets):
    layers, totals = nets
    mv, conv = mv_runs(), conv_runs()
    compare_all(mv, conv, layers, totals)
    ladders.headlines(mv, conv, UNIT, totals)
    saved = lad.load("gala")
    keys = set(saved["key"])
    hl = pd.read_csv(figures / "figures" / "tables" / "headlines_gala.csv", dtype=str,
                     keep_default_na=False)
    short = lad.needs_ladder(hl.rename(columns={"verdict": "status", "claim": "row"}))
    assert len(short) > 0
    for r in short.itertuples():
        assert lad.key("Headlines", r.row, r.metric) in keys, r.row
    for (_, table), cmp in pvo.COMPARED.items():
        for r in lad.needs_ladder(cmp).itertuples():
            assert lad.key(r.table, r.row, r.metric) in keys, (table, r.row, r.metric)
    # the headline table carries each ladder's verdict
    assert (short["ladder"] != "").all()
    for k, g in saved.groupby("key"):
        assert g["value"].iloc[0] > 0 and g["step"].tolist() == list(range(len(g))), k


def test_a_share_headline_is_judged_on_its_smaller_side(figures):
    """Issue 46 D13 for headlines: GAZELLE's non-linear share, 14.7 % against the paper's
    2.3 %, is short of the magnitude (a share of the run time is a claim, not a timing)."""
    frame = pd.DataFrame([("non-linear share of GAZELLE on AlexNet", "nonlinear_pct_gazelle",
                           14.7, "projected", "Table XII")],
                         columns=["row", "metric", "value", "kind", "note"])
    df = report.headlines("gala", frame).set_index("claim")
    assert df.loc["non-linear share of GAZELLE on AlexNet", "verdict"] == \
        "direction holds, magnitude not reached"
    assert np.isclose(float(df.loc["non-linear share of GAZELLE on AlexNet",
                                   "paper_value"]), 2.3)
