"""The reproduction pipeline: run every notebook with papermill, then assemble the report.

    python -m ppnn.reproduce               # full pipeline (QUICK=False), only stale notebooks
    python -m ppnn.reproduce --quick       # quick mode, outputs under build/quick/figures
    python -m ppnn.reproduce --only 01_tabula --force
    python -m ppnn.reproduce --list

The reviewed source of each notebook is ``notebooks/NN_name.py`` (jupytext py:percent). It is
converted in memory, executed with papermill (parameters ``QUICK``, ``SEED``) with the working
directory ``notebooks/``, and the executed copy is written to ``build/notebooks/`` (git-ignored).
A notebook is *stale* when the hash of its source, its parameters, the library sources and the
transcribed paper tables differs from the stamp of its last successful run, or when its stamp
is missing. Wall-clock times go to ``build/pipeline_timings.csv``.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from . import paths

__all__ = ["notebooks", "run_notebook", "run", "main", "input_hash"]


def notebooks() -> list[Path]:
    """The pipeline's notebooks, in order (``notebooks/[0-9][0-9]_*.py``)."""
    return sorted((paths.root() / "notebooks").glob("[0-9][0-9]_*.py"))


def _resolve(name: str) -> Path:
    for nb in notebooks():
        if nb.stem == name or nb.stem.split("_", 1)[-1] == name or nb.name == name:
            return nb
    raise ValueError(f"no notebook {name!r}; known: {[n.stem for n in notebooks()]}")


def input_hash(nb: Path, params: dict) -> str:
    """Hash of everything a notebook's outputs depend on."""
    h = hashlib.sha256()
    h.update(nb.read_bytes())
    h.update(json.dumps(params, sort_keys=True).encode())
    root = paths.root()
    lib = Path(__file__).resolve().parent
    deps = sorted(lib.rglob("*.py")) + sorted((root / "data" / "paper").glob("*.csv"))
    for p in deps:
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()


@contextmanager
def _env(**kv):
    old = {k: os.environ.get(k) for k in kv}
    os.environ.update({k: str(v) for k, v in kv.items()})
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@functools.cache
def _ipc_kernel_manager():
    """A kernel manager on local IPC sockets: the pipeline's kernels listen on no TCP port
    (and print no "Kernel is running over TCP without encryption" warning)."""
    from jupyter_client.manager import AsyncKernelManager

    class IPCKernelManager(AsyncKernelManager):
        def __init__(self, **kw):
            kw.setdefault("transport", "ipc")
            super().__init__(**kw)

    return IPCKernelManager


def run_notebook(nb: Path | str, quick: bool, seed: int = 0, figures: Path | None = None,
                 out_dir: Path | None = None, progress: bool = True,
                 timeout: int | None = None) -> Path:
    """Execute one notebook with papermill; returns the executed copy's path.

    ``figures`` redirects every output of the notebook (``$PPNN_FIGURES``); quick runs default
    to ``build/quick/figures`` so they never overwrite the full pipeline's results.
    """
    import jupytext
    import papermill as pm

    nb = _resolve(nb) if isinstance(nb, str) else nb
    root = paths.root()
    out_dir = Path(out_dir or paths.build_dir() / ("quick" if quick else "full") / "notebooks")
    out_dir.mkdir(parents=True, exist_ok=True)
    if figures is None:
        figures = (paths.build_dir() / "quick" / "figures") if quick else root / "figures"
    notebook = jupytext.read(nb)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    src = out_dir / f"{nb.stem}.input.ipynb"
    jupytext.write(notebook, src, fmt="ipynb")
    target = out_dir / f"{nb.stem}.ipynb"
    with _env(PPNN_ROOT=root, PPNN_FIGURES=Path(figures).resolve(), MPLBACKEND="Agg"):
        pm.execute_notebook(str(src), str(target), parameters={"QUICK": quick, "SEED": seed},
                            kernel_name="python3", cwd=str(root / "notebooks"),
                            progress_bar=progress, execution_timeout=timeout,
                            kernel_manager_class=_ipc_kernel_manager())
    src.unlink()
    return target


def run(names: list[str] | None = None, quick: bool = False, seed: int = 0,
        force: bool = False, progress: bool = True) -> list[dict]:
    """Run the stale notebooks (or ``names``) and rebuild the report. Returns a run log."""
    from . import report

    selected = [_resolve(n) for n in names] if names else notebooks()
    stamps = paths.build_dir() / ("quick" if quick else "full") / "stamps"
    stamps.mkdir(parents=True, exist_ok=True)
    figures = (paths.build_dir() / "quick" / "figures") if quick else paths.root() / "figures"
    log = []
    for i, nb in enumerate(selected, 1):
        params = {"QUICK": quick, "SEED": seed}
        digest = input_hash(nb, params)
        stamp = stamps / f"{nb.stem}.json"
        if not force and stamp.exists() and json.loads(stamp.read_text())["hash"] == digest:
            print(f"[{i}/{len(selected)}] {nb.stem}: up to date, skipped", flush=True)
            log.append({"notebook": nb.stem, "status": "skipped", "seconds": 0.0})
            continue
        print(f"[{i}/{len(selected)}] {nb.stem}: running (QUICK={quick}, SEED={seed})",
              flush=True)
        t0 = time.perf_counter()
        run_notebook(nb, quick=quick, seed=seed, figures=figures, progress=progress)
        dt = time.perf_counter() - t0
        paths.atomic_write(stamp, json.dumps({"hash": digest, "seconds": round(dt, 1)}))
        print(f"[{i}/{len(selected)}] {nb.stem}: done in {dt:.0f} s", flush=True)
        log.append({"notebook": nb.stem, "status": "ran", "seconds": round(dt, 1)})
    with _env(PPNN_FIGURES=Path(figures).resolve()):
        out = report.build_report()
    print(f"report written to {out}", flush=True)
    if not quick:
        from . import frontdoor

        print(f"README sections regenerated: {frontdoor.update_readme()}", flush=True)
    timings = paths.build_dir() / ("quick" if quick else "full") / "pipeline_timings.csv"
    lines = ["notebook,status,seconds"] + [f"{r['notebook']},{r['status']},{r['seconds']}"
                                           for r in log]
    paths.atomic_write(timings, "\n".join(lines) + "\n")
    return log


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ppnn.reproduce", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="QUICK=True (smoke run)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--force", action="store_true", help="re-run even if up to date")
    ap.add_argument("--only", nargs="+", metavar="NOTEBOOK", help="e.g. 01_tabula or tabula")
    ap.add_argument("--list", action="store_true", help="list notebooks and exit")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    if args.list:
        for nb in notebooks():
            print(nb.stem)
        return 0
    run(args.only, quick=args.quick, seed=args.seed, force=args.force,
        progress=not args.no_progress)
    return 0


if __name__ == "__main__":
    sys.exit(main())
