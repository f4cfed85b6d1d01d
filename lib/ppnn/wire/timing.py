"""Measured vs projected: wire-mode runs on shaped links against :mod:`ppnn.core.netmodel`.

For a family and a network (a zoo name, or a compiled plan such as a user's ONNX model),
:func:`measure` runs the same images in process (the compute the papers' tables add to
their projections), in wire mode on plain loopback, on :data:`~ppnn.wire.links.BASE` (the
shaped runs' own stack with the shaping taken away) and on each shaped link (LAN and WAN as
:data:`ppnn.core.netmodel.LAN` / ``WAN`` define them), ``repeats`` times each, and keeps the
medians.

:func:`table` gives, per network: ledger and wire bytes, ledger rounds and the measured round
trips (the causal depth on the wire, and the latency-equivalent count: extra wall time over
the base run per one-way latency), and beside the measured median three models: the tables'
projection, the network term alone, and the calibrated model::

    T = base + max(k * rounds * latency + S / bandwidth,
                   max(0, D / bandwidth - t_D) + k * (1 + r_D) * latency)

with ``k`` fitted on a separate calibration run (:func:`calibrate_latency`), ``S`` the
parties' path, ``D`` the dealer's material, ``t_D`` the dealer's own time in the base run and
``r_D`` the online rounds booked after its last message (:func:`dealer_tail_rounds`).
``netmodel.project`` itself is not changed. What the rows say about a link comes from
``result.extra["link"]``.

Main names: :func:`measure`, :func:`table`, :func:`calibrate_latency`,
:func:`dealer_tail_rounds`, :func:`error_summary`, :func:`write_csv`, :data:`MODELS`.

See also
--------
docs/time-model.md : the projection, the three models and what each term means.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np

from ppnn.core import netmodel

from .framing import HEADER_BYTES
from .links import BASE, Link, parse_link

__all__ = ["measure", "calibrate_latency", "table", "error_summary", "write_csv", "MODELS",
           "dealer_tail_rounds"]

#: the zoo networks of the table (MiniONN and LeNet as the zoo names them)
MODELS = ("minionn_mnist", "falcon_lenet")


def images_for(family: str, images: int = 1) -> int:
    """The images a run of ``family`` takes: ``images`` rounded up to a multiple of the
    family's images per run (SwaNN's two servers classify in pairs)."""
    from ppnn.protocols.api import family as family_of

    per = family_of(family).spec.images_per_run
    return -(-int(images) // per) * per


def _plan(family: str, model: str, images: int):
    from ppnn import data, nn
    from ppnn.protocols import api

    net, params = nn.zoo.get(model), nn.pretrained(model, quick=True, seed=0)
    x, _, xt, _ = data.load_mnist()
    plan = api.compile(family, net, params, calib=np.asarray(x[:256]))
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


def _offline_bytes(ledger) -> tuple[float, float]:
    """The booked bytes of every class but online, framing included, that a wire run sends
    and the online-only projection leaves out: ``(busiest party's, dealer's)`` -- a party's
    go out on its own uplink with its online messages (SwaNN's OT extension, Delphi's
    counted HE), the dealer's material on the dealer's uplink, beside the parties' rounds."""
    per: dict[str, float] = {}
    for m in ledger.messages:
        if m.phase != "online":
            per[m.sender] = per.get(m.sender, 0) + -(-m.bits // 8) + HEADER_BYTES
    dealer = per.pop(ledger.DEALER, 0.0)
    return max(per.values(), default=0.0), dealer


def dealer_tail_rounds(ledger) -> int:
    """``r_D``: the online rounds the ledger books after the dealer's last message (0 when
    the dealer sends nothing) -- the rounds that wait for the dealer's material to arrive."""
    msgs = ledger.messages
    last = max((i for i, m in enumerate(msgs) if m.sender == ledger.DEALER), default=None)
    if last is None:
        return 0
    return len({m.round for m in msgs[last + 1:] if m.phase == "online"})


def measure(model: str, family: str = "falcon_sh", links=("lan", "wan"), *, repeats: int = 3,
            images: int = 1, seed: int = 0, timeout: float = 60.0, plan=None,
            x=None) -> dict:
    """Run ``model`` in process and in wire mode on loopback and on each of ``links``,
    ``repeats`` times each (an int, or a dict giving ``"loopback"`` and each link its count);
    returns the medians and the counts (see the module docstring).

    ``model`` names a zoo network (compiled here with MNIST calibration images), or, with
    ``plan`` and ``x`` given, is only the label of that plan (e.g. a user's ONNX model)."""
    from ppnn import wire
    from ppnn.protocols.api import family as family_of

    per_link = dict(repeats) if isinstance(repeats, dict) else None
    counts = list(per_link.values()) if per_link is not None else [repeats]
    if not counts or not all(isinstance(r, int) and not isinstance(r, bool) and r >= 1
                             for r in counts):
        raise ValueError(f"repeats must be an int >= 1 or a dict of link -> int >= 1, got "
                         f"{repeats!r}")

    def times(key) -> int:  # runs of one link ("loopback", or the link as given)
        if per_link is None:
            return repeats
        if key not in per_link:
            raise ValueError(f"repeats gives no count for {key!r}: {sorted(per_link)}")
        return per_link[key]

    if (plan is None) != (x is None):
        raise ValueError("plan and x must be given together (or neither)")
    if plan is None:
        plan, x = _plan(family, model, images_for(family, images))
    elif plan.family != family:
        raise ValueError(f"family {family!r} does not match the plan's {plan.family!r}")
    comp = []
    for _ in range(times("loopback")):
        t0 = time.perf_counter()
        ref = family_of(plan.family).run(plan, x, seed)  # in process
        comp.append(time.perf_counter() - t0)
    out = {"model": model, "family": family, "images": len(x), "repeats": times("loopback"),
           "compute_s": statistics.median(comp), "ledger": ref.ledger, "runs": {}}
    rounds = ref.ledger.rounds("online")
    # the schedule: loopback runs, then each link's runs; the base runs (the shaped stack
    # with no latency and no bandwidth limit: the model's base) alternate with the first
    # link's, so a change of the machine's load over time hits both alike
    n_base = 0
    if links:
        n_base = times("base") if per_link is None or "base" in per_link else times("loopback")
    schedule = [None] * times("loopback")
    for i, link in enumerate(links):
        runs = [link] * times(link)
        schedule += _interleave([BASE] * n_base, runs) if i == 0 else runs
    walls: dict = {}
    dealer_walls: list = []  # the dealer's own time in the base runs (t_D of the model)
    last: dict = {}
    for link in schedule:
        # a party may wait through many rounds between two of its messages (SwaNN two-server:
        # the client waits while the servers run ~1100 rounds): the receive timeout grows with
        # the run's rounds x latency
        lat = 0.0 if link is None else parse_link(link).latency_s
        wait = timeout + 4 * rounds * lat
        res = wire.run(plan, x, seed, timeout=wait, deadline=max(600.0, 10 * wait), link=link)
        if not np.array_equal(res.logits, ref.logits):
            raise RuntimeError(f"{model} on {link}: wire logits differ from in-process")
        key = "loopback" if link is None else ("base" if link is BASE else parse_link(link).name)
        walls.setdefault(key, []).append(res.extra["wire"]["seconds"])
        if link is BASE and "dealer" in res.extra["wire"]["party seconds"]:
            dealer_walls.append(res.extra["wire"]["party seconds"]["dealer"])
        last[key] = res
    for link in (None, *links):
        key = "loopback" if link is None else parse_link(link).name
        out["runs"][key] = {"link": None if link is None else parse_link(link),
                            "wall_s": statistics.median(walls[key]), "walls": walls[key],
                            "wire": last[key].extra["wire"],
                            "shaping": last[key].extra["link"]}
    if "base" in walls:
        out["base"] = {"wall_s": statistics.median(walls["base"]), "walls": walls["base"],
                       "shaped": last["base"].extra["link"]["shaped"],
                       "dealer_s": statistics.median(dealer_walls) if dealer_walls else 0.0}
    return out


def _interleave(a: list, b: list) -> list:
    """``a[0], b[0], a[1], b[1], ...``, then the rest of the longer list."""
    out: list = []
    for i in range(max(len(a), len(b))):
        out += a[i:i + 1] + b[i:i + 1]
    return out


def calibrate_latency(link="20,100", *, n: int = 1000, repeats: int = 5) -> dict:
    """``k``: one-way latencies per ledger round, from Falcon ReLU on ``n`` elements over
    ``link`` minus the same run on the base stack (:data:`~ppnn.wire.links.BASE`): the
    fastest of ``repeats`` runs of each. Minima, not medians: the other processes on a
    shared machine's cores only ever add time to a run, and the base runs spread by as much
    as the signal (12 rounds x 20 ms), so medians are unstable where minima are not."""
    from .falcon import relu_program, run_program
    from .links import shaped

    lk = parse_link(link)
    x = {"a": np.random.default_rng(0).integers(0, 1 << 32, n, dtype=np.uint64)}
    walls: dict[str, list[float]] = {"base": [], "link": []}
    how = ""
    for key, arg in (("base", BASE), ("link", lk)):
        for _ in range(repeats):
            with shaped(arg) as sh:
                r = run_program(relu_program, x, 0)
            walls[key].append(r["wire"]["seconds"])
            how = sh.describe()["latency"] if arg is lk else how
    rounds = r["wire"]["ledger rounds"]
    extra = min(walls["link"]) - min(walls["base"])
    k = extra / (rounds * lk.latency_s) if lk.latency_s > 0 and rounds else 1.0
    return {"k": k, "link": str(lk), "rounds": rounds, "latency": how, "walls": walls}


def _pct(model: float, measured: float):
    return round(100 * (model - measured) / measured, 1) if measured > 0 else None


def table(measured: list[dict], k: float):
    """The measured-vs-projected table (a DataFrame, one row per family, model and network).

    Three models of the time, each beside the measured median:

    * ``projected s (tables)``: what the papers' tables project -- the in-process compute
      plus :func:`ppnn.core.netmodel.project` (rounds x latency + the busiest sender's bytes /
      bandwidth, online only);
    * ``network s``: the network's share alone -- measured as the run's wall time minus the
      same run's on the base stack (:data:`~ppnn.wire.links.BASE`; plain loopback where no
      base was measured), projected by ``netmodel.project`` -- which is what the network
      model claims to predict;
    * ``calibrated s``: the same run's base wall time (compute, framing and per-message
      cost as deployed) + the longer of the parties' path (``k`` x rounds x latency, ``k``
      from :func:`calibrate_latency`, a separate run, + the parties' bytes of every class /
      bandwidth) and the dealer's (what its material's transfer takes beyond the dealer's own
      time in the base run, then a latency and the rounds after its last message): module
      docstring. ``dealer s (base)`` gives that time.
    """
    import pandas as pd

    rows = []
    for m in measured:
        led = m["ledger"]
        loop = m["runs"]["loopback"]["wall_s"]
        # the calibrated model's base: the shaped stack without shaping (BASE), where measured
        base = m["base"]["wall_s"] if "base" in m else loop
        party_off, dealer = _offline_bytes(led)
        s_parties = _online_bytes_per_round(led) + party_off
        t_dealer = m["base"].get("dealer_s", 0.0) if "base" in m else 0.0
        r_dealer = dealer_tail_rounds(led)
        for key, run in m["runs"].items():
            w, lk = run["wire"], run["link"]
            wire_total = sum(c["wire bytes"] for c in w["classes"].values())
            wall = run["wall_s"]
            row = {
                "family": m["family"], "model": m["model"], "images": m["images"],
                "network": key,
                "link": run["shaping"]["link"], "shaping": run["shaping"]["how"],
                "latency by": run["shaping"]["latency"],
                "ledger bytes online": led.total_bytes("online"),
                "wire bytes online": w["classes"]["online"]["wire bytes"],
                "ledger bytes all": sum(msg.bits for msg in led.messages) / 8,
                "wire bytes all": wire_total,
                "ledger rounds": w["ledger rounds"], "measured depth": w["measured rounds"],
                "compute in process s": round(m["compute_s"], 4),
                "measured s (median)": round(wall, 4), "runs": len(run["walls"]),
                "loopback s (median)": round(loop, 4),
                "base s (median)": round(base, 4) if "base" in m else None,
                "dealer bytes": dealer,
                "dealer s (base)": round(t_dealer, 4) if "base" in m and dealer else None,
            }
            if lk is not None:
                comm = netmodel.project(led, lk.network).total_s
                lat = lk.latency_s
                dealer_path = (max(0.0, dealer / lk.bandwidth_Bps - t_dealer)
                               + k * (1 + r_dealer) * lat) if dealer else 0.0
                model_s = base + max(k * w["ledger rounds"] * lat + s_parties / lk.bandwidth_Bps,
                                     dealer_path)
                row.update({
                    "latency-equivalent rounds": round((wall - base) / lat, 1) if lat else None,
                    "projected s (tables)": round(m["compute_s"] + comm, 4),
                    "tables error %": _pct(m["compute_s"] + comm, wall),
                    "network s measured": round(wall - base, 4),
                    "network s projected": round(comm, 4),
                    "network error %": _pct(comm, wall - base),
                    "calibrated s": round(model_s, 4),
                    "calibrated error %": _pct(model_s, wall),
                    "k": round(k, 3),
                })
            rows.append(row)
    return pd.DataFrame(rows, dtype=object)


def error_summary(df):
    """Per family and network: the largest absolute error (%) of each model over the
    models measured -- what the paper tables' projected rows quote. Takes :func:`table`'s
    frame or the same read back from CSV (text cells); an error that could not be computed
    (a network term measured <= 0) is left out of its maximum, which is NaN only when no
    model gave one."""
    import pandas as pd

    shaped_rows = df[df["network"] != "loopback"]
    cols = ("tables error %", "network error %", "calibrated error %")
    out = []
    for (fam, net), g in shaped_rows.groupby(["family", "network"], sort=False):
        out.append({"family": fam, "network": net, "models": ", ".join(g["model"]),
                    **{f"max |{c}|": pd.to_numeric(g[c], errors="coerce").abs().max()
                       for c in cols}})
    return pd.DataFrame(out)


def write_csv(df, path) -> Path:
    """Write ``df`` to ``path`` atomically (:func:`ppnn.paths.atomic_write`: a temporary
    name in the same folder, then rename), so a reader never sees half a file."""
    from ppnn.paths import atomic_write

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return atomic_write(path, df.to_csv(index=False))


def links_of(value) -> Link:  # pragma: no cover - convenience for notebooks
    return parse_link(value)
