"""Checkable exercises for the notebooks: ``check``, ``hint``, ``solution_of``.

In a notebook::

    from ppnn.exercises import check, hint, solution_of

    def my_beaver(x, y, dealer, ledger):
        ...

    answer = my_beaver          # the stub says answer = ... : "no answer yet"
    check("00.1", answer)       # green "right" or red "not yet" with a hint
    hint("00.1")                # the next hint
    solution_of("00.1")         # prints the reference solution

Every check compares with something the library computes when the check runs: the ledger of
the library's own protocol on the same seeded inputs ("write it yourself" exercises compare
ledgers, not only outputs), a closed form of the library, or the plaintext oracle. Some
exercises are *productive failures*: a flawed variant of a protocol runs, and the answer is
the secret the flaw gives away.

Modules: :mod:`.registry` (exercises, results, hints), :mod:`.ledgers` (ledger comparison),
:mod:`.answers` (reading answers), :mod:`.solutions` (reference solutions),
:mod:`.fragments` (the notebook cells), ``ex00_overview`` ... ``ex05_falcon`` (the exercises
of each notebook, loaded on first use).
"""

from .registry import (
    Exercise,
    Hint,
    Result,
    Verdict,
    check,
    exercises,
    get,
    hint,
    solution_of,
    solution_source,
)

__all__ = ["Exercise", "Hint", "Result", "Verdict", "check", "exercises", "get", "hint",
           "solution_of", "solution_source"]
