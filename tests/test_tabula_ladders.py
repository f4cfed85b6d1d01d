"""Tabula's rows that compare the paper with itself or with another definition: no row
computed only from the paper's own printed numbers is "exact"; Table 4's CrypTFlow2 estimate
is no reproduction; Fig. 5's saving is compared at the paper's bit width."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from ppnn import report
from ppnn.experiments.tabula import paper as ex
from ppnn.he import gc
from ppnn.protocols.tabula import costs


@pytest.fixture(scope="module")
def pc():
    return ex.per_call_costs(bits=(2, 4, 8, 10), gc_bits=(8, 16, 32), n=16)


@pytest.fixture(scope="module")
def meas():
    # synthetic unit costs: the builders must not care where they come from
    return {"tabula_online_s": {b: 1e-7 for b in (2, 4, 8, 10)}, "gather_s": {8: 5e-8},
            "gc_s": {b: {"garble_s": b * 1e-6, "evaluate_s": b * 5e-7, "total_s": b * 1.5e-6}
                     for b in (8, 16, 32)},
            "pre_published_s": {8: 0.1}, "pre_ours_s": {8: 0.001}, "mac_s": 1e-9}


@pytest.fixture(scope="module")
def nc():
    return ex.network_costs()


@pytest.fixture(scope="module")
def tr(meas):
    sweep = pd.DataFrame([{"zoo": z, "dataset": "mnist", "bits": b, "accuracy": a,
                           "float_accuracy": 0.97}
                          for z in ("tabula_lenet", "mlp_784_128_128_10")
                          for b, a in ((2, 0.5), (4, 0.95), (8, 0.97))])
    return ex.tradeoffs(sweep, meas)


def _perturbed(x, rng: np.random.Generator):
    """Every number of ours in ``x`` (per-call costs, timings, network counts, a sweep's
    costs) times its own factor in [1.2, 3) -- one factor for all would cancel in a ratio;
    a GC cost's fields times 3; a sweep's accuracies all at float accuracy (so the widths
    chosen from them move)."""
    if isinstance(x, dict):
        return {k: _perturbed(v, rng) for k, v in x.items()}
    if isinstance(x, gc.GCCost):
        return dataclasses.replace(x, **{d.name: 3 * getattr(x, d.name)
                                         for d in dataclasses.fields(x)})
    if isinstance(x, bool):
        return x
    if isinstance(x, int | float | np.integer | np.floating):
        return x * rng.uniform(1.2, 3.0)
    if isinstance(x, pd.DataFrame):
        out = x.copy()
        keep = {"bits", "accuracy", "plain_accuracy", "float_accuracy", "n_test"}
        for c in out.columns:
            if c not in keep and pd.api.types.is_numeric_dtype(out[c]):
                out[c] = out[c] * rng.uniform(1.2, 3.0, len(out))
        if "accuracy" in out.columns:
            out["accuracy"] = out["float_accuracy"]
        return out
    return x


def test_no_row_computed_only_from_the_papers_own_numbers_is_exact(pc, meas, nc, tr,
                                                                   monkeypatch):
    """Issue 46, D2: every Tabula table is built twice, from our runs and with every number of
    ours perturbed (per-call ledgers, timings, network counts, the trade-off sweep, our GC and
    table cost models); a row whose value does not move was computed from the paper's printed
    numbers alone, so it must be of kind arithmetic (status 'formula'), input or quoted --
    never 'exact', 'within tolerance' or 'differs'."""
    def tables(pc_, meas_, nc_, tr_):
        return {"table1": ex.table1(pc_, meas_), "table2": ex.table2(pc_),
                "table4": ex.table4(nc_), "table5": ex.table5(nc_), "table6": ex.table6(pc_),
                "table7": ex.table7(meas_), "table8": ex.table8(nc_, meas_),
                "table9": ex.table9(pc_, meas_), "table10": ex.table10(nc_, pc_),
                "fig4": ex.fig4(tr_, pc_), "fig5": ex.fig5(tr_), "fig6": ex.fig6(tr_),
                "fig8": ex.fig8(), "fig9": ex.fig9()}

    ours = tables(pc, meas, nc, tr)
    rng = np.random.default_rng(46)
    gc_cost, storage = gc.gc_cost, costs.storage_bits_per_party
    monkeypatch.setattr(gc, "gc_cost",
                        lambda c, kappa=gc.KAPPA: _perturbed(gc_cost(c, kappa), rng))
    monkeypatch.setattr(costs, "storage_bits_per_party",
                        lambda bits, ring_bits=64: 1.7 * storage(bits, ring_bits))
    moved = tables(*(_perturbed(x, rng) for x in (pc, meas, nc, tr)))
    paper_only = []
    for name, frame in ours.items():
        other = moved[name].set_index(["row", "metric"])["value"]
        cmp = report.compare("tabula", name, frame).set_index(["row", "metric"])
        for r in frame.itertuples():
            v = pd.to_numeric(pd.Series([r.value]), errors="coerce").iloc[0]
            if pd.isna(v) or not math.isclose(v, float(other[(r.row, r.metric)]),
                                              rel_tol=1e-9):
                continue
            paper_only.append((name, r.row, r.metric))
            assert r.kind in ("arithmetic", "input", "quoted"), (name, r.row, r.metric, r.kind)
            assert cmp.loc[(r.row, r.metric), "status"] in ("formula", "input", "quoted")
    # the ten rows of Tables 1 and 2 (issue 46's D2), Table 9's 2p^2 and Table 10's 16
    # recomputed cells are among them
    found = {(n, m) for n, _, m in paper_only}
    assert {("table1", "comm_per_op"), ("table2", "comm_reduction_vs_cryptflow2"),
            ("table2", "fss_8bit_relu_comm"), ("table9", "tabula_preproc_8bit")} <= found
    assert sum(n == "table2" for n, _, _ in paper_only) == 8
    assert sum(n == "table1" and m == "comm_per_op" for n, _, m in paper_only) == 2
    assert sum(n == "table10" for n, _, _ in paper_only) == 16


def test_table4s_cryptflow2_estimate_is_not_judged_against_cryptflow2s_figures(nc):
    """Issue 46, D5: our CrypTFlow2 column is a formula (our linear layers + the paper's 96 B
    per ReLU) and the paper's is CrypTFlow2's own figure: shown, not judged."""
    cmp = report.compare("tabula", "table4", ex.table4(nc)).set_index(["row", "metric"])
    for m in ("cryptflow2_comm", "comm_reduction"):
        assert cmp.loc[("MinioNN", m), "status"] == "definition differs"
        assert "no CrypTFlow2 ran here" in cmp.loc[("MinioNN", m), "reason"]
        assert cmp.loc[("ResNet-34", m), "status"] == report.NETWORK_UNSPECIFIED
    assert cmp.loc[("MinioNN", "tabula_comm"), "status"] == "differs"  # ours: the ledger


def test_fig5s_storage_saving_is_compared_at_the_papers_8_bits(tr):
    """Issue 46, D12: the caption's 2x ('below a precision of 8', §4.2's 2x at 8 bits) is
    compared at 8 bits, not at the width where ours happens to reach 2x; with the GC storage
    the paper uses (Delphi's 4.25 KB per 8-bit ReLU) our 8-bit table gives its 2x."""
    f5 = ex.fig5(tr)
    cmp = report.compare("tabula", "fig5", f5, rtol=0.1).set_index(["row", "metric"])
    row, m = "Storage savings (caption)", "storage_savings_vs_gc"
    sv = ex.storage_vs_bits().set_index("bits")
    assert cmp.loc[(row, m), "ours"] == sv.loc[8, "gc_B"] / sv.loc[8, "tabula_B"]
    assert cmp.loc[(row, m), "ours"] < 1  # our 8-bit GC stores less than an 8-bit table
    choice = report.paper_choice(row, ex.FIG5_CHOICE)
    assert cmp.loc[(choice, m), "ours"] == pytest.approx(4.25 * 1024 / sv.loc[8, "tabula_B"])
    assert cmp.loc[(choice, m), "status"] == "exact"
    assert cmp.loc[(row, m), "status"] == report.CHOICE_REPRODUCES
