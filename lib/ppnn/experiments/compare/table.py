"""The comparison table, the per-layer-type breakdown, the decision guide and the figures.

Everything here is computed from :class:`~.families.FamilyResult` s: bytes and rounds from
each family's ledger, latencies from the shared time model
(:func:`ppnn.core.netmodel.project`, Falcon's LAN and WAN), so every family is measured with
the same ruler. Nothing is typed in: the decision guide's sentences are generated from the
frame.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppnn.core import LAN, WAN, Ledger, Network, project
from ppnn.protocols import api

from .workload import CLASSES, FamilyResult, Workload

__all__ = ["COLUMNS", "COUNTED_COLUMNS", "family_row", "comparison_frame",
           "network_time_by_class", "breakdown_frame", "layer_kind_frame", "decision_guide",
           "latency_frame", "to_markdown", "plot_comm_latency", "plot_breakdown",
           "plot_layer_kinds", "seconds_frame", "KINDS"]

MB = 1e6
_DATASETS = {"mnist": "MNIST", "fashion": "Fashion-MNIST", "cifar10": "CIFAR-10",
             "random": "random"}
COLUMNS = ["family", "key", "paper", "parties", "threat_model", "online_MB", "offline_MB",
           "online_rounds", "compute_s", "compute_kind", "lan_s", "wan_s", "wan_network_s",
           "storage_MB", "accuracy", "n_accuracy", "run_agreement", "provenance", "notes"]
#: columns that do not depend on wall-clock time (identical between runs with one seed)
COUNTED_COLUMNS = ["key", "online_MB", "offline_MB", "online_rounds", "storage_MB",
                   "accuracy", "n_accuracy", "run_agreement"]


def family_row(r: FamilyResult, w: Workload, networks=(LAN, WAN)) -> dict:
    """One row of the comparison (per inference: a run's totals / images per run)."""
    s, led, per = r.spec, r.ledger, r.images_per_run
    proj = {net.name: project(led, net, "online", r.compute_run_s) for net in networks}
    lan, wan = proj[networks[0].name], proj[networks[1].name]
    agree = int((r.run_predictions == r.oracle_run_predictions).sum())
    acc = float((r.predictions == w.y_acc).mean())
    two = " (the ledger of one run covers two images, one per server; per image = / 2)" \
        if per > 1 else ""
    ops = {k: n / per for k, n in sorted(led.op_counts("online").items()) if n}
    ops_note = ("; operations per inference (counted, online): " + ", ".join(
        f"{k} {v:,.0f}" for k, v in ops.items())) if ops else ""
    measured = (f"agreement with the float model's predictions on {len(w.y_acc)} random "
                "images (no labels)" if w.dataset == "random" else
                f"measured on {len(w.y_acc)} {_DATASETS[w.dataset]} test images")
    provenance = (f"communication and rounds: counted ({r.comm_note}){two}; compute: "
                  f"{r.compute_kind} ({r.compute_note}); LAN/WAN: projected (shared time "
                  f"model + compute); accuracy: {measured} ({r.accuracy_note}); storage: "
                  f"{r.storage_note}{ops_note}")
    return {"family": s.name, "key": s.key, "paper": s.paper, "parties": ", ".join(s.parties),
            "threat_model": s.threat_model,
            "online_MB": led.total_bytes("online") / MB / per,
            "offline_MB": led.total_bytes("offline") / MB / per,
            "online_rounds": led.rounds("online") / per,
            "compute_s": r.compute_run_s / per, "compute_kind": r.compute_kind,
            "lan_s": lan.total_s / per, "wan_s": wan.total_s / per,
            "wan_network_s": (wan.latency_s + wan.transfer_s) / per,
            "storage_MB": r.storage_bytes / MB, "accuracy": acc, "n_accuracy": len(w.y_acc),
            "run_agreement": f"{agree}/{len(r.run_predictions)}",
            "provenance": provenance, "notes": r.quantization}


def comparison_frame(results: list[FamilyResult], w: Workload) -> pd.DataFrame:
    """The comparison table: one row per family, :data:`COLUMNS`."""
    df = pd.DataFrame([family_row(r, w) for r in results], columns=COLUMNS)
    df.attrs["float_accuracy"] = w.float_accuracy
    df.attrs["dataset"] = _DATASETS[w.dataset]
    df.attrs["network"] = ("MiniONN's network (Falcon's Network-C)" if w.net.name ==
                           "minionn_mnist" else f"the network {w.net.name}")
    df.attrs["title"] = ("MiniONN's MNIST network" if w.net.name == "minionn_mnist" else
                         f"{w.net.name} ({_DATASETS[w.dataset]})")
    df.attrs["n_run"] = w.n_run
    return df


# -- where the cost goes -------------------------------------------------------------------------
def network_time_by_class(ledger: Ledger, network: Network, classify, phase: str = "online"
                          ) -> dict[str, float]:
    """The time model's per-round time (latency + busiest sender's bytes / bandwidth), each
    round attributed to the layer type of its largest message. Sums to
    ``project(ledger, network, phase)``'s latency + transfer."""
    out = dict.fromkeys(CLASSES, 0.0)
    df = ledger.messages_frame()
    df = df[df["phase"] == phase]
    if df.empty:
        return out
    for _, g in df.groupby("round", sort=True):
        busiest = g.groupby("sender")["bits"].sum().max()
        cls = classify(g.loc[g["bits"].idxmax(), "label"])
        out[cls] += network.latency_s + busiest / 8 / network.bandwidth_Bps
    return out


def breakdown_frame(results: list[FamilyResult], network: Network = WAN) -> pd.DataFrame:
    """Per family and layer type: communication (online + offline MB) from the ledger labels,
    and the projected online time on ``network`` (per-round network time + compute)."""
    rows = []
    for r in results:
        df = r.ledger.messages_frame()
        comm = df.assign(cls=df["label"].map(r.classify)).groupby("cls")["bits"].sum() / 8 / MB
        net_t = network_time_by_class(r.ledger, network, r.classify)
        for c in CLASSES:
            rows.append({"family": r.spec.name, "key": r.key, "class": c,
                         "comm_MB": float(comm.get(c, 0.0)) / r.images_per_run,
                         "network_s": net_t[c] / r.images_per_run,
                         "compute_s": float(r.compute_by_class.get(c, 0.0)) / r.images_per_run})
    df = pd.DataFrame(rows)
    df["time_s"] = df["network_s"] + df["compute_s"]
    df.attrs["network"] = network.name
    return df


#: layer kinds of the per-layer-kind breakdown, in plotting order
KINDS = ("Conv2d", "Dense", "BatchNorm", "ReLU", "Square", "MaxPool", "MeanPool", "Add",
         "input/output")
_SWANN_STEPS = {"Conv": "Conv2d", "FC": "Dense", "Pool": "MeanPool", "Add": "Add",
                "Flatten": "input/output"}


def layer_kind_of(net):
    """Map a ledger label to the kind of the layer it belongs to (``Conv2d``, ``ReLU``,
    ``Add``, ...; ``input/output`` for the rest) by its first component: the network's node
    names, or SwaNN's step names (``Act+Pool 1``: the activation, its max-pool fused)."""
    kinds = {n.name: n.kind for n in net.nodes()}
    acts = [n.kind for n in net.nodes() if n.kind in ("ReLU", "Square")]
    act = acts[0] if acts else "ReLU"

    def kind(label: str) -> str:
        head = label.split("/")[0]
        k = kinds.get(head)
        if k is not None:
            return k if k in KINDS else "input/output"
        word = head.split(" ")[0]
        if word in ("Act", "Act+Pool"):
            return act
        return _SWANN_STEPS.get(word, "input/output")

    return kind


def layer_kind_frame(results: list[FamilyResult], w: Workload, network: Network = WAN
                     ) -> pd.DataFrame:
    """Per family and layer kind: communication (online + offline MB, counted from the
    ledger labels), the projected online network time on ``network`` (each round attributed
    to the kind of its largest message) and compute. Compute is split as each family reports
    it by layer type (linear / nonlinear / input-output), and within a type by the layers'
    MACs or activations; SHE's by its bootstrapped gates per layer (counted)."""
    nodes = list(w.net.nodes())
    weight = {}
    for n in nodes:
        c = n.counts
        weight[n.kind] = weight.get(n.kind, 0) + (
            c["macs"] if n.kind in ("Conv2d", "Dense") else
            c["relus"] + c["comparisons"] + c["squares"])
    cls_of = {"Conv2d": "linear", "Dense": "linear", "ReLU": "nonlinear",
              "Square": "nonlinear", "MaxPool": "nonlinear", "input/output": "input/output"}
    kind = layer_kind_of(w.net)
    rows = []
    for r in results:
        df = r.ledger.messages_frame()
        kinds = df["label"].map(kind)
        comm = df.assign(k=kinds).groupby("k")["bits"].sum() / 8 / MB
        net_t = dict.fromkeys(KINDS, 0.0)
        on = df[df["phase"] == "online"]
        for _, g in on.groupby("round", sort=True):
            busiest = g.groupby("sender")["bits"].sum().max()
            net_t[kind(g.loc[g["bits"].idxmax(), "label"])] += (
                network.latency_s + busiest / 8 / network.bandwidth_Bps)
        boots = {}
        for o in r.ledger.ops:
            if o.op == "bootstrap":
                boots[kind(o.label)] = boots.get(kind(o.label), 0) + o.n
        compute = dict.fromkeys(KINDS, 0.0)
        if boots:
            tot = sum(boots.values())
            for k, v in boots.items():
                compute[k] += r.compute_run_s * v / tot
        else:
            for c, secs in r.compute_by_class.items():
                ks = [k for k in KINDS if cls_of.get(k) == c and weight.get(k)]
                if c == "input/output" or not ks:
                    compute["input/output"] += secs
                    continue
                tot = sum(weight[k] for k in ks)
                for k in ks:
                    compute[k] += secs * weight[k] / tot
        per = r.images_per_run
        for k in KINDS:
            rows.append({"family": r.spec.name, "key": r.key, "kind": k,
                         "comm_MB": float(comm.get(k, 0.0)) / per, "network_s": net_t[k] / per,
                         "compute_s": compute[k] / per})
    out = pd.DataFrame(rows)
    out["time_s"] = out["network_s"] + out["compute_s"]
    out.attrs["network"] = network.name
    return out


def seconds_frame(results: list[FamilyResult]) -> pd.DataFrame:
    """Wall-clock seconds of each family's compile, protocol runs and count (as
    :func:`~.run.run_family` measured them, ``count=True``), and whether the count booked the
    run's ledger."""
    rows = []
    for r in results:
        sec = r.extra.get("seconds", {})
        rows.append({"family": r.spec.name, "key": r.key,
                     "compile_s": sec.get("compile", np.nan), "run_s": sec.get("run", np.nan),
                     "count_s": sec.get("count", np.nan),
                     "count_equals_run": r.extra.get("count_equals_run")})
    return pd.DataFrame(rows)


# -- the decision guide ------------------------------------------------------------------------
def _fmt(v: float, unit: str) -> str:
    if unit == "s":
        if v >= 86400:
            return f"{v / 86400:.3g} days"
        if v >= 3600:
            return f"{v / 3600:.3g} h"
        return f"{v:.3g} s"
    return f"{v:.3g} {unit}"


def _best(df: pd.DataFrame, col: str, unit: str, what: str, largest: bool = False) -> str:
    d = df.dropna(subset=[col]).sort_values(col, ascending=not largest, kind="stable")
    a = d.iloc[0]
    text = f"**{what}**: {a.family} ({_fmt(a[col], unit)})"
    if len(d) > 1:
        b = d.iloc[1]
        text += f"; next {b.family} ({_fmt(b[col], unit)})"
    return text + "."


def decision_guide(df: pd.DataFrame) -> list[str]:
    """Which approach for which setting -- sentences computed from the comparison frame (the
    families at their default settings; labelled variants such as "no circuit privacy" are
    not recommended)."""
    df = df[~df["key"].isin(list(api.variants()))]
    df = df.assign(total_MB=df["online_MB"] + df["offline_MB"],
                   n_parties=df["parties"].str.count(",") + 1,
                   security=df["key"].map(lambda k: api.family(k).spec.security))
    out = [
        _best(df, "wan_s", "s", "Lowest projected WAN latency"),
        _best(df, "lan_s", "s", "Lowest projected LAN latency"),
        _best(df, "total_MB", "MB", "Least communication (online + offline)"),
        _best(df, "online_MB", "MB", "Least online communication"),
    ]
    few = df.sort_values("online_rounds", kind="stable").iloc[0]
    slow = df.sort_values("compute_s", ascending=False, kind="stable").iloc[0]
    out.append(f"**Fewest rounds**: {few.family} ({few.online_rounds:g} online rounds: the "
               f"client sends its encrypted input and receives the result, and can go offline "
               f"in between) -- at the price of the most server compute here "
               f"({_fmt(few.compute_s, 's')}, {few.compute_kind})."
               if few.key == slow.key else
               f"**Fewest rounds**: {few.family} ({few.online_rounds:g} online rounds).")
    mal = df[df["security"] == "malicious"]
    if len(mal):
        m = mal.sort_values("wan_s", kind="stable").iloc[0]
        twin = df[(df["parties"] == m.parties) & (df["security"] == "semi-honest")]
        extra = ""
        if len(twin):
            t = twin.iloc[0]
            extra = (f"; against its semi-honest version it costs x{m.total_MB / t.total_MB:.2g} "
                     f"communication and x{m.wan_s / t.wan_s:.2g} WAN latency")
        out.append(f"**Strongest threat model**: {m.family} -- the only family here secure "
                   f"against a malicious (aborting) party; it needs {m.parties} with an honest "
                   f"majority{extra}.")
    two = df[df["n_parties"] == 2]
    if len(two):
        out.append(_best(two, "wan_s", "s",
                         "Two parties only (no extra server), over a WAN"))
        pre = two[two["offline_MB"] > 0]
        if len(pre):
            out.append(_best(pre, "lan_s", "s",
                             "Two parties with an input-independent preprocessing phase, "
                             "online latency on a LAN"))
    more = df[df["n_parties"] >= 3]
    if len(more):
        out.append(_best(more, "lan_s", "s",
                         "Extra non-colluding servers available, on a LAN"))
    best_acc = df["accuracy"].max()
    tops = df[np.isclose(df["accuracy"], best_acc)]["family"].tolist()
    fl = df.attrs.get("float_accuracy")
    what = ("**Agreement with the float model** on the same "
            f"{int(df['n_accuracy'].iloc[0])} random images" if df.attrs.get("dataset") ==
            "random" else f"**Accuracy** on the same {int(df['n_accuracy'].iloc[0])} test "
            "images")
    out.append(f"{what}: best "
               f"{best_acc:.4g} ({', '.join(tops)}); lowest {df['accuracy'].min():.4g} "
               f"({df.sort_values('accuracy', kind='stable').iloc[0].family})"
               + (f"; float model {fl:.4g}" if fl is not None else "") + ".")
    out.append(_best(df, "storage_MB", "MB", "Least storage per inference"))
    return out


def latency_frame(results: list[FamilyResult], network: Network) -> pd.DataFrame:
    """Projected online latency of every family on any ``network`` (for the widget)."""
    rows = []
    for r in results:
        pr = project(r.ledger, network, "online", r.compute_run_s)
        per = r.images_per_run
        rows.append({"family": r.spec.name, "rounds": pr.rounds / per,
                     "network_s": (pr.latency_s + pr.transfer_s) / per,
                     "compute_s": pr.compute_s / per, "latency_s": pr.total_s / per})
    return pd.DataFrame(rows).sort_values("latency_s", kind="stable").reset_index(drop=True)


# -- markdown ------------------------------------------------------------------------------------
def to_markdown(df: pd.DataFrame, guide: list[str] | None = None) -> str:
    """The table as Markdown (numbers to 3 significant digits) with the guide below it."""
    show = pd.DataFrame({
        "family": df["family"], "parties / threat model": df["parties"] + "; "
        + df["threat_model"],
        "online MB": df["online_MB"].map(lambda v: f"{v:.3g}"),
        "offline MB": df["offline_MB"].map(lambda v: f"{v:.3g}"),
        "online rounds": df["online_rounds"].map(lambda v: f"{v:g}"),
        "compute s": [f"{v:.3g} ({k})" for v, k in zip(df["compute_s"], df["compute_kind"])],
        "LAN s (projected)": df["lan_s"].map(lambda v: f"{v:.3g}"),
        "WAN s (projected)": df["wan_s"].map(lambda v: f"{v:.3g}"),
        "storage MB": df["storage_MB"].map(lambda v: f"{v:.3g}"),
        "accuracy": df["accuracy"].map(lambda v: f"{v:.4g}"),
        "protocol = oracle": df["run_agreement"],
    })
    lines = ["| " + " | ".join(show.columns) + " |", "|" + "---|" * len(show.columns)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in show.itertuples(False)]
    text = "\n".join(lines)
    data = df.attrs.get("dataset", "MNIST")
    n_acc = int(df["n_accuracy"].iloc[0])
    accuracy = (f"Accuracy: agreement with the float model's predictions on {n_acc} random "
                "images (no labels)" if data == "random" else
                f"Accuracy on the first {n_acc} {data} test images"
                + (f" (float model: {df.attrs['float_accuracy']:.4g})"
                   if "float_accuracy" in df.attrs else ""))
    text += (f"\n\nPer inference of one {data} image through "
             f"{df.attrs.get('network', 'the network')}. LAN/WAN: Falcon's settings (ping 0.2 ms "
             "/ 625 MBps, ping 70 ms / 40 MBps; half the ping per round, one way), online "
             "phase, projected = rounds x latency + busiest "
             f"sender's bytes / bandwidth + compute. {accuracy}.\n")
    weak = [(f, api.family(k).variant_note) for k, f in zip(df["key"], df["family"])
            if k in api.variants()]
    if weak:
        notes = " ".join(dict.fromkeys(note for _, note in weak))
        text += ("\nRows marked *no circuit privacy* are labelled variants, not defaults: "
                 f"{', '.join(f for f, _ in weak)} {notes}\n")
    text += "\n**What was measured, counted and projected**\n\n"
    text += "\n".join(f"- *{f}*: {p}. Quantization: {n}." for f, p, n in
                      zip(df["family"], df["provenance"], df["notes"]))
    if guide:
        text += "\n\n**Decision guide** (generated from the numbers above)\n\n"
        text += "\n".join(f"- {g}" for g in guide)
    return text + "\n"


# -- figures ---------------------------------------------------------------------------------------
def plot_comm_latency(df: pd.DataFrame):
    """Communication (online + offline) vs projected latency, log axes, LAN and WAN."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    fig, ax = plt.subplots(figsize=(9.0, 5.0))
    cmap = plt.get_cmap("tab10")
    handles = []
    for i, row in enumerate(df.itertuples(False)):
        x = row.online_MB + row.offline_MB
        col = cmap(i % 10)
        ax.plot([x, x], [row.lan_s, row.wan_s], color=col, lw=1, alpha=0.6)
        # hollow markers growing with the row: families at the same point (GAZELLE and GALA
        # book the same bytes) show as concentric rings instead of hiding one another
        size = 28 + 22 * i
        ax.scatter([x], [row.lan_s], marker="o", s=size, facecolors="none", edgecolors=[col],
                   linewidths=1.6, zorder=3 + len(df) - i)
        ax.scatter([x], [row.wan_s], marker="s", s=size, facecolors="none", edgecolors=[col],
                   linewidths=1.6, zorder=3 + len(df) - i)
        handles.append(Line2D([], [], color=col, marker="s", lw=0, markerfacecolor="none",
                              label=row.family))
    handles += [Line2D([], [], color="k", marker="o", lw=0, markerfacecolor="none",
                       label="LAN (ping 0.2 ms, 625 MBps)"),
                Line2D([], [], color="k", marker="s", lw=0, markerfacecolor="none",
                       label="WAN (ping 70 ms, 40 MBps)")]
    ax.legend(handles=handles, loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8,
              frameon=False)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("communication per inference, online + offline (MB, counted)")
    ax.set_ylabel("online latency per inference (s, projected)")
    ax.set_title(f"{df.attrs.get('title', 'One network')} through every protocol family",
                 fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    fig.tight_layout()
    return fig


def _share_bars(df: pd.DataFrame, column: str, parts: list, colors: dict, height: float):
    """Two panels of horizontal bars, one per family: the share of communication and of
    projected online time by ``column`` (one bar segment per part), each total at the right."""
    import matplotlib.pyplot as plt

    fams = list(dict.fromkeys(df["family"]))
    fig, axes = plt.subplots(1, 2, figsize=(11, 0.45 * len(fams) + height), sharey=True)
    for ax, col, title in ((axes[0], "comm_MB", "communication (online + offline)"),
                           (axes[1], "time_s", f"projected {df.attrs.get('network', '')} "
                                               "online time")):
        piv = df.pivot_table(index="family", columns=column, values=col, aggfunc="sum",
                             sort=False).reindex(index=fams, columns=parts).fillna(0)
        tot = piv.sum(axis=1)
        frac = piv.div(tot.where(tot > 0, 1), axis=0)
        left = np.zeros(len(fams))
        y = np.arange(len(fams))
        for c in parts:
            ax.barh(y, frac[c].values, left=left, color=colors[c], label=c)
            left += frac[c].values
        unit = "MB" if col == "comm_MB" else "s"
        for yi, t in zip(y, tot.values):
            ax.text(1.01, yi, _fmt(float(t), unit), va="center", fontsize=7,
                    transform=ax.get_yaxis_transform())
        ax.set_xlim(0, 1)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("share of the family's total (total at the right)")
    axes[0].set_yticks(np.arange(len(fams)), fams, fontsize=8)
    axes[0].invert_yaxis()
    return fig, axes


def plot_breakdown(bd: pd.DataFrame):
    """Share of communication and of projected online time by layer type, per family."""
    colors = {"linear": "#4c72b0", "nonlinear": "#dd8452", "input/output": "#8c8c8c"}
    fig, axes = _share_bars(bd, "class", list(CLASSES), colors, 1.6)
    axes[1].legend(loc="lower center", bbox_to_anchor=(0.5, 1.08), ncol=3, fontsize=8)
    if "she" in set(bd["key"]):
        fig.text(0.01, 0.005, "SHE: the ReLU units are fused into the linear layers' gate "
                 "circuits (counted with them); its max-pool units are the nonlinear share.",
                 fontsize=7)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def plot_layer_kinds(kf: pd.DataFrame):
    """Which layers dominate each family's cost: the share of communication and of projected
    online time by layer kind, per family (from :func:`layer_kind_frame`)."""
    kinds = [k for k in KINDS if kf.loc[kf["kind"] == k, ["comm_MB", "time_s"]].to_numpy().any()]
    colors = dict(zip(KINDS, ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3",
                              "#937860", "#da8bc3", "#ccb974", "#8c8c8c")))
    fig, axes = _share_bars(kf, "kind", kinds, colors, 1.8)
    handles, labels = axes[1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=len(kinds), fontsize=8,
               frameon=False)
    fig.text(0.01, 0.005, "by the ledger's layer labels; compute split by layer type as each "
             "family reports it, within a type by MACs / activations (SHE: by its gates per "
             "layer). A max-pool fused into its activation counts as the activation.",
             fontsize=7)
    fig.tight_layout(rect=(0, 0.04, 1, 0.93))
    return fig
