"""Falcon benchmarks (simulation on this machine), all ratios measured side by side in one run.

Cases (each one process, BLAS pinned to one thread so a shared machine's load matters less):

* ``relu-sh`` / ``relu-mal`` -- ReLU (Algorithm 3) on 2^20 shared elements in batches of
  2^17, semi-honest and malicious;
* ``netc-*`` / ``lenet-*`` -- a private forward pass of Network-C / LeNet on 16 MNIST images,
  beside the plaintext forward pass of the same network (the paper's Table 7 question: how
  far is private inference from plaintext on the same CPU?);
* ``train-*`` -- one private training iteration (batch 128) of Network-A, timed after one
  warm-up iteration in the same process (a training run is thousands of iterations; the
  first pays for allocator growth and lazy imports); the fastest of ``TRAIN_ITERS`` timed
  iterations, each from the same start.

Every case also books its online bits and rounds (and offline bits), which must not move
when only the speed changes.

Run::

    .venv/bin/python benchmarks/bench_falcon.py [--quick]
    .venv/bin/python benchmarks/bench_falcon.py --baseline REV [--repeats 3]

``--baseline REV`` checks out ``REV`` in a temporary git worktree and runs every case with this
checkout's library and with ``REV``'s, alternating the two (A B B A ...) so that both see the
same machine load; it prints each case's best-of-``repeats`` seconds on both sides, the
speed-up (``REV`` seconds / ours), both sides' online megabytes and rounds and whether bits
and rounds are identical (they differ where the protocol itself changed in between), and
writes ``figures/falcon/bench_falcon_vs_<REV>.csv``. Without it, writes
``figures/falcon/bench_falcon_timings.csv``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve()
ROOT = HERE.parents[1]

CASES = {
    "relu-sh": ("relu", False), "relu-mal": ("relu", True),
    "netc-sh": ("falcon_network_c", False), "netc-mal": ("falcon_network_c", True),
    "lenet-sh": ("falcon_lenet", False), "lenet-mal": ("falcon_lenet", True),
    "train-sh": ("train", False), "train-mal": ("train", True),
}
TRAIN_ITERS = 5  # timed training iterations per process (the fastest is kept)


def _calibrate():
    """The calibration helper, wherever the library revision keeps it."""
    try:
        from ppnn.protocols.falcon.family import calibrate
    except ImportError:  # revisions before the protocol/experiment split
        from ppnn.protocols.falcon.experiments import calibrate
    return calibrate


def run_case(case: str, quick: bool, seed: int) -> dict:
    """Run one case with whatever ``ppnn`` is importable; returns seconds and the ledger."""
    from ppnn import data
    from ppnn.nn import zoo
    from ppnn.nn.forward import forward, init_params
    from ppnn.protocols.falcon import Falcon, relu
    from ppnn.protocols.falcon.network import secure_forward, share_model, train_step

    what, mal = CASES[case]
    fal = Falcon(np.random.default_rng(seed), malicious=mal)
    out: dict = {"case": case, "mode": fal.mode}
    if what == "relu":
        n, chunk = (1 << 14, 1 << 12) if quick else (1 << 20, 1 << 17)
        x = np.random.default_rng(seed).normal(size=n)
        t0 = time.perf_counter()
        for i in range(0, n, chunk):  # batches of the same vectorized protocol
            relu(fal, fal.share_fixed(x[i:i + chunk]))
        out["seconds"] = time.perf_counter() - t0
        out["elements"] = n
    elif what == "train":
        batch = 32 if quick else 128
        x, y, _, _ = data.load_mnist()
        net = zoo.get("falcon_network_a")
        params = init_params(net, np.random.default_rng(seed), dtype=np.float64)
        idx = np.random.default_rng(seed).choice(len(x), batch, replace=False)
        model = share_model(fal, net, params)
        xs = fal.share_fixed(x[idx].astype(np.float64))
        # a training run is many iterations: after a first (warm-up) iteration, whose ledger
        # entries are left out, time TRAIN_ITERS more (each from the same start, so each books
        # the same ledger) and keep the fastest -- one iteration is ~0.1 s, short enough for a
        # scheduler hiccup on a shared machine to decide a single timing
        train_step(fal, model, xs, y[idx], lr_shift=3)
        times = []
        for _ in range(1 if quick else TRAIN_ITERS):
            fal = Falcon(np.random.default_rng(seed), malicious=mal)
            model = share_model(fal, net, params)
            xs = fal.share_fixed(x[idx].astype(np.float64))
            t0 = time.perf_counter()
            train_step(fal, model, xs, y[idx], lr_shift=3)
            times.append(time.perf_counter() - t0)
        out["seconds"] = min(times)
        out["batch"] = batch
    else:
        n_img = 2 if quick else 16
        x = data.load_mnist()[2][:n_img].astype(np.float64)
        net = zoo.get(what)
        params = init_params(net, np.random.default_rng(seed), dtype=np.float64)
        params, _ = _calibrate()(net, params, x)
        reps = 20
        t0 = time.perf_counter()
        for _ in range(reps):
            forward(net, params, x)
        out["plaintext_seconds"] = (time.perf_counter() - t0) / reps
        model = share_model(fal, net, params)
        xs = fal.share_fixed(x)
        t0 = time.perf_counter()
        secure_forward(fal, model, xs)
        out["seconds"] = time.perf_counter() - t0
        out["images"] = n_img
    led = fal.ledger
    out.update(online_bits=int(led.total_bits("online")), rounds=int(led.rounds("online")),
               offline_bits=int(led.total_bits("offline")))
    return out


def _worker(lib: Path, case: str, quick: bool, seed: int) -> dict:
    """One case in a fresh process importing ``ppnn`` from ``lib``."""
    env = dict(os.environ, PYTHONPATH=str(lib), PPNN_ROOT=str(ROOT))
    cmd = [sys.executable, str(HERE), "--worker", case, "--seed", str(seed)]
    cmd += ["--quick"] if quick else []
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        raise RuntimeError(f"case {case} with {lib} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _worktree(rev: str, where: Path) -> Path:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--force",
                    str(where), rev], check=True, capture_output=True, text=True)
    return where


def compare(rev: str, cases: list[str], quick: bool, seed: int, repeats: int):
    import pandas as pd

    tmp = Path(tempfile.mkdtemp(prefix="bench-falcon-"))
    base = tmp / "baseline"
    try:
        _worktree(rev, base)
        libs = {"ours": ROOT / "lib", "baseline": base / "lib"}
        rows = []
        for case in cases:
            got: dict[str, list[dict]] = {"ours": [], "baseline": []}
            for r in range(repeats):  # A B, then B A: both sides see the same load
                order = ("ours", "baseline") if r % 2 == 0 else ("baseline", "ours")
                for side in order:
                    got[side].append(_worker(libs[side], case, quick, seed))
            best = {s: min(got[s], key=lambda d: d["seconds"]) for s in got}
            o, b = best["ours"], best["baseline"]
            same = all(o[k] == b[k] for k in ("online_bits", "rounds", "offline_bits"))
            rows.append({"case": case, "mode": o["mode"], "ours_s": o["seconds"],
                         f"{rev}_s": b["seconds"], "speedup_x": b["seconds"] / o["seconds"],
                         "online_MB": o["online_bits"] / 8e6,
                         f"{rev}_online_MB": b["online_bits"] / 8e6, "rounds": o["rounds"],
                         f"{rev}_rounds": b["rounds"], "bits_and_rounds_identical": same})
            print(f"{case:10s} ours {o['seconds']:8.3f} s  {rev} {b['seconds']:8.3f} s  "
                  f"speed-up {b['seconds'] / o['seconds']:5.2f}x  identical ledger: {same}",
                  flush=True)
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)],
                       capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--baseline", metavar="REV", help="also run REV's library, side by side")
    ap.add_argument("--repeats", type=int, default=None,
                    help="runs per case and side with --baseline (best is kept; default 3)")
    ap.add_argument("--cases", nargs="+", choices=sorted(CASES), default=list(CASES))
    ap.add_argument("--worker", choices=sorted(CASES), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(run_case(args.worker, args.quick, args.seed)))
        return
    import pandas as pd

    from ppnn import paths

    if args.baseline:
        repeats = args.repeats or (1 if args.quick else 3)
        if repeats < 1:
            raise SystemExit("--repeats must be >= 1")
        df = compare(args.baseline, args.cases, args.quick, args.seed, repeats)
        name = f"bench_falcon_vs_{args.baseline}{'_quick' if args.quick else ''}.csv"
    else:
        rows = [_worker(ROOT / "lib", c, args.quick, args.seed) for c in args.cases]
        df = pd.DataFrame(rows)
        if "plaintext_seconds" in df:
            df["overhead_x"] = df["seconds"] / df["plaintext_seconds"]
        name = f"bench_falcon{'_quick' if args.quick else ''}_timings.csv"
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    out = paths.figures_dir("falcon") / name
    paths.atomic_write(out, df.to_csv(index=False, float_format="%.6g"))
    print("wrote", out)


if __name__ == "__main__":
    main()
