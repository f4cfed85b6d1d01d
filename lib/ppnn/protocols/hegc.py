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
from ppnn.he.bfv.security import (
    SESSION_KAPPA,
    SESSION_QUERIES,
    check_128,
    flood_bits_for_session,
    max_q_bits_128,
    session_log2_distance,
)
from ppnn.nn import Conv2d, Dense, Flatten, MaxPool, Network, ReLU
from ppnn.nn.canonical import canonicalize
from ppnn.protocols.checks import check_int
from ppnn.protocols.gala import GalaConv, GalaMatVec, centered, run_linear
from ppnn.protocols.gala.network import fixed_point_plan, integer_forward, quantize_input
from ppnn.protocols.gazelle import GazelleConv, GazelleMatVec

from . import gc_act
from .api import Costs, Family, FamilySpec, Plan, split_one_time
from .delphi_gc import _windows

__all__ = ["KERNELS", "HEGCPlan", "secure_inference", "PARTIES", "GazelleGC", "GalaGC",
           "GazelleGCNoFlood", "GalaGCNoFlood", "HE_PARAMS", "linear_inputs",
           "returned_ciphertexts"]

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
                bias = q.b
            else:
                bias = q.b.reshape(-1, 1, 1)
            kern = _kernel(method, st, a.shape, he.n)
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


def _kernel(method: str, st: Step, shape: tuple, n: int):
    """The HE kernel of linear step ``st`` on an input of ``shape`` with ``n`` slots."""
    matvec, conv = KERNELS[method]
    if isinstance(st.layer, Dense):
        return matvec(st.q.W.shape[0], st.q.W.shape[1], n)
    c, h, w = shape
    return conv(c, st.layer.out_channels, h, w, st.layer.kernel, n, st.layer.padding,
                st.layer.stride)


def linear_inputs(plan: HEGCPlan):
    """``(step, input shape)`` of every linear step of ``plan`` (a Dense layer's input
    flattened, as :func:`secure_inference` packs it)."""
    shapes = plan.net.shapes()
    for st in plan.steps:
        if st.kind == "linear":
            shape = shapes[st.q.index]
            yield st, (int(np.prod(shape)),) if isinstance(st.layer, Dense) else tuple(shape)


def returned_ciphertexts(plan: HEGCPlan, method: str, n: int) -> int:
    """Ciphertexts the server returns per query (``[y - r]_C`` of every linear layer), counted
    by running each layer's kernel on the counting backend (shapes only, no values)."""
    from ppnn.he.bfv.sim import BFVSim

    total = 0
    for st, shape in linear_inputs(plan):
        kern = _kernel(method, st, shape, n)
        he = BFVSim(n=n, values=False)
        he.keygen(kern.rotation_steps())
        ct = he.encrypt(kern.pack_input(np.zeros(shape, np.int64)))
        total += kern.evaluate(he, ct, None).size
    return total


# -- the family interface ------------------------------------------------------------------
#: the HE parameters of the families. ``secure`` (default): SEAL's 128-bit N = 8192 (its
#: BFVDefault modulus: four ciphertext primes of 174 bits and a 44-bit special prime, 218 bits =
#: the HE Standard's bound), all 4096 slots of a SEAL row, every returned ciphertext flooded.
#: ``paper``: GAZELLE's and GALA's own setting (gala.txt §V): N = n = 2048, a 60-bit q, no
#: flooding -- no circuit privacy, and q above the 54 bits the standard allows at N = 2048.
HE_PARAMS = {
    "secure": {"n": 4096, "poly_degree": 8192, "q_bits": 174, "special_bits": 44,
               "key_primes": 4},
    "paper": {"n": 2048, "poly_degree": 2048, "q_bits": 60, "special_bits": 0,
              "key_primes": 1},
}


