"""The README's generated sections: the notebook table and the reproduction summary.

Sections live between ``<!-- BEGIN GENERATED: name -->`` and ``<!-- END GENERATED: name -->``
markers and are rewritten by ``python -m ppnn.frontdoor`` (called at the end of
``make reproduce``). A test fails when the committed README differs from what this module
generates, so the front door never goes stale.

Each notebook's first markdown cell provides the row's title (``# NN — Paper: claim``); the
"reproduces" column lists the paper tables and figures the notebook saved under
``figures/tables/`` (falling back to the notebook's ``Reproduces:`` line).
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pandas as pd

from . import paths
from .report import headline_verdicts, status_counts, to_markdown

__all__ = ["notebook_rows", "notebook_table", "summary_table", "render", "update_readme"]

MARK = "<!-- {} GENERATED: {} -->"


def repository(root: Path | None = None) -> str | None:
    """``OWNER/NAME`` on GitHub from ``[tool.ppnn] repository`` of ``root``'s pyproject.toml
    (default: the project's), or None when it does not say."""
    try:
        data = tomllib.loads(((root or paths.root()) / "pyproject.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return data.get("tool", {}).get("ppnn", {}).get("repository")


def _repo_slug() -> str:
    return repository() or "ppnn-lab/ppnn-lab"


def notebook_rows() -> list[dict]:
    import jupytext

    rows = []
    for py in sorted((paths.root() / "notebooks").glob("[0-9][0-9]_*.py")):
        nb = jupytext.read(py)
        md = next((c.source for c in nb.cells if c.cell_type == "markdown"), "")
        title = next((ln[2:].strip() for ln in md.splitlines() if ln.startswith("# ")), py.stem)
        repro = next((ln.split(":", 1)[1].strip() for ln in md.splitlines()
                      if ln.lower().startswith("reproduces:")), "")
        rows.append({"stem": py.stem, "title": title, "reproduces": repro})
    return rows


def _reproduced_tables(paper: str) -> str:
    """'Table 1, Table 2, Fig. 4' from the tables this paper's notebook saved in figures/."""
    tdir = paths.root() / "figures" / "tables"
    labels = []
    for p in sorted(tdir.glob(f"{paper}_*.csv"), key=lambda q: [
            int(t) if t.isdigit() else t for t in re.split(r"(\d+)", q.stem)]):
        m = re.fullmatch(rf"{paper}_(table|fig)(\d+)", p.stem)
        if m:
            labels.append(("Table " if m.group(1) == "table" else "Fig. ") + m.group(2))
    return ", ".join(labels)


def notebook_table() -> str:
    slug = _repo_slug()
    lines = ["| notebook | topic | reproduces | Binder |", "|---|---|---|---|"]
    for r in notebook_rows():
        url = (f"https://mybinder.org/v2/gh/{slug}/HEAD?urlpath=lab/tree/notebooks/"
               f"{r['stem']}.ipynb")
        title = re.sub(r"^\d+\s*[—-]\s*", "", r["title"])
        paper = r["stem"].split("_", 1)[-1]
        repro = _reproduced_tables(paper) or r["reproduces"] or "—"
        lines.append(f"| [`{r['stem']}`](notebooks/{r['stem']}.py) | {title} | "
                     f"{repro} | [launch]({url}) |")
    return "\n".join(lines) + "\n"


#: the README's summary groups the report's statuses (REPORT.md has every one)
_GROUPS = {
    "match": ("exact", "within tolerance", "verified"),
    "differ": ("differs",),
    "claims: hold / short / fail / close": ("claim holds", "direction holds, magnitude not reached",
                                            "claim fails", "too close to call"),
    "context": ("differs; paper's choice reproduces", "definition differs", "formula", "quoted",
                "input"),
    "not comparable": ("not reproducible here", "not reproducible: network unspecified",
                       "ours only", "paper value missing", "paper value garbled"),
}


def _compact(paper: str, tables: int, headlines: str, counts: dict) -> dict:
    row = {"paper": paper, "headline claims": headlines or "none yet", "tables": tables,
           "rows": counts["rows"]}
    for name, statuses in _GROUPS.items():
        vals = [counts.get(s, 0) for s in statuses]
        row[name] = " / ".join(map(str, vals)) if name.startswith("claims") else sum(vals)
    row["machine-dependent"] = counts["machine-dependent rows"]
    return row


def summary_table(figures: Path | None = None) -> str:
    tdir = (figures or paths.root() / "figures") / "tables"
    frames = []
    for p in sorted(tdir.glob("*.csv")) if tdir.is_dir() else []:
        df = pd.read_csv(p, dtype=str, keep_default_na=False)
        if "status" in df.columns and not p.name.startswith("errata_"):
            df["paper"] = p.stem.split("_", 1)[0]
            df["stem"] = p.stem
            frames.append(df)
    if not frames:
        return "No tables regenerated yet: run `make reproduce`.\n"
    all_rows = pd.concat(frames)
    out = []
    for paper, g in all_rows.groupby("paper", sort=False):
        out.append(_compact(paper, g["stem"].nunique(), headline_verdicts(tdir, paper),
                            status_counts(g)))
    return (to_markdown(pd.DataFrame(out))
            + "\nDetails, reasons for every difference and the errata found: "
              "[`figures/REPORT.md`](figures/REPORT.md).\n")


def render(text: str, sections: dict[str, str]) -> str:
    for name, body in sections.items():
        begin, end = MARK.format("BEGIN", name), MARK.format("END", name)
        pat = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
        if not pat.search(text):
            raise ValueError(f"README lacks the markers for section {name!r}")
        replacement = f"{begin}\n{body}{end}"
        text = pat.sub(lambda _m, r=replacement: r, text)
    return text


def binder_badge() -> str:
    """The README's Binder badge, for the repository set once in pyproject's [tool.ppnn]."""
    return ("[![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/"
            f"{_repo_slug()}/HEAD?urlpath=lab/tree/notebooks/00_overview.ipynb)\n")


def generated_readme() -> str:
    readme = paths.root() / "README.md"
    return render(readme.read_text(encoding="utf-8"),
                  {"badge": binder_badge(), "notebooks": notebook_table(),
                   "summary": summary_table()})


def update_readme() -> Path:
    return paths.write_if_changed(paths.root() / "README.md", generated_readme())


if __name__ == "__main__":
    print(update_readme())
    sys.exit(0)
