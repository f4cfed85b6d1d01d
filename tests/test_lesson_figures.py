"""The lessons' figures: view experiments side by side with their own y axes, plain labels on
log axes, point labels that do not collide, and the cost and error curves of 00 and 01 drawn
from the ledger beside their closed forms."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from ppnn import plotting
from ppnn.core import Ring
from ppnn.core.views import ViewExperiment, ks_test


def _experiment(spike: bool, rng) -> ViewExperiment:
    a = rng.integers(0, 256, 2000)
    b = np.full(2000, 7) if spike else rng.integers(0, 256, 2000)
    return ViewExperiment((0, 5), (a, b), ks_test(a, b), spike)


def test_view_panels_give_each_panel_its_own_y_axis():
    rng = np.random.default_rng(0)
    fig = plotting.view_panels({"honest": _experiment(False, rng),
                                "broken": _experiment(True, rng)}, "y", bins=32,
                               range=(0, 256))
    honest, broken = fig.axes
    assert not honest.get_shared_y_axes().joined(honest, broken)
    # the broken panel's spike (2000 in one bin) does not set the honest panel's scale
    assert broken.get_ylim()[1] > 1000 > 5 * honest.get_ylim()[1]
    assert "KS D = " in honest.get_title() and "threshold" in broken.get_title()
    plt.close(fig)


def test_view_panels_draw_a_discrete_sample_as_bars_per_value():
    rng = np.random.default_rng(1)
    exp = ViewExperiment((1, 2), (rng.integers(0, 37, 500), rng.integers(0, 37, 500)),
                         ks_test([0, 1], [0, 1]))
    fig = plotting.view_panels({"P2": exp}, "d", levels=37, secret_label="r = {}")
    assert len(fig.axes[0].patches) == 2 * 37
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["r = 1", "r = 2"]
    plt.close(fig)
    with pytest.raises(ValueError, match="at least one"):
        plotting.view_panels({}, "d")


def test_log_ticks_read_as_plain_numbers():
    fig, ax = plt.subplots()
    ax.plot([1, 2], [1.2, 6.5])
    ax.set_yscale("log")
    plotting.plain_log_ticks(ax)
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels(minor=True) + ax.get_yticklabels()
              if t.get_text()]
    assert labels and all("times" not in t and "^" not in t and "$" not in t for t in labels)
    assert {"2", "3", "4", "6"} <= set(labels)
    plt.close(fig)
    with pytest.raises(ValueError, match="axis"):
        plotting.plain_log_ticks(ax, "z")


def _boxes(anns):
    renderer = anns[0].figure.canvas.get_renderer()
    return [a.get_window_extent(renderer) for a in anns]


def test_point_labels_do_not_overlap_and_a_cluster_shares_one_label():
    fig, ax = plt.subplots(figsize=(4, 3))
    x = np.array([1.0, 1.05, 1.1, 1.15, 5.0, 5.0, 9.0])
    y = np.array([1.0, 1.02, 1.04, 1.06, 3.0, 3.0, 9.0])
    ax.plot(x, y, "o")
    ax.set(xlim=(0, 10), ylim=(0, 10))
    anns = plotting.label_points(ax, x, y, ["2", "3", "4", "5", "8", "10", "12"])
    texts = [a.get_text() for a in anns]
    assert "8,10" in texts  # two points on top of each other: one label
    boxes = _boxes(anns)
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    plt.close(fig)
    with pytest.raises(ValueError, match="one entry per point"):
        plotting.label_points(ax, [1, 2], [1, 2], ["a"])


def test_beaver_costs_on_the_ledger_equal_the_closed_forms():
    from ppnn.experiments import overview

    costs = overview.beaver_costs([10, 1000, 100_000], Ring(64), seed=3)
    form = overview.beaver_closed_form(costs["n"].to_numpy(), 64)
    for col, values in form.items():
        np.testing.assert_allclose(costs[col], values)
    assert (costs["online rounds"] == 1).all()
    fig = overview.plot_beaver_costs(costs, 64, mark=1000)
    assert [ax.get_xscale() for ax in fig.axes] == ["log", "log"]
    plt.close(fig)
    with pytest.raises(ValueError, match=">= 1"):
        overview.beaver_costs([0])


def test_the_simulator_table_of_a_lookup_demo_shows_the_truncations_off_by_one():
    from ppnn.experiments.tabula import lesson

    x = [-300, -5, 0, 77, 1000]
    rng = np.random.default_rng(1)
    led, opened = lesson.lookup_demo(x, b=8, d=3, rng=rng, ring=Ring(32))
    t = lesson.truncation_outcomes(led, x, d=3, b=8, reruns=2000, rng=rng, ring=Ring(32))
    assert t["x"].tolist() == x
    assert set(t["off by"]) <= {0, 1}
    assert (t["truncated shares sum to"] == t["x >> d (exact)"] + t["off by"]).all()
    np.testing.assert_array_equal(t["ReLU opened to the client"],
                                  np.maximum(t["truncated shares sum to"], 0))
    np.testing.assert_allclose(t["P(off by one)"], [0.5, 0.375, 0, 0.625, 0])
    np.testing.assert_allclose(t["off by one in 2,000 reruns"], t["P(off by one)"], atol=0.05)
    with pytest.raises(ValueError, match="rng"):
        lesson.truncation_outcomes(led, x, d=3, b=8, reruns=10)


def test_the_truncation_figure_draws_measured_rates_beside_their_closed_forms():
    from ppnn.experiments.tabula import lesson
    from ppnn.protocols import tabula as tb

    rng = np.random.default_rng(2)
    xs = rng.integers(-(1 << 14), 1 << 14, 500)
    trunc = pd.DataFrame([tb.truncation_error_rates(xs, 6, Ring(k), rng, 4)
                          for k in (20, 24, 64)])
    fig = lesson.plot_truncation_errors(trunc)
    labels = [h.get_label() for h in fig.axes[0].get_lines()]
    assert any("closed form" in s for s in labels) and any("none in n" in s for s in labels)
    plt.close(fig)


def test_the_tradeoff_figure_labels_every_point_without_collisions():
    from ppnn.experiments.tabula import figures

    rows = [{"zoo": z, "dataset": "mnist", "bits": b, "accuracy": a / 100,
             "comm_reduction": c, "tabula_storage_B": 2.0**(b + 10), "speedup": 1 + b / 10}
            for z, off in (("tabula_lenet", 0), ("mlp_784_128_128_10", -3))
            for b, a, c in ((2, 50 + off, 18), (4, 93 + off, 27), (6, 96 + off, 33),
                            (8, 96.3 + off, 38))]
    fig = figures.plot_tradeoffs(pd.DataFrame(rows))
    for ax in fig.axes:
        boxes = _boxes(list(ax.texts))
        assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
        assert ax.get_yscale() == "log"
    plt.close(fig)


def test_gala_and_gazelle_perms_cross_where_table_2_says():
    from ppnn.experiments.gala import lesson

    unit = pd.DataFrame({"seconds": {"Perm": 1e-3, "ScMult": 5e-5, "Add": 2e-5}})
    sweep = lesson.matvec_crossover(n_i=256, n=256, unit=unit)
    form = lesson.matvec_perm_forms(sweep["n_o"], 256, 256)
    for method in ("GALA", "GAZELLE"):
        np.testing.assert_allclose(sweep[f"{method} Perm"], form[method])
    more = sweep.n_o[sweep["GALA Perm"] > sweep["GAZELLE Perm"]]
    assert more.min() == 8 and (more == sweep.n_o[sweep.n_o >= 8]).all()
    # on SEAL's costs (a hoisted rotation costs a Perm) GALA is never the slower one
    assert (sweep["GALA ms"] <= sweep["GAZELLE ms"]).all()
    fig = lesson.plot_matvec_crossover(sweep, 256, 256)
    left, right = fig.axes
    assert left.get_xscale() == "log" and right.get_yscale() == "log"
    assert any("n_o = 8" in t.get_text() for t in left.texts)
    plt.close(fig)
    with pytest.raises(ValueError, match="n_o"):
        lesson.matvec_crossover(n_i=256, n=256, n_os=[512])
