"""SwaNN's headline claims (§1, l. 42), ours beside them, and the ladders of the short ones.

:func:`headline_values` computes ours for each row of ``data/paper/swann_headlines.csv`` from
the notebook's runs -- the per-layer times ``T1, K1`` (:func:`.runs.layer_times`) and the
integer ``models`` -- through the same builders as the tables (:mod:`.paper`). :func:`ladders`
builds a :class:`~ppnn.experiments.ladder.Ladder` for every claim short of the paper's:

* :func:`hybrid_ladder` -- the text's "hybrid over optimized PHE only" (30 s / 10 s): our
  counts projected with the paper's time per operation (:func:`paper_unit_costs`, inferred
  from its Tables 1 and 2), then the layers one group at a time at the paper's Table 1 times;
  :func:`cryptonets_ladder` -- the 30-fold over CryptoNets, by the same steps of the hybrid;
* :func:`bandwidth_ladder` -- the 1.73 MB and the 28-fold over MiniONN: one function, our
  accounting replaced by the paper's (input and output left out, then its conversion).

:func:`headlines` saves the ladders and shows the headline table (one call in 03_swann).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ppnn import report
from ppnn.protocols.swann.costs import UnitCosts, count_model, project_ms

from .. import ladder as lad
from .. import paper_vs_ours as pvo
from . import paper as ex

__all__ = ["paper_unit_costs", "headline_values", "hybrid_ladder", "cryptonets_ladder",
           "bandwidth_ladder", "ladders", "headlines", "pick", "LINEAR", "HEADLINE"]

PAPER = "swann"
#: the linear layers of Experiment 1 (Table 1 rows), shared by the PHE-only and hybrid settings
LINEAR = ("Conv 1", "Pool 1", "Conv 2", "Pool 2", "FC 1", "FC 2")
#: the headline rows (``data/paper/swann_headlines.csv``)
HEADLINE = {"time": "prediction of the two-activation network (Exp. 1, hybrid)",
            "bandwidth": "bandwidth of that prediction",
            "vs_he": "computation vs the HE-based solution (CryptoNets)",
            "vs_2pc": "bandwidth vs the 2PC-based solution (MiniONN)"}
_CS = ("client", "server")


def _paper_cells(table: str) -> pd.Series:
    ref = report.load_paper(PAPER, table)
    return pd.to_numeric(ref.set_index(["row", "metric"])["value"], errors="coerce")


def _act1_counts(model, scenario: str = "client-server") -> pd.DataFrame:
    c = count_model(model, scenario, True)
    return c[c["step"] == "Act 1"].set_index("party")


def paper_unit_costs(models: dict, ours: UnitCosts) -> UnitCosts:
    """The paper's time per operation *as we count operations* (inferred): each of its
    printed times of one kind of operation over our count of that operation in the same
    layer. Table 2 (the hybrid's Act 1): ``enc`` = its Encryption cells (client + server)
    over our encryptions, ``dec`` its client Decryption over our decryptions,
    ``partial_dec`` its two-server Decryption cells over our partial decryptions,
    ``and_gate`` its ABY cells over our AND gates, ``sqr`` its Packing cell (less the
    additions, at ``mul``) over our packing squarings; Table 1: ``mul`` its optimized
    PHE-only Pool cells (sums of ciphertexts: multiplications only) over our counts. ``inv``
    is ours: the paper prints no time of an inversion."""
    t1, t2 = _paper_cells("table1"), _paper_cells("table2")
    hyb, phe = models["exp1_hybrid"], models["exp1_phe"]
    cs, ts = _act1_counts(hyb), _act1_counts(hyb, "two-server")
    pools = count_model(phe, "client-server", True).set_index(["step", "party"])
    mul = (sum(t1[(p, "opt_phe_server")] for p in ("Pool 1", "Pool 2")) / 1e3
           / sum(pools.loc[(p, "server"), "paillier_mul"] for p in ("Pool 1", "Pool 2")))
    act = next(s for s in hyb.steps if s.label == "Act 1")
    n = int(np.prod(act.in_shape))
    groups = int(cs.loc["server", "Enc"])          # one rerandomization per packed ciphertext
    sqr = ((t2[("Packing", "server")] / 1e3 - (n - groups) * mul)
           / cs.loc["server", "pack_sqr"])
    return UnitCosts(**{k: float(v) for k, v in dict(
        enc=(t2[("Encryption", "client")] + t2[("Encryption", "server")]) / 1e3
        / (cs.loc["client", "Enc"] + cs.loc["server", "Enc"]),
        dec=t2[("Decryption", "client")] / 1e3 / cs.loc["client", "Dec"],
        partial_dec=(t2[("Decryption", "server1")] + t2[("Decryption", "server2")]) / 1e3
        / (ts.loc["server1", "PartialDec"] + ts.loc["server2", "PartialDec"]),
        mul=mul, sqr=sqr, inv=ours.inv,
        and_gate=(t2[("ABY", "client")] + t2[("ABY", "server")]) / 1e3
        / cs.loc["client", "aby_gates"]).items()}, n_bits=ours.n_bits)


def _layers(model, optimized: bool, units: UnitCosts) -> pd.Series:
    """Client + server ms per layer of one client-server prediction, projected."""
    ms = project_ms(count_model(model, "client-server", optimized, units.n_bits), units)
    return ms.reindex(columns=list(_CS), fill_value=0.0).sum(axis=1)


def _paper_layers(config: str) -> pd.Series:
    """Client + server ms per layer in the paper's Table 1 (a '-' cell is no work)."""
    t1 = _paper_cells("table1").fillna(0.0)
    rows = [r for r in dict.fromkeys(t1.index.get_level_values(0)) if r != "Total"]
    return pd.Series({r: sum(t1[(r, f"{config}_{p}")] for p in _CS) for r in rows})


def _ours_totals(T1: dict, K1: dict) -> pd.Series:
    """Our client-server prediction time per setting (s), as the text-claims table has it."""
    rec = ex.text_claims_records(ex.table1_records(T1, K1), "")
    return rec.set_index("metric")["value"]


@dataclasses.dataclass(frozen=True)
class _TimeStep:
    """One replaced assumption of the time ladders, with the client + server ms per layer of
    the optimized PHE-only (``phe``) and hybrid (``hyb``) predictions after it."""

    assumption: str
    ours_as: str
    paper_as: str
    source: str
    phe: pd.Series
    hyb: pd.Series


def _time_steps(models: dict, units: UnitCosts) -> list[_TimeStep]:
    """Our Experiment 1 predictions (client-server) with the paper's assumptions put in one at
    a time: its Paillier time per operation, ABY's time per gate (both inferred,
    :func:`paper_unit_costs`), its linear layers' and hybrid activations' times, its PHE-only
    activations' times (Table 1). The last step is the paper's Table 1, layer by layer."""
    paper_u = paper_unit_costs(models, units)
    phe, hyb = models["exp1_phe"], models["exp1_hybrid"]
    p_phe, p_hyb = _paper_layers("opt_phe"), _paper_layers("opt_hybrid")
    out = []
    paillier_u = dataclasses.replace(paper_u, and_gate=units.and_gate)
    out.append(_TimeStep(
        "unit costs", f"Paillier as measured here (Python + gmpy2: encryption "
        f"{units.enc * 1e3:.2g} ms, decryption {units.dec * 1e3:.2g} ms)",
        f"inferred: the paper's time per operation (encryption {paper_u.enc * 1e3:.2g} ms, "
        f"decryption {paper_u.dec * 1e3:.2g} ms, multiplication {paper_u.mul * 1e6:.2g} us, "
        f"squaring {paper_u.sqr * 1e6:.2g} us) x our counts",
        "Table 2 (Act 1 by operation), Table 1 (Pool rows)",
        _layers(phe, True, paillier_u), _layers(hyb, True, paillier_u)))
    s_phe, s_hyb = _layers(phe, True, paper_u), _layers(hyb, True, paper_u)
    out.append(_TimeStep(
        "unit costs", f"our 2PC simulator ({units.and_gate * 1e9:.3g} ns per AND gate)",
        f"inferred: ABY's time per AND gate of ours ({paper_u.and_gate * 1e9:.3g} ns: Table "
        "2's ABY cells over our gate count)", "Table 2, row ABY", s_phe.copy(), s_hyb.copy()))
    lin = list(LINEAR)
    ratio = p_phe[lin].sum() / s_phe[lin].sum()
    s_phe[lin], s_hyb[lin] = p_phe[lin], p_hyb[lin]
    out.append(_TimeStep(
        "operation counts", "our Lim-Lee multi-exponentiation's multiplications in Conv and "
        "FC at the paper's time per multiplication",
        f"the paper's Conv, Pool and FC times ({ratio:.2g}x what our counted multiplications "
        "take at its time per multiplication)", "Table 1, rows Conv, Pool, FC",
        s_phe.copy(), s_hyb.copy()))
    acts = [r for r in s_hyb.index if r.startswith("Act")]
    s_hyb[acts] = p_hyb[acts]
    out.append(_TimeStep(
        "operation counts", "our hybrid activations (Protocol 2, exact A2B and truncation, "
        "Protocol 3's masked adder) at the paper's time per operation",
        "the paper's hybrid Act times (Table 1)", "Table 1, rows Act, Optimized - Hybrid",
        s_phe.copy(), s_hyb.copy()))
    proto1 = s_phe[acts].sum()
    s_phe[acts] = p_phe[acts]
    out.append(_TimeStep(
        "baseline implementation", f"Protocol 1 (PHE-only x^2) as we count it, at the paper's "
        f"time per operation: {proto1 / 1e3:.3g} s for both activations",
        f"the paper's PHE-only Act times: {p_phe[acts].sum() / 1e3:.3g} s (Table 1; Act 1's "
        f"server alone {_paper_cells('table1')[('Act 1', 'opt_phe_server')] / 1e3:.3g} s)",
        "Table 1, rows Act, Optimized - PHE only", s_phe.copy(), s_hyb.copy()))
    return out


def hybrid_ladder(T1: dict, K1: dict, models: dict, units: UnitCosts) -> lad.Ladder:
    """The text's 30 s / 10 s (l. 182): the optimized PHE-only prediction over the hybrid's,
    client-server, from ours to the paper's, one group of its times at a time."""
    tot = _ours_totals(T1, K1)
    ref = report.load_paper(PAPER, "text_claims").set_index("metric")["value"].astype(float)
    ladder = lad.Ladder(PAPER, "§5 Exp. 1 (text)", ex.TEXT_ROW,
                        "hybrid over optimized PHE only speed-up (claim)",
                        ours=float(tot["opt_phe_total"] / tot["opt_hybrid_total"]),
                        target=float(ref["opt_phe_total"] / ref["opt_hybrid_total"]))
    for st in _time_steps(models, units):
        ladder.replace(st.assumption, st.ours_as, st.paper_as, st.phe.sum() / st.hyb.sum(),
                       st.source)
    return ladder


def cryptonets_ladder(T1: dict, K1: dict, models: dict, units: UnitCosts) -> lad.Ladder:
    """The 30-fold over CryptoNets (§1, l. 42): its 297.5 s (quoted, Table 4) over the
    hybrid's prediction, from ours to the paper's Table 1 hybrid times (the steps of
    :func:`_time_steps` that move the hybrid)."""
    ref = report.load_paper(PAPER, "headlines").set_index("row").loc[HEADLINE["vs_he"]]
    cryptonets = _cryptonets_s()
    ladder = lad.Ladder(PAPER, "Headlines", HEADLINE["vs_he"], ref.metric,
                        ours=cryptonets / float(_ours_totals(T1, K1)["opt_hybrid_total"]),
                        target=float(ref.value))
    for st in _time_steps(models, units):
        if st.assumption != "baseline implementation":      # the PHE-only setting's step
            ladder.replace(st.assumption, st.ours_as, st.paper_as,
                           cryptonets / (st.hyb.sum() / 1e3), st.source)
    return ladder


def _cryptonets_s() -> float:
    return float(report.load_paper(PAPER, "table4").set_index(["row", "metric"])
                 .loc[("CryptoNets", "computation_time"), "value"])


def _bandwidth(models: dict) -> tuple[pd.Series, float]:
    bw = ex.bandwidth_frame(models)
    row = bw[(bw.config == "opt_hybrid") & (bw.scenario == "client-server")].iloc[0]
    return row, ex.paper_accounting_mb(models["exp1_hybrid"])


def bandwidth_ladder(models: dict, table: str, row: str, metric: str, target: float,
                     unit: str, of_mb=lambda mb: mb) -> lad.Ladder:
    """A claim on the hybrid's client-server bandwidth (Tables 3, 4; ``of_mb``: the claim as a
    function of the megabytes), from our accounting to the paper's: the input image and the
    output left out, then the paper's conversion (:func:`.paper.paper_accounting_mb`)."""
    bw, paper_mb = _bandwidth(models)
    ladder = lad.Ladder(PAPER, table, row, metric, ours=float(of_mb(bw.total_MB)),
                        target=float(target), unit=unit)
    ladder.replace("accounting", f"a prediction sends the encrypted image and logits "
                   f"({bw.io_MB:.3g} MB)", "inferred: the layers' messages only (the paper's "
                   "PHE-only cells of Table 3 match that)", of_mb(bw.layers_MB), "Table 3")
    ladder.replace("operation counts", "our exact conversions: A2B, truncation, Protocol 3's "
                   f"masked adder and their OT triples ({bw.layers_MB:.3g} MB)",
                   "inferred: " + ex.PAPER_CONVERSION.split(", the input")[0] +
                   f" ({paper_mb:.4g} MB)", of_mb(paper_mb), "Tables 3, 4")
    return ladder


def _headline_ref() -> pd.DataFrame:
    return report.load_paper(PAPER, "headlines").set_index("row")


def headline_values(T1: dict, K1: dict, models: dict) -> pd.DataFrame:
    """Ours for each headline (``row, metric, value, kind, note``), from the tables' runs."""
    ref = _headline_ref()
    tot = _ours_totals(T1, K1)
    kind = K1[("opt_hybrid", "client-server")]
    bw, _ = _bandwidth(models)
    minionn = float(report.load_paper(PAPER, "table4").set_index(["row", "metric"])
                    .loc[("MiniONN", "bandwidth_usage"), "value"])
    cryptonets = _cryptonets_s()
    rows = [
        (HEADLINE["time"], tot["opt_hybrid_total"], kind,
         "Table 4, row SwaNN: our hybrid client-server prediction (client + server of Table 1)"),
        (HEADLINE["bandwidth"], bw.total_MB, "counted",
         "Table 3, row Hybrid (w/ opt.), client-server: layers + input image and output"),
        (HEADLINE["vs_he"], cryptonets / tot["opt_hybrid_total"], kind,
         f"CryptoNets' {cryptonets:g} s (quoted in Table 4) over our hybrid prediction time"),
        (HEADLINE["vs_2pc"], minionn / bw.total_MB, "counted",
         f"MiniONN's {minionn:g} MB (quoted in Table 4) over our counted hybrid bandwidth "
         "(Table 3)"),
    ]
    return pd.DataFrame([(r, ref.loc[r, "metric"], float(v), k, n) for r, v, k, n in rows],
                        columns=["row", "metric", "value", "kind", "note"])


def ladders(T1: dict, K1: dict, models: dict, units: UnitCosts) -> list[lad.Ladder]:
    """Every SwaNN ladder: the headlines short of the paper's and the text's hybrid claim."""
    ref = _headline_ref()
    minionn = float(report.load_paper(PAPER, "table4").set_index(["row", "metric"])
                    .loc[("MiniONN", "bandwidth_usage"), "value"])
    out = [hybrid_ladder(T1, K1, models, units), cryptonets_ladder(T1, K1, models, units)]
    for key, of_mb in (("bandwidth", lambda mb: mb), ("vs_2pc", lambda mb: minionn / mb)):
        r = ref.loc[HEADLINE[key]]
        out.append(bandwidth_ladder(models, "Headlines", HEADLINE[key], r.metric,
                                    float(r.value), r.unit, of_mb))
    return out


def pick(built: list[lad.Ladder], name: str) -> lad.Ladder:
    """The ladder of headline ``name`` (a key of :data:`HEADLINE`), or of the text's hybrid
    claim (``"hybrid"``), among ``built``."""
    row = ex.TEXT_ROW if name == "hybrid" else HEADLINE[name]
    return next(x for x in built if x.row == row)


def headlines(T1: dict, K1: dict, models: dict, units: UnitCosts) -> list[lad.Ladder]:
    """Save SwaNN's ladders, judge and show its headline table; returns the ladders (for the
    waterfalls)."""
    built = ladders(T1, K1, models, units)
    pvo.headlines(PAPER, headline_values(T1, K1, models), built)
    return built
