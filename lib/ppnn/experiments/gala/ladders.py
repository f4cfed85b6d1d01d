"""GALA's headline claims and the ladders from our numbers to the paper's.

:func:`headline_values` reads ours for every row of ``data/paper/gala_headlines.csv`` off the
compared tables (the same runs, one code path); :func:`build` makes a
:class:`~ppnn.experiments.ladder.Ladder` for every short claim row of Tables VI, VIII, XI,
XII, Fig. 9 and the headlines, each step recomputed by the time model of the tables
(:func:`~ppnn.protocols.gala.runtime.project_seconds`, :func:`network_seconds`) with one
more of the paper's assumptions: its per-operation times (:func:`paper_unit_costs`, GALA
Table I), its operation counts (Tables VII, IX), its accounting and network, the baseline's
non-linear share. :func:`headlines` is the notebook's one call; :func:`show` draws a ladder.

The ladder of a share of the run time (Table XII) climbs the share's smaller side, the
non-linear share, as the claim rule judges it. Main names: :func:`headlines`,
:func:`build`, :func:`paper_unit_costs`, :func:`kernel_ladder`, :func:`network_ladder`,
:func:`share_ladder`, :func:`fig9_ladder`, :data:`LADDERS`.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from ppnn import report
from ppnn.protocols.gala import costs
from ppnn.protocols.gala.runtime import GALA_LAN, GALA_WAN, network_seconds, network_time
from ppnn.protocols.gala.runtime import project_seconds as _proj

from .. import ladder as lad
from .. import paper_vs_ours as pvo
from . import paper
from .runs import NETWORKS, network_ops

__all__ = ["paper_unit_costs", "headline_values", "kernel_ladder", "network_ladder",
           "share_ladder", "fig9_ladder", "ratio_ladder", "build", "headlines", "show",
           "finding", "LADDERS", "kernel_seconds"]

PAPER = "gala"
#: the ladders built in this process, by key (:func:`show` draws one)
LADDERS: dict[str, lad.Ladder] = {}
_NETS = {"lan": GALA_LAN, "wan": GALA_WAN}
_T1 = "Table I (l. 35-36)"


def _ref(table: str) -> pd.Series:
    return report.load_paper(PAPER, table).set_index(["row", "metric"])["value"].astype(str)


def _num(table: str, row: str, metric: str) -> float:
    return float(_ref(table)[(row, metric)])


# -- the paper's unit costs ----------------------------------------------------------------------
def paper_unit_costs() -> pd.DataFrame:
    """The paper's seconds per operation, a ``unit`` table for
    :func:`~ppnn.protocols.gala.runtime.project_seconds`: Perm, ScMult and Add from Table I's
    GAZELLE row (time / count); a hoisted HstPerm inferred from Table VI's Diagonal rows (its
    LAN time less its Table V ScMults, Adds and one unhoisted rotation, over the remaining
    HstPerm - 1 rotations; the median of the three dimensions); a DecPerm, the rest of an
    unhoisted rotation (Perm - HstPerm). Column ``source`` says which."""
    return _paper_units_table().copy()


@functools.cache
def _paper_units_table() -> pd.DataFrame:
    t1 = _ref("table1")
    per = {op: float(t1[("GAZELLE", f"{m}_time")]) / float(t1[("GAZELLE", f"{m}_count")]) / 1e3
           for op, m in (("Perm", "perm"), ("ScMult", "mult"), ("Add", "add"))}
    t5, t6 = _ref("table5"), _ref("table6")
    hst = []
    for dims in ("1x2048", "2x1024", "16x128"):
        row = f"{dims}; Diagonal[31]"
        h, sc, add = (float(t5[(row, m)]) for m in ("hstperm", "scmult", "add"))
        rest = float(t6[(row, "lan_time")]) / 1e3 - per["Perm"] - sc * per["ScMult"] \
            - add * per["Add"]
        hst.append(rest / (h - 1))
    per["HstPerm"] = float(np.median(hst))
    per["DecPerm"] = per["Perm"] - per["HstPerm"]
    src = {"Perm": _T1, "ScMult": _T1, "Add": _T1,
           "HstPerm": "inferred: Table VI Diagonal LAN times (l. 327-339) less Table V's "
                      "ScMult and Add at Table I's costs",
           "DecPerm": "inferred: Perm - HstPerm"}
    return pd.DataFrame({"seconds": per, "source": src})



def _units_text(unit: pd.DataFrame) -> str:
    s = unit["seconds"] * 1e6
    hst = (f", hoisted HstPerm {s['HstPerm']:.3g} us (inferred from Table VI's Diagonal rows)"
           if "HstPerm" in s else ", no hoisting")
    return (f"Perm {s['Perm']:.3g} us, ScMult {s['ScMult']:.3g} us, Add {s['Add']:.3g} us "
            f"(Perm / ScMult {s['Perm'] / s['ScMult']:.0f}x, Perm / Add "
            f"{s['Perm'] / s['Add']:.0f}x){hst}")


def _ours_units(unit: pd.DataFrame) -> str:
    return f"SEAL BFV N=4096 measured here: {_units_text(unit)}"


def _paper_units(pu: pd.DataFrame) -> str:
    return f"GALA Table I's per-operation times: {_units_text(pu)}"


def _climb(ladder: lad.Ladder, steps) -> lad.Ladder:
    """Add ``steps`` (``(assumption, ours_as, paper_as, value, source[, erratum])``) in order,
    stopping at the first that reaches the paper's value."""
    for step in steps:
        if ladder.reached:
            break
        ladder.replace(*step)
    return ladder


