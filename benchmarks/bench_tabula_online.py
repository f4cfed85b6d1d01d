"""Benchmark Tabula's online phase against a real garbled-circuit ReLU and a bare gather.

Measured side by side in one run, per element (vectorized batches):

* Tabula online (truncate, reduce mod 2^b, blind, look up in materialised 2^b-entry tables)
  vs our half-gates GC ReLU (garble + evaluate, and evaluate only) at 8 bits -- the paper
  claims > 100x (Table 7: 69 us vs .55 us);
* online lookups per second vs a plain numpy gather ``T[rows, idx]`` from the same two
  tables (how close the protocol runs to the memory bound), for b = 4, 8, 12.

Prints a table and writes ``figures/tabula/bench_tabula_online_timings.csv`` (wall clock).
Run: ``.venv/bin/python benchmarks/bench_tabula_online.py [--n N] [--repeat R]``.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from ppnn import paths
from ppnn.experiments.tabula import measure


def main() -> pd.DataFrame:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1 << 15, help="activations per batch")
    ap.add_argument("--gc-n", type=int, default=8192, help="GC ReLUs per batch")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    rows = []
    for b in (4, 8, 12):
        n = args.n if b <= 8 else max(1024, args.n // 16)  # 2^12-entry tables: keep RAM sane
        t_tab = measure.measure_tabula_online(b, n, rng, args.repeat)
        t_gat = measure.measure_gather(b, n, rng, args.repeat)
        row = {"bits": b, "n": n, "tabula_online_us": 1e6 * t_tab,
               "numpy_gather_us": 1e6 * t_gat,
               "tabula_lookups_per_s": 1 / t_tab, "gather_lookups_per_s": 1 / t_gat,
               "fraction_of_gather_speed": t_gat / t_tab}
        if b == 8:
            g = measure.measure_gc(b, args.gc_n, rng, args.repeat)
            row.update({"gc_garble_us": 1e6 * g["garble_s"], "gc_evaluate_us":
                        1e6 * g["evaluate_s"], "gc_total_us": 1e6 * g["total_s"],
                        "speedup_vs_gc_total": g["total_s"] / t_tab,
                        "speedup_vs_gc_evaluate": g["evaluate_s"] / t_tab})
        rows.append(row)
    df = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.float_format", "{:.4g}".format):
        print(df.to_string(index=False))
    r8 = df.set_index("bits").loc[8]
    print(f"\n8-bit ReLU: Tabula online is {r8.speedup_vs_gc_total:.0f}x faster than garbling + "
          f"evaluating our GC ({r8.speedup_vs_gc_evaluate:.0f}x vs evaluation alone); paper: "
          f">100x. Tabula runs at {r8.fraction_of_gather_speed:.0%} of a bare numpy gather.")
    paths.atomic_write(paths.figures_dir("tabula") / "bench_tabula_online_timings.csv",
                       df.to_csv(index=False))
    return df


if __name__ == "__main__":
    main()
