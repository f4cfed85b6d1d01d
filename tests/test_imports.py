"""Imports of ``lib/ppnn`` flow one way, from the top down: experiments, the report, the front
door's ``run``, the transports (wire, Dask), the protocol families and their interface,
nn / he, core.

The graph is read with :mod:`ast` from every module of ``lib/ppnn``: an ``import`` or
``from ... import`` anywhere in a module (at module level or inside a function) is an edge;
relative imports are resolved; ``from pkg import name`` is an edge to the submodule
``pkg.name`` when there is one, otherwise to ``pkg`` itself. Strings handed to
``importlib.import_module`` (the family registry of :mod:`ppnn.protocols.api`) are not
edges: a registry names its implementations, it does not depend on them.

- No strongly connected component of more than one module (no circle of imports).
- No module imports the root package ``ppnn`` (its ``__init__`` is the front door for users;
  library code names the submodule).
- No module of ``ppnn.protocols`` imports a transport, an experiment or the report.
- No arrow points back up the layers (:data:`LAYERS`): core, then nn / he / data, the
  protocols (interface and families), the transports (wire, Dask), the front door's
  ``run`` (:mod:`ppnn.runner`), the report, the experiments.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "lib"
PKG = LIB / "ppnn"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(LIB).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """``name`` or its longest prefix that is a module of ``ppnn`` (None: not ours)."""
    parts = name.split(".")
    while parts:
        cand = ".".join(parts)
        if cand in known:
            return cand
        parts.pop()
    return None


def _edges(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    is_pkg = path.name == "__init__.py"
    package = module if is_pkg else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if (target := _resolve(alias.name, known)) is not None:
                    out.add(target)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                src = ".".join(base + ([node.module] if node.module else []))
            else:
                src = node.module or ""
            if _resolve(src, known) is None:
                continue
            for alias in node.names:
                sub = f"{src}.{alias.name}"
                out.add(sub if sub in known else _resolve(src, known))
    out.discard(module)
    return out


def import_graph() -> dict[str, set[str]]:
    """module -> the ``ppnn`` modules it imports."""
    known = _modules()
    return {m: _edges(m, p, known) for m, p in known.items()}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively (each sorted; larger first)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    out.append(sorted(comp))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return sorted(out, key=lambda c: (-len(c), c))


#: the layers, lowest first: a module may import its own layer or one below, never above.
#: A module belongs to the entry whose name is its longest prefix. The tools on top (the
#: CLI, the pipeline, the site, the README generator, widgets, exercises) and the root
#: package are in no layer: nothing below imports them (the root: tested above).
LAYERS: list[tuple[str, ...]] = [
    ("ppnn._version", "ppnn.errors", "ppnn.paths", "ppnn._kernel", "ppnn.numerics",
     "ppnn.core"),
    ("ppnn.nn", "ppnn.he", "ppnn.data"),
    ("ppnn.protocols",),  # the interface (protocols.api) and the families
    ("ppnn.wire", "ppnn.distributed"),  # the transports
    ("ppnn.runner",),  # the front door's run: picks the transport
    ("ppnn.report",),
    ("ppnn.experiments",),
]


def _layer(module: str) -> int | None:
    best, rank = "", None
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > len(best):
                best, rank = p, i
    return rank


GRAPH = import_graph()


def test_the_graph_covers_every_module_and_sees_function_level_imports():
    assert len(GRAPH) == len(list(PKG.rglob("*.py"))) > 150
    # the front door imports its transports inside run(): edges all the same
    assert {"ppnn.wire", "ppnn.distributed", "ppnn.protocols.api"} <= GRAPH["ppnn.runner"]


def test_the_parser_resolves_relative_and_submodule_imports(tmp_path):
    known = {"ppnn": Path("ppnn/__init__.py"), "ppnn.core": Path("ppnn/core/__init__.py"),
             "ppnn.core.ring": Path("ppnn/core/ring.py"), "ppnn.nn": Path("ppnn/nn/__init__.py"),
             "ppnn.nn.zoo": Path("ppnn/nn/zoo.py")}
    src = tmp_path / "zoo.py"
    src.write_text("from ..core import ring, Ledger\nfrom . import layers\n"
                   "def f():\n    import ppnn\n    from ppnn import core\n")
    assert _edges("ppnn.nn.zoo", src, known) == {"ppnn.core.ring", "ppnn.core", "ppnn.nn",
                                                 "ppnn"}


def test_no_circle_of_imports():
    circles = [c for c in strongly_connected(GRAPH) if len(c) > 1]
    assert not circles, "circles of imports:\n" + "\n".join(
        f"  {len(c)} modules: {', '.join(c)}" for c in circles)


def test_no_module_imports_the_root_package():
    offenders = sorted(m for m, deps in GRAPH.items() if "ppnn" in deps)
    assert not offenders, f"import the submodule, not the root package ppnn: {offenders}"


@pytest.mark.parametrize("above", ["ppnn.wire", "ppnn.distributed", "ppnn.experiments",
                                   "ppnn.report", "ppnn.runner"])
def test_no_protocol_module_imports_a_transport_an_experiment_or_the_report(above):
    offenders = sorted(f"{m} -> {d}" for m, deps in GRAPH.items()
                       if m.startswith("ppnn.protocols") for d in deps
                       if d == above or d.startswith(above + "."))
    assert not offenders, offenders


def test_every_library_layer_is_populated():
    for prefixes in LAYERS:
        assert any(_layer(m) is not None and any(m == p or m.startswith(p + ".")
                                                 for p in prefixes) for m in GRAPH), prefixes


def test_no_arrow_back_up_the_layers():
    back = sorted(f"{m} -> {d}" for m, deps in GRAPH.items() for d in deps
                  if (lm := _layer(m)) is not None and (ld := _layer(d)) is not None
                  and ld > lm)
    assert not back, "imports from a lower layer to a higher one:\n  " + "\n  ".join(back)
