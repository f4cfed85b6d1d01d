"""The reproduction pipeline: run every notebook with papermill, then assemble the report.

    python -m ppnn.reproduce               # full pipeline (QUICK=False), only stale notebooks
    python -m ppnn.reproduce --quick       # quick mode, outputs under build/quick/figures
    python -m ppnn.reproduce --jobs 2      # independent notebooks side by side (default: cores)
    python -m ppnn.reproduce --workers 4   # ... as tasks of a local Dask cluster
    python -m ppnn.reproduce --scheduler tcp://HOST:8786   # ... on a Dask cluster
    python -m ppnn.reproduce --only 01_tabula --force
    python -m ppnn.reproduce --list

Each notebook's reviewed source, ``notebooks/NN_name.py`` (jupytext py:percent), is executed
with papermill (parameters ``QUICK``, ``SEED``) in ``notebooks/``, and the executed copy
written to ``build/<mode>/notebooks/``. A notebook is stale when its source or parameters
changed, when a file it used changed or vanished (the library modules its kernel imported,
the tfhe-rs binding if loaded, the transcribed paper tables and errata; recorded in its stamp
under ``build/<mode>/stamps/``), or when it has no stamp; a failed run leaves no stamp.

Notebooks read nothing another writes, so stale ones run side by side: ``--jobs N`` kernels
here (BLAS threads per kernel = cores / N) or Dask tasks (``--workers N``, ``--scheduler``;
the workers must see this checkout at the same path). Models two notebooks need are trained
once (:func:`ppnn.paths.cache_lock`). Wall-clock times go to
``build/<mode>/pipeline_timings.csv`` (and ``figures/`` in full mode).

A cell that runs longer than ``$PPNN_CELL_TIMEOUT`` seconds (:data:`CELL_TIMEOUT`), a kernel
that dies, and a kernel that, with the processes it started, uses under 1% of a core for
``$PPNN_KERNEL_IDLE`` seconds (:data:`KERNEL_IDLE_LIMIT`; 0 turns the watch off; waiting for
a model another notebook trains is not idle) make the notebook run once more in a new kernel.
Main names: :func:`run`, :func:`run_notebook`, :func:`stale`, :func:`notebooks`.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import functools
import hashlib
import itertools
import json
import os
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from . import paths

__all__ = ["notebooks", "run_notebook", "run", "main", "input_hash", "stale", "STAMP_VERSION"]

STAMP_VERSION = 2
_CLOSURE_TAG = "ppnn-import-closure"
#: seconds one cell may run before the pipeline gives up on it and runs the notebook again
#: (``$PPNN_CELL_TIMEOUT``). The longest cell of a full run takes ~5 minutes here; three
#: times a kernel driven beside another went idle at an ipywidgets cell without its reply
#: reaching papermill, which then waited (cause not found; a hung or dead kernel is retried
#: once in a new kernel).
CELL_TIMEOUT = int(os.environ.get("PPNN_CELL_TIMEOUT", "900"))
#: seconds a kernel (with the processes it started) may use less than 1% of a core before the
#: pipeline calls it hung, kills it and runs the notebook again (``$PPNN_KERNEL_IDLE``). Every
#: cell of the notebooks computes; a kernel that sits idle while papermill waits for its reply
#: is the hang above, found in two minutes instead of at the cell timeout. A kernel waiting
#: on purpose -- for a model another notebook is training (``paths.cache_lock``) -- is not.
#: ``$PPNN_KERNEL_IDLE_LOG`` (a file) logs the watch's samples: pid, time, CPU seconds.
KERNEL_IDLE_LIMIT = float(os.environ.get("PPNN_KERNEL_IDLE", "120"))



# The kernels draw with matplotlib's inline backend, as JupyterLab does: ``plt.show()`` leaves
# each figure as an image output of its cell (with "Agg" an executed notebook had no figures).
KERNEL_MPLBACKEND = "module://matplotlib_inline.backend_inline"

def notebooks() -> list[Path]:
    """The pipeline's notebooks, in order (``notebooks/[0-9][0-9]_*.py``)."""
    return sorted((paths.root() / "notebooks").glob("[0-9][0-9]_*.py"))


def _resolve(name: str) -> Path:
    for nb in notebooks():
        if nb.stem == name or nb.stem.split("_", 1)[-1] == name or nb.name == name:
            return nb
    raise ValueError(f"no notebook {name!r}; known: {[n.stem for n in notebooks()]}")


