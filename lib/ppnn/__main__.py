"""Command line of PPNN Lab.

    python -m ppnn families                        # the protocol families and what runs for real
    python -m ppnn compare MODEL.onnx              # your network through every family
    python -m ppnn compare MODEL.onnx --families falcon_sh she --images 500 --dataset fashion
    python -m ppnn wire falcon_sh minionn_mnist    # the parties as processes over loopback TCP

``wire`` runs a zoo network (or an ONNX file) in wire mode, each party of the family a
process (:mod:`ppnn.wire`), and in process with the same seed, and prints ledger bytes vs
wire bytes, ledger rounds vs measured rounds and both wall times (``--csv PATH`` also writes
the table). ``--backend real`` runs real cryptography across the processes for the families
of :data:`ppnn.wire.REAL_WIRE_FAMILIES`, the secret key in the client's process only.

``compare`` loads an ONNX model (:func:`ppnn.nn.from_onnx`: Conv, Gemm / MatMul + Add, Relu,
MaxPool, AveragePool, GlobalAveragePool, BatchNormalization, Flatten / Reshape, and residual
blocks -- the Add of two branches) and runs it through the chosen families on the same
images (MNIST for 1x28x28 inputs, else random images of the input shape unless
``--dataset``): counted communication and rounds, measured or projected compute, LAN/WAN
latency from one time model, accuracy of each family's integer model, each protocol run
checked against it. It prints the table and each family's compile / run / count seconds,
and writes CSV, Markdown and three figures (communication vs latency, the layer-type and the
per-layer-kind breakdown) under ``build/compare/<model>/``. A family that cannot run the
network is reported with the layer and the reason, and the others go on.

A user's error (a bad argument, a file that is not a model ppnn imports, a network no family
can run, a scheduler that does not answer) prints ``error: <what>: <why>`` on stderr and
exits with status 2, without a traceback (:mod:`ppnn.errors`); anything else is a bug and
keeps its traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import re
import sys
import time
from pathlib import Path

__all__ = ["main"]

#: test images of the datasets (MNIST and Fashion-MNIST: 10,000 each; 60,000 training)
TEST_IMAGES, TRAIN_IMAGES = 10_000, 60_000
#: local Dask workers ``--workers`` may start
MAX_WORKERS = 256
#: seconds ``--scheduler`` waits for the scheduler to answer
SCHEDULER_TIMEOUT_S = 10
_SCHEDULER = re.compile(r"(tcp|tls|ws|wss|ucx)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d+)/?")


class _Refused(Exception):
    """A user's error, said as ``error: <what>: <why>`` (exit status 2)."""

    def __init__(self, what: str, why: str):
        super().__init__(f"{what}: {why}")
        self.what, self.why = what, why


@contextlib.contextmanager
def _about(what: str, also: tuple = ()):
    """Inside the block a user's error (:data:`ppnn.errors.USER_ERRORS`, and ``also``: e.g.
    ``OSError`` where the block writes a file the user named) is refused as about ``what``."""
    from ppnn.errors import USER_ERRORS

    try:
        yield
    except (*USER_ERRORS, *also) as e:
        why = str(e)
        if why.startswith(f"{what}: "):
            why = why[len(what) + 2:]
        raise _Refused(what, why) from None


class _Parser(argparse.ArgumentParser):
    """argparse with the command line's error format (``error: <what>: <why>``, status 2)."""

    def error(self, message: str):
        self.print_usage(sys.stderr)
        self.exit(2, f"error: {message}\n")


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
    if args.workers is not None:
        from ppnn import distributed

        with distributed.cluster(workers=args.workers) as client:
            yield client
    elif args.scheduler is not None:
        import dask

        from ppnn import distributed

        with _about(f"--scheduler {args.scheduler}", also=(OSError,)), dask.config.set(
                {"distributed.comm.timeouts.connect": f"{SCHEDULER_TIMEOUT_S}s"}):
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
    registry = api.families()
    keys = args.families or list(registry)
    unknown = [k for k in keys if k not in registry]
    if unknown:
        raise _Refused("--families", f"unknown famil{'y' if len(unknown) == 1 else 'ies'} "
                       f"{', '.join(map(repr, unknown))}; choose from {', '.join(registry)}")
    with _about(f"ONNX file {model}"):
        net, params = nn.from_onnx(model)
    dataset = args.dataset or ("mnist" if net.input_shape == (1, 28, 28) else "random")
    images = args.images or (200 if dataset != "random" else args.runs)
    if args.runs > images:
        raise _Refused("--runs", f"must be an int in [1, {images:,}] (no more runs than "
                       f"images), got {args.runs:,}")
    with _about(f"--dataset {dataset}", also=(OSError, data.DatasetUnavailable)):
        w = compare.make_workload(not args.full, args.seed, n_run=min(args.runs, images),
                                  n_acc=images, n_calib=args.calib, net=net, params=params,
                                  dataset=dataset)
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
        raise _Refused(f"ONNX file {model}", "no family could run this network (the reasons "
                       "are above)")
    from ppnn.core import WAN

    df = compare.comparison_frame(results, w)
    cmp = compare.Comparison(w, units, results, df, compare.breakdown_frame(results, WAN),
                             compare.decision_guide(df), secs)
    out = Path(args.out) if args.out else paths.build_dir() / "compare" / model.stem
    with _about(f"--out {out}", also=(OSError,)):
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

    from ppnn import data, nn, runner, wire
    from ppnn.protocols import api
    from ppnn.wire.summary import summary_frame

    if args.family not in wire.WIRE_FAMILIES:
        raise _Refused(f"family {args.family!r}", "transport='tcp' is implemented for "
                       f"{', '.join(wire.WIRE_FAMILIES)}")
    if args.backend != "sim" and args.family not in wire.REAL_WIRE_FAMILIES:
        raise _Refused(f"--backend {args.backend}", "crosses processes for "
                       f"{', '.join(wire.REAL_WIRE_FAMILIES)} only; {args.family} runs "
                       "--backend sim")
    if args.model.endswith(".onnx"):
        with _about(f"ONNX file {args.model}"):
            net, params = nn.from_onnx(Path(args.model))
    else:
        if args.model not in nn.zoo.names():
            raise _Refused(f"model {args.model!r}", "neither an .onnx file nor a zoo network "
                           f"({', '.join(nn.zoo.names())})")
        net, params = nn.zoo.get(args.model), nn.pretrained(args.model, quick=True, seed=0)
    with _about("dataset mnist", also=(OSError,)):
        x, _, xt, _ = data.load_mnist()
    if net.input_shape != tuple(xt.shape[1:]):
        raise _Refused(f"model {args.model}", f"takes inputs of shape {net.input_shape}; "
                       f"MNIST images have shape {tuple(xt.shape[1:])}")
    with _about(args.family):
        plan = api.compile(args.family, net, params, calib=np.asarray(x[:256]))
    from ppnn.wire.timing import images_for

    n_img = images_for(args.family, args.images)
    if n_img != args.images:
        per = api.family(args.family).spec.images_per_run
        print(f"note: {args.family} classifies {per} images per run: running {n_img}")
    imgs = np.asarray(xt[:n_img])
    # the in-process run to compare with: the same backend where the family has it in process
    ref_backend = args.backend if args.backend in plan.spec.backends else "sim"
    t0 = time.perf_counter()
    ref = runner.run(plan, imgs, args.seed, backend=ref_backend)
    t_in = time.perf_counter() - t0
    t0 = time.perf_counter()
    try:
        res = wire.run(plan, imgs, args.seed, backend=args.backend, timeout=args.timeout,
                       link=args.link)
    except wire.WireTimeout as e:  # a timeout the user chose too short is theirs to fix
        if args.timeout is None:
            raise
        raise _Refused(f"--timeout {args.timeout}", str(e)) from None
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

        with _about(f"--csv {args.csv}", also=(OSError,)):
            write_csv(df, args.csv)  # atomic: a temporary name, then rename
        print(f"written to {args.csv}")
    return 0 if same else 1


