"""Falcon benchmarks (simulation on this machine), all ratios measured side by side in one run.

1. ReLU on 2^20 shared elements, semi-honest and malicious: elements per second, online
   bytes and rounds, and the malicious / semi-honest ratios (time and bytes).
2. Private vs plaintext forward pass of Network-C and LeNet (the paper's Table 7 question:
   how far is private inference from plaintext on the same CPU?).
3. One private training iteration (batch 128) of Network-A: time, bytes, rounds.

Run: ``.venv/bin/python benchmarks/bench_falcon.py [--quick]``. Writes
``figures/falcon/bench_falcon_timings.csv``. BLAS is pinned to one thread so the numbers do
not depend on what else runs on a shared machine.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ppnn import data, paths  # noqa: E402
from ppnn.nn import zoo  # noqa: E402
from ppnn.nn.forward import forward, init_params  # noqa: E402
from ppnn.protocols.falcon import Falcon, relu  # noqa: E402
from ppnn.protocols.falcon import costs as C  # noqa: E402
from ppnn.protocols.falcon.family import calibrate  # noqa: E402
from ppnn.protocols.falcon.network import secure_forward, share_model, train_step  # noqa: E402


def bench_relu(n: int, chunk: int, seed: int) -> list[dict]:
    rows = []
    x = np.random.default_rng(seed).normal(size=n)
    for mal in (False, True):
        fal = Falcon(np.random.default_rng(seed), malicious=mal)
        t0 = time.perf_counter()
        for i in range(0, n, chunk):  # batches of the same vectorized protocol
            relu(fal, fal.share_fixed(x[i:i + chunk]))
        sec = time.perf_counter() - t0
        one = C.relu_cost(n, mal=mal)  # one batch of n (rounds of a single invocation)
        assert fal.ledger.total_bits("online") == one.bits
        rows.append({"benchmark": "relu", "case": f"{n} elements", "mode": fal.mode,
                     "seconds": sec, "elements_per_s": n / sec,
                     "online_MB": fal.ledger.total_bytes("online") / 1e6,
                     "rounds": int(one.rounds)})
    sh, ml = rows
    rows.append({"benchmark": "relu", "case": "malicious / semi-honest", "mode": "ratio",
                 "seconds": ml["seconds"] / sh["seconds"], "online_MB": ml["online_MB"] /
                 sh["online_MB"], "rounds": ml["rounds"] / sh["rounds"]})
    return rows


def bench_plain_vs_private(names, n_img: int, seed: int) -> list[dict]:
    rows = []
    x = data.load_mnist()[2][:n_img].astype(np.float64)
    for name in names:
        net = zoo.get(name)
        params = init_params(net, np.random.default_rng(seed), dtype=np.float64)
        params, _ = calibrate(net, params, x)
        reps = 20
        t0 = time.perf_counter()
        for _ in range(reps):
            forward(net, params, x)
        plain = (time.perf_counter() - t0) / reps
        for mal in (False, True):
            fal = Falcon(np.random.default_rng(seed), malicious=mal)
            model = share_model(fal, net, params)
            xs = fal.share_fixed(x)
            t0 = time.perf_counter()
            secure_forward(fal, model, xs)
            priv = time.perf_counter() - t0
            rows.append({"benchmark": "forward pass", "case": f"{name}, {n_img} images",
                         "mode": fal.mode, "seconds": priv, "plaintext_seconds": plain,
                         "overhead_x": priv / plain,
                         "online_MB": fal.ledger.total_bytes("online") / 1e6,
                         "rounds": fal.ledger.rounds("online")})
    return rows


def bench_training(batch: int, seed: int) -> list[dict]:
    rows = []
    x, y, _, _ = data.load_mnist()
    net = zoo.get("falcon_network_a")
    params = init_params(net, np.random.default_rng(seed), dtype=np.float64)
    idx = np.random.default_rng(seed).choice(len(x), batch, replace=False)
    for mal in (False, True):
        fal = Falcon(np.random.default_rng(seed), malicious=mal)
        model = share_model(fal, net, params)
        xs = fal.share_fixed(x[idx].astype(np.float64))
        t0 = time.perf_counter()
        train_step(fal, model, xs, y[idx], lr_shift=3)
        sec = time.perf_counter() - t0
        rows.append({"benchmark": "training iteration", "case": f"Network-A, batch {batch}",
                     "mode": fal.mode, "seconds": sec,
                     "online_MB": fal.ledger.total_bytes("online") / 1e6,
                     "offline_MB": fal.ledger.total_bytes("offline") / 1e6,
                     "rounds": fal.ledger.rounds("online")})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    n_relu = 1 << (14 if args.quick else 20)
    rows = bench_relu(n_relu, 1 << 14 if args.quick else 1 << 17, args.seed)
    rows += bench_plain_vs_private(["falcon_network_c", "falcon_lenet"],
                                   2 if args.quick else 16, args.seed)
    rows += bench_training(32 if args.quick else 128, args.seed)
    df = pd.DataFrame(rows)
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    out = paths.figures_dir("falcon") / ("bench_falcon_quick_timings.csv" if args.quick
                                         else "bench_falcon_timings.csv")
    paths.atomic_write(out, df.to_csv(index=False, float_format="%.6g"))
    print("wrote", out)


if __name__ == "__main__":
    main()
