"""GAZELLE / GALA linear layers + garbled-circuit ReLU, end to end (GALA §II, Fig. 5).

Per linear layer the client and server run :func:`ppnn.protocols.gala.run_linear` with the
chosen kernels (GAZELLE's hybrid matrix-vector and output-rotation convolution, or GALA's
rotation-frugal ones): the client sends ``[x]_C``, the server evaluates the kernel on
ciphertexts, sends back ``[y - r]_C`` and both hold shares mod the plaintext prime ``p``. The
server adds its bias to its share. Then one garbled circuit per activation output
(:mod:`.gc_act`, mod ``p``) reduces and centres the shares, takes the max-pool window's
maximum, applies ReLU, the fixed-point rescale (``>> f_w``) and the public clip of GALA's
fixed-point plan, and re-shares the result mod ``p``; all of it online (GAZELLE's flow, and
what the GALA module's projections book).

Between layers nobody holds the activation: the garbled circuit leaves ``z`` with the client
and ``r`` with the server (``z + r = y`` mod ``p``). The next layer runs GAZELLE's flow: the
client encrypts and sends its share ``[z]_C``, the server adds ``r`` under encryption (one
AddPlain per input ciphertext, booked) and evaluates the kernel on ``[z + r]_C = [y]_C``. Only
the first layer encrypts a value in the clear: the client's own image.

The integer network and its oracle are GALA's own (:mod:`ppnn.protocols.gala.network`):
:func:`secure_inference` returns :func:`~ppnn.protocols.gala.network.integer_forward`'s
logits bit for bit: the server sends its share of the logits and the client computes
``centered(client's share + server's share mod p)``.

A recorded run keeps every share (the GC's ``z`` and ``r``, the shares of the logits), the
garbler's real bytes (tables, labels, decoding bits: size + digest) and, on the slot
simulator, lists the ciphertexts, the Galois keys and the OT columns ``SIZE_ONLY``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ppnn.core import Ledger
from ppnn.nn import Conv2d, Dense, Flatten, MaxPool, Network, ReLU
from ppnn.nn.canonical import canonicalize
from ppnn.protocols.gala import GalaConv, GalaMatVec, centered, run_linear
from ppnn.protocols.gala.network import fixed_point_plan, integer_forward, quantize_input
from ppnn.protocols.gazelle import GazelleConv, GazelleMatVec

from . import gc_act
from .api import Costs, Family, FamilySpec, Plan, split_one_time
from .delphi_gc import _windows

__all__ = ["KERNELS", "HEGCPlan", "secure_inference", "PARTIES", "GazelleGC", "GalaGC"]

PARTIES = ("client", "server")
KERNELS = {"GAZELLE": (GazelleMatVec, GazelleConv), "GALA": (GalaMatVec, GalaConv)}


@dataclass
class Step:
    kind: str  # linear | act | flatten
    name: str
    layer: object = None
    q: object = None  # gala.network.LayerQ
    last: bool = False
    pool: MaxPool | None = None
    spec: gc_act.ActSpec | None = None


@dataclass
class HEGCPlan:
    """GALA's fixed-point plan of ``net`` for plaintext prime ``p`` and the protocol steps."""

    net: Network
    p: int
    f_x: int
    qplan: list
    steps: list = field(default_factory=list)

    @classmethod
    def build(cls, net: Network, params, x_calib: np.ndarray, p: int, f_x: int = 6
              ) -> HEGCPlan:
        qplan = fixed_point_plan(net, params, x_calib, p, f_x)
        qs = {q.index: q for q in qplan}
        names, layers = net.layer_names, list(net.layers)
        k = int(p).bit_length()
        steps: list[Step] = []
        i = 0
        while i < len(layers):
            layer, name = layers[i], names[i]
            if isinstance(layer, Conv2d | Dense):
                q = qs[i]
                steps.append(Step("linear", name, layer, q, last=q.clip is None))
                if isinstance(layers[i + 1] if i + 1 < len(layers) else None, ReLU):
                    pool = layers[i + 2] if i + 2 < len(layers) else None
                    pool = pool if isinstance(pool, MaxPool) else None
                    m = pool.kernel**2 if pool is not None else 1
                    steps.append(Step("act", names[i + 1], layers[i + 1], q, pool=pool,
                                      spec=gc_act.ActSpec(k, q.f_w, m, p=int(p),
                                                          clip=q.clip)))
                    i += 3 if pool is not None else 2
                    continue
                if q.clip is not None:
                    raise ValueError(f"{name}: a hidden linear layer must be followed by ReLU")
            elif isinstance(layer, Flatten):
                steps.append(Step("flatten", name, layer))
            else:
                raise ValueError(f"{name} ({layer.kind}) is not supported by the HE-GC runner "
                                 "(Conv2d/Dense, ReLU [+ MaxPool], Flatten)")
            i += 1
        return cls(net, int(p), f_x, qplan, steps)

    def forward_int(self, x) -> np.ndarray:
        """GALA's exact integer pipeline on float images (the oracle)."""
        return integer_forward(self.net, self.qplan, quantize_input(x, self.f_x))

    def predict(self, x, batch: int = 500) -> np.ndarray:
        x = np.asarray(x)
        return np.concatenate([self.forward_int(x[i:i + batch]).argmax(axis=1)
                               for i in range(0, len(x), batch)])


