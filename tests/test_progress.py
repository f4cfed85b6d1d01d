"""The status line of a long notebook cell (ppnn.widgets.progress)."""

import time

import pytest

from ppnn.widgets import Progress, progress


def test_outside_ipython_it_prints_what_ran_and_how_long(capsys):
    with progress("demo", total=3) as p:
        for i in range(3):
            p.step(note=f"item {i}")
    out = capsys.readouterr().out
    assert out.startswith("demo: done (3/3) in ") and out.rstrip().endswith(" s")


def test_the_running_line_counts_steps_and_notes_the_last():
    p = Progress("sweep", total=4)
    p._t0 = time.perf_counter()
    p.step(2, note="LeNet 4 bits")
    assert p._line() == "sweep: running 2/4 (0 s) -- LeNet 4 bits"
    assert p._line(failed=True).startswith("sweep: stopped after ")


def test_bad_arguments_name_the_argument():
    with pytest.raises(ValueError, match="total must be >= 1"):
        progress("x", total=0)
    with pytest.raises(ValueError, match="every must be > 0"):
        progress("x", every=0)


def test_in_a_kernel_the_line_updates_in_place_and_ends_done():
    """Run in a real kernel: one display with a display id, updated, final text 'done'."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "import time\nfrom ppnn.widgets import progress\n"
        "with progress('work', total=2, every=0.05) as p:\n"
        "    for _ in range(2):\n        time.sleep(0.2); p.step()\n")]
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    outs = nb.cells[0].outputs
    assert len(outs) == 1 and outs[0]["output_type"] == "display_data"
    text = outs[0]["data"]["text/html"]
    assert "ppnn-progress" in text and "work: done (2/2) in" in text