def _sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def input_hash(nb: Path, params: dict) -> str:
    """Hash of the notebook's source and parameters (the files it uses are stamped apart)."""
    h = hashlib.sha256()
    h.update(Path(nb).read_bytes())
    h.update(json.dumps(params, sort_keys=True).encode())
    return h.hexdigest()


def _data_files() -> list[Path]:
    root = paths.root()
    return sorted((root / "data" / "paper").glob("*.csv")) + [root / "data" / "errata.csv"]


def _rel(p: Path) -> str:
    p = Path(p).resolve()
    root = paths.root()
    try:
        return p.relative_to(root).as_posix()
    except ValueError:  # the compiled binding in site-packages
        return p.as_posix()


def _file_hashes(files) -> dict[str, str]:
    return {_rel(f): _sha(f) for f in files if Path(f).exists()}


def _stamp_seconds(stamp: Path) -> float | None:
    """The seconds a notebook's last successful run took (from its stamp), or None."""
    try:
        return float(json.loads(stamp.read_text())["seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def stale(nb: Path, params: dict, stamp: Path) -> str | None:
    """Why ``nb`` must run (a short reason), or None when its stamp is up to date."""
    if not stamp.exists():
        return "never run"
    try:
        st = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return "unreadable stamp"
    if st.get("version") != STAMP_VERSION:
        return "stamp of an older pipeline"
    if st.get("hash") != input_hash(nb, params):
        return "notebook or parameters changed"
    root = paths.root()
    data_now = _file_hashes(_data_files())
    if st.get("data") != data_now:
        return "paper tables or errata changed"
    for rel, digest in st.get("files", {}).items():
        p = Path(rel) if Path(rel).is_absolute() else root / rel
        if not p.exists():
            return f"{rel} vanished"
        if _sha(p) != digest:
            return f"{rel} changed"
    return None


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
    (and print no "Kernel is running over TCP without encryption" warning); its clients wait
    for replies in one-second slices (:mod:`ppnn._kernel`). Each kernel's
    sockets live in a private temporary folder: kernels started side by side would otherwise
    pick the same socket file names in one working directory and read each other's messages.
    The folder is removed with the kernel's other resources when it shuts down."""
    import shutil
    import tempfile

    from jupyter_client.manager import AsyncKernelManager

    class IPCKernelManager(AsyncKernelManager):
        def __init__(self, **kw):
            kw.setdefault("client_class", "ppnn._kernel.SlicedKernelClient")
            kw.setdefault("transport", "ipc")
            self._socket_dir = None
            if "ip" not in kw:
                self._socket_dir = tempfile.mkdtemp(prefix="ppnn-kernel-")
                kw["ip"] = os.path.join(self._socket_dir, "k")
            super().__init__(**kw)

        async def _async_cleanup_resources(self, restart: bool = False) -> None:
            await super()._async_cleanup_resources(restart=restart)
            if not restart and self._socket_dir is not None:
                shutil.rmtree(self._socket_dir, ignore_errors=True)

        async def start_kernel(self, **kw):
            await super().start_kernel(**kw)
            pid = getattr(self.provisioner, "pid", None)
            if pid is not None and KERNEL_IDLE_LIMIT > 0:
                threading.Thread(target=_kill_when_idle, args=(pid, KERNEL_IDLE_LIMIT),
                                 daemon=True, name=f"ppnn-idle-watch-{pid}").start()

    return IPCKernelManager


def _tree_cpu_seconds(proc, seen: dict | None = None) -> float:
    """CPU seconds used so far by a process and every process it started. With ``seen``
    (kept by the caller between calls) processes that have ended keep counting: a Dask
    cluster that shuts down must not make the total drop (that read as an idle kernel)."""
    import psutil

    seen = {} if seen is None else seen
    for p in [proc, *proc.children(recursive=True)]:
        try:
            t = p.cpu_times()
            seen[(p.pid, p.create_time())] = t.user + t.system
        except psutil.Error:  # a child that ended between the listing and the read
            pass
    return sum(seen.values())


def _waits_on_purpose(proc) -> bool:
    """Does the kernel (or a process it started) wait for a cache entry another process is
    building (:func:`ppnn.paths.cache_lock` leaves a marker while it waits)?"""
    import psutil

    try:
        pids = [proc.pid, *(c.pid for c in proc.children(recursive=True))]
    except psutil.Error:
        return False
    return any((m := paths.waiting_marker(p)) is not None and m.exists() for p in pids)


def _kill_when_idle(pid: int, limit: float) -> None:
    """Watch a kernel; kill it (and its children) once it used < 1% of a core for ``limit``
    seconds. papermill then sees a dead kernel, which ``_execute`` retries once."""
    import psutil

    try:
        proc = psutil.Process(pid)
        seen: dict = {}
        history = [(time.monotonic(), _tree_cpu_seconds(proc, seen))]
    except psutil.Error:
        return
    step = max(0.5, min(5.0, limit / 4))
    while True:
        time.sleep(step)
        try:
            if not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE:
                return
            now, cpu = time.monotonic(), _tree_cpu_seconds(proc, seen)
        except psutil.Error:
            return
        if _waits_on_purpose(proc):  # another notebook trains a model this one needs
            history = [(now, cpu)]
            continue
        if os.environ.get("PPNN_KERNEL_IDLE_LOG"):  # debugging the watch itself
            with open(os.environ["PPNN_KERNEL_IDLE_LOG"], "a") as log:
                log.write(f"{pid} {now:.1f} {cpu:.2f} {len(seen)}\n")
        history.append((now, cpu))
        while len(history) > 2 and now - history[1][0] >= limit:
            history.pop(0)  # keep the oldest sample that is at least `limit` seconds old
        t0, c0 = history[0]
        if now - t0 >= limit and cpu - c0 < 0.01 * (now - t0):
            print(f"kernel {pid}: idle for {now - t0:.0f} s while the pipeline waits on it "
                  "(a lost reply); killing it", flush=True)
            for p in [*proc.children(recursive=True), proc]:
                try:
                    p.kill()
                except psutil.Error:
                    pass
            return


def _closure_source(out: Path, root: Path) -> str:
    """The appended cell: which files under lib/ (and the binding) the kernel imported."""
    return (
        "import json as _j, sys as _s\n"
        f"_root = {str(Path(root).resolve() / 'lib')!r}\n"
        "_fs = sorted({getattr(_m, '__file__', None) or '' for _m in list(_s.modules.values())})\n"
        "_fs = [_f for _f in _fs if _f.startswith(_root) or 'ppnn_tfhe' in _f.rsplit('/', 1)[-1]]\n"
        f"open({str(out)!r}, 'w').write(_j.dumps(_fs))\n")


def run_notebook(nb: Path | str, quick: bool, seed: int = 0, figures: Path | None = None,
                 out_dir: Path | None = None, progress: bool = True,
                 timeout: int | None = None, imports_out: Path | None = None) -> Path:
    """Execute one notebook with papermill; returns the executed copy's path.

    ``figures`` redirects every output of the notebook (``$PPNN_FIGURES``); quick runs default
    to ``build/quick/figures`` so they never overwrite the full pipeline's results.
    ``imports_out``: where to write the list of files the kernel imported (for the stamp).
    """
    import jupytext
    import nbformat
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
    if imports_out is not None:
        cell = nbformat.v4.new_code_cell(_closure_source(Path(imports_out), root))
        cell.metadata["tags"] = [_CLOSURE_TAG]
        notebook.cells.append(cell)
    src = out_dir / f"{nb.stem}.input.ipynb"
    jupytext.write(notebook, src, fmt="ipynb")
    target = out_dir / f"{nb.stem}.ipynb"
    with _env(PPNN_ROOT=root, PPNN_FIGURES=Path(figures).resolve(), MPLBACKEND=KERNEL_MPLBACKEND):
        pm.execute_notebook(str(src), str(target), parameters={"QUICK": quick, "SEED": seed},
                            kernel_name="python3", cwd=str(root / "notebooks"),
                            progress_bar=progress, execution_timeout=timeout,
                            kernel_manager_class=_ipc_kernel_manager())
    src.unlink()
    if imports_out is not None:  # the executed copy shows the notebook, not the bookkeeping
        executed = nbformat.read(target, as_version=4)
        executed.cells = [c for c in executed.cells
                          if _CLOSURE_TAG not in c.get("metadata", {}).get("tags", [])]
        with paths.atomic_path(target) as tmp:
            nbformat.write(executed, str(tmp))
    return target


def _execute(nb: str, quick: bool, seed: int, figures: str, stamp: str, progress: bool,
             root: str, blas_threads: int) -> dict:
    """Run one notebook and write its stamp (in this process, a thread or a Dask worker)."""
    nbp, stamp_p = Path(nb), Path(stamp)
    params = {"QUICK": quick, "SEED": seed}
    imports = stamp_p.with_suffix(".imports.json")
    t0 = time.perf_counter()
    threads = str(max(1, int(blas_threads)))
    with _env(PPNN_ROOT=root, OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads,
              MKL_NUM_THREADS=threads):
        for attempt in (1, 2):
            try:
                run_notebook(nbp, quick=quick, seed=seed, figures=Path(figures),
                             progress=progress, imports_out=imports, timeout=CELL_TIMEOUT)
                break
            except Exception as e:  # noqa: BLE001 - only a timed-out cell or dead kernel
                if attempt == 2 or not any(w in type(e).__name__ + str(e)[:300]
                                           for w in ("Timeout", "DeadKernel", "Kernel died")):
                    raise
                print(f"{nbp.stem}: a cell ran over {CELL_TIMEOUT} s or the kernel died or hung "
                      f"({type(e).__name__}); "
                      "running the notebook again in a new kernel", flush=True)
        files = [Path(f) for f in json.loads(imports.read_text())]
        stamp_data = {"version": STAMP_VERSION, "hash": input_hash(nbp, params),
                      "files": _file_hashes(files), "data": _file_hashes(_data_files()),
                      "seconds": round(time.perf_counter() - t0, 1)}
        paths.atomic_write(stamp_p, json.dumps(stamp_data, indent=1, sort_keys=True))
    imports.unlink()
    return {"notebook": nbp.stem, "status": "ran", "seconds": stamp_data["seconds"],
            "modules": len(stamp_data["files"])}


def makespan(seconds: list[float], lanes: int) -> float:
    """Wall time of running jobs of ``seconds`` in this order on ``lanes`` workers that each
    take the next job when free (a process pool's list scheduling)."""
    free = [0.0] * max(1, lanes)
    for s in seconds:
        i = free.index(min(free))
        free[i] += s
    return max(free)


def schedule(items: list, seconds, lanes: int, exhaustive: int = 8) -> list:
    """``items`` in the dispatch order with the smallest :func:`makespan` on ``lanes`` workers,
    from each item's expected ``seconds(item)``: longest first, then -- for at most
    ``exhaustive`` items -- every other order tried and the first strictly shorter one kept
    (longest first can leave one worker alone at the end, e.g. 7 notebooks on 2 lanes).
    Deterministic: ties keep the longest-first order."""
    order = sorted(items, key=lambda it: -seconds(it))
    if lanes < 2 or len(order) > exhaustive:
        return order
    secs = [seconds(it) for it in order]
    best, best_t = tuple(range(len(order))), makespan(secs, lanes)
    for perm in itertools.permutations(range(len(order))):
        t = makespan([secs[i] for i in perm], lanes)
        if t < best_t - 1e-9:
            best, best_t = perm, t
    return [order[i] for i in best]


def _default_jobs(n: int) -> int:
    return max(1, min(os.cpu_count() or 1, n))


def run(names: list[str] | None = None, quick: bool = False, seed: int = 0,
        force: bool = False, progress: bool = True, jobs: int | None = None,
        workers: int | None = None, scheduler: str | None = None) -> list[dict]:
    """Run the stale notebooks (or ``names``) and rebuild the report. Returns a run log.

    ``jobs``: notebooks at once in this machine (default: the number of cores, at most the
    number of stale notebooks; 1 = one after the other). ``workers`` / ``scheduler``: run them
    as tasks of a local Dask cluster of that many workers / of the cluster at that address.
    """
    from . import report

    t_start = time.perf_counter()
    selected = [_resolve(n) for n in names] if names else notebooks()
    mode = "quick" if quick else "full"
    stamps = paths.build_dir() / mode / "stamps"
    stamps.mkdir(parents=True, exist_ok=True)
    figures = (paths.build_dir() / "quick" / "figures") if quick else paths.root() / "figures"
    params = {"QUICK": quick, "SEED": seed}
    log, todo = [], []
    for nb in selected:
        why = "forced" if force else stale(nb, params, stamps / f"{nb.stem}.json")
        if why is None:
            print(f"{nb.stem}: up to date, skipped", flush=True)
            last = _stamp_seconds(stamps / f"{nb.stem}.json") or 0.0
            log.append({"notebook": nb.stem, "status": "skipped (last run)", "seconds": last})
        else:
            todo.append((nb, why))
    # an order in which parallel runs end together, from the last stamps, else from the
    # timings committed beside the figures (a fresh clone has those)
    committed = {}
    try:
        text = (paths.root() / "figures" / "pipeline_timings.csv").read_text()
        for line in text.splitlines()[1:]:
            name, status, sec = line.rsplit(",", 2)
            if status != "wall":
                committed[name] = float(sec)
    except (OSError, ValueError):
        pass

    def last_seconds(nb: Path) -> float:
        last = _stamp_seconds(stamps / f"{nb.stem}.json")
        return committed.get(nb.stem, 0.0) if last is None else last

    n_par = workers or (None if scheduler else (jobs or _default_jobs(len(todo))))
    todo = schedule(todo, lambda t: last_seconds(t[0]), n_par or 1)
    if jobs is not None and (isinstance(jobs, bool) or jobs < 1):
        raise ValueError(f"jobs must be >= 1, got {jobs!r}")
    cores = os.cpu_count() or 1
    root = str(paths.root())
    args = [(str(nb), quick, seed, str(Path(figures).resolve()), str(stamps / f"{nb.stem}.json"),
             progress and (n_par or 2) == 1 and not scheduler, root,
             cores // (n_par or cores) if n_par else 1) for nb, _ in todo]
    if not quick and any(nb.stem == "00_overview" for nb, _ in todo):
        log.append(wire_step(Path(figures), seed))
    for nb, why in todo:
        print(f"{nb.stem}: running (QUICK={quick}, SEED={seed}; {why})", flush=True)
    # the kernels' environment is set once for the whole run
    blas = str(args[0][-1]) if args else "1"
    waiting = paths.build_dir() / mode / "waiting"  # see paths.cache_lock
    waiting.mkdir(parents=True, exist_ok=True)
    with _env(PPNN_ROOT=root, PPNN_FIGURES=Path(figures).resolve(), MPLBACKEND=KERNEL_MPLBACKEND,
              OMP_NUM_THREADS=blas, OPENBLAS_NUM_THREADS=blas, MKL_NUM_THREADS=blas,
              PPNN_WAIT_DIR=waiting):
        _dispatch(args, log, workers, scheduler, n_par)
    with _env(PPNN_FIGURES=Path(figures).resolve()):
        out = report.build_report()
    print(f"report written to {out}", flush=True)
    if not quick:
        from . import frontdoor

        print(f"README sections regenerated: {frontdoor.update_readme()}", flush=True)
    # a run of some notebooks (--only) keeps the others' rows, from their stamps, so the
    # timings beside the figures still cover every notebook that produced them
    chosen, every = {nb.stem for nb in selected}, notebooks()
    others = [{"notebook": nb.stem, "status": "not selected (last run)", "seconds": last}
              for nb in every if nb.stem not in chosen
              and (last := _stamp_seconds(stamps / f"{nb.stem}.json")) is not None]
    order = {nb.stem: i for i, nb in enumerate(every)}
    log.sort(key=lambda r: order.get(r["notebook"], 99))
    wall = time.perf_counter() - t_start
    how = (f"dask {scheduler}" if scheduler else f"dask LocalCluster x{workers}" if workers
           else f"{n_par} job(s)")
    lines = ["notebook,status,seconds"] + [
        f"{r['notebook']},{r['status']},{r['seconds']}"
        for r in sorted(log + others, key=lambda r: order.get(r["notebook"], 99))]
    only = f"; only {' '.join(sorted(chosen))}" if len(chosen) < len(every) else ""
    lines.append(f"pipeline ({how}; {cores} cores{only}),wall,{wall:.1f}")
    text = "\n".join(lines) + "\n"
    paths.atomic_write(paths.build_dir() / mode / "pipeline_timings.csv", text)
    if not quick:
        paths.atomic_write(Path(figures) / "pipeline_timings.csv", text)
    print(f"pipeline wall time {wall:.0f} s ({how})", flush=True)
    return log


#: seconds the wire-mode measurements may take before the pipeline stops them
WIRE_STEP_TIMEOUT = 3600


def wire_step(figures: Path, seed: int = 0) -> dict:
    """The wire-mode measurements of 00_overview's *measured vs projected* table
    (:mod:`ppnn.experiments.wire`), run before any notebook starts -- alone on the machine,
    so no kernel's load is in the wall times -- whenever 00_overview is about to run (its
    stamp covers the wire and protocol modules it imports). Parties as processes, shaped
    links with root; one BLAS thread per process."""
    import subprocess

    from .experiments.wire import CSV_NAME

    out = Path(figures) / "overview" / CSV_NAME
    print("wire measurements: running (before the notebooks, alone on the machine)", flush=True)
    t0 = time.perf_counter()
    env = {**os.environ, "PPNN_ROOT": str(paths.root()), "PPNN_FIGURES": str(Path(figures)),
           "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    try:
        # its progress lines go straight to the pipeline's output
        r = subprocess.run([sys.executable, "-m", "ppnn.experiments.wire", "--seed", str(seed),
                            "--out", str(out)], env=env, timeout=WIRE_STEP_TIMEOUT)
    except subprocess.TimeoutExpired as e:
        raise RuntimeError(f"wire measurements took more than {WIRE_STEP_TIMEOUT} s") from e
    if r.returncode != 0:
        raise RuntimeError(f"wire measurements failed (exit status {r.returncode}; the "
                           "output above says why)")
    seconds = time.perf_counter() - t0
    print(f"wire measurements: done in {seconds:.0f} s", flush=True)
    return {"notebook": "wire measurements (00_overview)", "status": "ran",
            "seconds": round(seconds, 1)}


def _done(r: dict, log: list) -> None:
    print(f"{r['notebook']}: done in {r['seconds']:.0f} s ({r['modules']} library files "
          "stamped)", flush=True)
    log.append(r)


def _dispatch(args: list, log: list, workers, scheduler, n_par) -> None:
    """Run the notebooks: Dask tasks, a thread per kernel, or one after the other."""
    if not args:
        return
    if workers or scheduler:
        from dask.distributed import as_completed

        from . import distributed

        ctx = (distributed.cluster(workers=workers, dashboard=False) if workers
               else _client_of(distributed.connect(scheduler)))
        with ctx as client:
            futures = [client.submit(_execute, *a, pure=False,
                                     key=f"notebook-{Path(a[0]).stem}-{os.urandom(3).hex()}")
                       for a in args]
            for fut in as_completed(futures):
                _done(fut.result(), log)
    elif (n_par or 1) > 1:
        # one process per notebook: papermill/nbclient clients in threads of one process
        # share jupyter_core's event-loop runner, and a run lost a kernel reply that way
        # (the notebook waited forever on an idle kernel)
        import multiprocessing as mp

        with cf.ProcessPoolExecutor(max_workers=n_par, mp_context=mp.get_context("spawn"),
                                    max_tasks_per_child=1) as pool:
            for fut in cf.as_completed([pool.submit(_execute, *a) for a in args]):
                _done(fut.result(), log)
    else:
        for a in args:
            _done(_execute(*a), log)


@contextmanager
def _client_of(client):
    try:
        yield client
    finally:
        client.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ppnn.reproduce", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="QUICK=True (smoke run)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--force", action="store_true", help="re-run even if up to date")
    ap.add_argument("--only", nargs="+", metavar="NOTEBOOK", help="e.g. 01_tabula or tabula")
    ap.add_argument("--jobs", type=int, help="notebooks at once (default: cores)")
    ap.add_argument("--workers", type=int, help="run on a local Dask cluster of N workers")
    ap.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run on a Dask cluster")
    ap.add_argument("--list", action="store_true", help="list notebooks and exit")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    if args.list:
        for nb in notebooks():
            print(nb.stem)
        return 0
    if args.workers is not None and args.workers < 1:
        ap.error("--workers must be >= 1")
    run(args.only, quick=args.quick, seed=args.seed, force=args.force,
        progress=not args.no_progress, jobs=args.jobs, workers=args.workers,
        scheduler=args.scheduler)
    return 0


if __name__ == "__main__":
    sys.exit(main())
