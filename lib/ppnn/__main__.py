"""Command line of PPNN Lab.

    python -m ppnn families                        # the protocol families and what runs for real
    python -m ppnn compare MODEL.onnx              # your network through every family
    python -m ppnn compare MODEL.onnx --families falcon_sh she --images 500 --dataset fashion

``compare`` loads an ONNX model (:func:`ppnn.nn.from_onnx`: Conv, Gemm / MatMul + Add, Relu,
MaxPool, AveragePool, BatchNormalization, Flatten / Reshape), runs it through the chosen
families on the same test images (the overview notebook's comparison: counted communication
and rounds, measured or projected compute, LAN/WAN latency from one time model, accuracy of
each family's integer model, each protocol run checked against it), prints the table and
writes it as CSV and Markdown with two figures under ``build/compare/<model>/``. A family that
cannot run the network is reported with the layer and the reason, and the others go on.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

__all__ = ["main"]


def _families(args) -> int:
    from ppnn.protocols import api

    for r in api.families().frame().to_dict("records"):
        print(f"{r['key']:14s} {r['name']} ({r['paper']}) -- {r['parties']}; "
              f"{r['threat model']}")
        print(f"{'':14s} real: {r['real cryptography']}")
        print(f"{'':14s} simulated: {r['simulated / counted']}")
        print(f"{'':14s} layers: {r['layers']}; backends: {r['backends']}; count: {r['count']}")
    return 0


@contextlib.contextmanager
def _client(args):
    """A Dask client from ``--workers`` (a LocalCluster) or ``--scheduler``, else None."""
    if getattr(args, "workers", None):
        from ppnn import distributed

        with distributed.cluster(workers=args.workers) as client:
            yield client
    elif getattr(args, "scheduler", None):
        from ppnn import distributed

        client = distributed.connect(args.scheduler)
        try:
            yield client
        finally:
            client.close()
    else:
        yield None


def _compare(args) -> int:
    from ppnn import nn, paths
    from ppnn.experiments import compare
    from ppnn.protocols import api

    model = Path(args.model)
    if not model.is_file():
        print(f"error: no ONNX file {model}", file=sys.stderr)
        return 2
    net, params = nn.from_onnx(model)
    registry = api.families()
    keys = args.families or list(registry)
    unknown = [k for k in keys if k not in registry]
    if unknown:
        print(f"error: unknown families {unknown}; choose from {list(registry)}",
              file=sys.stderr)
        return 2
    w = compare.make_workload(not args.full, args.seed, n_run=min(args.runs, args.images),
                              n_acc=args.images, n_calib=args.calib, net=net, params=params,
                              dataset=args.dataset)
    print(f"{net.name}: {len(net.layers)} layers, input {net.input_shape}, "
          f"{net.n_relus:,} ReLUs, {net.n_macs:,} MACs; float accuracy on the first "
          f"{args.images} {args.dataset} test images: {w.float_accuracy:.4f}", flush=True)
    units = compare.Units(not args.full, args.seed)
    results, secs, skipped = [], {}, []
    with _client(args) as client:
        if client is not None:  # every family a Dask task, side by side
            from ppnn import distributed

            print(f"Dask: {distributed.n_workers(client)} workers, dashboard "
                  f"{distributed.dashboard_link(client)}", flush=True)
            futures = {k: client.submit(compare.timed_family, k, w, units, False,
                                        pure=False) for k in keys}
        for k in keys:
            t0 = time.perf_counter()
            try:
                if client is None:
                    results.append(compare.run_family(k, w, units))
                    secs[k] = time.perf_counter() - t0
                else:
                    res, secs[k] = futures[k].result()
                    results.append(res)
            except (api.UnsupportedNetwork, ValueError) as e:
                skipped.append((k, str(e)))
                print(f"  {registry[k].name}: cannot run this network -- {e}", flush=True)
                continue
            print(f"  {registry[k].name}: {secs[k]:.1f} s", flush=True)
    if not results:
        print("error: no family could run this network", file=sys.stderr)
        return 1
    from ppnn.core import WAN

    df = compare.comparison_frame(results, w)
    cmp = compare.Comparison(w, units, results, df, compare.breakdown_frame(results, WAN),
                             compare.decision_guide(df), secs)
    out = Path(args.out) if args.out else paths.build_dir() / "compare" / model.stem
    written = compare.save(cmp, directory=out)
    print()
    print(compare.to_markdown(df, cmp.guide))
    if skipped:
        print("Families that cannot run this network:")
        for k, why in skipped:
            print(f"- {registry[k].name}: {why}")
        print()
    print(f"written to {out}/: " + ", ".join(sorted(p.name for p in written)))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ppnn", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("families", help="list the protocol families")
    c = sub.add_parser("compare", help="an ONNX model through every protocol family")
    c.add_argument("model", help="path to an .onnx file")
    c.add_argument("--families", nargs="+", metavar="KEY",
                   help="family keys (default: all; see `python -m ppnn families`)")
    c.add_argument("--images", type=int, default=200,
                   help="test images for accuracy (default 200)")
    c.add_argument("--runs", type=int, default=1,
                   help="images run through each protocol (default 1)")
    c.add_argument("--calib", type=int, default=500,
                   help="training images used to calibrate fixed-point scales (default 500)")
    c.add_argument("--dataset", choices=("mnist", "fashion"), default="mnist")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--full", action="store_true",
                   help="measure unit costs with more repetitions (slower, steadier)")
    c.add_argument("--out", help="output folder (default build/compare/<model name>)")
    c.add_argument("--workers", type=int, help="run the families on a local Dask cluster")
    c.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="run the families on a running Dask cluster")
    args = ap.parse_args(argv)
    if args.command == "families":
        return _families(args)
    for name in ("images", "runs", "calib"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} must be >= 1")
    return _compare(args)


if __name__ == "__main__":
    sys.exit(main())