def _check_args(args) -> None:
    """Every argument's range, before anything is loaded or started."""
    def at_least(name: str, lo: int, hi: int | None = None) -> None:
        v = getattr(args, name.lstrip("-").replace("-", "_"))
        if v is not None and (v < lo or (hi is not None and v > hi)):
            allowed = f"an int in [{lo:,}, {hi:,}]" if hi is not None else f"an int >= {lo}"
            raise _Refused(name, f"must be {allowed}, got {v:,}")

    at_least("--seed", 0)
    if args.command == "compare":
        at_least("--images", 1, TEST_IMAGES)
        at_least("--runs", 1, args.images if args.images is not None else TEST_IMAGES)
        at_least("--calib", 16, TRAIN_IMAGES)
        at_least("--workers", 1, MAX_WORKERS)
        if args.workers is not None and args.scheduler is not None:
            raise _Refused("--workers", "give --workers (a local cluster) or --scheduler (a "
                           "running one), not both")
        if args.scheduler is not None and not _SCHEDULER.fullmatch(args.scheduler):
            raise _Refused("--scheduler", "must be an address like tcp://HOST:PORT (tcp, tls, "
                           f"ws, wss or ucx), got {args.scheduler!r}")
        if args.scheduler is not None:
            port = int(_SCHEDULER.fullmatch(args.scheduler).group(3))
            if not 1 <= port <= 65535:
                raise _Refused("--scheduler", f"port must be in [1, 65535], got {port}")
        if args.out is not None and Path(args.out).exists() and not Path(args.out).is_dir():
            raise _Refused("--out", f"{args.out} exists and is not a folder")
        if not Path(args.model).is_file():
            why = "is a folder, not a file" if Path(args.model).is_dir() else "no such file"
            raise _Refused(args.model, f"{why} (an .onnx model)")
    if args.command == "wire":
        at_least("--images", 1, TEST_IMAGES)
        if args.timeout is not None and not (math.isfinite(args.timeout) and args.timeout > 0):
            raise _Refused("--timeout", f"must be a finite number of seconds > 0, got "
                           f"{args.timeout}")
        if args.link is not None:
            from ppnn.wire.links import parse_link

            try:
                parse_link(args.link)
            except ValueError as e:
                raise _Refused("--link", str(e)) from None
        if args.csv is not None:
            csv, parent = Path(args.csv), Path(args.csv).parent
            if csv.is_dir() or not parent.is_dir():
                raise _Refused("--csv", f"{args.csv} is a folder" if csv.is_dir() else
                               f"the folder {parent} does not exist")
        if args.model.endswith(".onnx") and not Path(args.model).is_file():
            why = "is a folder, not a file" if Path(args.model).is_dir() else "no such file"
            raise _Refused(args.model, f"{why} (an .onnx model)")


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status (2: the user's error, said on stderr)."""
    ap = _parser()
    args = ap.parse_args(argv)
    try:
        if args.command == "families":
            return _families(args)
        _check_args(args)
        return _wire(args) if args.command == "wire" else _compare(args)
    except _Refused as e:
        print(f"error: {e.what}: {e.why}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="python -m ppnn", description=__doc__,
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
    from ppnn.wire import WIRE_FAMILIES

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
    return ap


if __name__ == "__main__":
    sys.exit(main())
