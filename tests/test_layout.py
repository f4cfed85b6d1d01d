"""Layering: protocol code imports neither the report nor plotting; experiments sit on top."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[1] / "lib" / "ppnn"
FORBIDDEN = ("ppnn.report", "ppnn.plotting", "ppnn.experiments", "ppnn.reproduce",
             "ppnn.frontdoor", "matplotlib")


def _imports(source: str, module: str) -> set[str]:
    """Absolute module names imported by the source of ``module`` (relative imports
    resolved)."""
    pkg = module.split(".")
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = list(pkg[:-1]) if node.level else []
            if node.level > 1:
                base = base[: len(base) - (node.level - 1)]
            mod = ".".join([*base, *(node.module.split(".") if node.module else [])])
            out.add(mod)
            out |= {f"{mod}.{a.name}" for a in node.names}
    return out


def _forbidden(path: Path, forbidden) -> list[str]:
    """The modules ``path`` imports that are (or live under) one of ``forbidden``."""
    module = ".".join(path.relative_to(LIB.parent).with_suffix("").parts)
    return sorted(m for m in _imports(path.read_text(encoding="utf-8"), module)
                  for f in forbidden if m == f or m.startswith(f + "."))


@pytest.mark.parametrize("path", sorted((LIB / "protocols").rglob("*.py")),
                         ids=lambda p: str(p.relative_to(LIB)))
def test_protocol_code_imports_no_report_plotting_or_experiments(path):
    bad = _forbidden(path, FORBIDDEN)
    assert not bad, f"{path.relative_to(LIB)} imports {bad}"


def test_the_import_check_sees_relative_imports():
    """The check resolves ``from ... import report`` to ``ppnn.report`` (it can fail)."""
    mods = _imports("from ... import report\nimport matplotlib.pyplot as plt\n"
                    "from ..api import Plan\n", "ppnn.protocols.swann.probe")
    assert {"ppnn.report", "matplotlib.pyplot", "ppnn.protocols.api.Plan"} <= mods


BASE_FORBIDDEN = ("ppnn.protocols", "ppnn.experiments", "ppnn.report", "ppnn.plotting",
                  "ppnn.reproduce", "matplotlib")


@pytest.mark.parametrize("path", sorted(p for d in ("core", "nn", "he")
                                        for p in (LIB / d).rglob("*.py")),
                         ids=lambda p: str(p.relative_to(LIB)))
def test_foundations_import_no_protocol_or_experiment(path):
    """core, nn and he sit below every protocol: they import none, nor the report layer."""
    bad = _forbidden(path, BASE_FORBIDDEN)
    assert not bad, f"{path.relative_to(LIB)} imports {bad}"