def secure_inference(plan: HEGCPlan, x: np.ndarray, he, method: str,
                     rng: np.random.Generator, ledger: Ledger | None = None,
                     label_rng: np.random.Generator | None = None) -> tuple[np.ndarray, dict]:
    """Classify ONE image ``x`` (C, H, W) with ``method`` ("GAZELLE" or "GALA") kernels on the
    BFV backend ``he`` (plaintext modulus ``plan.p``); returns the integer logits and the
    measured GC seconds ``{"garble_s", "evaluate_s"}``."""
    if method not in KERNELS:
        raise ValueError(f"method must be one of {tuple(KERNELS)}, got {method!r}")
    if he.p != plan.p:
        raise ValueError(f"the backend's plaintext modulus {he.p} differs from the plan's "
                         f"{plan.p}")
    x = np.asarray(x)
    if x.shape != tuple(plan.net.input_shape):
        raise ValueError(f"x must be one image of shape {plan.net.input_shape}, got {x.shape}")
    ledger = ledger if ledger is not None else Ledger(PARTIES)
    matvec, conv = KERNELS[method]
    p = plan.p
    a = quantize_input(x[None], plan.f_x)[0]  # the client's input, then the client's share
    a_srv = None  # the server's share of a layer's input (None: the client holds the input)
    shares = None
    t = {"garble_s": 0.0, "evaluate_s": 0.0}
    for st in plan.steps:
        if st.kind == "linear":
            q, layer = st.q, st.layer
            if isinstance(layer, Dense):
                a = a.reshape(-1)
                a_srv = None if a_srv is None else a_srv.reshape(-1)
                kern = matvec(q.W.shape[0], q.W.shape[1], he.n)
                bias = q.b
            else:
                c, h, w = a.shape
                kern = conv(c, layer.out_channels, h, w, layer.kernel, he.n, layer.padding,
                            layer.stride)
                bias = q.b.reshape(-1, 1, 1)
            # GAZELLE's flow: the client encrypts its share, the server adds its own (AddPlain)
            res = run_linear(kern, he, q.W, a, rng, ledger, st.name, x_bound=q.x_bound,
                             x_server=a_srv)
            shares = (np.mod(res.client_share, p),
                      np.mod(res.server_share + bias, p))  # the server adds its bias
            if not st.last:  # the last layer's shares are the logits' (held below)
                with ledger.label(st.name):
                    ledger.hold("client", "its share of the layer output (y - r, decrypted)",
                                shares[0])
                    ledger.hold("server", "its share of the layer output (r + bias)", shares[1])
        elif st.kind == "act":
            with ledger.label(st.name):
                cw, sw = (_windows(s[None], st.pool)[0] for s in shares)
                out_shape = cw.shape[:-1]
                z, r, tg = gc_act.garbled_activation(cw.reshape(-1, st.spec.m),
                                                     sw.reshape(-1, st.spec.m), st.spec,
                                                     rng, label_rng, keep=ledger.records_values)
                gc_act.book_gc(ledger, z.size, gc_act.act_circuit(st.spec), "online",
                               PARTIES, wire=tg.get("wire"))
                ledger.hold("client", "z (its share of the activation, decoded from the GC)", z)
                ledger.hold("server", "r (its GC output mask = its share of the activation)", r)
            t["garble_s"] += tg["garble_s"]
            t["evaluate_s"] += tg["evaluate_s"]
            # the activation stays shared: z for the client, r for the server (nobody holds it)
            a = (z.astype(np.int64) % p).reshape(out_shape)
            a_srv = (r.astype(np.int64) % p).reshape(out_shape)
        else:
            a = a.reshape(-1)
            a_srv = None if a_srv is None else a_srv.reshape(-1)
    with ledger.label("output"):
        ledger.hold("client", "client's share of the logits", shares[0])
        ledger.send("server", "client", int(shares[1].size) * int(p).bit_length(),
                    "server's share of the logits", value=shares[1])
    return centered(shares[0] + shares[1], p)[None], t


