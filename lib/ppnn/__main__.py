"""Command line of PPNN Lab.

    python -m ppnn families                        # the protocol families and what runs for real
    python -m ppnn compare MODEL.onnx              # your network through every family
    python -m ppnn compare MODEL.onnx --families falcon_sh she --images 500 --dataset fashion
    python -m ppnn wire falcon_sh minionn_mnist    # the parties as processes over loopback TCP

``wire`` runs a zoo network (or an ONNX file) in wire mode -- Falcon (``falcon_sh``,
``falcon_mal``): P0, P1, P2 and the dealer as four processes; Delphi + Tabula
(``delphi_tabula``), Delphi + GC (``delphi_gc``) and SwaNN client-server (``swann_cs``): the
client, the server and the dealer; SwaNN two-server (``swann_2s``, an even number of
images): the client, server1, server2 and the dealer; GAZELLE / GALA + GC (``gazelle_gc``,
``gala_gc``) and SHE (``she``): the client and the server -- over loopback TCP
(:mod:`ppnn.wire`), and in process with the same seed, and
prints ledger bytes vs wire bytes, ledger rounds vs measured rounds and both wall times
(``--csv PATH`` also writes the table). ``--backend real`` runs real cryptography across
the processes for the families of :data:`ppnn.wire.REAL_WIRE_FAMILIES`, the secret key in
the client's process only.

``compare`` loads an ONNX model (:func:`ppnn.nn.from_onnx`: Conv, Gemm / MatMul + Add, Relu,
MaxPool, AveragePool, GlobalAveragePool, BatchNormalization, Flatten / Reshape, and residual
blocks -- the Add of two branches) and runs it through the chosen families on the same
images (MNIST for 1x28x28 inputs, else random images of the input shape unless
``--dataset``): the overview notebook's comparison -- counted communication and rounds,
measured or projected compute, LAN/WAN latency from one time model, accuracy of each
family's integer model, each protocol run checked against it. It prints the table and each
family's compile / run / count seconds (and whether ``ppnn.count`` booked the run's
ledger), and writes it as CSV and Markdown with three figures (communication vs latency, the
layer-type and the per-layer-kind breakdown) under ``build/compare/<model>/``. A family that
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
    from ppnn import data, nn, paths
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
    dataset = args.dataset or ("mnist" if net.input_shape == (1, 28, 28) else "random")
    images = args.images or (200 if dataset != "random" else args.runs)
    try:
        w = compare.make_workload(not args.full, args.seed, n_run=min(args.runs, images),
                                  n_acc=images, n_calib=args.calib, net=net, params=params,
                                  dataset=dataset)
    except data.DatasetUnavailable as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    blocks = sum(n.kind == "Add" for n in net.nodes())
    print(f"{net.name}: {len(net.layers)} layers{f' ({blocks} residual blocks)' if blocks else ''}"
          f", input {net.input_shape}, {net.n_relus:,} ReLUs, {net.n_macs:,} MACs", flush=True)
    if dataset == "random":
        print(f"images: {images} random uniform images of shape {net.input_shape} (no "
              "dataset for this input; --dataset cifar10 reads CIFAR-10 from $PPNN_CIFAR10): "
              "accuracy = agreement with the float model", flush=True)
    else:
        print(f"float accuracy on the first {images} {dataset} test images: "
              f"{w.float_accuracy:.4f}", flush=True)
    units = compare.Units(not args.full, args.seed)
    results, secs, skipped = [], {}, []
    with _client(args) as client:
        if client is not None:  # every family a Dask task, side by side
            from ppnn import distributed

            print(f"Dask: {distributed.n_workers(client)} workers, dashboard "
                  f"{distributed.dashboard_link(client)}", flush=True)
            futures = {k: client.submit(compare.timed_family, k, w, units, False, count=True,
                                        pure=False) for k in keys}
        for k in keys:
            t0 = time.perf_counter()
            try:
                if client is None:
                    results.append(compare.run_family(k, w, units, count=True))
                    secs[k] = time.perf_counter() - t0
                else:
                    res, secs[k] = futures[k].result()
                    results.append(res)
            except (api.UnsupportedNetwork, ValueError) as e:
                skipped.append((k, str(e)))
                print(f"  {registry[k].name}: cannot run this network -- {e}", flush=True)
                continue
            sec = results[-1].extra["seconds"]
            same = "yes" if results[-1].extra.get("count_equals_run") else "NO"
            print(f"  {registry[k].name}: {secs[k]:.1f} s (compile {sec['compile']:.1f} s, "
                  f"run {sec['run']:.1f} s, count {sec['count']:.1f} s; count = run's ledger: "
                  f"{same})", flush=True)
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
    tim = compare.seconds_frame(results)
    print("Wall-clock seconds per family (this machine; compile, protocol run, count):")
    print(tim.assign(count_equals_run=tim["count_equals_run"].map({True: "yes", False: "NO"}))
          .drop(columns="key").to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    print()
    if skipped:
        print("Families that cannot run this network:")
        for k, why in skipped:
            print(f"- {registry[k].name}: {why}")
        print()
    print(f"written to {out}/: " + ", ".join(sorted(p.name for p in written)))
    return 0


def _wire(args) -> int:
    import numpy as np

    import ppnn
    from ppnn import data, nn, wire
    from ppnn.wire.falcon import summary_frame

    if args.family not in wire.WIRE_FAMILIES:
        print(f"error: transport='tcp' is implemented for {', '.join(wire.WIRE_FAMILIES)}; "
              f"got {args.family!r}", file=sys.stderr)
        return 2
    if args.model.endswith(".onnx"):
        if not Path(args.model).is_file():
            print(f"error: no ONNX file {args.model}", file=sys.stderr)
            return 2
        net, params = nn.from_onnx(Path(args.model))
    else:
        if args.model not in nn.zoo.names():
            print(f"error: {args.model!r} is neither an .onnx file nor a zoo network "
                  f"({', '.join(nn.zoo.names())})", file=sys.stderr)
            return 2
        net, params = nn.zoo.get(args.model), nn.pretrained(args.model, quick=True, seed=0)
    x, _, xt, _ = data.load_mnist()
    plan = ppnn.compile(args.family, net, params, calib=np.asarray(x[:256]))
    from ppnn.wire.timing import images_for

    n_img = images_for(args.family, args.images)
    if n_img != args.images:
        per = ppnn.protocols.api.family(args.family).spec.images_per_run
        print(f"note: {args.family} classifies {per} images per run: running {n_img}")
    imgs = np.asarray(xt[:n_img])
    if args.backend != "sim" and args.family not in wire.REAL_WIRE_FAMILIES:
        print(f"error: --backend {args.backend} crosses processes for "
              f"{', '.join(wire.REAL_WIRE_FAMILIES)} only; {args.family} runs --backend sim",
              file=sys.stderr)
        return 2
    # the in-process run to compare with: the same backend where the family has it in process
    ref_backend = args.backend if args.backend in plan.spec.backends else "sim"
    t0 = time.perf_counter()
    ref = ppnn.run(plan, imgs, args.seed, backend=ref_backend)
    t_in = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = wire.run(plan, imgs, args.seed, backend=args.backend, timeout=args.timeout,
                   link=args.link)
    net_how = res.extra["link"]  # shaped links (ppnn.wire.links)
    t_all = time.perf_counter() - t0
    w = res.extra["wire"]
    same = (np.array_equal(ref.logits, res.logits)
            and ref.ledger.messages == res.ledger.messages)
    df = summary_frame(w)
    df.loc[len(df)] = ["seconds (ledger: in process; wire: go to last result)",
                       round(t_in, 4), None, round(w["seconds"], 4), None, None]
    who = {"delphi_tabula": "the client, the server and the dealer as processes",
           "delphi_gc": "the client, the server and the dealer as processes",
           "swann_cs": "the client, the server and the dealer as processes",
           "swann_2s": "the client, server1, server2 and the dealer as processes",
           "gazelle_gc": "the client and the server as processes",
           "gala_gc": "the client and the server as processes",
           "she": "the client and the server as processes"}.get(
        args.family, "P0, P1, P2 and the dealer as 4 processes")
    where = ("over loopback TCP (not shaped)" if not args.link else
             f"on {net_how['link']}; {net_how['how']}; latency: {net_how['latency']}")
    print(f"{plan.spec.name} on {net.name}, {len(imgs)} image(s), seed {args.seed}, backend "
          f"{args.backend} (in-process run: {ref_backend}): {who} {where}; framing: 12-byte "
          f"header per message")
    print(df.to_string(index=False))
    print(f"logits and ledger equal the in-process run: {'yes' if same else 'NO'}; "
          f"predictions {res.predictions.tolist()}; whole wire run with process start-up "
          f"{t_all:.2f} s")
    if args.link:
        from ppnn.core.netmodel import project
        from ppnn.wire.links import parse_link

        proj = project(res.ledger, parse_link(args.link).network).total_s
        print(f"projected online time (core.netmodel) {proj:.4f} s; measured {w['seconds']:.4f} s"
              f" (ratio {w['seconds'] / proj:.2f}; one run, the machine may be busy)")
    if args.csv:
        from ppnn.wire.timing import write_csv

        write_csv(df, args.csv)  # atomic: a temporary name, then rename
        print(f"written to {args.csv}")
    return 0 if same else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ppnn", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("families", help="list the protocol families")
    c = sub.add_parser("compare", help="an ONNX model through every protocol family")
    c.add_argument("model", help="path to an .onnx file")
    c.add_argument("--families", nargs="+", metavar="KEY",
                   help="family keys (default: all; see `python -m ppnn families`)")
    c.add_argument("--images", type=int, default=None,
                   help="test images for accuracy (default 200; with --dataset random the "
                   "run images only)")
    c.add_argument("--runs", type=int, default=1,
                   help="images run through each protocol (default 1)")
    c.add_argument("--calib", type=int, default=500,
                   help="training images used to calibrate fixed-point scales (default 500)")
    c.add_argument("--dataset", choices=("mnist", "fashion", "cifar10", "random"),
                   default=None, help="images for calibration, runs and accuracy (default: "
                   "mnist for 1x28x28 inputs, else random uniform images of the input shape; "
                   "cifar10 from $PPNN_CIFAR10)")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--full", action="store_true",
                   help="measure unit costs with more repetitions (slower, steadier)")
    c.add_argument("--out", help="output folder (default build/compare/<model name>)")
    c.add_argument("--workers", type=int, help="run the families on a local Dask cluster")
    c.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="run the families on a running Dask cluster")
    wp = sub.add_parser("wire", help="a network in wire mode: the parties as processes "
                        "over loopback TCP")
    from ppnn.wire.falcon import WIRE_FAMILIES

    wp.add_argument("family", help=", ".join(WIRE_FAMILIES))
    wp.add_argument("model", help="a zoo network name or a path to an .onnx file")
    wp.add_argument("--images", type=int, default=1, help="test images (default 1)")
    wp.add_argument("--seed", type=int, default=0)
    wp.add_argument("--backend", choices=("sim", "real"), default="sim",
                    help="sim (default), or real crypto across processes where the family "
                    "has it (ppnn.wire.REAL_WIRE_FAMILIES): the secret key stays in the "
                    "client's process")
    wp.add_argument("--timeout", type=float, default=None,
                    help="seconds a process waits for a message (default 30; the family's "
                    "own with --backend real, e.g. 600 for SHE on tfhe-rs)")
    wp.add_argument("--csv", help="also write the table to this CSV file")
    wp.add_argument("--link", help="shaped links: lan, wan or LATENCY_MS,MBPS (one-way ms, "
                    "megabytes/s per process uplink); needs root (namespaces, tc), else "
                    "plain loopback, said in the output")
    args = ap.parse_args(argv)
    if args.command == "families":
        return _families(args)
    if args.command == "wire":
        if args.images < 1:
            ap.error("--images must be >= 1")
        if args.timeout is not None and not args.timeout > 0:
            ap.error("--timeout must be > 0")
        if args.link is not None:
            from ppnn.wire.links import parse_link

            try:
                parse_link(args.link)
            except ValueError as e:
                ap.error(f"--{e}")
        return _wire(args)
    for name in ("images", "runs", "calib"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            ap.error(f"--{name} must be >= 1")
    return _compare(args)


if __name__ == "__main__":
    sys.exit(main())