class _HEGC(Family):
    """GAZELLE or GALA kernels + garbled ReLU. ``compile`` options: ``n`` (slots per
    ciphertext; default that of the family's parameter set), ``f_x`` (input fraction bits, 6),
    ``kappa`` and ``queries`` (the flooding's session: statistical distance at most
    ``2^-kappa`` over ``queries`` queries under one key pair; see
    :mod:`ppnn.he.bfv.security`)."""

    method: str
    params_name = "secure"
    circuit_privacy = True

    def security_shortfalls(self, options: dict) -> list[str]:
        kappa = check_int(options.get("kappa", SESSION_KAPPA), "kappa", 1, 256)
        check_int(options.get("queries", SESSION_QUERIES), "queries", 1, 1 << 40)
        if self.circuit_privacy and kappa < SESSION_KAPPA:
            return [f"kappa = {kappa} < {SESSION_KAPPA}: the flooding's statistical distance "
                    f"per session would be 2^-{kappa}, not the claimed 2^-{SESSION_KAPPA}"]
        return []

    def _compile(self, net, params, calib, n: int | None = None, f_x: int = 6,
                 kappa: int = SESSION_KAPPA, queries: int = SESSION_QUERIES):
        from ppnn.he.bfv.sim import BFVSim, batching_prime

        f_x = check_int(f_x, "f_x", 0, 16)
        if calib is None:
            raise ValueError(f"{self.spec.name} needs calibration images (calib=) for GALA's "
                             "fixed-point plan")
        he_args = dict(HE_PARAMS[self.params_name])
        N = he_args["poly_degree"]
        if n is not None:
            top = N // 2 if N > he_args["n"] else N
            if isinstance(n, bool) or not isinstance(n, int) or n < 2 or top % n or n & (n - 1):
                raise ValueError(f"n must be a power of two dividing {top} (slots at N = {N}), "
                                 f"got {n!r}")
            he_args["n"] = n
        if self.circuit_privacy:
            check_128(N, he_args["q_bits"] + he_args["special_bits"], self.spec.name)
        p = batching_prime(20, N)  # the slot simulator's and SEAL's 20-bit plaintext prime
        net, params, rewrites = canonicalize(net, params)
        plan = HEGCPlan.build(net, params, np.asarray(calib), p, f_x)
        session = {"kappa": None, "queries": None, "ciphertexts": None, "flood_bits": 0,
                   "log2_distance": 0.0}
        if self.circuit_privacy:
            cts = returned_ciphertexts(plan, self.method, he_args["n"])
            bits = flood_bits_for_session(kappa, N, cts, queries)
            session = {"kappa": kappa, "queries": queries, "ciphertexts": cts,
                       "flood_bits": bits,
                       "log2_distance": session_log2_distance(bits, N, cts, queries)}
            BFVSim(**he_args, flood_bits=bits)  # raises now if q has no room for the flooding
        return ({"plan": plan, "he": he_args, "session": session},
                {"p": p, "rewrites": rewrites, "N": N, "log2_q": he_args["q_bits"],
                 "flood_bits": session["flood_bits"]})

    def he_backend(self, plan: Plan):
        """The slot simulator with the plan's parameters (flooding on unless the variant has
        no circuit privacy)."""
        from ppnn.he.bfv.sim import BFVSim

        return BFVSim(**plan.impl["he"], flood_bits=plan.impl["session"]["flood_bits"])

    def _run(self, plan: Plan, x, rng, backend):
        hp, he = plan.impl["plan"], self.he_backend(plan)
        ledger, logits, g, e = Ledger(PARTIES), [], 0.0, 0.0
        for i in range(len(x)):
            led = Ledger(PARTIES)
            z, t = secure_inference(hp, x[i], he, self.method, rng, led)
            ledger.merge(led)
            logits.append(z[0])
            g, e = g + t["garble_s"], e + t["evaluate_s"]
        prov = {"communication": "counted: ledger of this run on the BFV slot simulator "
                f"({self._params_text(plan)}; identical counts to SEAL) with real garbled "
                "circuits mod p (all online); between layers the client encrypts its share "
                "and the server adds its own (AddPlain, GAZELLE's flow)",
                "compute": "measured: garbling and evaluation; HE operations are counted (the "
                "simulator's time is not a SEAL time)"}
        return np.stack(logits), ledger, [("online", "garbling", g), ("online", "evaluation",
                                                                        e)], prov

    def _params_text(self, plan: Plan) -> str:
        h, ses = plan.impl["he"], plan.impl["session"]
        text = (f"N = {h['poly_degree']}, {h['q_bits']}-bit q, {h['n']} slots")
        if not self.circuit_privacy:
            return text + (", no flooding: no circuit privacy (the paper's setting; q above "
                           "the 128-bit bound)")
        return text + (f", flooded with {ses['flood_bits']} bits per coefficient: statistical "
                       f"distance <= 2^{ses['log2_distance']:.0f} over {ses['queries']} "
                       f"queries x {ses['ciphertexts']} returned ciphertexts x "
                       f"{h['poly_degree']} coefficients")

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
        unit = _seal_units(units, plan.impl["he"]["poly_degree"])
        led, keys = split_one_time(results[0].ledger)
        he_ops = ("Perm", "HstPerm", "DecPerm", "ScMult", "Add")
        steps = [st for st in hp.steps if st.kind == "linear"]
        lin = sum(project_seconds({op: led.op_count(op, label=st.name) for op in he_ops}, unit)
                  for st in steps)
        # flooding: one server encryption of zero per returned ciphertext (its two Adds are in
        # the Add count above)
        lin += sum(led.op_count("Enc", label=st.name, party="server")
                   for st in steps) * float(unit["seconds"].get("Enc", 0.0))
        gcs = [float(r.timings["seconds"].sum()) for r in results]
        # GAZELLE and GALA garble identical circuits on identical shares: one measurement
        # (the first of the two to run) serves both, so load noise cannot reorder them
        first = units.shared("hegc_gc_seconds", lambda: (self.method, gcs))
        gc_s = float(np.mean(first[1]))
        return Costs(
            lin + gc_s, "projected + measured",
            f"HE: counted operations x SEAL unit costs measured here "
            f"(N = {_unit_degree(plan.impl['he']['poly_degree'])}, no hoisting; flooding: one "
            "encryption of zero per returned ciphertext); "
            f"GC: measured garbling + evaluation in the {first[0]} run (identical circuits for "
            f"GAZELLE and GALA), mean of {len(first[1])} image(s); client encryption and "
            "decryption not included",
            {"linear": lin, "nonlinear": gc_s},
            max(keys.values(), default=0.0), "server: Galois (rotation) keys sent once by the "
            "client (one-time, not in the communication columns)",
            "GALA's integer oracle (= protocol output bit for bit, checked)",
            f"GALA's fixed-point plan: plaintext prime p = {hp.p} (20 bits), inputs 2^-6, "
            "per-layer weight bits, clipped activations",
            f"ledger of a run on the BFV slot simulator ({self._params_text(plan)}; identical "
            "counts to SEAL) with real garbled circuits mod p (all online); between layers the "
            "client encrypts its share and the server adds its own under encryption "
            "(AddPlain, GAZELLE's flow)",
            {"he_s": lin, "gc_s": gc_s})


