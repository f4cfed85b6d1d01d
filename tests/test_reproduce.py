"""The pipeline: a notebook's stamp covers the library files it imported (a change elsewhere
re-runs nothing), notebooks run side by side, and a model two processes need is trained once.
Runs on a tiny project of its own (two notebooks, a two-module package), not the real one."""

from __future__ import annotations

import itertools
import json
import multiprocessing as mp
import time
from pathlib import Path

import pytest

from ppnn import paths, reproduce

pytestmark = pytest.mark.notebook  # starts Jupyter kernels
SKIPPED = "skipped (last run)"

NB = '''# %% tags=["parameters"]
QUICK = True
SEED = 0

# %%
{body}
'''


@pytest.fixture()
def project(tmp_path, monkeypatch):
    (tmp_path / "data" / "paper").mkdir(parents=True)
    (tmp_path / "data" / "paper" / "demo_table1.csv").write_text(
        "table,row,metric,value,unit,note\nTable 1,a,x,1,count,\n")
    (tmp_path / "data" / "errata.csv").write_text("paper,where,finding,evidence\n")
    pkg = tmp_path / "lib" / "toypkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "used.py").write_text("VALUE = 1\n")
    (pkg / "unused.py").write_text("OTHER = 2\n")
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    (nbs / "01_uses.py").write_text(NB.format(body="import toypkg.used\nprint(toypkg.used.VALUE)"))
    (nbs / "02_plain.py").write_text(NB.format(body="print(QUICK, SEED)"))
    monkeypatch.setenv("PPNN_ROOT", str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "lib"))
    return tmp_path


def _stamp(root: Path, name: str) -> dict:
    return json.loads((root / "build" / "quick" / "stamps" / f"{name}.json").read_text())


def test_stamps_cover_what_a_notebook_imported(project):
    log = reproduce.run(quick=True, jobs=2, progress=False)
    assert sorted((r["notebook"], r["status"]) for r in log) == [("01_uses", "ran"),
                                                                 ("02_plain", "ran")]
    files = _stamp(project, "01_uses")["files"]
    assert "lib/toypkg/used.py" in files and "lib/toypkg/unused.py" not in files
    assert not any(f.startswith("lib/") for f in _stamp(project, "02_plain")["files"])
    timings = (project / "build" / "quick" / "pipeline_timings.csv").read_text().splitlines()
    assert timings[0] == "notebook,status,seconds" and len(timings) == 4
    assert "2 job(s)" in timings[-1]
    # the executed copy shows the notebook, not the bookkeeping cell
    executed = json.loads((project / "build" / "quick" / "notebooks" / "01_uses.ipynb")
                          .read_text())
    assert not any("_j.dumps" in "".join(c["source"]) for c in executed["cells"])

    # one notebook run on its own: the timings still list the other, from its stamp
    log = reproduce.run(["02_plain"], quick=True, force=True, progress=False)
    assert [(r["notebook"], r["status"]) for r in log] == [("02_plain", "ran")]
    timings = (project / "build" / "quick" / "pipeline_timings.csv").read_text().splitlines()
    assert timings[1] == f"01_uses,not selected (last run),{_stamp(project, '01_uses')['seconds']}"
    assert timings[2].startswith("02_plain,ran,") and "only 02_plain" in timings[-1]

    # nothing changed: nothing runs
    assert {r["status"] for r in reproduce.run(quick=True, progress=False)} == {SKIPPED}
    # a module no notebook imports changed: nothing runs
    (project / "lib" / "toypkg" / "unused.py").write_text("OTHER = 3\n")
    assert {r["status"] for r in reproduce.run(quick=True, progress=False)} == {SKIPPED}
    # the imported module changed: only its notebook runs
    (project / "lib" / "toypkg" / "used.py").write_text("VALUE = 2\n")
    nb1 = project / "notebooks" / "01_uses.py"
    assert reproduce.stale(nb1, {"QUICK": True, "SEED": 0},
                           project / "build" / "quick" / "stamps" / "01_uses.json") \
        == "lib/toypkg/used.py changed"
    log = {r["notebook"]: r["status"] for r in reproduce.run(quick=True, jobs=1,
                                                             progress=False)}
    assert log == {"01_uses": "ran", "02_plain": SKIPPED}
    # a paper table changed: every notebook runs (they compare against them)
    (project / "data" / "paper" / "demo_table1.csv").write_text(
        "table,row,metric,value,unit,note\nTable 1,a,x,2,count,\n")
    stamp2 = project / "build" / "quick" / "stamps" / "02_plain.json"
    assert reproduce.stale(project / "notebooks" / "02_plain.py", {"QUICK": True, "SEED": 0},
                           stamp2) == "paper tables or errata changed"


