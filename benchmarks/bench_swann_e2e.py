"""SwaNN end to end: one-image prediction time, client-server vs two-server, measured.

Real 2048-bit Paillier, the trained networks of Experiment 1 (CryptoNets, hybrid and
optimised PHE only) and Experiment 2 (MiniONN MNIST, hybrid). The two-server run classifies
two images at once (one per server), as in the paper; we report its wall time, each party's
compute, and the time per image. All runs use the same key and images, side by side.

Run: ``.venv/bin/python benchmarks/bench_swann_e2e.py [--quick]`` (quick: Experiment 1 hybrid
only); writes ``figures/swann/bench_e2e_timings.csv``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from ppnn import paths
from ppnn.data import load_mnist
from ppnn.experiments.swann.paper import build_models
from ppnn.protocols.swann.inference import SwannKeys, run_inference


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="Experiment 1 hybrid only")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--full-models", action="store_true",
                    help="use the fully trained networks (default: the quick ones)")
    args = ap.parse_args()
    models = build_models(quick=not args.full_models, seed=args.seed)
    keys = SwannKeys.generate(2048)
    _, _, xt, yt = load_mnist()
    cases = [("exp1_hybrid", True)] if args.quick else [
        ("exp1_hybrid", True), ("exp1_phe", True), ("exp2_hybrid", True)]
    rows = []
    for key, opt in cases:
        model = models[key]
        for scenario, imgs in (("client-server", xt[:1]), ("two-server", xt[:2])):
            t0 = time.perf_counter()
            res = run_inference(model, imgs, scenario, opt, keys, np.random.default_rng(args.seed))
            wall = time.perf_counter() - t0
            for i, im in enumerate(imgs):
                assert (res.logits[i] == model.forward_int(model.encode(im))).all()
            per = {p: res.timings.total(party=p) for p in res.ledger.parties}
            busiest = max(v for p, v in per.items() if p != "client")
            rows.append({
                "model": key, "scenario": scenario, "images": len(imgs), "wall_s": wall,
                **{f"{p}_s": v for p, v in per.items()},
                "time_per_image_s": (wall / len(imgs)),
                "busiest_server_s": busiest,
                "MB_per_image": res.protocol_bytes() / 1e6 / len(imgs),
                "correct": sum(int(p == y) for p, y in zip(res.predictions, yt[: len(imgs)])),
            })
    df = pd.DataFrame(rows)
    for key in df["model"].unique():
        cs = df[(df.model == key) & (df.scenario == "client-server")].iloc[0]
        ts = df[(df.model == key) & (df.scenario == "two-server")].iloc[0]
        print(f"{key}: two-server / client-server wall per image = "
              f"{ts.time_per_image_s / cs.time_per_image_s:.2f}; client compute "
              f"{cs.client_s:.2f} s per image (client-server) vs {ts.client_s / 2:.2f} s per "
              "image (two-server: only encrypting the image and decrypting the logits)")
    pd.set_option("display.width", 200)
    print(df.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    target = paths.figures_dir("swann") / "bench_e2e_timings.csv"
    paths.atomic_write(target, df.to_csv(index=False))
    print("wrote", target)


if __name__ == "__main__":
    main()
