"""Falcon, semi-honest and malicious, as two :class:`~ppnn.protocols.api.Family` s.

``compile`` rescales the float model by powers of two so that every pre-activation stays in
the range Z_2^32 with ``frac_bits`` = 13 fractional bits can multiply and truncate
(:func:`calibrate`, on the first ``n_calib`` calibration images; ReLU and max-pool are
positively homogeneous, so predictions are unchanged). A residual network first has its
batch-norms folded into the convolutions (the plan runs that network, :meth:`network`); the
rescaling puts both branches of every block at one scale, so the Add is local. ``run``
shares the model (P0..P2, replicated) and the images and runs
:func:`~.network.secure_forward` on the simulator; the dealer's correlated randomness is
booked offline. ``count`` is a dry run on a zero input.
The oracle is the fixed-point forward pass with floor truncation; the protocol truncates to
floor or floor + 1 ulp, so logits agree to a few ulps and predictions are compared.

A recorded run (``ppnn.run(..., record_values=...)``) also keeps what each party holds at
both ends: its replicated share ``(x_i, x_{i+1})`` of the image and of the output logits
(holdings ``"share of the image (x_i, x_{i+1})"`` and ``"share of the logits (x_i,
x_{i+1})"``, fixed point); the run's logits are ``x_0 + x_1 + x_2`` decoded with
``frac_bits`` and multiplied by the plan's output scale.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from ppnn import nn
from ppnn.core import FixedPoint, Ledger, Ring
from ppnn.nn import Residual
from ppnn.nn.canonical import canonicalize
from ppnn.nn.integer import pow2_rescale

from ..api import Costs, Family, FamilySpec, Plan, offline_received
from ..checks import check_int
from .network import secure_forward, share_model
from .runtime import PARTIES, Falcon

__all__ = ["FalconSemiHonest", "FalconMalicious", "calibrate", "RANGE_LIMIT"]

RANGE_LIMIT = 8.0  # keep |pre-activation| below this (products must stay below 16)


def calibrate(net, params, x_cal: np.ndarray, limit: float = RANGE_LIMIT):
    """Falcon's power-of-two rescaling (:func:`ppnn.nn.integer.pow2_rescale` with
    ``limit`` = :data:`RANGE_LIMIT`): returns ``(scaled params, output scale)``."""
    return pow2_rescale(net, params, x_cal, limit)


def _hold_shares(fal: Falcon, name: str, x) -> None:
    """Each party's replicated share ``(x_i, x_{i+1})`` of ``x`` as a holding (stacked on a
    new first axis; recording only): any two holdings reconstruct ``x``."""
    if fal.ledger.records_values:
        C = x.components
        for i, p in enumerate(PARTIES):
            fal.ledger.hold(p, f"{name} (x_{i}, x_{(i + 1) % 3})", C[[i, (i + 1) % 3]])


class _Falcon(Family):
    malicious: bool
    exact = False  # truncation to floor or floor + 1 ulp

    def _compile(self, net, params, calib, frac_bits: int = 13, n_calib: int = 256):
        if calib is None:
            raise ValueError("Falcon needs calibration images (calib=) for its power-of-two "
                             "rescaling")
        # a product carries 2 frac_bits fractional bits in Z_2^32 with room to spare (Falcon's
        # own bound, checked again by the parties): 2 frac_bits <= 32 - 6
        frac_bits = check_int(frac_bits, "frac_bits", 1, (32 - 6) // 2)
        n_calib = check_int(n_calib, "n_calib", 1)
        impl, rewrites = {}, []
        if any(isinstance(layer, Residual) for layer in net.layers):
            # a residual network: batch-norm folded into the convolutions (inference), the
            # blocks' two branches put at one scale by the rescaling
            net, params, rewrites = canonicalize(net, params, relu_before_maxpool=False)
            impl["net"] = net
        scaled, scale = calibrate(net, params, np.asarray(calib)[:n_calib])
        impl |= {"params": scaled, "scale": scale, "frac_bits": int(frac_bits)}
        return impl, {"output_scale": scale} | ({"rewrites": rewrites} if rewrites else {})

    @staticmethod
    def network(plan: Plan):
        """The network the plan runs (a residual one with its batch-norms folded)."""
        return plan.impl.get("net", plan.net)

    def _run(self, plan: Plan, x, rng, backend, runtime=Falcon):
        """``runtime``: the class of the parties (wire mode passes one process's party)."""
        imp = plan.impl
        fal = runtime(rng, malicious=self.malicious, frac_bits=imp["frac_bits"])
        model = share_model(fal, self.network(plan), imp["params"])
        fal.query_begins()  # the model is the server's before any query (wire: online starts)
        t0 = time.perf_counter()
        xs = fal.share_fixed(np.asarray(x, np.float64))
        _hold_shares(fal, "share of the image", xs)
        out, _ = secure_forward(fal, model, xs)
        _hold_shares(fal, "share of the logits", out)
        # the output is opened like any other plain value: booked, every pending product
        # verified first, and (malicious) each party compares the two copies it receives
        with fal.protocol("output"):
            opened = fal.open(out, "logits", "plain", held="logits (opened)")
        logits = fal.fp.decode(opened) * imp["scale"]
        seconds = time.perf_counter() - t0
        prov = {"communication": "counted: ledger of this run (3 parties; dealer material "
                "offline)", "compute": "measured: the 3-party simulator (all parties, dealer "
                "material generated inline)"}
        return logits, fal.ledger, [("online", "input, all layers, output", seconds)], prov

    def oracle(self, plan: Plan, x):
        imp = plan.impl
        fxp = FixedPoint(Ring(32), imp["frac_bits"])
        return fxp.decode(nn.forward_fixed(self.network(plan), imp["params"], x, fxp)) \
            * imp["scale"]

    def describe(self, plan: Plan) -> pd.DataFrame:
        rows = []
        net = self.network(plan)
        ps = nn.node_params(net, plan.impl["params"])
        for node in net.nodes():
            p = ps.get(node.name, {})
            rows.append({"step": node.name, "kind": node.kind,
                         "max |W| (rescaled)": float(np.abs(p["W"]).max()) if "W" in p else None})
        return pd.DataFrame(rows)

    def costs(self, plan: Plan, results, units) -> Costs:
        from .latency import unit_compute_costs

        led = results[0].ledger
        total = float(np.mean([r.seconds for r in results]))
        unit = units.get("Falcon simulator per ReLU / MAC", lambda: {
            f"{op} ({'malicious' if mal else 'semi-honest'})": v for (op, mal), v in
            unit_compute_costs(units.seed, n_relu=2000, mm=(64, 128, 64), repeats=1).items()})
        tag = "malicious" if self.malicious else "semi-honest"
        tot = plan.net.totals()
        lin = tot["macs"] * unit[f"mac ({tag})"]
        non = (tot["relus"] + tot["comparisons"]) * unit[f"relu ({tag})"]
        split = {"linear": total * lin / (lin + non), "nonlinear": total * non / (lin + non)}
        received = offline_received(led, Ledger.DEALER)
        return Costs(
            total, "measured",
            f"the 3-party simulator's run (all parties, dealer material generated inline), mean "
            f"of {len(results)} image(s); split by layer type with measured per-ReLU / per-MAC "
            "costs",
            split, max(received.values(), default=0.0),
            "busiest party: dealer material (triples, truncation pairs, compare randomness)",
            "fixed-point oracle (Z_2^32, 13 fractional bits, floor truncation); the protocol "
            "truncates to floor or floor + 1 ulp, predictions checked on the run subset",
            "Z_2^32, 13 fractional bits, power-of-two rescaling per layer (calibrated)",
            "ledger of a real run (3 parties; dealer material offline)",
            {"malicious": self.malicious})


_LAYERS = ("Conv2d", "Dense", "BatchNorm", "ReLU", "MaxPool", "MeanPool", "Flatten")
_REAL = "nothing: replicated secret sharing needs no cryptography beyond PRF keys"
_SIM = ("the three parties P0, P1, P2 in one process; correlated randomness from a trusted "
        "dealer (booked offline)")
_ENCODING = ("a pixel is x 2^frac_bits in Z_2^32, after a power-of-two rescaling calibrated on "
             "images in this range")


class FalconSemiHonest(_Falcon):
    malicious = False
    spec = FamilySpec("falcon_sh", "Falcon semi-honest", "Falcon", PARTIES,
                      "3PC honest majority, semi-honest", "semi-honest",
                      "honest majority of 3 servers", real=_REAL, simulated=_SIM,
                      layers=_LAYERS, input_encoding=_ENCODING)


class FalconMalicious(_Falcon):
    malicious = True
    spec = FamilySpec("falcon_mal", "Falcon malicious", "Falcon", PARTIES,
                      "3PC honest majority, malicious (abort)", "malicious",
                      "honest majority of 3 servers", real=_REAL, simulated=_SIM,
                      layers=_LAYERS, input_encoding=_ENCODING)
