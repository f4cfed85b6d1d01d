"""Every notebook as a user meets it: JupyterLab in headless Chromium, Run All Cells, no
error output, every widget view rendered, every figure displayed; then every widget moved to
its ends and a middle, the page checked after Run All and after each move (no error text, no
raw object repr, no table or figure twice, nothing static beside a widget); a screenshot of
each under build/browser/. The harness is tests/browser.py."""

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


@pytest.mark.parametrize("name", NOTEBOOKS, ids=[n.removesuffix(".ipynb") for n in NOTEBOOKS])
def test_every_notebook_runs_all_cells_in_jupyterlab(lab, name):
    """One notebook per test, so that ``pytest -n`` runs them side by side."""
    url, token, work = lab
    before = _figures_status()
    r = run_notebook(url, token, work, name, SHOTS)
    print(summary([r]))
    assert not r.problems(), summary([r])
    assert r.screenshot and r.screenshot.stat().st_size > 10_000
    assert r.widgets_expected > 0 and r.images_expected > 0  # the notebook has both
    # it teaches a protocol with the player, and every player's slider moves it: the
    # current-step line, the highlighted arrow and the views table all change
    assert r.players, f"{name}: no protocol player"
    # every player was read as a student reads it: stepped through from its opening step to
    # its last (the current step's line, row and value in view at each step, no label cut
    # while the diagram has room, none across a lane), and every seat taken (the title
    # follows it); what went wrong is in problems() above
    not_stepped = [i + 1 for i, p in enumerate(r.players) if not p["steps"] or not p["seats"]]
    assert not not_stepped, f"{name}: players not stepped or seated: {not_stepped}"
    print("players stepped:", [p["steps"] for p in r.players])
    # the walk moved the notebook's widgets (each has a player: play, step slider, seat)
    missing = {"play", "slider", "dropdown"} - {w["kind"] for w in r.walk}
    assert not missing, f"{name}: player controls not walked: {sorted(missing)}"
    assert _figures_status() == before, "running the notebook in JupyterLab changed figures/"


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


_BAD_PLAYER = '''\
import ipywidgets as w

slider = w.IntSlider(value=1, min=1, max=3, description="step")
seat = w.Dropdown(options=["everyone", "P0"], description="seat")
line, diagram = w.HTML(), w.HTML()


def draw(change=None):
    k = slider.value
    diagram.value = (
        f"<div class='ppnn-diagram' data-full='0' data-seat='{seat.value}' data-step='{k}'>"
        "<svg width='300' height='1600'><g id='ppnn-title'><text x='5' y='15'>demo (seat: P1)"
        "</text></g><g id='ppnn-lane-0'><path d='M 100 20 L 100 1600' stroke='black'/></g>"
        f"<g id='ppnn-step-{k}-label'><text x='60' y='1500'>a long label, cut\u2026</text></g>"
        "<g id='ppnn-current-mark'><text x='5' y='1500'>></text></g></svg></div>")
    line.value = ("<b class='ppnn-current'>" + (f"step {k}/3: P0 does not see this step" if k == 1
                  else f"step {k}/3 [online]: P0 -> P1: m<span class='ppnn-value'> = [1 2]"
                       "</span>") + "</b>")


slider.observe(draw, names="value")
seat.observe(draw, names="value")
draw()
box = w.VBox([w.HBox([slider, seat]), line, diagram])
box.add_class("ppnn-player")
box
'''


def test_the_harness_sees_a_player_a_student_cannot_read(lab):
    """A player that opens on an unseen step, whose current row sits far below the controls
    with no value drawn, whose label is cut with room to spare and crosses a lane, and whose
    title keeps one seat: each is reported."""
    url, token, work = lab
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(_BAD_PLAYER)]
    nbformat.write(nb, work / "zz_bad_player.ipynb")
    rep = run_notebook(url, token, work, "zz_bad_player.ipynb", SHOTS / "harness", timeout=120,
                       walk=False)
    found = "\n".join(rep.player_failures)
    assert rep.players and rep.players[0]["steps"] == 3 and rep.players[0]["seats"] == 2
    for words in ("opens on a step its seat does not see",
                  "the current step's row of the diagram is out of view",
                  "the current step's value is not drawn", "a label is cut while the figure",
                  "a label crosses a lane line", "seat 'P0' taken, the title says"):
        assert words in found, (words, found)
    assert any(p.startswith("player: ") for p in rep.problems())


