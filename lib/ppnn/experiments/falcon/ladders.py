"""Falcon's headline claims (published abstract, §1, §7): ours, and a ladder for each short one.

Ours compares Falcon's counted online costs -- the frames of
:func:`.runs.network_cost_rows` behind Tables 2-5 (semi-honest, as SecureNN is) -- with
SecureNN's published closed forms (:mod:`ppnn.protocols.securenn`) on the same zoo networks,
Networks A-C of Falcon's comparison with prior work. A time is the network model's projection
(Falcon §5.1's LAN / WAN) of counted rounds and the busiest sender's bytes, compute left out
on both sides. A ladder (:mod:`..ladder`) then puts the paper's assumptions in place of ours
one at a time, each step recomputed: SecureNN's and ABY3's costs as their papers report them
(:data:`REPORTED_CSV`), then Falcon's DReLU as its public C++ code sends it
(:data:`.tables.CPP_RELU_CSV`). ABY3 is in none of the sources as a closed form: its claims
are not reproducible here.

Main names: :func:`comm_frame`, :func:`time_frame`, :func:`speed_ladder`,
:func:`comm_ladder`, :func:`build`, :func:`headlines`, :class:`Headlines`, :data:`COMPARED`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppnn import paths, report
from ppnn.core import LAN, WAN, project_counts
from ppnn.nn import zoo
from ppnn.protocols import securenn as S
from ppnn.protocols.falcon import costs as C

from .. import ladder as lad
from .. import paper_vs_ours as pvo
from .tables import PAPER, RELU_STEPS, relu_bits_cpp

__all__ = ["COMPARED", "TRAIN_BATCH", "REPORTED_CSV", "SENDER_SHARE", "reported",
           "drelu_bits", "comm_frame", "time_frame", "speed_ladder", "comm_ladder", "Headlines",
           "build", "headlines", "save_waterfalls"]

#: the networks of Falcon's comparison with prior work (§5.2, §5.3: Tables 2 and 4)
COMPARED = ("falcon_network_a", "falcon_network_b", "falcon_network_c")
#: the batch of one training iteration (Table 4's 'Batch Size, Epochs' row; SecureNN's Table 3)
TRAIN_BATCH = 128
#: SecureNN's (and ABY3's, as SecureNN quotes them) reported costs, with their sources
REPORTED_CSV = "data/securenn_reported.csv"
#: the busiest sender's share of the total bytes: Falcon's three parties send alike;
#: SecureNN's P0 and P1 exchange the masked operands while P2 only assists
SENDER_SHARE = {"Falcon": 1 / 3, "SecureNN": 1 / 2}
#: SecureNN's Table 3 times are for 15 epochs of MNIST's 60,000 training images
SECURENN_ITERATIONS = 15 * 60_000 / TRAIN_BATCH
SETTINGS = (LAN, WAN)
PUBLISHED = "published abstract (PoPETs 2021)"
WHITEPAPER = "SecureNN whitepaper (snwagh/securenn-public Whitepaper.pdf)"


def reported(path=None) -> pd.DataFrame:
    """SecureNN's and ABY3's reported costs (``data/securenn_reported.csv``): ``system``,
    ``network`` (SecureNN's letter), ``zoo`` (the same network in the zoo), ``quantity``,
    ``setting``, ``batch``, ``value``, ``unit``, ``source``."""
    df = pd.read_csv(path or paths.root() / REPORTED_CSV, keep_default_na=False)
    df["value"] = df["value"].astype(float)
    return df


def _lookup(rep: pd.DataFrame, system: str, name: str, quantity: str, setting: str = ""
            ) -> float:
    hit = rep[(rep["system"] == system) & (rep["zoo"] == name) & (rep["quantity"] == quantity)
              & (rep["setting"] == setting)]
    if hit.empty:
        return np.nan
    scale = {"s": 1.0, "h": 3600.0 / SECURENN_ITERATIONS, "MB": 8e6}[hit["unit"].iloc[0]]
    return float(hit["value"].iloc[0]) * scale


def drelu_bits() -> dict[str, float]:
    """Semi-honest online bits of one DReLU and its bit injection (the opened ``b xor c``):
    ours (the closed forms, equal to the ledger) and falcon-public's (the model of its
    messages, ``data/falcon_cpp_relu.csv``)."""
    cpp = relu_bits_cpp()
    cpp = cpp[(cpp["mode"] == "semi-honest") & cpp["step"].isin(RELU_STEPS[:5])]
    ours = C.drelu_cost(1).bits + C.bit_injection_cost(1).bits
    return {"ours": float(ours), "C++": float(cpp["C++"].sum())}


def _falcon(counted: pd.DataFrame, name: str) -> tuple[int, float]:
    r = counted[(counted["network"] == name) & (counted["threat_model"] == "semi-honest")]
    if r.empty:
        raise ValueError(f"no semi-honest row of {name} in the counted frame")
    return int(r["rounds"].iloc[0]), float(r["comm_MB"].iloc[0]) * 8e6


def comm_frame(counted: pd.DataFrame, train: bool = False, rep: pd.DataFrame | None = None
               ) -> pd.DataFrame:
    """Per network of :data:`COMPARED`, online bits of one inference (or one training iteration
    of :data:`TRAIN_BATCH`): Falcon's counted (``counted``: the LAN rows of
    :func:`.runs.network_cost_rows`), SecureNN's closed forms, SecureNN's and ABY3's reported
    (NaN where they report none) and Falcon's with falcon-public's DReLU."""
    rep = reported() if rep is None else rep
    batch = TRAIN_BATCH if train else 1
    per = drelu_bits()
    rows = []
    for name in COMPARED:
        net = zoo.get(name)
        tot = net.totals()
        drelus = batch * int(tot["relus"] + tot["comparisons"])
        _, bits = _falcon(counted, name)
        q = "training_comm" if train else "inference_comm"
        rows.append({"network": name, "falcon": bits,
                     "securenn": float(S.network_cost(net, batch, train).bits),
                     "securenn_reported": _lookup(rep, "SecureNN", name, q),
                     "aby3_reported": _lookup(rep, "ABY3", name, q),
                     "falcon_cpp_drelu": bits - drelus * (per["ours"] - per["C++"]),
                     "drelus": drelus})
    return pd.DataFrame(rows)


def _seconds(rounds, bits, share: float, net) -> float:
    return project_counts(int(rounds), float(bits) / 8 * share, net).total_s


def time_frame(counted: pd.DataFrame, train: bool = False, rep: pd.DataFrame | None = None
               ) -> pd.DataFrame:
    """Per network of :data:`COMPARED` and setting (LAN, WAN), the projected seconds of one
    inference (or training iteration): Falcon's from counted rounds and bits, SecureNN's from
    its closed forms, both by the network model without compute; and SecureNN's reported time
    (per iteration: its Table 3 hours over 15 epochs of 60,000 / 128 iterations)."""
    rep = reported() if rep is None else rep
    batch = TRAIN_BATCH if train else 1
    rows = []
    for name in COMPARED:
        rounds, bits = _falcon(counted, name)
        snn = S.network_cost(zoo.get(name), batch, train)
        for netw in SETTINGS:
            rows.append({
                "network": name, "setting": netw.name,
                "falcon_s": _seconds(rounds, bits, SENDER_SHARE["Falcon"], netw),
                "securenn_s": _seconds(snn.rounds, snn.bits, SENDER_SHARE["SecureNN"], netw),
                "securenn_reported_s": _lookup(rep, "SecureNN", name,
                                               "training_time" if train else "inference_time",
                                               netw.name)})
    return pd.DataFrame(rows)


# -- the ladders ------------------------------------------------------------------------------
AGG = {"mean": np.mean, "min": np.min, "max": np.max}
_TIME_OURS = ("SecureNN projected from its closed forms (whitepaper Table 2) by Falcon §5.1's "
              "network model, compute left out as for Falcon")
_COMM_OURS = "SecureNN's closed forms (whitepaper Tables 1-2) on the same zoo networks"


def speed_ladder(row: str, metric: str, target: float, times: pd.DataFrame, agg: str
                 ) -> lad.Ladder:
    """The ladder of a speed-up over SecureNN (``agg`` over the rows of ``times``, frames of
    :func:`time_frame` on the pairs the claim covers): ours, then SecureNN's times as its
    whitepaper reports them."""
    f = AGG[agg]
    ours = float(f(times["securenn_s"] / times["falcon_s"]))
    ladder = lad.Ladder(PAPER, "Headlines", row, metric, ours, target)
    ladder.replace("baseline implementation", _TIME_OURS,
                   "SecureNN's times as its whitepaper reports them (its C++ code on EC2 "
                   "c4.8xlarge, compute included)",
                   float(f(times["securenn_reported_s"] / times["falcon_s"])),
                   f"{WHITEPAPER} Tables 3 and 7")
    return ladder


def comm_ladder(row: str, metric: str, target: float, comm: pd.DataFrame, agg: str
                ) -> lad.Ladder:
    """The ladder of a communication factor (``agg`` over networks, frames of
    :func:`comm_frame`): ours (SecureNN's closed forms over Falcon's counted bits), then
    SecureNN's reported communication where it reports it, ABY3's reported communication as
    a second baseline, then Falcon's DReLU as falcon-public sends it."""
    f = AGG[agg]

    def factors(falcon: str, snn: str, aby3: bool) -> np.ndarray:
        out = [comm[snn] / comm[falcon]]
        if aby3:
            out.append((comm["aby3_reported"] / comm[falcon]).dropna())
        return np.concatenate([np.asarray(x, float) for x in out])

    ladder = lad.Ladder(PAPER, "Headlines", row, metric,
                        float(f(factors("falcon", "securenn", False))), target)
    snn = "securenn"
    if comm["securenn_reported"].notna().any():
        comm = comm.assign(securenn_reported=comm["securenn_reported"].fillna(comm["securenn"]))
        snn = "securenn_reported"
        ladder.replace("baseline implementation", _COMM_OURS,
                       "SecureNN's communication as its whitepaper reports it",
                       float(f(factors("falcon", snn, False))), f"{WHITEPAPER} Table 7")
    aby3 = bool(comm["aby3_reported"].notna().any())
    if aby3:
        ladder.replace("baseline implementation", "SecureNN the only baseline",
                       "ABY3 too ('than either of these'), its communication as SecureNN's "
                       "whitepaper quotes it (Networks A and B)",
                       float(f(factors("falcon", snn, True))), f"{WHITEPAPER} Table 6")
    per = drelu_bits()
    ladder.replace("operation counts",
                   f"our DReLU + bit injection: {per['ours']:g} bits (closed forms = ledger)",
                   f"falcon-public's: {per['C++']:g} bits (its parallel private compare "
                   "sends 1 of 32 positions, Z_p elements as bytes)",
                   float(f(factors("falcon_cpp_drelu", snn, aby3))), "data/falcon_cpp_relu.csv")
    return ladder


