"""Every notebook runs end to end in quick mode (what CI executes)."""

import json
from pathlib import Path

import nbformat
import pytest

from ppnn import reproduce

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
QUICK_NOTEBOOKS = ROOT / "build" / "quick" / "notebooks"


@pytest.mark.notebook
@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_in_quick_mode(nb, tmp_path):
    # the executed copy stays in build/quick/notebooks (make site and tests/test_site.py read
    # it); the figures go to a temporary folder
    out = reproduce.run_notebook(nb, quick=True, seed=0, figures=tmp_path / "figures",
                                 out_dir=QUICK_NOTEBOOKS, progress=False, timeout=900)
    executed = nbformat.read(out, as_version=4)
    errors = [o for c in executed.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
    # the injected parameters really were QUICK=True
    injected = [c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and "QUICK = True" in injected[0].source
    n_code = sum(1 for c in executed.cells if c.cell_type == "code")
    n_ran = sum(1 for c in executed.cells if c.cell_type == "code" and c.get("execution_count"))
    assert n_ran == n_code, f"{n_code - n_ran} code cells did not run"
    # outputs are real: every notebook leaves at least one protocol player as a static twin
    # (the whole sequence diagram as SVG and the views table), not only a widget placeholder
    static = [o["data"]["text/html"] for c in executed.cells if c.cell_type == "code"
              for o in c.get("outputs", []) if "text/html" in o.get("data", {})
              and "ppnn-player-static" in o["data"]["text/html"]]
    assert static, "no protocol player in the executed notebook"
    assert all("<svg" in h and "ppnn-views" in h for h in static)
    # every cell that shows a figure leaves it as an image, once (the kernel draws inline, as
    # JupyterLab does)
    for i, c in enumerate(executed.cells):
        if c.cell_type != "code":
            continue
        images = [o["data"].get("image/png") or o["data"].get("image/svg+xml")
                  for o in c.get("outputs", []) if o.get("output_type") in
                  ("display_data", "execute_result") and
                  {"image/png", "image/svg+xml"} & set(o.get("data", {}))]
        if "plt.show()" in c.source or "plotting.show(" in c.source:
            assert images, f"cell {i} shows a figure but left no image output"
        assert len(images) == len(set(images)), f"cell {i} shows the same figure twice"
    json.dumps(executed)  # serialisable


@pytest.mark.notebook
def test_a_notebook_run_as_jupyterlab_does_leaves_figures_untouched(tmp_path):
    """Run All on the .ipynb as JupyterLab would -- no PPNN_* variables, working directory
    notebooks/, the notebook's own QUICK = True -- and the committed figures/ are unchanged:
    the outputs land under build/quick/figures instead."""
    import os
    import subprocess
    import sys

    def status():
        return subprocess.run(["git", "status", "--porcelain", "--", "figures"], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout

    before = status()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PPNN_")}
    env["MPLBACKEND"] = "Agg"
    out = tmp_path / "run.ipynb"
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook",
                    "--execute", "--ExecutePreprocessor.timeout=600", "--output", str(out),
                    str(ROOT / "notebooks" / "00_overview.ipynb")],
                   cwd=ROOT / "notebooks", env=env, check=True, capture_output=True)
    assert status() == before, "a notebook run changed the committed figures/"
    executed = nbformat.read(out, as_version=4)
    said = "".join(o.get("text", "") for c in executed.cells if c.cell_type == "code"
                   for o in c.get("outputs", []))
    quick_figures = ROOT / "build" / "quick" / "figures"
    assert f"writes its tables and figures to {quick_figures}" in said
    assert (quick_figures / "tables" / "overview_comparison.csv").exists()
