"""The lesson reads top to bottom: a notebook's "Reproduced tables" section is one call per
paper table into :mod:`ppnn.experiments` (DESIGN.md, "Teaching"), never the bookkeeping that
builds, compares, saves and shows a table (reason dicts, local helpers, loops, pandas/report
plumbing). That lives next to the table builders, where a test can import it."""

import ast
import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").glob("0[0-5]_*.py"))
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
SECTION = re.compile(r"^(\d+\.\s+)?Reproduced tables$")
#: a literal (list, tuple, dict, set) with more elements than this is data, not a call
MAX_LITERAL = 5
FORBIDDEN_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.For,
                   ast.AsyncFor, ast.While, ast.With, ast.Try, ast.If, ast.ListComp,
                   ast.SetComp, ast.DictComp, ast.GeneratorExp)
#: modules whose use in the section is plumbing: frames, the report layer, display
PLUMBING = ("pandas", "ppnn.report", "IPython", "ppnn.paths")
PLUMBING_NAMES = {"display", "print", "Markdown"}


def _headings(source: str):
    for line in source.splitlines():
        m = HEADING.match(line)
        if m:
            yield len(m.group(1)), m.group(2)


def section_cells(nb) -> tuple[list, list]:
    """(cells of the "Reproduced tables" section, all cells): from the heading to the next
    heading of the same or a higher level."""
    start = level = None
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        for lev, text in _headings(cell.source):
            if start is None:
                if SECTION.match(text):
                    start, level = i, lev
            elif lev <= level:
                return nb.cells[start:i], nb.cells
    if start is None:
        raise AssertionError("no 'Reproduced tables' heading")
    return nb.cells[start:], nb.cells


def code_lines(cells) -> int:
    """Lines of code: non-blank, not only a comment."""
    return sum(1 for c in cells if c.cell_type == "code" for line in c.source.splitlines()
               if line.strip() and not line.strip().startswith("#"))


def imports_of(cells) -> dict[str, str]:
    """Name bound by an import anywhere in the notebook -> the qualified name it stands for."""
    names = {}
    for c in cells:
        if c.cell_type != "code":
            continue
        try:
            tree = ast.parse(c.source)
        except SyntaxError:  # a cell with magics: not ours to judge here
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    names[a.asname or a.name.split(".")[0]] = a.name if a.asname else \
                        a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


def qualified(expr: ast.expr, names: dict[str, str]) -> str | None:
    """``a.b.c`` with ``a`` resolved through the notebook's imports (None if ``a`` is not an
    imported name)."""
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name) or expr.id not in names:
        return None
    return ".".join([names[expr.id], *reversed(parts)])


def _is_experiments_call(value: ast.expr, names: dict[str, str]) -> bool:
    if not isinstance(value, ast.Call):
        return False
    q = qualified(value.func, names)
    return q is not None and q.startswith("ppnn.experiments.")


def problems(cells, names: dict[str, str]) -> list[str]:
    """What in the section's code cells is not a call into ppnn.experiments."""
    out = []
    for cell in cells:
        if cell.cell_type != "code":
            continue
        tree = ast.parse(cell.source)
        for stmt in tree.body:
            where = f"{ast.unparse(stmt)[:70]!r}"
            if isinstance(stmt, ast.ImportFrom | ast.Import):
                mods = ([stmt.module] if isinstance(stmt, ast.ImportFrom)
                        else [a.name for a in stmt.names])
                if not all((m or "").startswith("ppnn.experiments") for m in mods):
                    out.append(f"import of something other than ppnn.experiments: {where}")
                continue
            if isinstance(stmt, ast.Expr):
                value = stmt.value
            elif (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                  and isinstance(stmt.targets[0], ast.Name)):
                value = stmt.value
            else:
                out.append(f"not an expression or a simple assignment: {where}")
                continue
            if not _is_experiments_call(value, names):
                out.append(f"not a call of a ppnn.experiments function: {where}")
            for node in ast.walk(stmt):
                if isinstance(node, FORBIDDEN_NODES):
                    out.append(f"{type(node).__name__} in {where}")
                elif isinstance(node, ast.List | ast.Tuple | ast.Set) and \
                        len(node.elts) > MAX_LITERAL:
                    out.append(f"a literal of {len(node.elts)} elements in {where}")
                elif isinstance(node, ast.Dict) and len(node.keys) > MAX_LITERAL:
                    out.append(f"a dict of {len(node.keys)} entries in {where}")
                elif isinstance(node, ast.Name):
                    q = names.get(node.id, "")
                    if node.id in PLUMBING_NAMES or any(
                            q == p or q.startswith(p + ".") for p in PLUMBING):
                        out.append(f"{node.id} ({q or 'builtin'}) in {where}")
    return out


