"""Synthetic GALA runs for the table and ladder tests: the frames the notebook makes
(matrix-vector and convolution runs, network totals, the plaintext split), projected from
counted operations with fixed unit costs -- no SEAL, no timing."""

from __future__ import annotations

import functools
import types

import pandas as pd

from ppnn.experiments.gala import runs, tables
from ppnn.protocols.gala import costs
from ppnn.protocols.gala.runtime import GALA_LAN, GALA_WAN, network_time, project_seconds

UNIT = pd.DataFrame({"seconds": {"Perm": 8e-4, "ScMult": 8e-5, "Add": 3e-5}})
UNIT["per_perm"] = UNIT.loc["Perm", "seconds"] / UNIT["seconds"]
RELU = {"seconds": 2e-5, "comm_bits": 27412, "rounds": 2}
CT_BITS = 2 * 4096 * 72


def mv_runs() -> pd.DataFrame:
    """:func:`ppnn.experiments.gala.runs.measure_matvec`'s frame, every method projected."""
    he = types.SimpleNamespace(n=2048, ciphertext_bits=CT_BITS)
    df = runs.measure_matvec(he, dims=runs.MATVEC_DIMS + [runs.TABLE1_DIMS], unit=UNIT,
                             project_only=("Diagonal", "GAZELLE", "GALA"))
    df.loc[df.method == "GALA", "ras_s"] = 5e-5  # both parties' plaintext RaS
    for net, model in (("lan", GALA_LAN), ("wan", GALA_WAN)):
        df[f"{net}_s"] = df["online_s"] + df["ras_s"] + [
            network_time(u, d, CT_BITS, model) for u, d in zip(df.ct_up, df.ct_down)]
        gala = df[df.method == "GALA"].set_index("dims")[f"{net}_s"]
        df[f"{net}_speedup"] = df[f"{net}_s"] / df["dims"].map(gala)
    return df


def conv_runs() -> pd.DataFrame:
    """:func:`ppnn.experiments.gala.runs.measure_conv`'s frame, projected (x 1.3: overheads)."""
    rows = []
    for r in runs.count_conv().itertuples(index=False):
        c = {op: getattr(r, op) for op in costs.HE_OPS}
        H, W, c_i, k, c_o = next(d for d in runs.CONV_DIMS if runs.conv_label(*d) == r.dims)
        L = runs.conv_kernel(r.method, H, W, c_i, k, c_o).layout
        online = project_seconds(c, UNIT) * 1.3
        rows.append({"dims": r.dims, "method": r.method, "kind": "projected",
                     "online_s": online, "ct_up": L.ct_in, "ct_down": L.ct_out,
                     "comm_MB": (L.ct_in + L.ct_out) * CT_BITS / 8e6, **c,
                     **{f"{n}_s": online + network_time(L.ct_in, L.ct_out, CT_BITS, m)
                        for n, m in (("lan", GALA_LAN), ("wan", GALA_WAN))}})
    df = pd.DataFrame(rows)
    for net in ("lan", "wan"):
        gala = df[df.method == "GALA"].set_index("dims")[f"{net}_s"]
        df[f"{net}_speedup"] = df[f"{net}_s"] / df["dims"].map(gala)
    return df


@functools.cache
def _nets():
    layers = {k: runs.network_layers(v, UNIT, RELU, CT_BITS, quick=True)
              for k, v in runs.NETWORKS.items()}
    return layers, {k: runs.network_totals(v) for k, v in layers.items()}


def nets() -> tuple[dict, dict]:
    """(layers, totals) of every zoo network of Tables IX-XII."""
    layers, totals = _nets()
    return dict(layers), {k: dict(v) for k, v in totals.items()}


def plain() -> pd.DataFrame:
    """:func:`ppnn.experiments.gala.runs.plaintext_shares`' frame (every share 90 %)."""
    return pd.DataFrame([{"network": n, "zoo": z, "linear_s": 0.9, "nonlinear_s": 0.1,
                          "linear_pct": 90.0, "repeats": 1}
                         for n, z in runs.NETWORKS.items() if n != "MLP"])


def compare_all(mv, conv, layers, totals) -> None:
    """Compare the tables the headlines read (I, VI, VIII, X, XI, XII, Fig. 9)."""
    tables.table1(mv, UNIT)
    tables.table6(mv, UNIT, 2 * 8192 * 174)
    tables.table8(conv, UNIT, 2 * 8192 * 174)
    tables.table10(totals)
    tables.table11(totals)
    tables.table12(totals, plain())
    tables.fig9(layers, n=2048)
