"""The lessons' figures: view experiments side by side with their own y axes, plain labels on
log axes, point labels that do not collide, and the cost and error curves of 00 and 01 drawn
from the ledger beside their closed forms."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from ppnn import plotting
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
