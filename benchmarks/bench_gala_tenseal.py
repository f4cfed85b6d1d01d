"""GALA vs TenSEAL's built-in encrypted matrix product, same dimensions, same run.

TenSEAL's encrypted-vector x plain-matrix product is ``CKKSVector.matmul`` (CKKS; TenSEAL's
BFV vectors only offer ``dot``, so ``BFVVector.dot`` per output row is timed too). GALA runs
on our SEAL BFV backend with the same ring dimension N = 4096. CPU seconds (all threads),
median of ``--repeats``. TenSEAL does not expose its rotation count.
Prints a table and writes ``figures/gala/bench_gala_tenseal_timings.csv``.
Run: ``.venv/bin/python benchmarks/bench_gala_tenseal.py [--repeats 3]``.
"""

from __future__ import annotations

import argparse

import pandas as pd

from ppnn import paths
from ppnn.experiments.gala import runs as ex


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    df = ex.tenseal_peer(dims=ex.MATVEC_DIMS, repeats=args.repeats)
    with pd.option_context("display.width", 160, "display.max_colwidth", 70):
        print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    out = paths.figures_dir("gala") / "bench_gala_tenseal_timings.csv"
    paths.atomic_write(out, df.to_csv(index=False))
    print("wrote", out)


if __name__ == "__main__":
    main()