# -- Tables VI / VIII: one layer -----------------------------------------------------------------
def kernel_seconds(counts: dict, unit: pd.DataFrame, ras_s: float = 0.0,
                   comm_s: float = 0.0) -> float:
    """One layer's projected seconds: counted operations x ``unit`` costs, GALA's plaintext
    share-RaS and the messages' time (the model of Tables VI / VIII)."""
    return _proj(counts, unit) + ras_s + comm_s


def _counts(x: pd.Series) -> dict[str, int]:
    return {op: int(x[op]) for op in costs.HE_OPS}


def _paper_conv_counts(dims: str, method: str, ours: dict) -> dict[str, int]:
    """Table VII's printed counts of ``method`` in our convention (Perm = output rotations;
    DecPerm / HstPerm = the input's): its DecPerm and HstPerm columns count every output
    Perm in both (Table VII's accounting), the input's HstPerms are ours."""
    t7 = _ref("table7")
    m = method.lower()
    dec, hst = (int(float(t7[(dims, f"{m}_{op}")])) for op in ("decperm", "hstperm"))
    perm = hst - ours["HstPerm"]
    return {"Perm": perm, "DecPerm": dec - perm, "HstPerm": ours["HstPerm"],
            "ScMult": int(float(t7[(dims, f"{m}_scmult")])),
            "Add": int(float(t7[(dims, f"{m}_add")]))}


def kernel_ladder(row: str, metric: str, runs: pd.DataFrame, target: float,
                  key: tuple[str, str, str] | None = None, delphi: bool = False
                  ) -> lad.Ladder:
    """The ladder of one Table VI / VIII speed-up of GALA over a baseline (``row`` =
    ``"<dims>; <method>"``, ``metric`` = ``lan_speedup`` / ``wan_speedup``), from our runs
    (:func:`~.runs.measure_matvec` / :func:`~.runs.measure_conv` frames): the paper's unit
    costs; the client's share-RaS only (matrix-vector); no transfer on the LAN / the paper's
    message accounting on the WAN; Table VII's printed counts where they differ from ours
    (an erratum). ``delphi``: the baseline is DELPHI (the 700x headline), whose printed
    Table VI time replaces our SEAL GAZELLE kernel at the end. ``key``: ``(table, row,
    metric)`` of the claim (default: the table's claim row)."""
    dims, meth = [s.strip() for s in row.rsplit(";", 1)]
    meth = meth.split("[")[0]
    tag = metric.split("_")[0]
    net = _NETS[tag]
    base = runs[(runs.dims == dims) & (runs.method == ("GAZELLE" if delphi else meth))].iloc[0]
    gala = runs[(runs.dims == dims) & (runs.method == "GALA")].iloc[0]
    ct_bits = gala["comm_MB"] * 8e6 / (gala["ct_up"] + gala["ct_down"])
    comm = {k: network_time(int(x["ct_up"]), int(x["ct_down"]), ct_bits, net)
            for k, x in (("b", base), ("g", gala))}
    ras = float(gala.get("ras_s", 0.0) or 0.0) if "@" not in dims else 0.0
    cb, cg = _counts(base), _counts(gala)
    pu = paper_unit_costs()
    label = report.load_paper(PAPER, "table6" if "@" not in dims else "table8")["table"]
    key = key or (label.iloc[0], row, f"{metric} (claim)")
    ladder = lad.Ladder(PAPER, *key, float(base[f"{tag}_speedup"]), float(target))
    state = {"unit": pu, "ras": ras, "cb": comm["b"], "cg": comm["g"], "gb": cb, "gg": cg,
             "base_s": None}

    def value() -> float:
        b = state["base_s"] if state["base_s"] is not None else kernel_seconds(
            state["gb"], state["unit"], 0.0, state["cb"])
        return b / kernel_seconds(state["gg"], state["unit"], state["ras"], state["cg"])

    steps = []

    def step(assumption, ours_as, paper_as, source, erratum="", **change):
        state.update(change)
        steps.append((assumption, ours_as, paper_as, value(), source, erratum))

    counted = "Table V" if "@" not in dims else "Table VII"
    step("unit costs", _kernels_text(base, gala),
         f"{_paper_units(pu)} x the counted operations (= the paper's {counted})",
         _T1 + "; Table VI (l. 327-339)", unit=pu)
    if ras > 0:
        step("accounting", f"GALA's time includes both parties' plaintext share-RaS "
             f"({1e6 * ras:.3g} us measured)",
             "the client's share-RaS only (its server-side RaS of r is input-independent)",
             "§IV-A1 (l. 287): 'the plaintext computing for final share at the client'",
             ras=ras / 2)
    if tag == "lan":
        step("network model", f"GALA-LAN model: two messages of our SEAL N=4096 ciphertexts "
             f"({1e3 * comm['b']:.3g} / {1e3 * comm['g']:.3g} ms)",
             "inferred: no transfer in the paper's LAN times (Table VI's GAZELLE LAN times "
             "equal its Table V counts x Table I's costs)", "Table VI (l. 329, 335, 341)",
             cb=0.0, cg=0.0)
    else:
        n_in = {k: paper.input_ciphertexts(meth if k == "b" else "GALA", dims)
                for k in ("b", "g")}
        pc = {k: network_time(n_in[k], 0, paper.PAPER_CT_BYTES * 8, net) for k in n_in}
        step("accounting", f"both directions, SEAL N=4096 ciphertexts of "
             f"{ct_bits / 8e3:.3g} KB, on GALA-WAN ({1e3 * comm['b']:.3g} ms)",
             f"the client's input ciphertexts at n = 2048, 60-bit q ({paper.PAPER_CT_BYTES:,} "
             f"B each, as Table VI / VIII's comm column counts them) on GALA-WAN "
             f"({1e3 * pc['b']:.3g} ms)", "§IV (l. 275, 279); Tables VI / VIII comm",
             cb=pc["b"], cg=pc["g"])
    if "@" in dims:
        pb, pg = (_paper_conv_counts(dims, m, c) for m, c in ((meth, cb), ("GALA", cg)))
        if (pb, pg) != (cb, cg):
            where = f"Table VII, {dims.replace('; ', ' / ')}, GALA"
            known = set(report.load_errata(PAPER)["where"])
            step("paper's inconsistency", "our counts follow Table III "
                 f"(GALA Perm {cg['Perm']}, Add {cg['Add']})",
                 f"Table VII's printed counts (GALA Perm {pg['Perm']} + {pg['DecPerm']} input "
                 f"DecPerms, Add {pg['Add']})", "Table VII (l. 356-359)",
                 where if where in known else "", gb=pb, gg=pg)
    if delphi:
        t = _num("table6", f"{dims}; DELPHI[46]", f"{tag}_time") / 1e3
        step("baseline implementation", "DELPHI's linear layer = GAZELLE's algorithm on SEAL "
             "(our kernel), at the costs above", f"DELPHI's own code as the paper measured it "
             f"(Table VI: {1e3 * t:g} ms)", "Table VI (l. 330)", base_s=t)
    return _climb(ladder, steps)


