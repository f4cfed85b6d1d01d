"""The lecturer's kit: student notebooks without solutions and an Otter-Grader autograder.

``python -m ppnn.course build`` (``make course``) writes under ``build/course/``:

* ``student/NN_name.ipynb`` -- each paper notebook with its exercise stubs; the setup cell
  imports ``check`` and ``hint`` only (``solution_of`` is absent) and each exercise's answer
  has its own name (``answer_NN_k``), so one notebook holds every answer when it is graded;
* ``student/NN_name-exercises.ipynb`` -- the exercise section alone (self-contained: each
  stub imports what it needs), quick to run and to grade;
* ``autograder/NN_name-autograder.zip`` -- Otter-Grader's autograder (``otter assign``);
  each exercise is a question whose test calls :func:`ppnn.exercises.check`, so the grade
  and its feedback (the check's message and hint) are the notebook's own;
* ``README.md`` -- how to distribute, collect and grade.

``python -m ppnn.course grade AUTOGRADER SUBMISSION...`` grades with ``otter run`` (no
container; the grading environment is this one) and prints each submission's score.

Main names: :func:`build`, :func:`grade`, :func:`student_notebook`, :func:`master_notebook`.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from . import paths

__all__ = ["build", "grade", "student_notebook", "master_notebook", "exercise_cells",
           "answer_name"]

_SETUP = "from ppnn.exercises import check, hint, solution_of"
_SOLUTION_SENTENCE = re.compile(r"\s*The reference\s+solution:\s+`solution_of\(\"[\d.]+\"\)`\.")
#: the exercise section's introduction says where the solutions are: not in a student copy
_SOLUTIONS_NOTE = re.compile(r";\s+the reference\s+solutions\s+are\s+hidden\s+in\s+"
                             r"`ppnn\.exercises\.solutions`\s+\(`solution_of\(\"[\d.]+\"\)`"
                             r"\s+prints\s+one\)\.")
_TEST = '''from ppnn.exercises import check as _check

_result = _check("{id}", {name})
assert _result.ok, repr(_result)'''


def answer_name(exercise_id: str) -> str:
    """The student build's name of an exercise's answer: ``answer_NN_k``."""
    return "answer_" + exercise_id.replace(".", "_")


def exercise_cells(nb) -> dict[str, tuple[int, int, int]]:
    """``{exercise id: (markdown, stub, check) cell indices}`` of a paper notebook."""
    from .exercises import exercises

    found = {}
    for ex in exercises(Path(nb.metadata.get("ppnn_stem", "")).name or None):
        head = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"
                     and c.source.startswith(f"### Exercise {ex.id} ")), None)
        if head is None:
            continue
        stub, chk = head + 1, head + 2
        if (nb.cells[stub].cell_type != "code" or
                not nb.cells[stub].source.rstrip().endswith("answer = ...") or
                nb.cells[chk].source.strip() != f'check("{ex.id}", answer)'):
            raise ValueError(f"exercise {ex.id}: expected its stub and check cells after its "
                             "heading (python -m ppnn.exercises writes them)")
        found[ex.id] = (head, stub, chk)
    return found


def _read(stem: str):
    import jupytext

    nb = jupytext.read(paths.root() / "notebooks" / f"{stem}.py")
    nb.metadata["ppnn_stem"] = stem
    return nb


def student_notebook(stem: str):
    """The student copy of notebook ``stem``: no ``solution_of``, answers named per
    exercise."""
    from .exercises.registry import NOTEBOOKS

    number = stem[:2]
    if number not in NOTEBOOKS or NOTEBOOKS[number][0] != stem:
        raise ValueError(f"stem must be one of {[v[0] for v in NOTEBOOKS.values()]}, got "
                         f"{stem!r}")
    nb = _read(stem)
    cells = exercise_cells(nb)
    for ex_id, (head, stub, chk) in cells.items():
        name = answer_name(ex_id)
        nb.cells[head].source = _SOLUTION_SENTENCE.sub("", nb.cells[head].source)
        nb.cells[stub].source = re.sub(r"answer = \.\.\.\s*$", f"{name} = ...",
                                       nb.cells[stub].source.rstrip())
        nb.cells[chk].source = f'check("{ex_id}", {name})'
    for c in nb.cells:
        if c.cell_type == "code" and c.source.strip() == _SETUP:
            c.source = "from ppnn.exercises import check, hint"
        elif "solution_of" in c.source:
            c.source = _SOLUTIONS_NOTE.sub(".", _SOLUTION_SENTENCE.sub("", c.source))
    left = [i for i, c in enumerate(nb.cells) if "solution_of" in c.source]
    if left:
        raise ValueError(f"{stem}: cells {left} still mention solution_of; reword them")
    nb.metadata.pop("ppnn_stem", None)
    nb.metadata.pop("jupytext", None)
    return nb, cells


def _raw(text: str):
    import nbformat

    return nbformat.v4.new_raw_cell(text)


def master_notebook(stem: str, exercises_only: bool = False):
    """Otter Assign's master notebook of ``stem``: the student copy with every exercise
    wrapped as a question (its reference answer as the solution line, a test that calls
    :func:`ppnn.exercises.check`). ``exercises_only``: the setup cell and the exercises."""
    import nbformat

    nb, cells = student_notebook(stem)
    config = {"name": f"{stem}{'-exercises' if exercises_only else ''}", "init_cell": False,
              "check_all_cell": False, "export_cell": False, "run_tests": False,
              "solutions_pdf": False, "template_pdf": False, "generate": True}
    import yaml

    out = [_raw("# ASSIGNMENT CONFIG\n" + yaml.safe_dump(config, sort_keys=False))]
    spans = {head: ex_id for ex_id, (head, _, _) in cells.items()}
    i = 0
    setup_seen = False
    while i < len(nb.cells):
        c = nb.cells[i]
        if i in spans:
            ex_id = spans[i]
            name = answer_name(ex_id)
            head, stub, chk = cells[ex_id]
            sol = copy.deepcopy(nb.cells[stub])
            sol.source = re.sub(
                rf"{name} = \.\.\.$",
                f'{name} = __import__("ppnn.exercises", fromlist=["get"]).get("{ex_id}")'
                ".reference_answer()  # SOLUTION", sol.source)
            out += [_raw(f"# BEGIN QUESTION\nname: q{name[7:]}\npoints: 1\ncheck_cell: false"),
                    nb.cells[head], _raw("# BEGIN SOLUTION"), sol, _raw("# END SOLUTION"),
                    _raw("# BEGIN TESTS"),
                    nbformat.v4.new_code_cell(_TEST.format(id=ex_id, name=name)),
                    _raw("# END TESTS"), _raw("# END QUESTION"), nb.cells[chk]]
            i = chk + 1
            continue
        keep = not exercises_only or (c.cell_type == "code" and "from ppnn.exercises import"
                                      in c.source and not setup_seen)
        if exercises_only and keep:
            setup_seen = True
        if keep:
            out.append(c)
        i += 1
    if exercises_only:
        out.insert(1, nbformat.v4.new_markdown_cell(
            f"# Exercises of `{stem}`\n\nThe lesson is the notebook `{stem}.ipynb`; each "
            "exercise below runs on its own. `check(...)` tells you at once whether an answer "
            "is right; `hint(...)` gives the next hint."))
    nb.cells = out
    return nb


def _assign(master, folder: Path, zip_name: str) -> tuple[Path, Path]:
    """Run ``otter assign`` on ``master``; returns (student notebook, autograder zip)."""
    import nbformat

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "master.ipynb"
        nbformat.write(master, src)
        dist = Path(tmp) / "dist"
        done = subprocess.run([sys.executable, "-m", "otter", "assign", str(src), str(dist)],
                              capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"otter assign failed on {zip_name}:\n{done.stderr[-2000:]}")
        zips = list((dist / "autograder").glob("*.zip"))
        if len(zips) != 1:
            raise RuntimeError(f"otter assign wrote {len(zips)} autograder zips")
        stu = folder / "student" / f"{zip_name}.ipynb"
        ag = folder / "autograder" / f"{zip_name}-autograder.zip"
        for a, b in ((dist / "student" / "master.ipynb", stu), (zips[0], ag)):
            with paths.atomic_path(b) as t:
                shutil.copyfile(a, t)
    text = stu.read_text(encoding="utf-8")
    if "solution_of" in text or "reference_answer" in text:
        raise RuntimeError(f"{stu.name}: the student copy still gives the solution away")
    return stu, ag


README = """# PPNN Lab — the lecturer's kit