@dataclass
class Headlines:
    """Ours for each headline (``ours``: the frame :func:`ppnn.report.headlines` takes), the
    ladders of those short of the paper's magnitude, and the frames they came from."""

    ours: pd.DataFrame
    ladders: list[lad.Ladder]
    comm: dict[str, pd.DataFrame]
    times: dict[str, pd.DataFrame]

    def ladder(self, row: str) -> lad.Ladder:
        """The ladder of the headline ``row``."""
        hits = [x for x in self.ladders if x.row == row]
        if not hits:
            raise KeyError(f"no ladder for headline {row!r}")
        return hits[0]


def _short(target: float, ours: float) -> bool:
    c = report._claim("speedup", "x", f"{target:.6g}", ours)
    return c is not None and c[2] in lad.SHORT


def build(counted_inf: pd.DataFrame, counted_trn: pd.DataFrame) -> Headlines:
    """Ours for every headline of ``data/paper/falcon_headlines.csv`` and the ladders of the
    short ones, from the counted frames of Tables 2-3 (``counted_inf``, batch 1) and 4-5
    (``counted_trn``, batch 128)."""
    rep = reported()
    comm = {"inference": comm_frame(counted_inf, False, rep),
            "training": comm_frame(counted_trn, True, rep)}
    times = {"inference": time_frame(counted_inf, False, rep),
             "training": time_frame(counted_trn, True, rep)}
    # SecureNN trained A and B (= Falcon's A and C), not Chameleon's network (Falcon's B)
    trained = times["training"][times["training"]["securenn_reported_s"].notna()]
    both_times = pd.concat([times["inference"], trained], ignore_index=True)
    both_comm = pd.concat([comm["inference"], comm["training"].assign(
        securenn_reported=np.nan, aby3_reported=np.nan)], ignore_index=True)
    nets = "Networks A-C"
    proj = (f"projected, compute left out: Falcon's counted rounds and bytes "
            f"(figures/falcon/tables%s.csv), SecureNN's closed forms ({S.SOURCE}), "
            "Falcon §5.1's network model")
    specs = [
        ("Private inference vs SecureNN", "speedup_avg", "speed", times["inference"], "mean",
         "projected", f"mean over {nets} x LAN, WAN of SecureNN's time over Falcon's "
         "(semi-honest); " + proj % "2_3_inference_costs"),
        ("Private inference communication vs SecureNN and ABY3 (low end)", "comm_factor",
         "comm", comm["inference"], "min", "counted",
         f"smallest over {nets} of SecureNN's bits ({S.SOURCE}) over Falcon's counted "
         "semi-honest bits (figures/falcon/tables2_3_inference_costs.csv); ABY3: no closed "
         "form here"),
        ("Private inference communication vs SecureNN and ABY3 (high end)", "comm_factor",
         "comm", comm["inference"], "max", "counted",
         f"largest over {nets}, as the low end"),
        ("Private training vs SecureNN", "speedup", "speed", trained, "mean", "projected",
         "mean over Networks A and C (the two SecureNN trained) x LAN, WAN, one iteration of "
         "128; " + proj % "4_5_training_iteration_costs"),
        ("Private training communication (low end)", "comm_factor", "comm", comm["training"],
         "min", "counted", f"smallest over {nets} of SecureNN's bits per training iteration "
         f"of 128 (its Algorithm 12 with Table 2) over Falcon's counted "
         "(figures/falcon/tables4_5_training_iteration_costs.csv); SecureNN the only other "
         "solution modelled"),
        ("Private training communication (high end)", "comm_factor", "comm", comm["training"],
         "max", "counted", f"largest over {nets}, as the low end"),
        ("Performance over prior work (up to)", "speedup_max", "speed", both_times, "max",
         "projected", "largest speed-up over SecureNN (the prior work modelled here) of the "
         "inference and training rows above"),
        ("Communication over prior work (up to)", "comm_factor_max", "comm", both_comm, "max",
         "counted", "largest communication factor over SecureNN of the inference and training "
         "rows above"),
        ("Performance over prior work (conclusion)", "speedup_max", "speed", both_times, "max",
         "projected", "as 'Performance over prior work (up to)'; the paper's §1 says up to an "
         "order of magnitude (erratum '§1 vs §7 (performance over prior work)')"),
    ]
    ref = report.load_paper(PAPER, "headlines").set_index(["row", "metric"])["value"]
    rows, ladders = [], []
    for row, metric, what, frame, agg, kind, note in specs:
        if what == "speed":
            value = float(AGG[agg](frame["securenn_s"] / frame["falcon_s"]))
        else:
            value = float(AGG[agg](frame["securenn"] / frame["falcon"]))
        rows.append((row, metric, value, kind, note))
        target = float(ref[(row, metric)])
        if _short(target, value):
            build_ladder = speed_ladder if what == "speed" else comm_ladder
            ladders.append(build_ladder(row, metric, target, frame, agg))
    for row, why in (
            ("Private inference vs ABY3", "ABY3's protocol complexities are in none of this "
             "repository's sources (SecureNN's whitepaper quotes only its measured times on "
             "Falcon's Networks A and B, Table 6)"),
            ("Private training vs ABY3", "ABY3's training costs are in none of this "
             "repository's sources (SecureNN's whitepaper quotes only its inference)")):
        metric = ref.loc[row].index[0]
        rows.append((row, metric, None, "", f"not reproducible here: {why}"))
    ours = pd.DataFrame(rows, columns=["row", "metric", "value", "kind", "note"])
    return Headlines(ours, ladders, comm, times)


def save_waterfalls(ladders: list[lad.Ladder]) -> None:
    """Every ladder's waterfall, ``figures/falcon/ladders/<slug>.svg`` (for the report; the
    notebook shows the instructive ones with :func:`..paper_vs_ours.show_ladder`)."""
    import matplotlib.pyplot as plt

    from ppnn import plotting

    for x in ladders:
        fig = plotting.waterfall(x)
        plotting.savefig(fig, PAPER, report.ladder_slug(x.key), formats=("svg",),
                         directory=paths.figures_dir(PAPER) / "ladders")
        plt.close(fig)


def headlines(counted_inf: pd.DataFrame, counted_trn: pd.DataFrame, show: bool = True
              ) -> Headlines:
    """:func:`build`, then save the ladders (and their waterfalls) and judge the headlines
    (:func:`..paper_vs_ours.headlines`; the table shown once when ``show``)."""
    h = build(counted_inf, counted_trn)
    pvo.headlines(PAPER, h.ours, h.ladders, show_table=show)
    save_waterfalls(h.ladders)
    return h