def _kernels_text(base, gala) -> str:
    kind = "measured" if base["kind"] == "measured" else "projected from counts"
    return (f"our kernels on SEAL BFV N=4096 ({kind}; online {1e3 * base['online_s']:.3g} / "
            f"{1e3 * gala['online_s']:.3g} ms, no hoisting: a HstPerm costs a Perm)")


# -- Tables XI / XII: whole networks -------------------------------------------------------------
def _paper_ops(net: str) -> dict[str, dict[str, int]]:
    t9 = _ref("table9")
    names = {"Perm": "perm", "DecPerm": "decperm", "HstPerm": "hstperm", "ScMult": "scmult",
             "Add": "add"}
    return {m: {op: int(float(t9[(net, f"{m.lower()}_{k}")])) for op, k in names.items()}
            for m in ("GAZELLE", "GALA")}


class _Net:
    """A network's projected time, ingredient by ingredient (the model of Tables X-XII)."""

    def __init__(self, t: dict, unit: pd.DataFrame, tag: str):
        self.ops = {m: network_ops(t, m) for m in ("GAZELLE", "GALA")}
        self.unit, self.net = unit, _NETS[tag]
        self.nl = float(t["gc_s"])  # non-linear seconds (same for both)
        self.linear_share = None    # or the paper's linear share (percent) of the baseline
        self.comm_bits = float(t["ct_comm_bits"] + t["gc_comm_bits"])
        self.rounds = int(t["rounds"])
        self.comm_s = None          # or the paper's measured communication time
        #: the linear layers' messages (their part of the linear share, Table XII)
        self.lin_comm = ((t["rounds"] - t["gc_rounds"]) * self.net.latency_s
                         + t["ct_comm_bits"] / 8 / self.net.bandwidth_Bps)

    def linear(self, m: str) -> float:
        return _proj(self.ops[m], self.unit)

    def nonlinear(self) -> float:
        if self.linear_share is None:
            return self.nl
        return self.linear("GAZELLE") * (100 - self.linear_share) / self.linear_share

    def seconds(self, m: str) -> float:
        if self.comm_s is not None:
            return self.linear(m) + self.nonlinear() + self.comm_s
        return network_seconds(self.ops[m], self.unit, self.nonlinear(), self.comm_bits,
                               self.rounds, self.net)

    def speedup(self) -> float:
        return self.seconds("GAZELLE") / self.seconds("GALA")

    def nonlinear_pct(self) -> float:
        """GAZELLE's non-linear share in percent: GC compute and GC traffic."""
        if self.comm_s is not None or self.linear_share is not None:
            raise ValueError("the share ladder replaces counts and unit costs only")
        return 100 - 100 * (self.linear("GAZELLE") + self.lin_comm) / self.seconds("GAZELLE")


