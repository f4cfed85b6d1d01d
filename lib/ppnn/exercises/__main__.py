"""``python -m ppnn.exercises [--out FOLDER]``: write the notebook fragments ``NN.md``
(default: ``notebooks/exercises`` of the project) and list the exercises."""

from __future__ import annotations

import argparse
import sys

from ppnn import paths

from .fragments import write_fragments
from .registry import exercises


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m ppnn.exercises", description=__doc__)
    ap.add_argument("--out", default=str(paths.root() / "notebooks" / "exercises"),
                    help="folder for the NN.md fragments (default: notebooks/exercises)")
    args = ap.parse_args(argv)
    for path in write_fragments(args.out):
        print("wrote", path)
    for ex in exercises():
        print(f"  {ex.id}  {ex.title}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
