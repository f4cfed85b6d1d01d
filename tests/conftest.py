import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("PPNN_ROOT", str(ROOT))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture
def figures(tmp_path, monkeypatch):
    """Tables and figures under a temporary folder; the paper-vs-ours registry empty and
    nothing displayed."""
    from ppnn.experiments import paper_vs_ours as pvo

    monkeypatch.setenv("PPNN_FIGURES", str(tmp_path / "figures"))
    monkeypatch.setattr(pvo, "show", lambda *a, **k: None)
    monkeypatch.setattr(pvo, "COMPARED", {})
    return tmp_path
