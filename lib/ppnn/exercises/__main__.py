"""``python -m ppnn.exercises [folder]``: write the notebook fragments ``NN.md`` (default:
``notebooks/exercises`` of the project) and list the exercises."""

from __future__ import annotations

import sys

from ppnn import paths

from .fragments import write_fragments
from .registry import exercises


def main(argv: list[str]) -> int:
    folder = argv[0] if argv else paths.root() / "notebooks" / "exercises"
    for path in write_fragments(folder):
        print("wrote", path)
    for ex in exercises():
        print(f"  {ex.id}  {ex.title}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
