"""Dask throughput: 1 and 2 single-threaded workers side by side, and the Dask path's overhead.

Two workloads, each run three ways in one invocation (so every number sees the same machine):

* **SHE gate evaluation on real tfhe-rs** -- one level of ``n`` bootstrapped AND gates
  (``DaskTfheBackend``: the level split into blocks on the workers, the server key shipped
  once) vs the same level in this process (``TfheBackend``, rayon pinned to one thread);
* **a Falcon accuracy sweep** -- private inference (semi-honest) of Network-C on ``blocks``
  blocks of MNIST test images (``ppnn.run(plan, x, chunks=blocks, client=...)``) vs the same
  blocks in this process.

Reported: throughput (gates/s, images/s) in-process, with 1 worker and with 2 workers, the
speed-up 2 workers / 1 worker (goal >= 1.7x on 2 cores) and the overhead of the Dask path at
1 worker against in-process (goal <= 1.15x). Every worker is single-threaded
(``ppnn.distributed.WORKER_ENV``), and so is this process.

Run: ``.venv/bin/python benchmarks/bench_distributed.py [--quick]``; writes
``figures/overview/bench_distributed.csv``.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import ppnn  # noqa: E402
from ppnn import data, distributed, paths  # noqa: E402


def _best(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def bench_gates(n: int, repeats: int) -> list[dict]:
    from ppnn.he.tfhe import DaskTfheBackend, TfheBackend, load_binding

    tfhe = load_binding()
    key = tfhe.BooleanKey.generate()
    rng = np.random.default_rng(0)
    bits_a, bits_b = rng.integers(0, 2, n), rng.integers(0, 2, n)
    local = TfheBackend(key)
    a, b = local.encrypt(bits_a), local.encrypt(bits_b)
    rows = [{"workload": "SHE gates (AND level)", "how": "in-process", "workers": 0,
             "seconds": _best(lambda: local.and_(a, b), repeats)}]
    for w in (1, 2):
        with distributed.cluster(workers=w, dashboard=False) as client:
            be = DaskTfheBackend(client, key=key, min_block=8)
            xa, xb = be.encrypt(bits_a), be.encrypt(bits_b)
            out = be.and_(xa, xb)  # warm-up (imports on the workers)
            assert np.array_equal(be.decrypt(out), bits_a & bits_b)
            rows.append({"workload": "SHE gates (AND level)", "how": "dask", "workers": w,
                         "seconds": _best(lambda be=be, xa=xa, xb=xb: be.and_(xa, xb),
                                          repeats)})
    for r in rows:
        r["units"], r["throughput"] = n, n / r["seconds"]
    return rows


def bench_falcon_sweep(blocks: int, per_block: int, repeats: int) -> list[dict]:
    from ppnn.nn import pretrained, zoo

    x, _, xt, _ = data.load_mnist()
    net = zoo.get("minionn_mnist")
    params = pretrained("minionn_mnist", quick=True, seed=0)
    plan = ppnn.compile("falcon_sh", net, params, calib=np.asarray(x[:300]))
    imgs = np.asarray(xt[:blocks * per_block])
    ref = ppnn.run(plan, imgs, seed=0, chunks=blocks)
    rows = [{"workload": "Falcon accuracy sweep (MiniONN, semi-honest)", "how": "in-process",
             "workers": 0,
             "seconds": _best(lambda: ppnn.run(plan, imgs, seed=0, chunks=blocks), repeats)}]
    for w in (1, 2):
        with distributed.cluster(workers=w, dashboard=False) as client:
            res = ppnn.run(plan, imgs, seed=0, chunks=blocks, client=client)  # warm-up
            assert np.array_equal(res.logits, ref.logits)
            def sweep(client=client):
                return ppnn.run(plan, imgs, seed=0, chunks=blocks, client=client)

            rows.append({"workload": rows[0]["workload"], "how": "dask", "workers": w,
                         "seconds": _best(sweep, repeats)})
    for r in rows:
        r["units"], r["throughput"] = len(imgs), len(imgs) / r["seconds"]
    return rows


def ratios(df: pd.DataFrame) -> pd.DataFrame:
    out = []
    for wl, g in df.groupby("workload", sort=False):
        s = {(r.how, r.workers): r.seconds for r in g.itertuples()}
        out.append({"workload": wl, "speedup_2w_vs_1w": s[("dask", 1)] / s[("dask", 2)],
                    "overhead_1w_vs_in_process": s[("dask", 1)] / s[("in-process", 0)]})
    return pd.DataFrame(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    n = 64 if args.quick else 1024
    rows = bench_gates(n, 1 if args.quick else args.repeats)
    rows += bench_falcon_sweep(4 if args.quick else 8, 4 if args.quick else 32,
                               1 if args.quick else args.repeats)
    df = pd.DataFrame(rows)
    rat = ratios(df)
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        print(rat.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    out = paths.figures_dir("overview") / ("bench_distributed_quick.csv" if args.quick
                                           else "bench_distributed.csv")
    paths.atomic_write(out, df.merge(rat, on="workload").to_csv(index=False,
                                                                float_format="%.6g"))
    print("wrote", out)


if __name__ == "__main__":
    main()
