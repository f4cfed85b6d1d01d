"""Recording values: what it costs when off (nothing) and how much memory it takes when on.

``Ledger(record_values=...)`` keeps the values that cross between parties for the
protocol player. Off -- the default, and what every table of the pipeline runs -- it must cost
nothing: this benchmark times the same cases on this checkout's library and on a baseline
revision's (a temporary git worktree), each case in a fresh process, A/B then B/A, best of
``--repeats``, and reports ``baseline_s / ours_s`` (>= 0.98 is the bar: no slower) beside a
check that the ledgers are identical (bits, rounds). On, it reports the bytes the ledger kept
(:attr:`Ledger.value_bytes`, bounded by the :class:`~ppnn.core.transcript.ValueBudget`) and
the process's peak resident memory against the same run with values off.

Cases: Falcon's semi-honest ReLU on 2^20 elements (2^16 with ``--quick``) and one MiniONN
inference (one image; two for SwaNN's two-server setting) in every protocol family.

Run: ``.venv/bin/python benchmarks/bench_values.py --baseline REV [--quick]``; writes
``figures/overview/bench_values.csv``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parents[1]


def _case(case: str, values: str, quick: bool) -> dict:
    import numpy as np

    from ppnn.core.ledger import Ledger

    record = values == "on"
    if case == "falcon_relu":  # as bench_falcon.py's relu-sh case
        from ppnn.protocols.falcon import Falcon, relu

        n, chunk = (1 << 14, 1 << 12) if quick else (1 << 20, 1 << 17)
        if record:
            from ppnn.core.ledger import recording

            with recording(True):
                fal = Falcon(np.random.default_rng(0), malicious=False)
        else:
            fal = Falcon(np.random.default_rng(0), malicious=False)
        x = np.random.default_rng(0).normal(size=n)
        t0 = time.perf_counter()
        for i in range(0, n, chunk):
            relu(fal, fal.share_fixed(x[i:i + chunk]))
        seconds = time.perf_counter() - t0
        led: Ledger = fal.ledger
    else:
        seconds, led = _family_run(case, record)
    return {"case": case, "values": values, "seconds": seconds,
            "online_bits": int(led.total_bits("online")), "rounds": int(led.rounds("online")),
            "offline_bits": int(led.total_bits("offline")),
            "value_bytes": getattr(led, "value_bytes", 0),
            "peak_rss_MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _family_run(key: str, record: bool):
    """Compile MiniONN (quick weights) for family ``key`` and time one run."""
    import numpy as np

    import ppnn
    from ppnn.experiments.compare import run as cmp_run
    from ppnn.experiments.compare.workload import make_workload
    from ppnn.protocols import api

    w = make_workload(quick=True, seed=0, n_run=1, n_acc=2, n_calib=200)
    fam = api.family(key)
    net, params = cmp_run.PREPARE.get(key, lambda w: (w.net, w.params))(w)
    plan = api.compile(key, net, params, calib=w.x_calib)
    imgs = w.x_acc[: fam.spec.images_per_run]
    t0 = time.perf_counter()
    kw = {"record_values": True} if record else {}  # a baseline has no record_values
    res = ppnn.run(plan, imgs, seed=np.random.default_rng(0), **kw)
    return time.perf_counter() - t0, res.ledger


def _worker(lib: Path, case: str, values: str, quick: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=str(lib), PPNN_ROOT=str(ROOT))
    cmd = [sys.executable, str(HERE), "--worker", case, "--values", values]
    cmd += ["--quick"] if quick else []
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        raise RuntimeError(f"{case} ({values}) with {lib} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", metavar="REV", required=False,
                    help="the revision to time values-off against (before recording existed)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cases", nargs="*", default=None)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--values", default="off", choices=["off", "on"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(_case(args.worker, args.values, args.quick)))
        return
    if args.repeats < 1:
        ap.error(f"--repeats must be >= 1, got {args.repeats}")
    import pandas as pd

    from ppnn import paths
    from ppnn.protocols import api

    cases = args.cases or ["falcon_relu", *api.families().frame()["key"]]
    tmp = Path(tempfile.mkdtemp(prefix="bench-values-"))
    base = tmp / "baseline"
    rows = []
    try:
        if args.baseline:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--force",
                            str(base), args.baseline], check=True, capture_output=True)
        ours = ROOT / "lib"
        for case in cases:
            got = {"off": [], "baseline": [], "on": []}
            for r in range(args.repeats):
                sides = ["off", "baseline"] if args.baseline else ["off"]
                for side in (sides if r % 2 == 0 else sides[::-1]):
                    lib = base / "lib" if side == "baseline" else ours
                    got[side].append(_worker(lib, case, "off", args.quick))
            got["on"].append(_worker(ours, case, "on", args.quick))
            best = {s: min(v, key=lambda d: d["seconds"]) for s, v in got.items() if v}
            off, on = best["off"], best["on"]
            row = {"case": case, "off_s": off["seconds"], "on_s": on["seconds"],
                   "values_kept_MB": on["value_bytes"] / 2**20,
                   "peak_rss_off_MB": off["peak_rss_MB"], "peak_rss_on_MB": on["peak_rss_MB"],
                   "ledger_on_equals_off": all(on[k] == off[k] for k in
                                               ("online_bits", "rounds", "offline_bits"))}
            if args.baseline:
                b = best["baseline"]
                row.update({f"{args.baseline}_s": b["seconds"],
                            "baseline_over_off": b["seconds"] / off["seconds"],
                            "ledger_equals_baseline": all(b[k] == off[k] for k in
                                                          ("online_bits", "rounds",
                                                           "offline_bits"))})
            rows.append(row)
            print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()},
                  flush=True)
    finally:
        if args.baseline:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)],
                           capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    df = pd.DataFrame(rows)
    out = paths.figures_dir("overview") / f"bench_values{'_quick' if args.quick else ''}.csv"
    with paths.atomic_path(out) as t:
        df.to_csv(t, index=False)
    print(df.to_string(index=False))
    print("wrote", out)


if __name__ == "__main__":
    main()