def _unit_degree(poly_degree: int) -> int:
    """SEAL's N for the unit costs: the parameters' own (SEAL has no key switching at 2048:
    the paper's N = 2048 is measured at 4096)."""
    return max(4096, int(poly_degree))


def _seal_units(units, poly_degree: int = 4096) -> pd.DataFrame:
    N = _unit_degree(poly_degree)

    def measure():
        from ppnn.he.bfv.seal import SealBFV
        from ppnn.protocols.gala.runtime import unit_costs

        return unit_costs(SealBFV(poly_degree=N, plain_bits=20), reps=10 if units.quick
                          else 40, seed=units.seed)

    return units.get(f"SEAL BFV (N={N}) per operation", measure)


_LAYERS = ("Conv2d", "Dense", "BatchNorm", "ReLU", "MaxPool", "Flatten")
_REAL = "garbled circuits (half-gates, free-XOR, fixed-key AES) mod p"
_SIM = ("BFV on the slot simulator (same operation counts and ciphertext sizes as SEAL; the "
        "kernels run on real SEAL in 02_gala); OT simulated: the client's input labels are "
        "handed over and the IKNP OT is booked, not run")
_SECURE = "2PC, semi-honest, circuit privacy (flooding)"
_PAPER, _DEFAULT = HE_PARAMS["paper"], HE_PARAMS["secure"]
_VARIANT_NOTE = (
    f"run as the papers did (N = {_PAPER['poly_degree']}, a {_PAPER['q_bits']}-bit q above the "
    f"{max_q_bits_128(_PAPER['poly_degree'])} bits SEAL allows at 128-bit security, no noise "
    "flooding, so the key-holding client can read the weights from the returned noise). "
    f"Their default rows run at SEAL's 128-bit N = {_DEFAULT['poly_degree']} with flooding.")
_NO_PRIVACY = "2PC, semi-honest, no circuit privacy"
_ENCODING = ("a pixel is round(x 2^f_x) in [0, 2^f_x], the bound the weights' bits and the "
             "plaintext prime are sized for")


class GazelleGC(_HEGC):
    method = "GAZELLE"
    spec = FamilySpec("gazelle_gc", "GAZELLE linear + GC ReLU", "GALA (baseline)", PARTIES,
                      _SECURE, "semi-honest", "two parties", real=_REAL,
                      simulated=_SIM, layers=_LAYERS, input_encoding=_ENCODING)


class GalaGC(_HEGC):
    method = "GALA"
    spec = FamilySpec("gala_gc", "GALA linear + GC ReLU", "GALA", PARTIES,
                      _SECURE, "semi-honest", "two parties", real=_REAL,
                      simulated=_SIM, layers=_LAYERS, input_encoding=_ENCODING)


class GazelleGCNoFlood(GazelleGC):
    """GazelleGC as the papers ran it: N = 2048, 60-bit q, no flooding (a labelled variant)."""

    params_name, circuit_privacy = "paper", False
    variant_note = _VARIANT_NOTE
    spec = FamilySpec("gazelle_gc_noflood", "GAZELLE linear + GC ReLU (no circuit privacy)",
                      "GALA (baseline)", PARTIES, _NO_PRIVACY, "semi-honest", "two parties",
                      real=_REAL, simulated=_SIM, layers=_LAYERS,
                      input_encoding=_ENCODING)


class GalaGCNoFlood(GalaGC):
    """GalaGC as the paper ran it: N = 2048, 60-bit q, no flooding (a labelled variant)."""

    params_name, circuit_privacy = "paper", False
    variant_note = _VARIANT_NOTE
    spec = FamilySpec("gala_gc_noflood", "GALA linear + GC ReLU (no circuit privacy)", "GALA",
                      PARTIES, _NO_PRIVACY, "semi-honest", "two parties", real=_REAL,
                      simulated=_SIM, layers=_LAYERS, input_encoding=_ENCODING)
