"""Every notebook as a user meets it: JupyterLab in headless Chromium, Run All Cells, no
error output, every widget view rendered, every figure displayed; a screenshot of each under
build/browser/. The harness is tests/browser.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

import nbformat
import pytest

from browser import browser_missing, jupyterlab, lab_env, prepare_copy, run_notebook, summary

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
SHOTS = ROOT / "build" / "browser"

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    why = browser_missing()
    if why:
        pytest.skip(f"BROWSER TEST NOT RUN: {why}")
    work = prepare_copy(ROOT / "notebooks", NOTEBOOKS, tmp_path_factory.mktemp("lab"))
    with jupyterlab(work, env=lab_env(work)) as (url, token):
        yield url, token, work


def _figures_status():
    return subprocess.run(["git", "status", "--porcelain", "--", "figures"], cwd=ROOT,
                          capture_output=True, text=True, check=True).stdout


def test_every_notebook_runs_all_cells_in_jupyterlab(lab):
    url, token, work = lab
    before = _figures_status()
    reports = [run_notebook(url, token, work, name, SHOTS) for name in NOTEBOOKS]
    print(summary(reports))
    problems = {r.notebook: r.problems() for r in reports if r.problems()}
    assert not problems, summary(reports)
    assert all(r.screenshot and r.screenshot.stat().st_size > 10_000 for r in reports)
    assert sum(r.widgets_expected for r in reports) > 0  # the notebooks do have widgets
    assert sum(r.images_expected for r in reports) > 0
    # every notebook teaches a protocol with the player, and every player's slider moves it:
    # the current-step line, the highlighted arrow and the views table all change
    no_player = [r.notebook for r in reports if not r.players]
    assert not no_player, f"notebooks without a protocol player: {no_player}"
    assert _figures_status() == before, "running notebooks in JupyterLab changed figures/"


def test_the_harness_sees_a_broken_cell_and_an_unrendered_widget(lab):
    """The check can fail: a notebook whose second cell raises, and one whose widget output
    names a widget model that does not exist (JupyterLab cannot draw it)."""
    url, token, work = lab
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell("x = 1"),
                nbformat.v4.new_code_cell("raise ValueError('deliberately broken cell')"),
                nbformat.v4.new_code_cell("print('never reached')")]
    nbformat.write(nb, work / "zz_broken.ipynb")
    rep = run_notebook(url, token, work, "zz_broken.ipynb", SHOTS / "harness", timeout=120)
    assert rep.finished
    assert any("deliberately broken cell" in e for e in rep.errors), rep.problems()
    assert rep.executed == 2 and rep.cells == 3  # Run All stops at the error

    bad = nbformat.v4.new_notebook()
    bad.metadata["kernelspec"] = nb.metadata["kernelspec"]
    bad.cells = [nbformat.v4.new_code_cell(
        "from IPython.display import display\n"
        "display({'application/vnd.jupyter.widget-view+json': {'model_id': 'missing',"
        " 'version_major': 2, 'version_minor': 0}, 'text/plain': 'a widget'}, raw=True)")]
    nbformat.write(bad, work / "zz_widget.ipynb")
    rep = run_notebook(url, token, work, "zz_widget.ipynb", SHOTS / "harness", timeout=120)
    assert rep.widgets_expected == 1
    assert rep.problems(), "an undrawable widget went unnoticed"


def test_the_harness_sees_a_player_whose_slider_moves_nothing(lab):
    """A page element that looks like a player but has no live slider: the harness reports
    it as not moved (so a player the kernel stops redrawing fails the notebook test)."""
    url, token, work = lab
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(
        "from IPython.display import HTML\n"
        "HTML(\"<div class='ppnn-player'><b class='ppnn-current'>step 1/2</b></div>\")")]
    nbformat.write(nb, work / "zz_player.ipynb")
    rep = run_notebook(url, token, work, "zz_player.ipynb", SHOTS / "harness", timeout=120)
    assert len(rep.players) == 1 and not rep.players[0]["moved"]
    assert any("protocol player 1" in p for p in rep.problems())