def _geometry_text(net: str, t: dict, imagenet: dict | None) -> str:
    p = _paper_ops(net)["GAZELLE"]["ScMult"]
    out = (f"counted on the zoo's {NETWORKS[net]} (CIFAR-10, l. 452): ScMult "
           f"{t['GAZELLE_ScMult']:,}, {t['GAZELLE_ScMult'] / p:.2f}x the paper's")
    if imagenet and net in imagenet:
        out += f"; its ImageNet geometry gives {imagenet[net]['GAZELLE_ScMult'] / p:.2f}x"
    return out


def network_ladder(net: str, metric: str, t: dict, unit: pd.DataFrame, target: float,
                   baseline: str = "GAZELLE", imagenet: dict | None = None,
                   key: tuple[str, str, str] | None = None) -> lad.Ladder:
    """The ladder of GALA's speed-up over ``baseline`` (GAZELLE or CrypTFlow2) on ``net``
    (Table XI, ``metric`` = ``lan_speedup`` / ``wan_speedup``), from our projection ``t``
    (:func:`~.runs.network_totals` of the zoo's CIFAR-10 network, our SEAL GAZELLE kernels
    standing in for CrypTFlow2's, which are GAZELLE's algorithm on SEAL, §I l. 27): the
    paper's Table IX operation counts, its unit costs, the baseline's non-linear share as
    the paper reports it (Table XII), its communication (LAN: Table XI's volume; WAN: the
    paper's WAN - LAN time). ``key``: ``(table, row, metric)`` of the claim (default: Table
    XI's claim row)."""
    tag = metric.split("_")[0]
    m = _Net(t, unit, tag)
    pu = paper_unit_costs()
    row = f"{net}; {baseline}"
    table, krow, kmetric = key or ("Table X" if net == "MLP" else "Table XI", row,
                                   f"{metric} (claim)")
    ladder = lad.Ladder(PAPER, table, krow, kmetric, float(t[f"{tag}_speedup"]), float(target))
    steps = []

    def step(assumption, ours_as, paper_as, source, **change):
        for k, v in change.items():
            setattr(m, k, v)
        steps.append((assumption, ours_as, paper_as, m.speedup(), source))

    table_of = "table10" if net == "MLP" else "table11"
    if net != "MLP":  # the MLP is stated (784-128-128-10): its counts are ours (Table IX)
        pops = _paper_ops(net)
        step("operation counts", _geometry_text(net, t, imagenet),
             f"the paper's Table IX totals (printed; Perm {pops['GAZELLE']['Perm']:,} -> "
             f"{pops['GALA']['Perm']:,}, ScMult {pops['GAZELLE']['ScMult']:,}); no layer "
             "table, and no zoo geometry gives its ScMult", "Table IX (l. 405-437)",
             ops=pops)
    step("unit costs", _ours_units(unit), _paper_units(pu), _T1, unit=pu)
    col = {"GAZELLE": "gazelle", "CrypTFlow2": "cryptflow2"}[baseline]
    if net != "MLP":  # Table XII has no MLP row
        share = float(_num("table12", net, f"linear_pct_{col}"))
        step("baseline implementation",
             f"our half-gates GC ReLU stand-in: {t['gc_elements']:,} activations of our "
             f"network, {t['gc_s']:.3g} s", f"{baseline}'s non-linear share as the paper "
             f"reports it (Table XII: {100 - share:.3g}% of its run time)",
             "Table XII (l. 508-513)", linear_share=share)
    if tag == "lan":
        mb = _num(table_of, row, "comm")
        step("accounting", f"our ciphertexts (SEAL N=4096, both ways) + GC traffic: "
             f"{m.comm_bits / 8e6:.4g} MB on GALA-LAN", f"{baseline}'s communication as "
             f"the paper prints it ({mb:g} MB) on GALA-LAN, the same for GALA (§IV-A, l. 283)",
             "Tables X / XI (l. 446, 461-494)", comm_bits=mb * 8e6)
    else:
        extra = (_num(table_of, row, "wan_time") - _num(table_of, row, "lan_time")) / 1e3
        ours = m.rounds * m.net.latency_s + m.comm_bits / 8 / m.net.bandwidth_Bps
        step("network model", f"GALA-WAN model: {m.rounds} latencies + {m.comm_bits / 8e6:.4g} "
             f"MB at 200 Mbps = {ours:.3g} s", f"the paper's WAN - LAN time of {baseline} "
             f"(Tables X / XI: {extra:.4g} s), the same for GALA (§IV-A, l. 283)",
             "Tables X / XI (l. 446, 461-494)", comm_s=extra)
    return _climb(ladder, steps)