_WALKED = '''\
import sys
from pathlib import Path

import ipywidgets as w
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import HTML, display

n = w.IntSlider(value=2, min=0, max=4, description="n")
out = w.Output()


def show(change=None):
    out.clear_output()
    with out:
        if n.value == n.min:
            display(Path("/tmp/raw"))  # a raw repr at the slider's min
        elif n.value == n.max:
            raise ValueError("deliberately raised at the max")
        else:
            display(pd.DataFrame({"n": [n.value]}))


n.observe(show, names="value")
show()
display(w.VBox([n, out]))
display(pd.DataFrame({"n": [2]}))  # a stale copy of the widget's table beside it
'''

_CONTROLS = '''\
pick = w.Dropdown(options=["a", "b", "c"], description="pick")
mode = w.ToggleButtons(options=["quiet", "loud"], description="mode")
tick = w.Checkbox(value=False, description="tick")
play = w.Play(value=0, min=0, max=3, interval=200)
said = w.Output()


class Thing:
    pass


def say(change=None):
    said.clear_output()
    with said:
        if pick.value == "c":
            print(repr(plt.figure(figsize=(1, 1))))  # '<Figure size ...>' at the last option
            plt.close("all")
        if mode.value == "loud":
            print("a warning", file=sys.stderr)
        if tick.value:
            print(Thing())  # '<__main__.Thing object at 0x...>'
        if play.value > 0:
            print("<ppnn.player at step", play.value, ">")


for c in (pick, mode, tick, play):
    c.observe(say, names="value")
display(w.VBox([pick, mode, tick, play, said]))
display(HTML("<div class='ppnn-player-static'><p>a static twin, drawn</p></div>"))
'''


def test_the_widget_walk_moves_every_control_and_sees_what_goes_wrong(lab):
    """A synthetic notebook whose widgets go wrong at known positions: a slider with a raw
    PosixPath at its min, a traceback at its max, and a stale copy of its table beside it
    (the same table twice at the middle); a dropdown printing '<Figure size' at its last
    option, toggle buttons writing to stderr, a checkbox printing an object repr, a play
    control printing '<ppnn.', and a player's static twin drawn beside them; one figure twice
    in a cell and again in the next cell."""
    url, token, work = lab
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    fig = ("fig, ax = plt.subplots(figsize=(2, 2))\nax.plot([0, 1])\n"
           "plt.close(fig)\n")
    nb.cells = [nbformat.v4.new_code_cell(_WALKED),
                nbformat.v4.new_code_cell(_CONTROLS),
                nbformat.v4.new_markdown_cell("figures:"),
                nbformat.v4.new_code_cell(fig + "display(fig)\ndisplay(fig)"),
                nbformat.v4.new_code_cell("display(fig)")]
    nbformat.write(nb, work / "zz_walk.ipynb")
    rep = run_notebook(url, token, work, "zz_walk.ipynb", SHOTS / "harness", timeout=120)
    print(summary([rep]))
    assert rep.finished and not rep.errors
    kinds = sorted(w["kind"] for w in rep.walk)
    assert kinds == ["checkbox", "dropdown", "play", "slider", "toggle buttons"], rep.walk
    slider = next(w for w in rep.walk if w["kind"] == "slider")
    assert slider["positions"] == ["min (0)", "max (4)", "middle (2)"], slider

    def found(cell, position, *words):
        return [f for f in rep.walk_failures if f.cell == cell and f.position.startswith(position)
                and all(w in f.problem for w in words)]

    assert found(0, "after Run All", "static table beside the widget"), rep.problems()
    assert found(0, "after Run All", "the same table twice"), rep.problems()
    assert found(0, "min", "PosixPath("), rep.problems()
    assert found(0, "max", "traceback"), rep.problems()
    assert found(0, "max", "traceback", "ValueError"), rep.problems()
    assert found(1, "option 3/3", "<Figure size"), rep.problems()
    assert found(1, "option 2/2", "stderr output", "a warning"), rep.problems()
    assert found(1, "flip", "object at 0x"), rep.problems()
    assert any('checkbox "tick"' in f.widget for f in rep.walk_failures), rep.problems()
    assert found(1, "play one step", "<ppnn."), rep.problems()
    assert found(1, "after Run All", "static twin is drawn"), rep.problems()
    assert found(3, "after Run All", "same image twice in the cell"), rep.problems()
    assert found(4, "after Run All", "same image as cell 3"), rep.problems()
    assert all(f.widget for f in rep.walk_failures if f.position[:5] in ("min (", "max ("))
    assert any(p.startswith("walk: zz_walk.ipynb cell 0") for p in rep.problems())
