"""Benchmark ppnn.nn on this machine: float vs fixed-point inference, and training throughput.

For every MNIST network of the zoo, measured side by side in one run:

* float inference (float32) per image,
* fixed-point inference in Z_2^64 with f = 16 (the protocols' plaintext oracle) per image,
  and its slowdown over float,
* one training step (forward + backward + Adam) per image, and the projected seconds per
  60k-image epoch.

Prints a table and writes ``figures/nn/bench_nn_forward_train_timings.csv`` (wall clock).
Run: ``.venv/bin/python benchmarks/bench_nn_forward_train.py [--images N]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from ppnn import data, nn, paths
from ppnn.core import FixedPoint, Ring
from ppnn.nn._blas import blas_threads


def _best(repeats: int, fn, *args, **kw) -> float:
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        fn(*args, **kw)
        best = min(best, time.perf_counter() - t)
    return best


def _row(name: str, x, y, fxp: FixedPoint, repeats: int) -> dict:
    net = nn.zoo.get(name)
    rng = np.random.default_rng(0)
    params = nn.init_params(net, rng)
    small = [{k: v * 0.5 for k, v in p.items()} for p in params]  # stay inside the ring
    n_fixed = max(8, len(x) // 8)
    with blas_threads(1):
        t_float = _best(repeats, nn.forward, net, params, x) / len(x)
        t_fixed = _best(repeats, nn.forward_fixed, net, small, x[:n_fixed], fxp,
                        check=False) / n_fixed
    t_train = _best(repeats, nn.train, net, params, x, y, 1, 64, 1e-3, rng=rng) / len(x)
    return {"network": name, "macs": net.n_macs,
            "float_us_per_image": 1e6 * t_float,
            "fixed_us_per_image": 1e6 * t_fixed,
            "fixed_over_float": t_fixed / t_float,
            "train_us_per_image": 1e6 * t_train,
            "projected_epoch_s": 60_000 * t_train}


def main(argv=None) -> pd.DataFrame:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=512, help="images per measurement")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    x, y, _, _ = data.load_mnist()
    x, y = x[: args.images], y[: args.images]
    fxp = FixedPoint(Ring(64), 16)
    rows = [_row(name, x, y, fxp, args.repeats) for name in nn.zoo.names()
            if nn.zoo.get(name).dataset == "mnist"]
    df = pd.DataFrame(rows)
    with pd.option_context("display.width", 140, "display.float_format", "{:,.1f}".format):
        print(df.to_string(index=False))
    out = paths.figures_dir("nn") / "bench_nn_forward_train_timings.csv"
    paths.atomic_write(out, df.to_csv(index=False, float_format="%.4g"))
    print(f"wrote {out}")
    return df


if __name__ == "__main__":
    main()