def share_ladder(net: str, t: dict, unit: pd.DataFrame, imagenet: dict | None = None,
                 key: tuple[str, str, str] | None = None) -> lad.Ladder:
    """Table XII's GAZELLE linear share of ``net``, climbed on its smaller side (the
    non-linear share, percent, as the claim rule judges it): the paper's Table IX counts,
    then its unit costs; what is left is the GC ReLU's cost, which the paper does not print
    (neither per ReLU nor the ReLU count of its network)."""
    m = _Net(t, unit, "lan")
    paper_pct = 100 - _num("table12", net, "linear_pct_gazelle")
    ladder = lad.Ladder(PAPER, *(key or ("Table XII", net, "linear_pct_gazelle (claim)")),
                        100 - float(t["linear_pct_gazelle"]), paper_pct,
                        unit="% (non-linear share)")
    pu = paper_unit_costs()
    pops = _paper_ops(net)
    steps = []
    m.ops = pops
    steps.append(("operation counts", _geometry_text(net, t, imagenet),
                  "the paper's Table IX totals (printed)", m.nonlinear_pct(),
                  "Table IX (l. 405-437)"))
    m.unit = pu
    steps.append(("unit costs", _ours_units(unit), _paper_units(pu), m.nonlinear_pct(), _T1))
    return _climb(ladder, steps)


# -- Fig. 9: AlexNet's costliest convolutions ----------------------------------------------------
#: Fig. 9's layers 6 / 8 / 10 read as AlexNet's conv3 / conv4 / conv5 (inferred: the three
#: convolutions after conv1 and conv2, the paper's index counting its non-linear layers too)
FIG9_LAYERS = {"AlexNet; layer 6": "conv3", "AlexNet; layer 8": "conv4",
               "AlexNet; layer 10": "conv5"}


@functools.cache
def _imagenet_alexnet_counts(n: int) -> pd.DataFrame:
    from ppnn.nn import zoo

    return costs.network_counts(zoo.get("alexnet_imagenet"), n_slots=n, run=False)


def fig9_ladder(row: str, ours: float, unit: pd.DataFrame, n: int = 2048) -> lad.Ladder:
    """Fig. 9's 'nearly 3x' on one of AlexNet's costliest GAZELLE convolutions: the
    geometry (the zoo's ImageNet AlexNet, whose conv3-5 have the paper's large channels on
    13x13 maps; inferred, the paper gives no layer table), then the paper's unit costs."""
    from ppnn.nn import zoo

    counts = _imagenet_alexnet_counts(n)
    layer = FIG9_LAYERS[row]
    sub = counts[counts.layer == layer].set_index("method")
    cnt = {m: {op: int(sub.loc[m, op]) for op in costs.HE_OPS} for m in ("GAZELLE", "GALA")}
    node = next(x for x in zoo.get("alexnet_imagenet").leaves() if x.name == layer)
    pu = paper_unit_costs()

    def sp(u):
        return _proj(cnt["GAZELLE"], u) / _proj(cnt["GALA"], u)

    ladder = lad.Ladder(PAPER, "Fig. 9", row, "gala_speedup (claim)", float(ours),
                        _num("fig9", row, "gala_speedup"))
    c_i, h, w = node.in_shape
    return _climb(ladder, [
        ("network geometry", "our three costliest GAZELLE convolutions of the zoo's CIFAR-10 "
         "AlexNet (small maps: c_i <= c_n, kernel grouping saves nothing)",
         f"inferred: {layer} of the zoo's ImageNet AlexNet ({h}x{w}@{c_i}, c_n = "
         f"{int(sub.loc['GALA', 'c_n'])}: GALA Perm {cnt['GALA']['Perm']:,} vs GAZELLE "
         f"{cnt['GAZELLE']['Perm']:,})", sp(unit), "§IV-B (l. 536): layers 6, 8, 10 are "
         "convolutions with large channels"),
        ("unit costs", _ours_units(unit), _paper_units(pu), sp(pu), _T1)])


# -- Table I and the unit-cost headlines ---------------------------------------------------------
def ratio_ladder(key: tuple[str, str, str], ours: float, target: float,
                 steps=(), unit: str = "x") -> lad.Ladder:
    """A ladder of given steps (``(assumption, ours_as, paper_as, value, source)``)."""
    return _climb(lad.Ladder(PAPER, *key, float(ours), float(target), unit=unit), steps)


