"""Wire-mode benchmark: Falcon's parties as four processes, on loopback and on a shaped LAN.

Cases (semi-honest ``falcon_sh``; ``--malicious`` switches to ``falcon_mal``):

* ``relu`` -- Falcon ReLU (Algorithm 3) on 2^20 ring elements (``--quick``: 2^14), shared by
  the dealer, opened at the end;
* ``lenet`` -- private inference of one MNIST image through LeNet (``falcon_lenet``).

Each case runs twice: with the dealer's material streamed while the parties compute (the
default of wire mode), and ``offline_first`` -- every party reads all of it after the setup
round, then its online phase begins, timed from the first party's start to the last
party's result (``online seconds``): the online phase the C++ reference's wall time
measures, which runs no offline phase at all.

Each case runs on plain loopback and on a shaped LAN (``--link``, default ``lan``: Falcon
§5.1 as ``core.netmodel.LAN``: 0.1 ms one-way (half the 0.2 ms ping), 625 MB/s per process
uplink; namespaces, veth, tbf, see ``ppnn.wire.links``; without root the "shaped" rows say
they ran on loopback). For each it gives the online bytes on the wire (ledger bytes + the
12-byte frame header per message), the bytes of every class (dealer material, setup,
inputs), the ledger's online rounds and the measured causal depth, the wall time from
"go" to the last result, the median of ``--repeats`` runs (the machine is shared: read
medians), and what the processes spent: CPU seconds of the slowest party and of the dealer
(user + system; offline first, also the slowest party's CPU seconds and the most minor page
faults of a party in the online phase alone), and the largest peak memory of a process. Writes
``figures/falcon/bench_wire.csv`` (atomically) and prints it.

Run::

    .venv/bin/python benchmarks/bench_wire.py [--quick] [--repeats 3] [--link lan]

The comparison with the C++ reference (falcon-public) is described in ``benchmarks/README.md``
("Wire mode vs falcon-public"). With ``--cpp BUILD [BUILD ...]`` (root; builds made as the
README says) this script also races them: per case and repeat, each build on the same shaped
link (``falcon_cpp_lan.py``) and then ppnn offline first, alternated, and writes the medians
and ppnn's online time over each build's wall time to ``figures/falcon/bench_wire_vs_cpp.csv``.

With ``--split`` it instead takes LeNet's online phase apart (offline first, on ``--link``,
``PPNN_WIRE_SPLIT``, :mod:`ppnn.wire.split`): each party's online CPU, the part spent in the
wire path (choke point, ledger booking, reshare and settle, packing, framing, socket calls,
the dealer's material from the stream, garbage) and the rest, the protocol's own steps. Then
a *ring* of three processes on plain loopback TCP replays the run's shape without Falcon:
``rounds`` rounds, each burning a fixed CPU time and passing a 16-byte message to the next
process. With each party's whole online CPU per round it checks that the ring reproduces the
measured online time (three processes on two cores: a round costs about twice a party's
CPU); with the protocol's own CPU per round it gives the online time **if the wire path
cost nothing** -- the floor of a party that runs this library's protocol steps. With
``--cpp BUILD ...`` each build's LeNet runs on the same link before each ppnn run, and the
row gives both ratios to it. Writes ``figures/falcon/bench_wire_split.csv``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ppnn import paths, wire  # noqa: E402
from ppnn.wire.falcon import relu_program, run_program  # noqa: E402
from ppnn.wire.links import shaped  # noqa: E402
from ppnn.wire.timing import _plan  # noqa: E402


def _row(case: str, family: str, network: str, how: str, summaries: list[dict],
         offline_first: bool) -> dict:
    w = summaries[-1]
    c = w["classes"]
    return {"case": case, "family": family, "network": network, "shaping": how,
            "dealer's material": "all before the online phase" if offline_first
            else "streamed during the run",
            "online wire MB": c["online"]["wire bytes"] / 1e6,
            "online ledger MB": c["online"]["ledger bytes"] / 1e6,
            "all classes wire MB": sum(v["wire bytes"] for v in c.values()) / 1e6,
            "online frames": c["online"]["frames"],
            "ledger rounds": w["ledger rounds"], "measured depth": w["measured rounds"],
            "seconds (median)": statistics.median(s["seconds"] for s in summaries),
            "online seconds (median)": statistics.median(s["online seconds"]
                                                         for s in summaries)
            if offline_first else None,
            "party cpu s (median of the slowest)": statistics.median(
                max(s["party cpu s"][p] for p in ("P0", "P1", "P2")) for s in summaries),
            "dealer cpu s (median)": statistics.median(s["party cpu s"]["dealer"]
                                                       for s in summaries),
            "online cpu s (median of the slowest party)": statistics.median(
                max(s["party online cpu s"].values()) for s in summaries)
            if offline_first else None,
            "online page faults (median of the most)": statistics.median(
                max(s["party online page faults"].values()) for s in summaries)
            if offline_first else None,
            "peak MB per process (max)": max(max(s["party max rss MB"].values())
                                             for s in summaries),
            "runs": len(summaries)}


def relu_case(n: int, malicious: bool, link, repeats: int, offline_first: bool) -> dict:
    x = {"a": np.random.default_rng(0).integers(0, 1 << 32, n, dtype=np.uint64)}
    runs = []
    with shaped(link) as sh:
        for _ in range(repeats):
            runs.append(run_program(relu_program, x, 0, malicious=malicious, timeout=120,
                                    deadline=1200, offline_first=offline_first)["wire"])
    how = sh.describe()
    return _row(f"relu 2^{int(np.log2(n))}", "falcon_mal" if malicious else "falcon_sh",
                how["link"], f"{how['how']}; latency: {how['latency']}", runs, offline_first)


def lenet_case(malicious: bool, link, repeats: int, offline_first: bool) -> dict:
    family = "falcon_mal" if malicious else "falcon_sh"
    plan, x = _plan(family, "falcon_lenet", 1)
    runs, res = [], None
    for _ in range(repeats):
        res = wire.run(plan, x, 0, timeout=120, deadline=1200, link=link,
                       offline_first=offline_first)
        runs.append(res.extra["wire"])
    how = res.extra["link"]
    return _row("lenet 1 image", family, how["link"], f"{how['how']}; latency: "
                f"{how['latency']}", runs, offline_first)


def _cpp_median(build: Path, walls: list) -> float:
    """The median of the wall times a C++ build printed (its runs that printed none left
    out; none at all is an error)."""
    walls = [w for w in walls if w is not None]
    if not walls:
        raise SystemExit(f"{build}: no wall time printed (is the benchmark hook in?)")
    return statistics.median(walls)


def race(builds: list, malicious: bool, link: str, repeats: int) -> pd.DataFrame:
    """ppnn (offline first, ``link``) against each C++ build on the same link, alternated per
    repeat; one row per case and build: the medians and their ratio."""
    from falcon_cpp_lan import run_once  # benchmarks/, next to this script

    security = "Malicious" if malicious else "Semi-honest"
    family = "falcon_mal" if malicious else "falcon_sh"
    rows = []
    for case, bench in (("relu 2^20", "ReLU"), ("lenet 1 image", "LeNet")):
        cpp = {b: [] for b in builds}
        ours = []
        for _ in range(repeats):
            for b in builds:
                cpp[b].append(run_once(b, bench, security, link, 600.0)["wall s"])
            row = (relu_case(1 << 20, malicious, link, 1, True) if bench == "ReLU"
                   else lenet_case(malicious, link, 1, True))
            ours.append(row["online seconds (median)"])
        for b in builds:
            c = _cpp_median(b, cpp[b])
            rows.append({"case": case, "family": family, "link": link, "C++ build": b.name,
                         "C++ wall s (median)": c,
                         "ppnn online s (median)": statistics.median(ours),
                         "ppnn / C++": statistics.median(ours) / c, "runs": repeats})
            print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def _ring_party(rounds: int, burn: float, out_sock, in_sock, ctl) -> None:
    import time

    clock = time.process_time
    ctl.recv_bytes()  # go
    t0 = time.perf_counter()
    msg = bytes(16)
    for _ in range(rounds):
        end = clock() + burn
        while clock() < end:
            pass
        out_sock.sendall(msg)
        got = 0
        while got < 16:
            got += len(in_sock.recv(16 - got))
    ctl.send((t0, time.perf_counter()))


def ring(rounds: int, burn: float) -> float:
    """Wall seconds of ``rounds`` rounds of three processes on loopback TCP, each burning
    ``burn`` CPU seconds per round and then passing 16 bytes on (P_i to P_{i-1}, as Falcon's
    reshare): from the first process's start to the last one's end."""
    import multiprocessing as mp
    import socket

    ctx = mp.get_context("fork")
    links = [socket.socketpair() for _ in range(3)]  # links[i]: P_i -> P_{i-1}
    procs, ctls = [], []
    for i in range(3):
        a, b = ctx.Pipe()
        p = ctx.Process(target=_ring_party, args=(rounds, burn, links[i][0],
                                                  links[(i + 1) % 3][1], b))
        p.start()
        procs.append(p)
        ctls.append(a)
    for c in ctls:
        c.send_bytes(b"go")
    times = [c.recv() for c in ctls]
    for p in procs:
        p.join()
    for a, b in links:
        a.close()
        b.close()
    return max(t[1] for t in times) - min(t[0] for t in times)


def split_case(malicious: bool, link, repeats: int, builds: list) -> pd.DataFrame:
    """LeNet's online phase taken apart per party (module docstring), and the ring; with
    ``builds``, each C++ build's LeNet on the same link before each ppnn run (alternated)."""
    from ppnn.wire import split

    family = "falcon_mal" if malicious else "falcon_sh"
    plan, x = _plan(family, "falcon_lenet", 1)
    runs, cpp = [], {b: [] for b in builds}
    if builds:
        from falcon_cpp_lan import run_once  # benchmarks/, next to this script
    os.environ[split.ENV] = "1"  # the processes of the run inherit it
    try:
        for _ in range(repeats):
            for b in builds:
                cpp[b].append(run_once(b, "LeNet", "Malicious" if malicious else "Semi-honest",
                                       link, 600.0)["wall s"])
            res = wire.run(plan, x, 0, timeout=120, deadline=1200, link=link,
                           offline_first=True)
            runs.append(res.extra["wire"])
    finally:
        del os.environ[split.ENV]
    rounds = runs[-1]["ledger rounds"]
    med = statistics.median
    online = med(w["online seconds"] for w in runs)
    cpu = med(statistics.mean(w["party online cpu s"].values()) for w in runs)
    path = med(statistics.mean(w["party online wire path cpu s"].values()) for w in runs)
    own = med(statistics.mean(w["party online cpu s"][p] - w["party online wire path cpu s"][p]
                              for p in w["party online cpu s"]) for w in runs)
    ring_all = med(ring(rounds, cpu / rounds) for _ in range(repeats))
    ring_own = med(ring(rounds, own / rounds) for _ in range(repeats))
    ring_none = med(ring(rounds, 0.0) for _ in range(repeats))
    how = res.extra["link"]
    row = {
        "case": "lenet 1 image", "family": family, "link": how["link"],
        "shaping": f"{how['how']}; latency: {how['latency']}", "ledger rounds": rounds,
        "online s (median)": online, "party online cpu s": cpu,
        "wire path cpu s": path, "protocol's own cpu s": own,
        "wire path share": path / cpu,
        "ring s, whole party cpu": ring_all, "ring / measured": ring_all / online,
        "ring s, protocol's own cpu (wire path free)": ring_own,
        "ring s, no cpu": ring_none, "runs": repeats}
    for b in builds:
        row[f"C++ {b.name} wall s (median)"] = c = _cpp_median(b, cpp[b])
        row[f"online / C++ {b.name}"] = online / c
        row[f"ring, wire path free / C++ {b.name}"] = ring_own / c
    return pd.DataFrame([row])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="ReLU on 2^14, one run each")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--link", default="lan", help="the shaped link (lan, wan, MS,MBPS)")
    ap.add_argument("--malicious", action="store_true", help="falcon_mal instead of falcon_sh")
    ap.add_argument("--split", action="store_true",
                    help="LeNet's online CPU: wire path vs the protocol's own, and the ring")
    ap.add_argument("--cpp", nargs="+", type=Path, default=[], metavar="BUILD",
                    help="falcon-public builds to race on the same link (root)")
    args = ap.parse_args()
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")
    for b in args.cpp:
        if not (b / "Falcon.out").is_file():
            ap.error(f"--cpp: no Falcon.out in {b}")
    if args.split and args.quick:
        ap.error("--split runs LeNet: it takes no --quick")
    if args.cpp and (args.quick or os.geteuid() != 0):
        ap.error("--cpp races the C++ hook's fixed sizes (ReLU 2^20) on a shaped link: "
                 "it needs root and cannot run with --quick")
    n, reps = (1 << 14, 1) if args.quick else (1 << 20, args.repeats)
    if args.split:
        df = split_case(args.malicious, args.link, reps, [b.resolve() for b in args.cpp])
        out = paths.figures_dir("falcon") / "bench_wire_split.csv"
        paths.atomic_write(out, df.to_csv(index=False, float_format="%.6g"))
        print(df.T.to_string(header=False))
        print(f"written to {out}")
        return
    rows = []
    for link in (None, args.link):
        for offline_first in (False, True):
            rows.append(relu_case(n, args.malicious, link, reps, offline_first))
            print(rows[-1], flush=True)
        for offline_first in (False, True):
            rows.append(lenet_case(args.malicious, link, reps, offline_first))
            print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    out = paths.figures_dir("falcon") / "bench_wire.csv"
    paths.atomic_write(out, df.to_csv(index=False, float_format="%.6g"))
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(df.to_string(index=False))
    print(f"written to {out}")
    if args.cpp:
        df = race([b.resolve() for b in args.cpp], args.malicious, args.link, reps)
        out = paths.figures_dir("falcon") / "bench_wire_vs_cpp.csv"
        paths.atomic_write(out, df.to_csv(index=False, float_format="%.6g"))
        with pd.option_context("display.width", 200, "display.max_columns", 20):
            print(df.to_string(index=False))
        print(f"written to {out}")


if __name__ == "__main__":
    main()