Built by `make course` (`python -m ppnn.course build`) from the notebooks of this checkout.

| folder | what |
|---|---|
| `student/NN_name.ipynb` | the paper notebook (the lesson) with its exercise stubs; no solutions |
| `student/NN_name-exercises.ipynb` | its exercises alone: quick to run and to grade |
| `autograder/NN_name-autograder.zip` | Otter-Grader's autograder of that notebook |

**Distribute.** Give the students `student/` (or a Binder link to this repository: the
notebooks there have the same stubs). They need the `ppnn` package (`pip install .` in a
checkout, as `make setup` does). Each exercise has a `check("NN.k", answer_NN_k)` cell that
says at once whether an answer is right, and `hint("NN.k")`. The reference solutions are
not in the student notebooks, but they ship with the open-source package
(`ppnn.exercises.solutions`): this kit grades homework, it does not stop a determined
student from reading the source.

**Collect** the students' `.ipynb` files (one per student), e.g. from your LMS.

**Grade** each submission with Otter-Grader, without a container, in an environment with
`ppnn` installed:

    python -m ppnn.course grade autograder/NN_name-autograder.zip submissions/*.ipynb

or `otter run -a autograder/NN_name-autograder.zip SUBMISSION.ipynb -o OUT/` for one file
(results in `OUT/results.json`). A submission is executed top to bottom; every exercise
is one point, scored by the notebook's own check, and the feedback of a wrong answer is the
check's message and hint. An unanswered exercise (`answer_NN_k = ...`) scores zero. Grading
the exercises-only notebook takes seconds; the whole lesson runs its quick mode (a minute
or more per submission). `otter grade` (Docker) works too, with an image that installs
`ppnn`.
"""


def build(out: str | Path | None = None, stems: list[str] | None = None) -> Path:
    """Write the kit under ``out`` (default ``build/course``); returns the folder."""
    from .exercises.registry import NOTEBOOKS

    folder = Path(out) if out is not None else paths.build_dir() / "course"
    stems = stems or [v[0] for v in NOTEBOOKS.values()]
    for sub in ("student", "autograder"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    import nbformat

    for stem in stems:
        _assign(master_notebook(stem), folder, stem)
        stu, _ = _assign(master_notebook(stem, exercises_only=True), folder,
                         f"{stem}-exercises")
        # the whole lesson's student copy comes from otter too; check its answers are stubs
        nb = nbformat.read(folder / "student" / f"{stem}.ipynb", 4)
        if any(re.search(r"answer_\d\d_\d+ = (?!\.\.\.)", c.source) for c in nb.cells):
            raise RuntimeError(f"{stem}: an answer is filled in the student copy")
        del stu
    paths.atomic_write(folder / "README.md", README)
    return folder


def grade(autograder: str | Path, submission: str | Path) -> dict:
    """Grade one submission with ``otter run``: ``{"score", "possible", "tests": {question:
    (score, possible, feedback)}}``."""
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([sys.executable, "-m", "otter", "run", "-a", str(autograder),
                               "-o", tmp, "--no-logo", str(submission)],
                              capture_output=True, text=True)
        res = Path(tmp) / "results.json"
        if not res.exists():
            raise RuntimeError(f"otter run failed on {submission}:\n{done.stderr[-2000:]}")
        data = json.loads(res.read_text())
    tests = {t["name"]: (float(t["score"]), float(t["max_score"]), t.get("output", ""))
             for t in data.get("tests", []) if t.get("max_score") is not None}
    return {"score": sum(v[0] for v in tests.values()),
            "possible": sum(v[1] for v in tests.values()), "tests": tests}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ppnn.course", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="student notebooks and autograders under build/course")
    b.add_argument("--out", default=None, help="folder (default build/course)")
    g = sub.add_parser("grade", help="grade submissions with an autograder zip")
    g.add_argument("autograder")
    g.add_argument("submissions", nargs="+")
    args = ap.parse_args(argv)
    if args.command == "build":
        print(f"course kit: {build(args.out)}")
        return 0
    for s in args.submissions:
        r = grade(args.autograder, s)
        print(f"{s}: {r['score']:g} / {r['possible']:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