def _table1_ladders(runs: pd.DataFrame, unit: pd.DataFrame, short: set) -> list[lad.Ladder]:
    from .runs import TABLE1_DIMS, mv_label

    d = mv_label(*TABLE1_DIMS)
    gz, ga = (_counts(runs[(runs.dims == d) & (runs.method == m)].iloc[0])
              for m in ("GAZELLE", "GALA"))
    x = {m: runs[(runs.dims == d) & (runs.method == m)].iloc[0] for m in ("GAZELLE", "GALA")}
    pu = paper_unit_costs()
    hl = report.load_paper(PAPER, "headlines").set_index(["row", "metric"])["value"]
    out = []
    k = ("2x2048 product vs GAZELLE", "speedup")
    if k in short:
        out.append(ratio_ladder(("Headlines", *k), x["GAZELLE"]["online_s"]
                                / x["GALA"]["online_s"], float(hl[k]), [
            ("unit costs", f"our kernels on SEAL BFV N=4096, measured (online "
             f"{1e3 * x['GAZELLE']['online_s']:.3g} / {1e3 * x['GALA']['online_s']:.3g} ms)",
             _paper_units(pu) + f" x our counts ({kernel_seconds(gz, pu) * 1e3:.3g} / "
             f"{kernel_seconds(ga, pu) * 1e3:.3g} ms; printed 2 / 0.2)",
             kernel_seconds(gz, pu) / kernel_seconds(ga, pu), _T1)]))
    k = ("Perm share of GAZELLE's 2x2048 product", "perm_pct_of_time")
    if k in short:
        rest = {op: v for op, v in gz.items() if op not in ("Perm", "HstPerm", "DecPerm")}

        def non_perm(u):
            return 100 * _proj(rest, u) / _proj(gz, u)

        t1 = _ref("table1")
        parts = sum(float(t1[("GAZELLE", f"{m}_time")]) for m in ("perm", "mult", "add"))
        total = float(t1[("GAZELLE", "total_time")])
        printed = 100 - 100 * float(t1[("GAZELLE", "perm_time")]) / total
        out.append(ratio_ladder(("Headlines", *k), non_perm(unit), 100 - float(hl[k]), [
            ("unit costs", _ours_units(unit), _paper_units(pu), non_perm(pu), _T1),
            ("accounting", f"the share of the sum of Table I's parts ({parts:.4g} ms)",
             f"the share of its printed total ({total:g} ms)", printed, _T1)],
            unit="% (non-Perm share)"))
    for k, op in ((("Perm vs Add", "perm_over_add"), "Add"),
                  (("Perm vs ScMult", "perm_over_scmult"), "ScMult")):
        if k in short:
            s, p = unit["seconds"], pu["seconds"]
            out.append(ratio_ladder(("Headlines", *k), s["Perm"] / s[op], float(hl[k]), [
                ("unit costs", _ours_units(unit), _paper_units(pu), p["Perm"] / p[op], _T1)]))
    return out


# -- headlines and the notebook's call -----------------------------------------------------------
def _compared(table: str) -> pd.DataFrame:
    if (PAPER, table) not in pvo.COMPARED:
        raise ValueError(f"GALA {table} was not compared in this process: run its table "
                         "first (ppnn.experiments.gala.tables)")
    return pvo.COMPARED[(PAPER, table)]


def _ours(table: str, row: str, metric: str) -> float:
    df = _compared(table)
    hit = df[(df["row"] == row) & (df["metric"] == metric)]
    if hit.empty:
        raise KeyError(f"{table}: no row ({row!r}, {metric!r})")
    v = pd.to_numeric(hit["ours"].iloc[0], errors="coerce")
    return float(v)