def test_stale_reasons(project, tmp_path):
    nb = project / "notebooks" / "01_uses.py"
    params = {"QUICK": True, "SEED": 0}
    stamp = tmp_path / "s.json"
    assert reproduce.stale(nb, params, stamp) == "never run"
    stamp.write_text(json.dumps({"hash": "x"}))
    assert reproduce.stale(nb, params, stamp) == "stamp of an older pipeline"
    ok = {"version": reproduce.STAMP_VERSION, "hash": reproduce.input_hash(nb, params),
          "data": reproduce._file_hashes(reproduce._data_files()),
          "files": {"lib/toypkg/gone.py": "0" * 64}}
    stamp.write_text(json.dumps(ok))
    assert reproduce.stale(nb, params, stamp) == "lib/toypkg/gone.py vanished"
    assert reproduce.stale(nb, {"QUICK": False, "SEED": 0}, stamp) == \
        "notebook or parameters changed"


def _train_once(entry: str, log: str) -> None:
    path = Path(entry)
    with paths.cache_lock(path):
        if not path.exists():
            with open(log, "a") as f:
                f.write("trained\n")
            time.sleep(0.5)
            paths.atomic_write(path, "weights")


def test_a_model_two_processes_need_is_trained_once(tmp_path):
    entry, log = tmp_path / "models" / "m.npz", tmp_path / "log.txt"
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_train_once, args=(str(entry), str(log))) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert all(p.exitcode == 0 for p in procs)
    assert log.read_text() == "trained\n" and entry.read_text() == "weights"


@pytest.mark.parametrize("fault,imports,first_run,said,cell_timeout,idle_limit", [
    ("hangs", "time", "time.sleep(60)", "running the notebook again", 5, 0),
    ("dies", "os", "os._exit(1)", "the kernel died", 5, 0),
    # an idle kernel is found long before the cell timeout (the sleep would outlast the test)
    ("idles", "time", "time.sleep(600)", "idle for", 900, 3),
])
def test_a_cell_that_hangs_or_a_kernel_that_dies_is_retried_once_in_a_new_kernel(
        project, monkeypatch, capsys, fault, imports, first_run, said, cell_timeout, idle_limit):
    marker = project / f"{fault}-once"
    (project / "notebooks" / "01_uses.py").write_text(NB.format(body=(
        f"import pathlib, {imports}\n"
        f"m = pathlib.Path({str(marker)!r})\n"
        "if not m.exists():\n"
        "    m.write_text('x')\n"
        f"    {first_run}\n")))
    (project / "notebooks" / "02_plain.py").unlink()
    monkeypatch.setattr(reproduce, "CELL_TIMEOUT", cell_timeout)
    monkeypatch.setattr(reproduce, "KERNEL_IDLE_LIMIT", idle_limit)
    log = reproduce.run(quick=True, jobs=1, progress=False)
    assert [(r["notebook"], r["status"]) for r in log] == [("01_uses", "ran")]
    assert said in capsys.readouterr().out


def test_a_kernel_waiting_for_a_model_another_process_trains_is_not_called_hung(
        project, monkeypatch, capsys):
    """The hung-kernel watch kills a kernel idle for KERNEL_IDLE_LIMIT seconds -- except one
    blocked on purpose in paths.cache_lock while another process builds the entry."""
    import threading

    entry = project / "data" / "cache" / "models" / "shared-model"
    (project / "notebooks" / "01_uses.py").write_text(NB.format(body=(
        "from pathlib import Path\n"
        "from ppnn import paths\n"
        f"with paths.cache_lock(Path({str(entry)!r})):\n"
        "    print('got the model')\n")))
    (project / "notebooks" / "02_plain.py").unlink()
    monkeypatch.setattr(reproduce, "CELL_TIMEOUT", 600)
    # 5 s: well below the 10 s the kernel waits for the lock (without the exemption the watch
    # would kill it), well above the couple of idle seconds a kernel may spend outside any cell
    # on a busy machine (a 2 s limit killed one once it had finished its only cell)
    monkeypatch.setattr(reproduce, "KERNEL_IDLE_LIMIT", 5)
    held, release = threading.Event(), threading.Event()

    def trainer():  # this process "trains" the model for 10 s
        with paths.cache_lock(entry):
            held.set()
            release.wait(10)

    th = threading.Thread(target=trainer)
    th.start()
    held.wait(5)
    try:
        log = reproduce.run(quick=True, jobs=1, progress=False)
    finally:
        release.set()
        th.join()
    assert [(r["notebook"], r["status"]) for r in log] == [("01_uses", "ran")]
    out = capsys.readouterr().out
    assert "idle for" not in out and "running the notebook again" not in out
    assert log[0]["seconds"] >= 8  # it did wait for the lock


