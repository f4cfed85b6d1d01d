"""Measured vs projected: wire-mode runs on shaped links against :mod:`ppnn.core.netmodel`.

For a family (``falcon_sh``) and a zoo network, :func:`measure` runs one image

* in process (the simulator; its wall time is the *compute* time: every process of a wire
  run computes all three components too, SPMD with garbage, so it does the same work),
* in wire mode on plain loopback, and on each shaped link (:mod:`.links`; LAN and WAN as
  :data:`ppnn.core.netmodel.LAN` / ``WAN`` define them, Falcon §5.1),

``repeats`` times each, and keeps the medians (the machine is shared: single timings are
noisy). :func:`table` gives, per network: ledger bytes and wire bytes (online and all
classes), ledger rounds and measured round trips (the causal depth on the wire, and the
*latency-equivalent* count: extra wall time over the loopback run per one-way latency),
measured wall time and the projection of :func:`ppnn.core.netmodel.project` (unchanged, the
one the papers' tables use), their ratio, and a **calibrated model** with its error.

Calibrated model (a separate model; ``netmodel.project`` is not changed)::

    T = alpha * compute + k * rounds * latency + S / bandwidth

* ``compute``: the in-process wall time of the same run; ``alpha``: wire-on-loopback time
  over in-process time, fitted on the loopback rows (in-sample: 4 processes share the
  machine's cores and each computes all three components, plus framing and per-message cost
  on loopback);
* ``k``: one-way latencies per ledger round, fitted on a *separate* calibration run (Falcon
  ReLU on 1000 elements over a 20 ms link): the SPMD program sends and receives a round's
  messages in program order, so a party may wait for one message of a round before it sends
  its own, and a round can cost more than one latency (the causal depth on the wire does not
  see this: it counts rounds at round boundaries);
* ``S``: the busiest sender's bytes per round (as the projection) plus the 12-byte frame
  header per message, plus the dealer's offline material (sent during the run on its uplink),
  which the online-only projection leaves out.

A second variant replaces ``alpha * compute`` by the measured wall time of the same run on
plain loopback (compute, framing and per-message cost as they are in the deployment; only
the network terms are modelled).

Latency is emulated (netem where present, else the receiving transport holds each frame);
bandwidth is the kernel's ``tbf``. What the rows say comes from ``result.extra["link"]``.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np

from ppnn.core import netmodel

from .framing import HEADER_BYTES
from .links import Link, parse_link

__all__ = ["measure", "calibrate_latency", "table", "write_csv", "MODELS"]

#: the zoo networks of the table (MiniONN and LeNet as the zoo names them)
MODELS = ("minionn_mnist", "falcon_lenet")


def _plan(family: str, model: str, images: int):
    import ppnn
    from ppnn import data, nn

    net, params = nn.zoo.get(model), nn.pretrained(model, quick=True, seed=0)
    x, _, xt, _ = data.load_mnist()
    plan = ppnn.compile(family, net, params, calib=np.asarray(x[:256]))
    return plan, np.asarray(xt[:images])


def _online_bytes_per_round(ledger) -> float:
    """Bytes the busiest sender sends, summed over the online rounds, framing included."""
    total = 0.0
    by_round: dict[int, dict] = {}
    for m in ledger.messages:
        if m.phase != "online":
            continue
        d = by_round.setdefault(m.round, {})
        d[m.sender] = d.get(m.sender, 0) + -(-m.bits // 8) + HEADER_BYTES
    for d in by_round.values():
        total += max(d.values())
    return total


def measure(model: str, family: str = "falcon_sh", links=("lan", "wan"), *, repeats: int = 3,
            images: int = 1, seed: int = 0, timeout: float = 60.0) -> dict:
    """Run ``model`` in process and in wire mode on loopback and on each of ``links``,
    ``repeats`` times each; returns the medians and the counts (see the module docstring)."""
    import ppnn
    from ppnn import wire

    if not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be an int >= 1, got {repeats!r}")
    plan, x = _plan(family, model, images)
    comp = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        ref = ppnn.run(plan, x, seed)
        comp.append(time.perf_counter() - t0)
    out = {"model": model, "family": family, "images": images, "repeats": repeats,
           "compute_s": statistics.median(comp), "ledger": ref.ledger, "runs": {}}
    for link in (None, *links):
        walls, res = [], None
        for _ in range(repeats):
            res = wire.run(plan, x, seed, timeout=timeout, link=link)
            if not np.array_equal(res.logits, ref.logits):
                raise RuntimeError(f"{model} on {link}: wire logits differ from in-process")
            walls.append(res.extra["wire"]["seconds"])
        key = "loopback" if link is None else parse_link(link).name
        out["runs"][key] = {"link": None if link is None else parse_link(link),
                            "wall_s": statistics.median(walls), "walls": walls,
                            "wire": res.extra["wire"], "shaping": res.extra["link"]}
    return out


def calibrate_latency(link="20,100", *, n: int = 1000, repeats: int = 3) -> dict:
    """``k``: one-way latencies per ledger round, from Falcon ReLU on ``n`` elements over
    ``link`` minus the same run on loopback (medians of ``repeats``)."""
    from .falcon import relu_program, run_program
    from .links import shaped

    lk = parse_link(link)
    x = {"a": np.random.default_rng(0).integers(0, 1 << 32, n, dtype=np.uint64)}
    walls: dict[str, list[float]] = {"loopback": [], "link": []}
    how = ""
    for key, arg in (("loopback", None), ("link", lk)):
        for _ in range(repeats):
            with shaped(arg) as sh:
                r = run_program(relu_program, x, 0)
            walls[key].append(r["wire"]["seconds"])
            how = sh.describe()["latency"] if arg is not None else how
    rounds = r["wire"]["ledger rounds"]
    extra = statistics.median(walls["link"]) - statistics.median(walls["loopback"])
    k = extra / (rounds * lk.latency_s) if lk.latency_s > 0 and rounds else 1.0
    return {"k": k, "link": str(lk), "rounds": rounds, "latency": how, "walls": walls}


def table(measured: list[dict], k: float):
    """The measured-vs-projected table (a DataFrame, one row per model and network)."""
    import pandas as pd

    alphas = [m["runs"]["loopback"]["wall_s"] / m["compute_s"] for m in measured]
    alpha = statistics.median(alphas)
    rows = []
    for m in measured:
        led = m["ledger"]
        loop = m["runs"]["loopback"]["wall_s"]
        s_online = _online_bytes_per_round(led)
        dealer = sum(-(-msg.bits // 8) + HEADER_BYTES for msg in led.messages
                     if msg.sender == led.DEALER)
        for key, run in m["runs"].items():
            w, lk = run["wire"], run["link"]
            wire_total = sum(c["wire bytes"] for c in w["classes"].values())
            lat = lk.latency_s if lk else 0.0
            proj = netmodel.project(led, lk.network).total_s if lk else float("nan")
            model_s = (alpha * m["compute_s"] + k * w["ledger rounds"] * lat
                       + ((s_online + dealer) / lk.bandwidth_Bps if lk else 0.0))
            wall = run["wall_s"]
            # second variant: the same run's measured loopback time replaces alpha * compute
            loop_model = model_s - alpha * m["compute_s"] + loop
            rows.append({
                "family": m["family"], "model": m["model"], "network": key,
                "link": run["shaping"]["link"], "shaping": run["shaping"]["how"],
                "latency by": run["shaping"]["latency"],
                "ledger bytes online": led.total_bytes("online"),
                "wire bytes online": w["classes"]["online"]["wire bytes"],
                "ledger bytes all": sum(msg.bits for msg in led.messages) / 8,
                "wire bytes all": wire_total,
                "ledger rounds": w["ledger rounds"], "measured depth": w["measured rounds"],
                "latency-equivalent rounds": round((wall - loop) / lat, 1) if lat else None,
                "compute in process s": round(m["compute_s"], 4),
                "measured s (median)": round(wall, 4),
                "runs": m["repeats"],
                "projected s (netmodel)": round(proj, 4) if lk else None,
                "measured / projected": round(wall / proj, 3) if lk else None,
                "projection error %": round(100 * (proj - wall) / wall, 1) if lk else None,
                "calibrated s": round(model_s, 4),
                "calibrated error %": round(100 * (model_s - wall) / wall, 1),
                "calibrated on loopback s": round(loop_model, 4),
                "calibrated on loopback error %": round(100 * (loop_model - wall) / wall, 1),
                "alpha": round(alpha, 3), "k": round(k, 3),
            })
    return pd.DataFrame(rows, dtype=object)


def write_csv(df, path) -> Path:
    """Write ``df`` to ``path`` atomically (:func:`ppnn.paths.atomic_write`: a temporary
    name in the same folder, then rename), so a reader never sees half a file."""
    from ppnn.paths import atomic_write

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return atomic_write(path, df.to_csv(index=False))


def links_of(value) -> Link:  # pragma: no cover - convenience for notebooks
    return parse_link(value)