def headline_values() -> pd.DataFrame:
    """Ours for every GALA headline, read off the tables compared in this process (Tables I,
    VI, VIII, XI, XII): ``row, metric, value, kind, note``."""
    recs = []
    t6, t8, t11 = "1x2048; GAZELLE[38]", "16x16@2048; 1x1@512; GAZELLE", "Table XI"
    recs.append(("dot product vs DELPHI and CrypTFlow2 (up to)", "speedup",
                 _ours("table6", t6, "lan_speedup"), "projected",
                 f"Table VI row '{t6}' (LAN): our GAZELLE kernel on SEAL stands for DELPHI's "
                 "and CrypTFlow2's linear layers, GAZELLE's algorithm on SEAL (§I l. 27, §IV "
                 "l. 277)"))
    recs.append(("convolution vs GAZELLE (up to)", "speedup",
                 _ours("table8", t8, "lan_speedup"), "projected",
                 f"Table VIII row '{t8}' (LAN)"))
    for net in ("AlexNet", "VGG", "ResNet-18", "ResNet-50", "ResNet-101", "ResNet-152"):
        v = _ours("table11", f"{net}; GAZELLE", "lan_speedup")
        recs.append((f"{net} vs GAZELLE", "speedup", v, "projected",
                     f"{t11} row '{net}; GAZELLE' (LAN), the zoo's CIFAR-10 {NETWORKS[net]}"))
        recs.append((f"{net} vs CrypTFlow2", "speedup", v, "projected",
                     f"{t11} row '{net}; GAZELLE' (LAN): our SEAL GAZELLE stands for "
                     "CrypTFlow2's linear layers (GAZELLE's algorithm on SEAL); its OT-based "
                     "non-linear layers are not part of this reproduction (our GC ReLU in "
                     "their place)"))
        recs.append((f"non-linear share of GAZELLE on {net}", "nonlinear_pct_gazelle",
                     100 - _ours("table12", net, "linear_pct_gazelle"), "projected",
                     f"Table XII row '{net}': 100 minus our projected linear share"))
    for net in ("ResNet-18", "ResNet-152"):
        recs.append((f"GAZELLE on {net}", "gazelle_lan_time",
                     _ours("table11", f"{net}; GAZELLE", "lan_time") / 1e3, "projected",
                     f"{t11} row '{net}; GAZELLE' (LAN time), on this machine"))
    plain = [100 - _ours("table12", n, "linear_pct_plaintext") for n in NETWORKS
             if n != "MLP"]
    recs.append(("non-linear share of the plaintext models (average)",
                 "nonlinear_pct_plaintext", float(np.mean(plain)), "measured",
                 "Table XII column Plaintext: 100 minus the mean of our six measured shares"))
    per = {op: _ours("table1", "GAZELLE", f"{m}_time") / _ours("table1", "GAZELLE",
                                                              f"{m}_count")
           for op, m in (("Perm", "perm"), ("ScMult", "mult"), ("Add", "add"))}
    recs.append(("Perm vs Add", "perm_over_add", per["Perm"] / per["Add"], "measured",
                 "Table I rows 'GAZELLE': our measured unit Perm / unit Add (SEAL N=4096)"))
    recs.append(("Perm vs ScMult", "perm_over_scmult", per["Perm"] / per["ScMult"], "measured",
                 "Table I rows 'GAZELLE': our measured unit Perm / NTT-domain ScMult"))
    parts = [_ours("table1", "GAZELLE", f"{m}_time") for m in ("perm", "mult", "add")]
    recs.append(("Perm share of GAZELLE's 2x2048 product", "perm_pct_of_time",
                 100 * parts[0] / sum(parts), "projected",
                 "Table I row 'GAZELLE': our Perm time over the sum of the Perm, Mult and "
                 "Add times, as the paper's total is its parts' sum"))
    recs.append(("2x2048 product vs GAZELLE", "speedup",
                 _ours("table1", "GAZELLE", "total_time")
                 / _ours("table1", "Proposed", "total_time"), "measured",
                 "Table I: our measured GAZELLE / GALA totals (SEAL N=4096)"))
    return pd.DataFrame(recs, columns=["row", "metric", "value", "kind", "note"])


def _short(df: pd.DataFrame) -> pd.DataFrame:
    return lad.needs_ladder(df)


def build(mv_runs: pd.DataFrame, conv_runs: pd.DataFrame, unit: pd.DataFrame,
          totals: dict[str, dict], imagenet: dict | None = None,
          headline_status: pd.DataFrame | None = None) -> list[lad.Ladder]:
    """A ladder for every short claim row (:func:`ppnn.experiments.ladder.needs_ladder`) of
    the GALA tables compared in this process and of ``headline_status`` (the frame of
    :func:`ppnn.report.headlines`)."""
    out: list[lad.Ladder] = []
    for table, runs in (("table6", mv_runs), ("table8", conv_runs)):
        if (PAPER, table) not in pvo.COMPARED:
            continue
        cmp = _compared(table)
        for r in _short(cmp).itertuples():
            metric = r.metric.replace(" (claim)", "")
            target = float(cmp[(cmp.row == r.row) & (cmp.metric == metric)]["paper"].iloc[0])
            out.append(kernel_ladder(r.row, metric, runs, target))
    for table in ("table10", "table11"):
        if (PAPER, table) not in pvo.COMPARED:
            continue
        cmp = _compared(table)
        for r in _short(cmp).itertuples():
            net, base = [s.strip() for s in r.row.split(";")]
            metric = r.metric.replace(" (claim)", "")
            target = float(cmp[(cmp.row == r.row) & (cmp.metric == metric)]["paper"].iloc[0])
            out.append(network_ladder(net, metric, totals[net], unit, target, base, imagenet))
    if (PAPER, "table12") in pvo.COMPARED:
        for r in _short(_compared("table12")).itertuples():
            if r.metric.startswith("linear_pct_gazelle"):
                out.append(share_ladder(r.row, totals[r.row], unit, imagenet))
            else:  # the plaintext split: no assumption of the paper's to put in place
                c = _compared("table12")
                ours = float(c[(c.row == r.row) & (c.metric == "linear_pct_plaintext")]
                             ["ours"].iloc[0])
                out.append(ratio_ladder(("Table XII", r.row, r.metric), 100 - ours,
                                        100 - _num("table12", r.row, "linear_pct_plaintext"),
                                        unit="% (non-linear share)"))
    if (PAPER, "fig9") in pvo.COMPARED:
        cmp = _compared("fig9")
        for r in _short(cmp).itertuples():
            ours = float(cmp[(cmp.row == r.row) & (cmp.metric == "gala_speedup")]["ours"]
                         .iloc[0])
            out.append(fig9_ladder(r.row, ours, unit))
    if headline_status is not None:
        out += _headline_ladders(headline_status, mv_runs, conv_runs, unit, totals, imagenet)
    return out