def test_a_busy_kernel_whose_worker_processes_ended_is_not_called_hung(
        project, monkeypatch, capsys):
    """CPU time of processes the kernel started and that have ended keeps counting: a Dask
    cluster closing at the end of a cell made the total drop, which read as an idle kernel
    (04_she was killed right after its Dask cell, twice)."""
    (project / "notebooks" / "01_uses.py").write_text(NB.format(body=(
        "import subprocess, sys, time\n"
        "subprocess.run([sys.executable, '-c', "
        "'import time\\nt = time.time()\\nwhile time.time() - t < 5: pass'])\n"
        "t = time.time()\n"
        "while time.time() - t < 6:\n"
        "    pass\n")))
    (project / "notebooks" / "02_plain.py").unlink()
    monkeypatch.setattr(reproduce, "CELL_TIMEOUT", 600)
    monkeypatch.setattr(reproduce, "KERNEL_IDLE_LIMIT", 3)
    log = reproduce.run(quick=True, jobs=1, progress=False)
    assert [(r["notebook"], r["status"]) for r in log] == [("01_uses", "ran")]
    assert "idle for" not in capsys.readouterr().out


def test_the_pipelines_kernel_client_waits_in_slices_and_still_times_out():
    import asyncio
    from queue import Empty

    from ppnn._kernel import SlicedChannel, SlicedKernelClient

    async def go():
        km = reproduce._ipc_kernel_manager()(kernel_name="python3")
        socket_dir = Path(km.ip).parent
        assert socket_dir.name.startswith("ppnn-kernel-") and socket_dir.is_dir()
        await km.start_kernel()
        kc = km.client()
        try:
            assert isinstance(kc, SlicedKernelClient)
            kc.start_channels()
            assert isinstance(kc.shell_channel, SlicedChannel)
            msg_id = kc.kernel_info()
            reply = await kc.shell_channel.get_msg(timeout=60)  # longer than one slice
            assert reply["parent_header"]["msg_id"] == msg_id
            t0 = time.monotonic()
            with pytest.raises(Empty):  # nothing more will come: the timeout still holds
                await kc.shell_channel.get_msg(timeout=1.5)
            assert 1.4 <= time.monotonic() - t0 < 10
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)
        assert not socket_dir.exists()  # the kernel's private socket folder goes with it

    asyncio.run(go())


def test_the_dispatch_order_ends_parallel_runs_together():
    """Longest first can leave one lane alone at the end; the schedule tries every order of a
    handful of notebooks and keeps the one whose list-scheduled wall time is shortest."""
    secs = {"a": 3.0, "b": 3.0, "c": 2.0, "d": 2.0, "e": 2.0}
    longest_first = sorted(secs, key=lambda k: -secs[k])
    assert reproduce.makespan([secs[k] for k in longest_first], 2) == 7.0
    order = reproduce.schedule(list(secs), secs.get, 2)
    assert sorted(order) == sorted(secs)
    assert reproduce.makespan([secs[k] for k in order], 2) == 6.0  # 3 + 3 | 2 + 2 + 2
    # one lane, or too many notebooks to try every order: longest first
    assert reproduce.schedule(list(secs), secs.get, 1) == longest_first
    assert reproduce.schedule(list(secs), secs.get, 2, exhaustive=4) == longest_first
    # an order exists whose list schedule is an optimal split of the notebooks on 2 lanes
    for cold in ({"00_overview": 160, "01_tabula": 320, "02_gala": 503, "03_swann": 172,
                  "04_she": 1276, "05_falcon": 787, "06_your_model": 48},
                 {"00_overview": 155, "01_tabula": 290, "02_gala": 503, "03_swann": 167,
                  "04_she": 1176, "05_falcon": 777, "06_your_model": 48}):
        vals = list(cold.values())
        split = min(max(sum(c), sum(vals) - sum(c)) for r in range(len(vals) + 1)
                    for c in itertools.combinations(vals, r))
        best = reproduce.schedule(list(cold), cold.get, 2)
        assert reproduce.makespan([cold[k] for k in best], 2) == split