def _read(py: Path):
    return jupytext.read(py)


@pytest.mark.parametrize("py", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_reproduced_tables_section_is_one_experiments_call_per_table(py):
    nb = _read(py)
    cells, all_cells = section_cells(nb)
    code = [c for c in cells if c.cell_type == "code"]
    assert code, f"{py.name}: the Reproduced tables section has no code"
    found = problems(cells, imports_of(all_cells))
    assert not found, f"{py.name}: bookkeeping left in the section:\n" + "\n".join(found)


@pytest.mark.parametrize("py", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_reproduced_tables_take_a_small_share_of_the_code(py):
    nb = _read(py)
    cells, all_cells = section_cells(nb)
    share = code_lines(cells) / code_lines(all_cells)
    print(f"{py.stem}: Reproduced tables {code_lines(cells)} of {code_lines(all_cells)} code "
          f"lines ({100 * share:.1f} %)")
    assert share < 0.10


def test_the_checker_flags_bookkeeping():
    """The check itself: a notebook section with a local helper, a loop, a dict of reasons
    and a pandas call fails; one with calls into ppnn.experiments passes."""
    names = {"pd": "pandas", "report": "ppnn.report",
             "reproduced": "ppnn.experiments.tabula.tables"}

    def cell(src):
        return jupytext.reads("# %%\n" + src, fmt="py:percent").cells[0]

    good = cell("reproduced.table1(pc, meas)\nt = reproduced.table2(pc)\n")
    assert problems([good], names) == []
    for bad in ("def show(df):\n    return df\n", "for t in x:\n    reproduced.table1(t)\n",
                "pd.concat([a, b])\n", "reproduced.table1(report.load_paper('a', 'b'))\n",
                "reasons = {(1, 2): 'a'}\n", "x = [i for i in y]\n",
                "reproduced.table1({1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6})\n",
                "display(reproduced.table1(pc))\n", "import pandas as pd\n"):
        assert problems([cell(bad)], names), bad


def test_a_table_call_compares_saves_and_shows_once(tmp_path, monkeypatch, capsys):
    """A table function of ``ppnn.experiments.<paper>.tables`` writes what report.compare and
    report.save give for the same frame and reasons, shows it once and returns nothing (so a
    cell ending in it shows the table once); the status summary counts what was compared."""
    from ppnn import report
    from ppnn.experiments import paper_vs_ours
    from ppnn.experiments.tabula import paper, tables

    monkeypatch.setenv("PPNN_FIGURES", str(tmp_path / "figures"))
    monkeypatch.setattr(paper_vs_ours, "COMPARED", {})
    assert tables.fig8() is None
    shown = capsys.readouterr().out
    assert shown.count("GC storage per ReLU (Sec 4.2)") == 3  # one table: its three gc rows
    saved = (tmp_path / "figures" / "tables" / "tabula_fig8.csv").read_bytes()
    f8 = paper.fig8()
    expected = report.compare("tabula", "fig8", f8, rtol=tables.RTOL,
                              reasons=tables.fig8_reasons(f8))
    monkeypatch.setenv("PPNN_FIGURES", str(tmp_path / "direct"))
    report.save(expected, "tabula", "fig8", "storage per ReLU")
    assert (tmp_path / "direct" / "tables" / "tabula_fig8.csv").read_bytes() == saved
    assert ((tmp_path / "direct" / "tables" / "tabula_fig8.md").read_bytes()
            == (tmp_path / "figures" / "tables" / "tabula_fig8.md").read_bytes())
    summary = paper_vs_ours.status_summary("tabula")
    assert summary.to_numpy().sum() == len(expected)
    with pytest.raises(ValueError, match="no gala table"):
        paper_vs_ours.status_summary("gala")
