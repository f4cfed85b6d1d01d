"""Which counted rows moved: the counted columns of two sets of reproduced tables, side by side.

    python -m ppnn.reportdiff                      # figures/ (work tree) vs the committed HEAD
    python -m ppnn.reportdiff --before 571ef83     # ... vs the tables committed at a revision
    python -m ppnn.reportdiff --before DIR --after build/quick/figures

A refactor must not move a counted value; a change that moves results on purpose uses this to
show exactly which rows moved. Compared (everything that is identical between two runs with one
seed, nothing measured on the clock):

* every row of ``figures/tables/<paper>_<table>.csv`` whose ``kind`` is ``counted``, ``input``,
  ``formula`` or ``quoted`` -- its ``ours`` value, keyed by ``(file, row, metric)``;
* every ``figures/**/*_counted.csv`` (e.g. the cross-paper comparison's counted columns) --
  every cell, keyed by ``(file, first column, column)``.

A row present on one side only is reported as ``added`` / ``removed``. Numbers are compared
exactly as written (the tables are written with 6 significant digits; a refactor reproduces
them byte for byte). Exit status 1 when anything moved, 0 otherwise.
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
from pathlib import Path

import pandas as pd

from . import paths

__all__ = ["DETERMINISTIC_KINDS", "counted_values", "diff", "main"]

DETERMINISTIC_KINDS = ("counted", "formula", "quoted", "input", "arithmetic")
_REPORT_COLUMNS = ["table", "row", "metric", "unit", "paper", "ours", "ratio", "kind", "status",
                   "reason"]


def _read(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)


def _files_from_dir(figures: Path) -> dict[str, str]:
    figures = Path(figures)
    if not figures.is_dir():
        raise FileNotFoundError(f"no figures directory {figures}")
    out = {}
    for p in sorted(figures.rglob("*.csv")):
        rel = p.relative_to(figures).as_posix()
        if rel.startswith("tables/") or p.name.endswith("_counted.csv"):
            out[rel] = p.read_text(encoding="utf-8")
    return out


def _files_from_rev(rev: str, root: Path) -> dict[str, str]:
    def git(*args: str) -> str:
        r = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
        if r.returncode != 0:
            raise ValueError(f"git {' '.join(args)} failed: {r.stderr.strip()}")
        return r.stdout

    names = git("ls-tree", "-r", "--name-only", rev, "--", "figures").split()
    out = {}
    for name in names:
        rel = name[len("figures/"):]
        if name.endswith(".csv") and (rel.startswith("tables/") or name.endswith("_counted.csv")):
            out[rel] = git("show", f"{rev}:{name}")
    if not out:
        raise ValueError(f"revision {rev!r} has no committed tables under figures/")
    return out


def counted_values(files: dict[str, str]) -> dict[tuple[str, str, str], str]:
    """``{(file, row, column-or-metric): value}`` of the deterministic cells of ``files``."""
    vals: dict[tuple[str, str, str], str] = {}
    for rel, text in files.items():
        df = _read(text)
        if rel.startswith("tables/") and list(df.columns) == _REPORT_COLUMNS:
            keep = df[df["kind"].isin(DETERMINISTIC_KINDS)]
            for r in keep.itertuples(index=False):
                vals[(rel, r.row, r.metric)] = r.ours
        elif rel.endswith("_counted.csv") and len(df.columns):
            key = df.columns[0]
            for rec in df.to_dict("records"):
                for col, v in rec.items():
                    if col != key:
                        vals[(rel, str(rec[key]), col)] = v
    return vals


def diff(before: dict[str, str], after: dict[str, str]) -> pd.DataFrame:
    """Rows whose counted value differs: ``file, row, metric, before, after, change``."""
    b, a = counted_values(before), counted_values(after)
    rows = []
    for key in sorted(set(b) | set(a)):
        if key in b and key in a:
            if b[key] != a[key]:
                rows.append((*key, b[key], a[key], "moved"))
        elif key in b:
            rows.append((*key, b[key], "", "removed"))
        else:
            rows.append((*key, "", a[key], "added"))
    return pd.DataFrame(rows, columns=["file", "row", "metric", "before", "after", "change"])


def _load(spec: str, root: Path) -> tuple[dict[str, str], str]:
    p = Path(spec)
    if p.is_dir():
        return _files_from_dir(p), str(p)
    return _files_from_rev(spec, root), f"revision {spec}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ppnn.reportdiff", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", default="HEAD",
                    help="a git revision or a figures directory (default: HEAD)")
    ap.add_argument("--after", default=None,
                    help="a figures directory or a git revision (default: the work tree's "
                         "figures/, or $PPNN_FIGURES)")
    ap.add_argument("--csv", metavar="PATH", help="also write the moved rows to PATH")
    args = ap.parse_args(argv)
    root = paths.root()
    before, bname = _load(args.before, root)
    after, aname = _load(args.after, root) if args.after else (
        _files_from_dir(paths.figures_root()), str(paths.figures_root()))
    n = len(counted_values(before))
    d = diff(before, after)
    if args.csv:
        paths.atomic_write(args.csv, d.to_csv(index=False))
    if d.empty:
        print(f"{n} counted values compared ({bname} vs {aname}): none moved")
        return 0
    with pd.option_context("display.max_rows", 500, "display.width", 200,
                           "display.max_colwidth", 60):
        print(d.to_string(index=False))
    counts = d["change"].value_counts().to_dict()
    print(f"{n} counted values compared ({bname} vs {aname}): "
          + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    return 1


if __name__ == "__main__":
    sys.exit(main())
