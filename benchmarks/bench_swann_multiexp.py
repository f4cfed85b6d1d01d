"""SwaNN §5.1: Lim–Lee multi-exponentiation vs the naive per-term product, measured side by side.

For the FC layers of the MNIST networks (MiniONN FC 256→100, CryptoNets FC 1250→100) with
8-bit fixed-point weights (9-bit signed), under a real 2048-bit Paillier key:

* ``phe``       -- phe's ``EncryptedNumber * int`` then ``+`` for every term (what a user of
                   the library would write);
* ``naive``     -- the same in gmpy2 (``powmod`` per term, inverse for negative weights);
* ``multiexp``  -- :meth:`ppnn.he.paillier.Paillier.dot` (groups of h bases, one squaring
                   chain, tables shared by the rows).

One row (a single output neuron: the tables serve one row only) and the whole layer
(100 rows). Run: ``.venv/bin/python benchmarks/bench_swann_multiexp.py [--quick]``; writes
``figures/swann/bench_multiexp_timings.csv``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from ppnn import paths
from ppnn.he.paillier import Paillier, keygen, multiexp_plan


def _phe_row(enc_x, w_row):
    acc = None
    for e, w in zip(enc_x, w_row):
        if w == 0:
            continue
        term = e * int(w)
        acc = term if acc is None else acc + term
    return acc


def bench(n_in: int, rows: int, pk, sk, rng, reps: int) -> list[dict]:
    x = rng.integers(0, 256, size=n_in)
    W = rng.integers(-255, 256, size=(rows, n_in))
    be = Paillier(pk)
    c = be.encrypt(x, "client")
    enc_x = [pk.encrypt(int(v)) for v in x]       # phe objects for the phe baseline
    want = W @ x
    out = []
    for label, Wr in (("one row", W[:1]), (f"{rows} rows", W)):
        times = {}
        for method in ("phe", "naive", "multiexp"):
            best = np.inf
            for _ in range(reps):
                t0 = time.perf_counter()
                if method == "phe":
                    res = [_phe_row(enc_x, r) for r in Wr]
                    dt = time.perf_counter() - t0
                    got = [sk.decrypt(v) for v in res]
                else:
                    res = be.dot(c, Wr, "server", method=method)
                    dt = time.perf_counter() - t0
                    got = list(be.decrypt(sk, res, "client"))
                best = min(best, dt)
                assert [int(v) for v in got] == [int(v) for v in want[: len(Wr)]]
            times[method] = best
        plan = multiexp_plan(Wr)
        out.append({"layer": f"FC {n_in}->{rows}", "rows": label,
                    "phe_s": times["phe"], "naive_s": times["naive"],
                    "multiexp_s": times["multiexp"],
                    "speedup_vs_phe": times["phe"] / times["multiexp"],
                    "speedup_vs_naive": times["naive"] / times["multiexp"],
                    "h": plan.h, "multiexp_mults": plan.total_mults()})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="one repetition, MiniONN's FC layer only")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    pk, sk = keygen(2048)
    rng = np.random.default_rng(args.seed)
    reps = 1 if args.quick else 3
    rows = bench(256, 100, pk, sk, rng, reps)
    if not args.quick:
        rows += bench(1250, 100, pk, sk, rng, 1)
    df = pd.DataFrame(rows)
    pd.set_option("display.width", 160)
    print(df.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    target = paths.figures_dir("swann") / "bench_multiexp_timings.csv"
    paths.atomic_write(target, df.to_csv(index=False))
    print("wrote", target)


if __name__ == "__main__":
    main()