# -- the family interface ------------------------------------------------------------------
class _HEGC(Family):
    """GAZELLE or GALA kernels + garbled ReLU. ``compile`` options: ``n`` (BFV ring degree of
    the slot simulator, 2048) and ``f_x`` (input fraction bits, 6)."""

    method: str

    def _compile(self, net, params, calib, n: int = 2048, f_x: int = 6):
        from ppnn.he.bfv.sim import BFVSim

        if calib is None:
            raise ValueError(f"{self.spec.name} needs calibration images (calib=) for GALA's "
                             "fixed-point plan")
        p = BFVSim(n=n).p
        net, params, rewrites = canonicalize(net, params)
        plan = HEGCPlan.build(net, params, np.asarray(calib), p, f_x)
        return {"plan": plan, "n": n}, {"p": p, "rewrites": rewrites}

    def _run(self, plan: Plan, x, rng, backend):
        from ppnn.he.bfv.sim import BFVSim

        hp, he = plan.impl["plan"], BFVSim(n=plan.impl["n"])
        ledger, logits, g, e = Ledger(PARTIES), [], 0.0, 0.0
        for i in range(len(x)):
            led = Ledger(PARTIES)
            z, t = secure_inference(hp, x[i], he, self.method, rng, led)
            ledger.merge(led)
            logits.append(z[0])
            g, e = g + t["garble_s"], e + t["evaluate_s"]
        prov = {"communication": "counted: ledger of this run on the BFV slot simulator "
                "(identical counts to SEAL) with real garbled circuits mod p (all online); "
                "between layers the client encrypts its share and the server adds its own "
                "(AddPlain, GAZELLE's flow)",
                "compute": "measured: garbling and evaluation; HE operations are counted (the "
                "simulator's time is not a SEAL time)"}
        return np.stack(logits), ledger, [("online", "garbling", g), ("online", "evaluation",
                                                                        e)], prov

    def oracle(self, plan: Plan, x):
        return plan.impl["plan"].forward_int(x)

    def describe(self, plan: Plan) -> pd.DataFrame:
        rows = []
        for st in plan.impl["plan"].steps:
            q = st.q
            rows.append({"step": st.name, "kind": st.kind,
                         "weight_frac_bits": getattr(q, "f_w", None) if st.kind != "flatten"
                         else None,
                         "clip": getattr(q, "clip", None) if st.kind == "act" else None,
                         "window": st.spec.m if st.spec is not None else None})
        return pd.DataFrame(rows)

    def costs(self, plan: Plan, results, units) -> Costs:
        from ppnn.protocols.gala.runtime import project_seconds

        hp = plan.impl["plan"]
        unit = _seal_units(units)
        led, keys = split_one_time(results[0].ledger)
        he_ops = ("Perm", "HstPerm", "DecPerm", "ScMult", "Add")
        lin = sum(project_seconds({op: led.op_count(op, label=st.name) for op in he_ops}, unit)
                  for st in hp.steps if st.kind == "linear")
        gcs = [float(r.timings["seconds"].sum()) for r in results]
        # GAZELLE and GALA garble identical circuits on identical shares: one measurement
        # (the first of the two to run) serves both, so load noise cannot reorder them
        first = units.shared("hegc_gc_seconds", lambda: (self.method, gcs))
        gc_s = float(np.mean(first[1]))
        return Costs(
            lin + gc_s, "projected + measured",
            f"HE: counted operations x SEAL unit costs measured here (N = 4096, no hoisting); "
            f"GC: measured garbling + evaluation in the {first[0]} run (identical circuits for "
            f"GAZELLE and GALA), mean of {len(first[1])} image(s); client encryption and "
            "decryption not included",
            {"linear": lin, "nonlinear": gc_s},
            max(keys.values(), default=0.0), "server: Galois (rotation) keys sent once by the "
            "client (one-time, not in the communication columns)",
            "GALA's integer oracle (= protocol output bit for bit, checked)",
            f"GALA's fixed-point plan: plaintext prime p = {hp.p} (20 bits), inputs 2^-6, "
            "per-layer weight bits, clipped activations",
            "ledger of a run on the BFV slot simulator (identical counts to SEAL) with real "
            "garbled circuits mod p (all online); between layers the client encrypts its "
            "share and the server adds its own under encryption (AddPlain, GAZELLE's flow)",
            {"he_s": lin, "gc_s": gc_s})


def _seal_units(units) -> pd.DataFrame:
    def measure():
        from ppnn.he.bfv.seal import SealBFV
        from ppnn.protocols.gala.runtime import unit_costs

        return unit_costs(SealBFV(poly_degree=4096, plain_bits=20), reps=10 if units.quick
                          else 40, seed=units.seed)

    return units.get("SEAL BFV (N=4096) per operation", measure)


_LAYERS = ("Conv2d", "Dense", "BatchNorm", "ReLU", "MaxPool", "Flatten")
_REAL = "garbled circuits (half-gates, free-XOR, fixed-key AES) mod p"
_SIM = ("BFV on the slot simulator (same operation counts and ciphertext sizes as SEAL; the "
        "kernels run on real SEAL in 02_gala); OT simulated: the client's input labels are "
        "handed over and the IKNP OT is booked, not run")


class GazelleGC(_HEGC):
    method = "GAZELLE"
    spec = FamilySpec("gazelle_gc", "GAZELLE linear + GC ReLU", "GALA (baseline)", PARTIES,
                      "2PC, semi-honest", "semi-honest", "two parties", real=_REAL,
                      simulated=_SIM, layers=_LAYERS)


class GalaGC(_HEGC):
    method = "GALA"
    spec = FamilySpec("gala_gc", "GALA linear + GC ReLU", "GALA", PARTIES,
                      "2PC, semi-honest", "semi-honest", "two parties", real=_REAL,
                      simulated=_SIM, layers=_LAYERS)
