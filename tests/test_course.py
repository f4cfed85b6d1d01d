"""The lecturer's kit (``make course``, :mod:`ppnn.course`): student notebooks without
solutions, Otter-Grader autograders whose tests call ``ppnn.exercises.check``, and grading
that gives a solved copy full marks, an unsolved one zero without an error, and a wrong
answer zero for that exercise with the check's hint as feedback."""

from __future__ import annotations

import re

import nbformat
import pytest

from ppnn import course
from ppnn.exercises import exercises, get

STEM = "00_overview"


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    return course.build(tmp_path_factory.mktemp("course"), stems=[STEM])


def _fill(kit, answers: dict, name: str):
    """The exercises-only student copy with ``answers`` (``{id: source of the answer}``)
    written in place of the stubs' ``answer_NN_k = ...``."""
    nb = nbformat.read(kit / "student" / f"{STEM}-exercises.ipynb", 4)
    for c in nb.cells:
        for ex_id, src in answers.items():
            line = f"{course.answer_name(ex_id)} = ..."
            if c.cell_type == "code" and line in c.source:
                c.source = c.source.replace(line, f"{course.answer_name(ex_id)} = {src}")
    out = kit / f"{name}.ipynb"
    nbformat.write(nb, out)
    return out


def _reference(ex_id: str) -> str:
    return f'__import__("ppnn.exercises", fromlist=["get"]).get("{ex_id}").reference_answer()'


def test_the_student_build_has_the_stubs_and_no_solution_access(kit):
    for name in (STEM, f"{STEM}-exercises"):
        text = (kit / "student" / f"{name}.ipynb").read_text(encoding="utf-8")
        assert "solution_of" not in text and "reference_answer" not in text
        nb = nbformat.read(kit / "student" / f"{name}.ipynb", 4)
        for ex in exercises(STEM):
            stubs = [c for c in nb.cells if f"{course.answer_name(ex.id)} = ..." in c.source]
            assert len(stubs) == 1, (name, ex.id)
    assert (kit / "README.md").read_text().count("otter") >= 2


def test_each_exercise_is_a_question_whose_test_calls_the_check(kit):
    import zipfile

    with zipfile.ZipFile(kit / "autograder" / f"{STEM}-autograder.zip") as z:
        tests = {n: z.read(n).decode() for n in z.namelist() if n.startswith("tests/")}
    assert len(tests) == len(exercises(STEM))
    for ex in exercises(STEM):
        src = tests[f"tests/q{course.answer_name(ex.id)[7:]}.py"]
        assert f"_check('{ex.id}', {course.answer_name(ex.id)})" in src


def test_grading_solved_unsolved_and_wrong_copies(kit):
    ids = [e.id for e in exercises(STEM)]
    autograder = kit / "autograder" / f"{STEM}-exercises-autograder.zip"
    solved = course.grade(autograder, _fill(kit, {i: _reference(i) for i in ids}, "solved"))
    assert solved["score"] == solved["possible"] == len(ids)
    unsolved = course.grade(autograder, _fill(kit, {}, "unsolved"))
    assert unsolved["score"] == 0 and unsolved["possible"] == len(ids)
    assert all("no answer yet" in t[2] for t in unsolved["tests"].values())
    answers = {i: _reference(i) for i in ids}
    answers["00.3"] = '2 * n * k'  # the two-party count, not the P-party closed form
    wrong = course.grade(autograder, _fill(kit, answers, "wrong"))
    q = f"q{course.answer_name('00.3')[7:]}"
    assert wrong["score"] == len(ids) - 1 and wrong["tests"][q][0] == 0
    feedback = wrong["tests"][q][2]
    assert "not yet" in feedback and any(h[:40] in feedback for h in get("00.3").hints)
    assert re.search(r"online bits \d+ \(you\) vs \d+ \(the ledger\)", feedback)
