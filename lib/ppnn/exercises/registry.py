"""The exercise registry: one :class:`Exercise` per id, :func:`check`, :func:`hint` and
:func:`solution_of`.

An exercise's checker receives the student's answer and returns a :class:`Verdict`. It
compares against the ledger of the library's own protocol, a closed form of the library, or
the plaintext oracle -- computed when the check runs, never a number typed in here. Checkers
raise :class:`WrongType` for an answer of the wrong kind and :class:`StudentError` when the
student's own code raised; :func:`check` turns both into a message, so a check never ends in
a traceback the student did not cause.

Exercises are registered by the modules ``ex00_overview`` ... ``ex05_falcon`` (one per
notebook), each imported the first time one of its ids is asked for.
"""

from __future__ import annotations

import html
import importlib
import inspect
import re
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = ["Exercise", "Verdict", "Result", "Hint", "WrongType", "StudentError", "register",
           "get", "exercises", "check", "hint", "solution_of", "solution_source",
           "call_student", "own_work", "NOTEBOOKS"]

#: notebook number -> (notebook stem, module registering its exercises)
NOTEBOOKS = {
    "00": ("00_overview", "ex00_overview"),
    "01": ("01_tabula", "ex01_tabula"),
    "02": ("02_gala", "ex02_gala"),
    "03": ("03_swann", "ex03_swann"),
    "04": ("04_she", "ex04_she"),
    "05": ("05_falcon", "ex05_falcon"),
}

_ID = re.compile(r"^(\d\d)\.(\d+)$")
_REGISTRY: dict[str, Exercise] = {}
_LOADED: set[str] = set()
_ATTEMPTS: dict[str, int] = {}
_HINTS_SHOWN: dict[str, int] = {}


class WrongType(TypeError):
    """The answer is not of the kind the exercise expects (the message says what it got)."""


class StudentError(RuntimeError):
    """The student's own code raised while the checker ran it."""


class Verdict(NamedTuple):
    """What a checker decided: ``ok``, a message, and optionally a hint for this answer."""

    ok: bool
    message: str
    hint: str | None = None


@dataclass(frozen=True)
class Exercise:
    """One checkable exercise.

    ``kind`` says what the answer is: ``"function"`` -- the student writes a function and
    passes it (the reference ``solution`` is such a function); ``"value"`` -- a value, and the
    reference ``solution`` is a function of no arguments that computes it. ``stub`` is the
    code cell the notebook shows (it must end with ``answer = ...``).
    """

    id: str
    title: str
    prompt: str
    hints: tuple[str, ...]
    expects: str
    checker: Callable[[Any], Verdict]
    solution: Callable
    stub: str
    kind: str = "function"
    compares_ledgers: bool = False
    productive_failure: bool = False
    notebook: str = field(default="", init=False)  # the notebook stem, from the id

    def __post_init__(self) -> None:
        m = _ID.match(self.id)
        if not m or m.group(1) not in NOTEBOOKS:
            raise ValueError(f"exercise id must be 'NN.k' with NN one of {sorted(NOTEBOOKS)}, "
                             f"got {self.id!r}")
        if not 1 <= len(self.hints) <= 3:
            raise ValueError(f"{self.id}: give 1 to 3 progressive hints, got {len(self.hints)}")
        if self.kind not in ("function", "value"):
            raise ValueError(f"{self.id}: kind must be 'function' or 'value', got {self.kind!r}")
        if not self.stub.rstrip().endswith("answer = ..."):
            raise ValueError(f"{self.id}: the stub must end with 'answer = ...'")
        object.__setattr__(self, "notebook", NOTEBOOKS[m.group(1)][0])

    def reference_answer(self):
        """The answer the reference solution gives (what :func:`check` accepts)."""
        return self.solution() if self.kind == "value" else self.solution


class Hint(str):
    """A hint: plain text, shown as Markdown in Jupyter."""

    def __repr__(self) -> str:
        return str(self)

    def _repr_markdown_(self) -> str:
        return f"**Hint.** {self}"


@dataclass(frozen=True)
class Result:
    """The outcome of :func:`check`: true-like when the answer is right."""

    id: str
    title: str
    ok: bool
    status: str  # "right", "not yet" or "no answer yet"
    message: str
    hint: str | None = None

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        mark = "✓" if self.ok else ("…" if self.status == "no answer yet" else "✗")
        lines = [f"{mark} {self.id} {self.title}: {self.status}", self.message]
        if self.hint:
            lines.append(f"Hint: {self.hint}")
        return "\n".join(line for line in lines if line)

    def _repr_html_(self) -> str:
        color = "#1a7f37" if self.ok else "#cf222e"
        mark = "✓ right" if self.ok else ("… no answer yet" if self.status == "no answer yet"
                                           else "✗ not yet")
        parts = [f'<div style="color:{color};font-weight:bold">{mark} &mdash; Exercise '
                 f"{html.escape(self.id)}: {html.escape(self.title)}</div>"]
        if self.message:
            parts.append(f'<div style="white-space:pre-wrap">{_inline_md(self.message)}</div>')
        if self.hint:
            parts.append(f"<div><b>Hint.</b> {_inline_md(self.hint)}</div>")
        return "\n".join(parts)


