"""Benchmark Tabula's preprocessing: the published protocol (Fig. 3) vs ours, per table.

Measured side by side in one run (both produce identical tables; both in numpy uint64):

* published: elementwise Beaver AND triples for [P Q^T] and the O(p^3) table sums
  (as matrix products, the paper's suggested vectorisation), elementwise sign correction;
* ours: outer-product (rank-one) triples, anti-diagonal sums + one cyclic convolution
  (O(p^2)), scalar-vector sign correction;

for b = 4, 6, 8, with ours also in absolute time per table amortised over a batch of
tables (the paper: 6 ms per 8-bit table). Target: ours >= 50x faster at b = 8.

Prints a table and writes ``figures/tabula/bench_tabula_preprocessing_timings.csv``.
Run: ``.venv/bin/python benchmarks/bench_tabula_preprocessing.py [--batch N]``.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from ppnn import paths
from ppnn.experiments.tabula import measure
from ppnn.protocols.tabula import OURS, PUBLISHED, costs


def main() -> pd.DataFrame:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=512, help="tables per batch for ours")
    ap.add_argument("--published-batch", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    rows = []
    for b in (4, 6, 8):
        t_pub = measure.measure_preprocessing(b, args.published_batch, rng, PUBLISHED,
                                              args.repeat)
        t_ours = measure.measure_preprocessing(b, args.batch, rng, OURS, args.repeat)
        rows.append({"bits": b, "published_ms_per_table": 1e3 * t_pub,
                     "ours_ms_per_table": 1e3 * t_ours, "speedup": t_pub / t_ours,
                     "published_bytes_per_table": costs.preproc_bits(b, "published") / 8,
                     "ours_bytes_per_table": costs.preproc_bits(b, "ours") / 8,
                     "paper_claim_bytes": costs.paper_preproc_bits(b) / 8})
    df = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.float_format", "{:.4g}".format):
        print(df.to_string(index=False))
    r8 = df.set_index("bits").loc[8]
    print(f"\n8-bit table: ours {r8.ours_ms_per_table:.2f} ms (batch {args.batch}) vs published "
          f"{r8.published_ms_per_table:.1f} ms -> {r8.speedup:.0f}x (target >= 50x); paper "
          f"reports 6 ms per table for its implementation.")
    paths.atomic_write(paths.figures_dir("tabula") / "bench_tabula_preprocessing_timings.csv",
                       df.to_csv(index=False))
    return df


if __name__ == "__main__":
    main()
