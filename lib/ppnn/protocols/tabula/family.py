"""Delphi linear layers + Tabula lookup tables as a :class:`~ppnn.protocols.api.Family`.

``compile`` options are :class:`~.network.TabulaConfig`'s fields (``bits``, ``act_frac_bits``,
``weight_frac_bits``, ``margin``); ``run`` executes :func:`~.network.secure_inference`
(Delphi's online phase in Z_2^64, one b-bit table layer per activation, tables from the ideal
dealer, booked offline); ``count`` is a dry run on a zero input (the bookings do not depend
on the values; :func:`~.network.count_network` is the closed form of the online part).
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pandas as pd

from ppnn.core import Ledger
from ppnn.he import gc as gcmod
from ppnn.he.gc_circuits import quant_relu_circuit

from .. import delphi
from ..api import Costs, Family, FamilySpec, Plan, offline_received
from . import network as tn

__all__ = ["DelphiTabula"]


class DelphiTabula(Family):
    exact = False  # local truncation: +-1 ulp, rare wrap errors
    spec = FamilySpec(
        "delphi_tabula", "Delphi + Tabula tables", "Tabula", tn.PARTIES,
        "2PC, semi-honest", "semi-honest", "two parties",
        real="nothing: shares and tables are numpy arrays (the protocol needs no cryptography "
        "online)",
        simulated="Delphi's HE preprocessing (closed form) and the tables' preprocessing "
        "(ideal dealer, booked offline)",
        layers=("Conv2d", "Dense", "BatchNorm", "ReLU", "Square", "MaxPool", "MeanPool",
                "Flatten"),
        input_encoding="a pixel is x 2^act_frac_bits in Z_2^64; each table's shift is "
                       "calibrated on images in this range, and a table input beyond it would "
                       "wrap mod 2^bits")

    def option_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in fields(tn.TabulaConfig))

    def _compile(self, net, params, calib, **options):
        if calib is None:
            raise ValueError("Delphi + Tabula needs calibration images (calib=) to choose "
                             "each table layer's shift")
        plan = tn.build_plan(net, params, np.asarray(calib), tn.TabulaConfig(**options))
        return plan, {"input_bits": [s.input_bits for s in plan.table_layers()]}

    def _run(self, plan: Plan, x, rng, backend, tables: str | None = None):
        led = Ledger(tn.PARTIES)
        tm: dict = {}
        gc = plan.impl.cfg.nonlinear == "gc"
        out = tn.secure_inference(plan.impl, x, rng, led, linear="delphi",
                                  tables=tables or ("gc" if gc else "lazy"), timings=tm)
        times = [("online", k, v) for k, v in tm.items()]
        if gc:
            prov = {"communication": "counted: ledger of this run; garbled circuits booked as "
                    "Delphi's ReLU (tables, OT, labels of r offline; labels of the server's "
                    "share online); Delphi's HE preprocessing from its closed form",
                    "compute": "measured: the simulator's whole run (Delphi masks in the "
                    "clear, online linear layers, garbling and evaluation)"}
        else:
            prov = {"communication": "counted: ledger of this run; tables from the ideal "
                    "dealer (booked offline); Delphi's HE preprocessing from its closed form",
                    "compute": "measured: the simulator's whole run (Delphi masks in the "
                    "clear, online linear layers, table lookups)"}
        return out, led, times, prov

    def _count(self, plan: Plan, batch: int) -> Ledger:
        """A dry run on a zero input; garbled layers are booked without garbling."""
        x = np.zeros((batch, *plan.net.input_shape))
        gc = plan.impl.cfg.nonlinear == "gc"
        return self._run(plan, x, np.random.default_rng(0), "sim",
                         tables="gc-count" if gc else None)[1]

    def oracle(self, plan: Plan, x):
        return tn.plain_inference(plan.impl, x)

    def describe(self, plan: Plan) -> pd.DataFrame:
        return pd.DataFrame(plan.impl.summary())

    def accuracy_predictions(self, plan: Plan, x, rng):
        if plan.impl.cfg.nonlinear == "gc":
            return super().accuracy_predictions(plan, x, rng)
        preds = np.concatenate([
            tn.secure_inference(plan.impl, x[j:j + 250], rng, Ledger(tn.PARTIES),
                                linear="ideal", tables="lazy").argmax(axis=1)
            for j in range(0, len(x), 250)])
        return preds, "the protocol on every accuracy image (ideal linear layers, lazy tables)"

    def costs(self, plan: Plan, results, units) -> Costs:
        cfg = plan.impl.cfg
        t = pd.concat([r.timings for r in results]).groupby("layer")["seconds"].sum() \
            / len(results)
        mean = {k: float(t.get(k, 0.0)) for k in ("linear", "nonlinear", "local")}
        if cfg.nonlinear == "gc":
            led, stored = results[0].ledger, 0
            for st in plan.impl.table_layers():
                c = quant_relu_circuit(st.info["gc_bits"], cfg.ring.k, st.info["gc_shift"])
                n = led.op_count("garble", label=st.name) // c.n_and
                stored += n * gcmod.gc_cost(c).evaluator_storage_delphi_relu / 8
            what = ("garbling and evaluation", "garbled tables, its input labels, the labels of "
                    "the server's mask r and decoding bits per ReLU",
                    "the integer oracle (Tabula's plan without tables), predictions compared",
                    f"{cfg.bits}-bit garbled ReLU inputs", "GC sizes exact")
        else:
            stored = offline_received(results[0].ledger, Ledger.DEALER).get("client", 0.0)
            what = ("table lookups; tables drawn lazily (ideal dealer)",
                    f"one {cfg.bits}-bit table of 2^{cfg.bits} ring elements per activation",
                    "the protocol on every accuracy image (ideal linear layers, lazy tables)",
                    f"{cfg.bits}-bit tables", "tables from the ideal dealer (booked offline)")
        return Costs(
            sum(mean.values()), "measured",
            f"the simulator's whole run, mean of {len(results)} image(s): Delphi masks (in the "
            f"clear) and online linear layers, {what[0]}",
            {"linear": mean["linear"] + mean["local"], "nonlinear": mean["nonlinear"]},
            stored + delphi.mask_bits(plan.net, 64) / 8,
            f"client: {what[1]}, Delphi masks", what[2],
            f"{what[3]}, per-layer static shifts (calibrated), Z_2^64, f = 12; local "
            "truncation (+-1 ulp, rare wrap errors)",
            f"ledger of a real run; {what[4]}; Delphi's HE preprocessing from its closed form",
            {"bits": cfg.bits})