def _headline_ladders(hl: pd.DataFrame, mv_runs, conv_runs, unit, totals, imagenet
                      ) -> list[lad.Ladder]:
    """The ladders of the short headlines (``hl``: :func:`ppnn.report.headlines`' frame):
    the same functions as the tables' rows they come from."""
    short = _short(hl.rename(columns={"verdict": "status", "claim": "row"}))
    keys = sorted(zip(short["row"], short["metric"]))
    target = {(r.claim, r.metric): float(r.paper_value) for r in hl.itertuples()}
    ours = headline_values().set_index(["row", "metric"])["value"]
    out = []
    for row, metric in keys:
        key, p = ("Headlines", row, metric), target[(row, metric)]
        if row.startswith("dot product"):
            out.append(kernel_ladder("1x2048; GAZELLE[38]", "lan_speedup", mv_runs, p, key,
                                     delphi=True))
        elif row.startswith("convolution"):
            out.append(kernel_ladder("16x16@2048; 1x1@512; GAZELLE", "lan_speedup",
                                     conv_runs, p, key))
        elif row.split(" vs ")[0] in NETWORKS:
            net, base = row.split(" vs ")
            out.append(network_ladder(net, "lan_speedup", totals[net], unit, p, base,
                                      imagenet, key=key))
        elif row.startswith("non-linear share of GAZELLE on "):
            net = row.rsplit(" ", 1)[1]
            out.append(share_ladder(net, totals[net], unit, imagenet, key=key))
        elif row.startswith("non-linear share of the plaintext"):
            out.append(ratio_ladder(key, ours[(row, metric)], p, unit="% (non-linear share)"))
    out += _table1_ladders(mv_runs, unit, {k for k in keys if k[0].startswith(("Perm",
                                                                                 "2x2048"))})
    return out


def headlines(mv_runs: pd.DataFrame, conv_runs: pd.DataFrame, unit: pd.DataFrame,
              totals: dict[str, dict], imagenet: dict | None = None) -> None:
    """The notebook's Headlines table: ours for every headline claim (:func:`headline_values`,
    from the tables compared above), its verdict, and a ladder for it and for every short
    claim row of the tables (:func:`build`), saved to ``figures/tables/ladders_gala.csv``
    (kept in :data:`LADDERS` for :func:`show`); shows the headline table once."""
    ours = headline_values()
    first = report.headlines(PAPER, ours)
    ladders = build(mv_runs, conv_runs, unit, totals, imagenet, headline_status=first)
    LADDERS.clear()
    LADDERS.update({x.key: x for x in ladders})
    pvo.headlines(PAPER, ours, ladders)


def finding(ladder: lad.Ladder) -> str:
    """The ladder in one sentence: ours, each step's value and factor, the paper's, the
    verdict."""
    u = "" if ladder.unit == "x" else f" {ladder.unit.split(' (')[0]}"
    x = "x" if ladder.unit == "x" else ""
    steps = "; ".join(f"{s.assumption} -> {s.value:.3g}{x}{u} (x{f:.3g})"
                      for s, f in zip(ladder.steps, ladder.factors))
    return (f"{ladder.row}: ours {ladder.ours:.3g}{x}{u}"
            + (f"; {steps}" if steps else "") + f"; the paper's {ladder.target:.3g}{x}{u}: "
            f"{ladder.verdict}.")


def show(table: str, row: str, metric: str) -> None:
    """Draw the ladder of a claim (:data:`LADDERS`, built by :func:`headlines`) as a
    waterfall, saved to ``figures/gala/ladders/``, with its steps and :func:`finding`
    below; a claim that holds in this run has no ladder, and says so."""
    k = lad.key(table, row, metric)
    if not LADDERS:
        raise ValueError("no ladders built in this process: run headlines() first")
    if k not in LADDERS:
        claims = set(zip(report.load_paper(PAPER, "headlines")["row"],
                         report.load_paper(PAPER, "headlines")["metric"]))
        if table == "Headlines" and (row, metric) not in claims:
            raise KeyError(f"{(row, metric)!r} is no GALA headline")
        pvo.show(pd.DataFrame(), f"**{k}**: the claim holds in this run, so it has no ladder")
        return
    ladder = LADDERS[k]
    pvo.show_ladder(ladder)
    pvo.show(lad.frame([ladder]).drop(columns=["key", "paper", "table", "row", "metric",
                                               "unit", "verdict"]), finding(ladder))
