"""Where everything lives. Every output path of the toolkit comes from here.

The project root is ``$PPNN_ROOT`` if set, otherwise the nearest directory at or above the
current working directory that holds both ``data/paper`` and ``notebooks`` (so notebooks run
from ``notebooks/`` and tests run from the root find the same place), otherwise the checkout
this package is installed from (``pip install -e .``: commands such as
``python -m ppnn compare`` then work from any folder).
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

__all__ = ["root", "paper_dir", "cache_dir", "cache_lock", "figures_root", "notebook_outputs",
           "figures_dir",
           "tables_dir", "results_dir", "build_dir", "atomic_write", "atomic_path"]


def root() -> Path:
    env = os.environ.get("PPNN_ROOT")
    if env:
        return Path(env).resolve()
    here = Path.cwd().resolve()
    checkout = Path(__file__).resolve().parents[2]  # <checkout>/lib/ppnn/paths.py
    for d in (here, *here.parents, checkout):
        if (d / "data" / "paper").is_dir() and (d / "notebooks").is_dir():
            return d
    raise FileNotFoundError(
        "cannot find the PPNN Lab project root (a folder with data/paper and notebooks) at or "
        f"above {here}, nor where ppnn is installed from; run from inside the repository or "
        "set PPNN_ROOT"
    )


def _mk(p: Path) -> Path:
    p.mkdir(parents=True, exist_ok=True)
    return p


def paper_dir() -> Path:
    """Transcribed paper tables (committed, read-only)."""
    return root() / "data" / "paper"


def cache_dir() -> Path:
    """Fetched datasets and trained models (git-ignored)."""
    return _mk(root() / "data" / "cache")


@contextmanager
def cache_lock(entry: Path):
    """Hold an exclusive lock named after a cache entry (``<entry>.lock``) while it is checked
    and, if missing, built: notebooks running in parallel that need the same trained model
    train it once -- the second waits, then loads it. (No-op where ``fcntl`` is missing.)"""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    lock = Path(str(entry) + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another process builds it: wait, and say so
            marker = waiting_marker()
            if marker is not None:
                atomic_write(marker, str(entry))
            try:
                fcntl.flock(f, fcntl.LOCK_EX)
            finally:
                if marker is not None:
                    marker.unlink(missing_ok=True)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def waiting_marker(pid: int | None = None) -> Path | None:
    """``$PPNN_WAIT_DIR/<pid>``: present while process ``pid`` (default: this one) waits for
    another to build a cache entry -- idle on purpose, so the pipeline's hung-kernel watch
    leaves it alone. None outside the pipeline."""
    d = os.environ.get("PPNN_WAIT_DIR")
    return Path(d) / str(os.getpid() if pid is None else pid) if d else None


def figures_root() -> Path:
    """``figures/`` of the project, or ``$PPNN_FIGURES`` (quick test runs write elsewhere so
    they never overwrite the full pipeline's committed outputs)."""
    env = os.environ.get("PPNN_FIGURES")
    return _mk(Path(env).resolve() if env else root() / "figures")


def notebook_outputs(quick: bool) -> Path:
    """Where a notebook run writes its tables and figures, decided once at its top.

    The full pipeline (``make reproduce`` / ``python -m ppnn.reproduce``) and the test suite
    set ``$PPNN_FIGURES``, and that is kept. Any other run -- JupyterLab, Binder, nbconvert,
    papermill by hand -- writes under ``build/quick/figures`` or ``build/full/figures``, never
    into the committed ``figures/``: exploring a notebook cannot overwrite the published
    reproduction. (To regenerate ``figures/``, run the pipeline.)"""
    if not isinstance(quick, bool):
        raise TypeError(f"quick must be True or False, got {quick!r}")
    if not os.environ.get("PPNN_FIGURES"):
        target = build_dir() / ("quick" if quick else "full") / "figures"
        os.environ["PPNN_FIGURES"] = str(target.resolve())
    return figures_root()


def figures_dir(paper: str) -> Path:
    return _mk(figures_root() / paper)


def tables_dir() -> Path:
    return _mk(figures_root() / "tables")


def results_dir(paper: str) -> Path:
    """Raw results of heavy runs (CSV/NPZ) that tables and figures are made from."""
    return _mk(figures_root() / paper / "results")


def build_dir() -> Path:
    """Executed notebooks and pipeline stamps (git-ignored)."""
    return _mk(root() / "build")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(path: str | Path):
    """Yield a temporary path beside ``path``; rename it onto ``path`` only on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual mode
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def atomic_write(path: str | Path, data: str | bytes) -> Path:
    """Write text or bytes to ``path`` via a temporary file and an atomic rename."""
    path = Path(path)
    with atomic_path(path) as tmp:
        if isinstance(data, bytes):
            tmp.write_bytes(data)
        else:
            tmp.write_text(data, encoding="utf-8")
    return path


def write_if_changed(path: str | Path, text: str) -> Path:
    """:func:`atomic_write` ``text`` to ``path`` unless the file already holds it."""
    path = Path(path)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        atomic_write(path, text)
    return path
