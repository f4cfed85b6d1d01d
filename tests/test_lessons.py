"""Each notebook opens as a lesson: prerequisites, what you will learn, and (for a paper) a
reading guide from the paper's sections to the notebook's."""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
PAPERS = [p for p in NOTEBOOKS if p.stem[:2] in {"01", "02", "03", "04", "05"}]


def _opening(nb: Path) -> str:
    cells = jupytext.read(nb).cells
    return next(c.source for c in cells if c.cell_type == "markdown")


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_notebook_opens_with_prerequisites_then_what_you_will_learn(nb):
    text = _opening(nb)
    assert "**Prerequisites.**" in text
    if nb.stem != "06_your_model":
        assert text.index("**Prerequisites.**") < text.index("**What you will learn**")


@pytest.mark.parametrize("nb", [NOTEBOOKS[0], *PAPERS], ids=lambda p: p.stem)
def test_the_reading_guide_points_at_sections_the_notebook_has(nb):
    text = _opening(nb)
    assert "**Reading guide.**" in text
    guide = text.split("**Reading guide.**", 1)[1]
    rows = [r for r in guide.splitlines() if r.startswith("|") and not r.startswith("|---")][1:]
    assert len(rows) >= 4
    headings = [line for c in jupytext.read(nb).cells if c.cell_type == "markdown"
                for line in c.source.splitlines() if line.startswith("#")]
    numbers = {m.group(1) for h in headings if (m := re.match(r"#+ (\d+b?)\. ", h))}
    for row in rows:
        cited = re.findall(r"§(\d+b?)\b", row.split("|")[2])
        assert all(n in numbers for n in cited), (row, sorted(numbers))


EXERCISE_NOTEBOOKS = {p.stem[:2]: p for p in NOTEBOOKS if p.stem[:2] in {"00", "01", "02", "03",
                                                                         "04", "05"}}


@pytest.mark.parametrize("number", sorted(EXERCISE_NOTEBOOKS))
def test_every_exercise_of_a_notebook_is_in_it_as_generated(number):
    """Each paper notebook carries at least three checkable exercises, every one the registry
    has for it, with the cells exactly as ``python -m ppnn.exercises`` generates them."""
    from ppnn.exercises import exercises
    from ppnn.exercises.fragments import SETUP, cells

    text = EXERCISE_NOTEBOOKS[number].read_text()
    mine = exercises(number)
    assert len(mine) >= 3
    assert SETUP.rstrip("\n") in text
    for ex in mine:
        assert f'check("{ex.id}", answer)' in text, ex.id
        assert cells(ex).rstrip("\n") in text, ex.id
