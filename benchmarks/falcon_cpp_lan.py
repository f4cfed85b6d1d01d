"""Run a build of the C++ Falcon (falcon-public) on the same shaped link as ``bench_wire.py``.

The fair race of ``benchmarks/README.md`` ("Wire mode vs falcon-public"): the reference's three
processes start each in the network namespace of its party, created by
:func:`ppnn.wire.links.shaped` (veth pairs on a bridge, ``tbf`` on every uplink), so both
implementations cross the same kernel path and bandwidth limit. The one difference: where the
kernel has no ``sch_netem`` (the machines here), ppnn's receiving transport holds each frame
for the one-way latency and the C++ sockets are not held, which favours the reference by one
latency per round (0.1 ms on the LAN). Needs root; it is not a dependency of anything.

Run (``BUILD``: a falcon-public checkout built as the README says, with the benchmark hook)::

    .venv/bin/python benchmarks/falcon_cpp_lan.py BUILD ReLU Semi-honest [--link lan] [--repeats 3]

Prints, per run, the wall time P0 prints and each party's user and system CPU seconds, minor
page faults and peak memory (GNU ``time``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ppnn.wire.links import shaped

#: the key files of party i: its own, then the ones it shares with the next and the previous
KEYS = {0: ("keyA", "keyAB", "keyAC"), 1: ("keyB", "keyBC", "keyAB"),
        2: ("keyC", "keyAC", "keyBC")}
TIME_FORMAT = "cpu %U %S faults %R maxkb %M"


def run_once(build: Path, bench: str, security: str, link: str, timeout: float) -> dict:
    """One run of the three C++ parties in the shaped namespaces; P0's wall time and every
    party's GNU ``time`` line."""
    with shaped(link) as sh, tempfile.TemporaryDirectory() as tmp:
        if not sh.shaped:
            raise SystemExit(f"not shaped ({sh.how}): run as root with ip and tc")
        # one address per line, P0 to P2 (the reference reads a line per party)
        ips = Path(tmp) / "IP_shaped"
        ips.write_text("\n".join(sh.hosts[f"P{i}"] for i in (0, 1, 2, 0)) + "\n")
        logs, procs = {}, {}
        for i in (2, 1, 0):
            logs[i] = Path(tmp) / f"p{i}.log"
            cmd = [*sh.prefix(f"P{i}"), shutil.which("time") or "/usr/bin/time", "-f",
                   TIME_FORMAT, "./Falcon.out", str(i), str(ips),
                   *(f"files/{k}" for k in KEYS[i]), bench, "MNIST", security]
            procs[i] = subprocess.Popen(cmd, cwd=build, stdout=logs[i].open("w"),
                                        stderr=subprocess.STDOUT)
        try:
            for i in (0, 1, 2):
                procs[i].wait(timeout=timeout)
        finally:
            for p in procs.values():
                if p.poll() is None:
                    p.kill()
                    p.wait()
        text = {i: logs[i].read_text().splitlines() for i in (0, 1, 2)}
    wall = next((line.split(":")[-1].split()[0] for line in text[0] if "Wall Clock" in line),
                None)
    return {"wall s": float(wall) if wall else None,
            **{f"P{i}": next((s for s in reversed(text[i]) if s.startswith("cpu ")), "?")
               for i in (0, 1, 2)}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", type=Path, help="a built falcon-public checkout")
    ap.add_argument("bench", help="ReLU or LeNet (the hook of the README)")
    ap.add_argument("security", choices=("Semi-honest", "Malicious"))
    ap.add_argument("--link", default="lan", help="lan, wan or MS,MBPS (ppnn.wire.links)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error(f"--repeats must be >= 1, got {args.repeats}")
    if not (args.build / "Falcon.out").is_file():
        ap.error(f"build: no Falcon.out in {args.build}")
    if os.geteuid() != 0:
        ap.error("shaped links need root")
    for _ in range(args.repeats):
        print(run_once(args.build.resolve(), args.bench, args.security, args.link,
                       args.timeout), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