def _inline_md(text: str) -> str:
    """``text`` as HTML with its Markdown code spans rendered (`x` -> <code>x</code>)."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


# -- registry -----------------------------------------------------------------------------
def register(exercise: Exercise) -> Exercise:
    """Add ``exercise`` to the registry (an id is registered once)."""
    if exercise.id in _REGISTRY:
        raise ValueError(f"exercise {exercise.id} is registered twice")
    _REGISTRY[exercise.id] = exercise
    return exercise


def _load(number: str) -> None:
    if number not in _LOADED:
        importlib.import_module(f"{__package__}.{NOTEBOOKS[number][1]}")
        _LOADED.add(number)


def _load_all() -> None:
    for number in NOTEBOOKS:
        _load(number)


def get(exercise_id: str) -> Exercise:
    """The exercise with this id; an unknown id raises ``ValueError`` naming the known ids."""
    if not isinstance(exercise_id, str):
        raise TypeError(f"exercise id must be a string like '00.1', got "
                        f"{type(exercise_id).__name__}")
    m = _ID.match(exercise_id.strip())
    if m and m.group(1) in NOTEBOOKS:
        _load(m.group(1))
        if exercise_id.strip() in _REGISTRY:
            return _REGISTRY[exercise_id.strip()]
    _load_all()
    raise ValueError(f"unknown exercise id {exercise_id!r}; the exercises are "
                     f"{', '.join(sorted(_REGISTRY, key=_sort_key))}")


def _sort_key(exercise_id: str) -> tuple[int, int]:
    a, b = exercise_id.split(".")
    return int(a), int(b)


def exercises(notebook: str | None = None) -> list[Exercise]:
    """Every registered exercise, in id order (``notebook``: only those of ``"00"`` ... or of
    a notebook stem like ``"02_gala"``)."""
    _load_all()
    out = [_REGISTRY[i] for i in sorted(_REGISTRY, key=_sort_key)]
    if notebook is not None:
        out = [e for e in out if notebook in (e.id[:2], e.notebook)]
    return out


# -- checking -----------------------------------------------------------------------------
def _describe(answer) -> str:
    text = repr(answer)
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"{type(answer).__name__} {text}"


def own_work(fn, library: Callable, name: str) -> Verdict | None:
    """A "not yet" when the answer *is* the library's function the exercise rebuilds."""
    if fn is library:
        return Verdict(False, f"That is the library's own {name}, the reference the check "
                              "compares with: write your own version.")
    return None


def call_student(fn: Callable, *args, what: str = "your function"):
    """Run the student's ``fn(*args)``; an exception becomes :class:`StudentError` naming the
    exception and the line of the student's code that raised it."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - any error in the student's code is reported
        frames = traceback.extract_tb(e.__traceback__)
        where = ""
        for fr in reversed(frames):  # the deepest frame outside the library, if any
            if "/ppnn/" not in fr.filename.replace("\\", "/"):
                where = f" (line {fr.lineno}: {fr.line})" if fr.line else f" (line {fr.lineno})"
                break
        raise StudentError(f"{what} raised {type(e).__name__}: {e}{where}") from e


def check(exercise_id: str, answer) -> Result:
    """Check ``answer`` for exercise ``exercise_id``.

    The stub's ``answer = ...`` (or None) gives "no answer yet" and the first hint; a wrong
    answer gives what differs and a hint (the next one at each further try); an answer of the
    wrong kind says what was expected. Raises ``ValueError`` only for an unknown id.
    """
    ex = get(exercise_id)
    if answer is None or answer is Ellipsis:
        return Result(ex.id, ex.title, False, "no answer yet",
                      f"No answer yet: replace `answer = ...` by {ex.expects}.", ex.hints[0])
    if ex.kind == "function" and not callable(answer):
        verdict = Verdict(False, f"Expected {ex.expects}; got {_describe(answer)}.")
    else:
        try:
            verdict = ex.checker(answer)
        except WrongType as e:
            verdict = Verdict(False, f"Expected {ex.expects}; {e}")
        except StudentError as e:
            verdict = Verdict(False, str(e))
    if verdict.ok:
        return Result(ex.id, ex.title, True, "right", verdict.message, None)
    n = _ATTEMPTS.get(ex.id, 0)
    _ATTEMPTS[ex.id] = n + 1
    tip = verdict.hint or ex.hints[min(n, len(ex.hints) - 1)]
    return Result(ex.id, ex.title, False, "not yet", verdict.message, tip)


def hint(exercise_id: str, n: int | None = None) -> Hint:
    """Hint ``n`` (1-based) of an exercise; without ``n``, the next one each call (the last
    one repeats)."""
    ex = get(exercise_id)
    if n is None:
        k = _HINTS_SHOWN.get(ex.id, 0)
        _HINTS_SHOWN[ex.id] = k + 1
        n = min(k, len(ex.hints) - 1) + 1
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= len(ex.hints):
        raise ValueError(f"exercise {ex.id} has hints 1..{len(ex.hints)}, got {n!r}")
    return Hint(f"({n}/{len(ex.hints)}) {ex.hints[n - 1]}")


def solution_source(exercise_id: str) -> str:
    """The source of the reference solution of an exercise."""
    ex = get(exercise_id)
    src = inspect.getsource(ex.solution)
    if ex.kind == "value":
        src += f"\n\nanswer = {ex.solution.__name__}()\n"
    return src


def solution_of(exercise_id: str) -> None:
    """Print the reference solution of an exercise (its source, from
    :mod:`ppnn.exercises.solutions`)."""
    ex = get(exercise_id)
    print(f"# Reference solution of exercise {ex.id}: {ex.title}\n")
    print(solution_source(ex.id))
