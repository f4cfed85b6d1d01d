import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("PPNN_ROOT", str(ROOT))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT
