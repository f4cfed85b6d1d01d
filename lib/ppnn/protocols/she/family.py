"""SHE (TFHE Boolean gates, log-quantized weights) as a :class:`~ppnn.protocols.api.Family`.

``compile`` is :func:`~.quant.compile_network` (options ``scheme`` "she" | "tcn",
``weight_bits``, ``guard_bits``, ``act_bits``, ``in_bits``); give it the float parameters
you want quantized -- the comparison passes the fine-tuned ones of :func:`.models.trained`.
``run`` is :func:`~.network.encrypted_inference`, one image at a time, on the bit simulator
(``backend="sim"``: the gates, bootstraps and depths tfhe-rs would count) or on real tfhe-rs
(``"real"``: only for networks small enough, each bootstrapped gate taking milliseconds).
``count`` is a dry run of one image on the bit simulator, repeated per image (every gate
decision is public, so the cost of an image does not depend on its pixels).
``ppnn.run(plan, x, backend=..., transport="tcp")`` runs the client and the server as two
processes (:mod:`ppnn.wire.she`; on "real" the secret key stays in the client's process).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppnn.core import Ledger
from ppnn.he.bitsim import BitSimulator
from ppnn.nn.canonical import canonicalize

from ..api import Costs, Family, FamilySpec, Plan
from . import network
from .quant import QPool, QResidual, QSum, compile_network

__all__ = ["SHE", "tfhe_key_bytes"]

PARTIES = ("client", "server")


def tfhe_key_bytes(params: dict) -> float:
    """Server key of tfhe-rs Boolean parameters (formula, 32-bit torus): the bootstrapping key
    ``n (k + 1)^2 l_pbs N`` and the key-switching key ``k N l_ks (n + 1)`` words of 4 bytes."""
    n, k, N = params["lwe_dimension"], params["glwe_dimension"], params["polynomial_size"]
    bsk = n * (k + 1) ** 2 * params["pbs_level"] * N
    ksk = k * N * params["ks_level"] * (n + 1)
    return 4.0 * (bsk + ksk)


def _kind(op) -> str:
    return getattr(op, "kind", None) or {QPool: "maxpool", QSum: "meanpool",
                                         QResidual: "add"}[type(op)]


def _label(op) -> str:
    """The ledger label of an op (a residual block books its adder as ``<block>.add``)."""
    return f"{op.name}.add" if isinstance(op, QResidual) else op.name


class SHE(Family):
    spec = FamilySpec(
        "she", "SHE (TFHE gates, log-quantized)", "SHE", PARTIES,
        "client-server FHE, semi-honest server, non-interactive", "semi-honest", "two parties",
        real="TFHE Boolean gates on tfhe-rs (our PyO3 binding) with backend='real'",
        simulated="the bit simulator with backend='sim' (same gates, bootstraps and depth as "
        "tfhe-rs)",
        layers=("Conv2d", "Dense", "BatchNorm", "ReLU", "MaxPool", "MeanPool", "Flatten",
                "Residual"),
        backends=("sim", "real"),
        input_encoding="a pixel is an unsigned in_bits-bit integer, round(x 2^in_bits) "
                       "saturated at the top code")
    count_method = "dry run of one image (costs do not depend on the pixels)"

    def _compile(self, net, params, calib, scheme: str = "she", weight_bits: int = 5,
                 guard_bits: int = 2, act_bits: int = 5, in_bits: int = 5):
        if calib is None:
            raise ValueError("SHE needs calibration images (calib=) for its activation scales")
        net, params, rewrites = canonicalize(net, params, fold_bn=False)
        qnet = compile_network(net, params, np.asarray(calib), scheme, weight_bits=weight_bits,
                               act_bits=act_bits, in_bits=in_bits, guard_bits=guard_bits)
        return qnet, {"scheme": scheme, "rewrites": rewrites}

    distributes_gates = True

    def _backend(self, backend, client=None):
        if backend == "real":
            from ppnn.he.tfhe import DaskTfheBackend, TfheBackend

            if client is not None:
                return DaskTfheBackend(client, public_constants=False)
            return TfheBackend(public_constants=False)
        return BitSimulator(public_constants=False)

    def _run(self, plan: Plan, x, rng, backend, client=None):
        qnet = plan.impl
        ledger, logits, times = Ledger(PARTIES), [], []
        for i in range(len(x)):
            led = Ledger(PARTIES)
            res = network.encrypted_inference(qnet, self._backend(backend, client),
                                              qnet.encode_input(x[i:i + 1]), ledger=led)
            ledger.merge(led)
            logits.append(res.logits[0])
            times += [("online", r.layer, r.seconds) for r in res.layers.itertuples()]
            times += [("client", "encrypt", res.encrypt_seconds),
                      ("client", "decrypt", res.decrypt_seconds)]
        prov = {"communication": "counted: encrypted input bits and logits (tfhe-rs "
                "ciphertext size)",
                "compute": ("measured on tfhe-rs" if backend == "real" else
                            "counted gates and bootstraps on the bit simulator (its time is "
                            "not a TFHE time; project with a measured seconds per gate)")}
        return np.stack(logits), ledger, times, prov

    def _count(self, plan: Plan, batch: int) -> Ledger:
        one = Ledger(PARTIES)
        network.encrypted_inference(plan.impl, BitSimulator(public_constants=False),
                                    np.zeros((1, int(np.prod(plan.net.input_shape))), np.int64),
                                    ledger=one)
        out = Ledger(PARTIES)
        for _ in range(batch):
            out.merge(one)
        return out

    def oracle(self, plan: Plan, x):
        return plan.impl.forward_int(plan.impl.encode_input(x))

    def describe(self, plan: Plan) -> pd.DataFrame:
        rows = []
        for op in plan.impl.leaf_ops():
            rows.append({"step": _label(op), "kind": _kind(op), "outputs": op.n_out,
                         "terms": op.n_terms if hasattr(op, "n_terms") else None})
        return pd.DataFrame(rows)

    def costs(self, plan: Plan, results, units) -> Costs:
        from ppnn.he.tfhe import TfheBackend, binding_available

        from .latency import gate_latency

        led = results[0].ledger
        boots = led.op_count("bootstrap")
        if binding_available():
            def measure():
                be = TfheBackend()
                g = gate_latency(be, single=3 if units.quick else 7, batch=32)
                return {**g, "per_gate_s": min(g["and_single_s"], g["and_batched_s_per_gate"]),
                        "key_bytes": tfhe_key_bytes(be.parameters)}

            g = units.get("tfhe-rs Boolean gate", measure)
            per_gate, key_bytes = g["per_gate_s"], g["key_bytes"]
            kind = "projected"
            note = (f"{boots:,} bootstrapped gates (counted) x {per_gate * 1e3:.1f} ms per gate "
                    "measured on tfhe-rs here (best of one gate and a 32-gate batch on all "
                    "cores)")
        else:  # pragma: no cover - depends on the environment
            per_gate, key_bytes, kind = float("nan"), float("nan"), "not available"
            note = "the tfhe-rs binding is not installed: no gate latency measured"
        by_op = {_label(op): _kind(op) != "maxpool" for op in plan.impl.leaf_ops()}
        lin_boots = sum(led.op_count("bootstrap", label=n) for n, lin in by_op.items() if lin)
        pool_boots = sum(led.op_count("bootstrap", label=n) for n, lin in by_op.items()
                         if not lin)
        wb, gb = plan.options.get("weight_bits", 5), plan.options.get("guard_bits", 2)
        return Costs(
            boots * per_gate, kind, note,
            {"linear": lin_boots * per_gate, "nonlinear": pool_boots * per_gate},
            key_bytes, "server: tfhe-rs bootstrapping + key-switching key (formula)",
            "SHE's integer model (= encrypted logits exactly, checked)",
            f"{wb}-bit log-quantized weights (fine-tuned), 5-bit activations, {gb} guard bits; "
            "ReLU units fused into the linear layers' gates",
            "encrypted input bits and logits only (tfhe-rs ciphertext size)",
            {"bootstraps": boots, "per_gate_s": per_gate, "depth": led.max_depth("md")})
