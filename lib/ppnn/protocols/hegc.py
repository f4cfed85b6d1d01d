"""GAZELLE / GALA linear layers + garbled-circuit ReLU, end to end (GALA §II, Fig. 5).

Per linear layer the client and server run :func:`ppnn.protocols.gala.run_linear` with the
chosen kernels (GAZELLE's hybrid matrix-vector and output-rotation convolution, or GALA's
rotation-frugal ones): the client sends ``[x]_C``, the server evaluates the kernel on
ciphertexts, sends back ``[y - r]_C`` and both hold shares mod the plaintext prime ``p``. The
server adds its bias to its share. Then one garbled circuit per activation output
(:mod:`.gc_act`, mod ``p``) reduces and centres the shares, takes the max-pool window's
maximum (padding enters as shares of 0: exact, as the ReLU follows), applies ReLU, the
fixed-point rescale (``>> f_w``) and the public clip of GALA's fixed-point plan, and
re-shares the result mod ``p``; all of it online (GAZELLE's flow, and what the GALA
module's projections book).

Between layers nobody holds the activation: the garbled circuit leaves ``z`` with the client
and ``r`` with the server (``z + r = y`` mod ``p``). The next layer runs GAZELLE's flow: the
client encrypts and sends its share ``[z]_C``, the server adds ``r`` under encryption (one
AddPlain per input ciphertext, booked) and evaluates the kernel on ``[z + r]_C = [y]_C``. Only
the first layer encrypts a value in the clear: the client's own image.

A mean pool is local on the shares (GALA §II: "without extra cost"): window sums mod ``p``,
its ``1/k^2`` moved into the scale. A residual block runs both branches from the same shares;
its Add is the sum of the two branches' HE outputs, done where they already are -- on the
shares, mod ``p`` (the identity shortcut first lifted by ``2^f_w`` to the body's scale); the
rescale by ``f_w`` and the clip stay in the next garbled ReLU, as after any linear layer
(:class:`_ResidualPlan`).

:func:`secure_inference` returns the logits of GALA's own integer oracle
(:func:`ppnn.protocols.gala.network.integer_forward`) bit for bit. A recorded run keeps every
share and the garbler's real bytes (size + digest); on the slot simulator the ciphertexts,
Galois keys and OT columns are ``SIZE_ONLY``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ppnn.core import Ledger
from ppnn.he.bfv.base import Ct
from ppnn.he.bfv.security import (
    SESSION_KAPPA,
    SESSION_QUERIES,
    check_128,
    flood_bits_for_session,
    max_q_bits_128,
    session_log2_distance,
)
from ppnn.he.bfv.sim import BFVSim
from ppnn.nn import Conv2d, Dense, Flatten, MaxPool, MeanPool, Network, ReLU, Residual, ops
from ppnn.nn.canonical import canonicalize
from ppnn.nn.forward import forward_nodes
from ppnn.nn.integer import fixed_weights, mean_factor, to_fixed
from ppnn.nn.network import _auto_names
from ppnn.protocols.checks import check_int
from ppnn.protocols.gala import GalaConv, GalaMatVec, centered, run_linear
from ppnn.protocols.gala.conv import GroupedConv
from ppnn.protocols.gala.network import (
    LayerQ,
    fixed_point_plan,
    integer_forward,
    quantize_input,
)
from ppnn.protocols.gazelle import GazelleConv, GazelleMatVec

from . import gc_act
from .api import Costs, Family, FamilySpec, Plan, UnsupportedNetwork, split_one_time
from .delphi_gc import _windows

__all__ = ["KERNELS", "HEGCPlan", "secure_inference", "PARTIES", "GazelleGC", "GalaGC",
           "GazelleGCNoFlood", "GalaGCNoFlood", "HE_PARAMS", "linear_inputs",
           "returned_ciphertexts", "Returned", "returned_noise"]

PARTIES = ("client", "server")
KERNELS = {"GAZELLE": (GazelleMatVec, GazelleConv), "GALA": (GalaMatVec, GalaConv)}


@dataclass
class Step:
    kind: str  # linear | act | meanpool | flatten | residual
    name: str
    layer: object = None
    q: object = None  # gala.network.LayerQ
    last: bool = False
    pool: MaxPool | None = None
    spec: gc_act.ActSpec | None = None
    in_shape: tuple | None = None  # linear: its input (a Dense layer's flattened)
    mult: int = 1  # meanpool: the public factor after the window sum
    body: list | None = None  # residual: the body's steps
    shortcut: list | None = None  # residual: the shortcut's steps (empty: identity)
    lift: tuple[int, int] = (0, 0)  # residual: body, shortcut output times 2^lift
    bound: int = 0  # residual: public bound on |body 2^lb + shortcut 2^ls| (< p/2)


def _leaf_steps(steps):
    for st in steps:
        if st.kind == "residual":
            yield from _leaf_steps(st.body)
            yield from _leaf_steps(st.shortcut)
        else:
            yield st


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
        if any(isinstance(layer, Residual | MeanPool) for layer in net.layers):
            return _ResidualPlan(net, params, x_calib, p, f_x).plan(cls)
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
                    # after the last linear layer (no clip) the logits are not rescaled:
                    # GALA's integer_forward applies the ReLU to them as they are
                    d = q.f_w if q.clip is not None else 0
                    steps.append(Step("act", names[i + 1], layers[i + 1], q, pool=pool,
                                      spec=gc_act.ActSpec(k, d, m, p=int(p), clip=q.clip)))
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
        a = quantize_input(x, self.f_x)
        if self.residual:
            return _forward_int(self.steps, a)
        return integer_forward(self.net, self.qplan, a)

    @property
    def residual(self) -> bool:
        """Whether the plan has residual blocks or mean pools (compiled by
        :class:`_ResidualPlan`, its oracle run on the steps)."""
        return any(st.kind in ("residual", "meanpool") for st in self.steps)

    def leaf_steps(self):
        """Every step, residual branches expanded (body, then shortcut): the run's order."""
        return _leaf_steps(self.steps)

    def predict(self, x, batch: int = 500) -> np.ndarray:
        x = np.asarray(x)
        return np.concatenate([self.forward_int(x[i:i + batch]).argmax(axis=1)
                               for i in range(0, len(x), batch)])


class _ResidualPlan:
    """GALA's fixed-point plan (:func:`ppnn.protocols.gala.network.fixed_point_plan`) for a
    network with residual blocks or mean pools, as protocol steps.

    Every value has public fraction bits ``e`` and a public bound ``B`` on its magnitude: the
    image ``f_x`` and ``2^f_x``; a linear layer takes the largest weight bits ``f_w <= 12``
    with ``2 (|W|_1 B + |b|) < p`` (its output at ``e + f_w``); a garbled activation rescales
    by ``e - f_x`` and clips at the 99.99th percentile of the calibration activations (GALA's
    clip, back at ``f_x``); a mean pool sums on the shares (``B k^2``) and moves its ``1/k^2``
    into ``e`` (:func:`ppnn.nn.integer.mean_factor`); a residual block's two branches end at
    one ``f_w`` (the largest for which the body's last layer, the shortcut's and their sum
    stay below ``p/2``), the identity shortcut lifted by ``2^f_w``, and the next garbled ReLU
    rescales the sum, as after any linear layer."""

    def __init__(self, net: Network, params, x_calib, p: int, f_x: int, max_fw: int = 12,
                 quantile: float = 99.99):
        self.net, self.p, self.f_x, self.max_fw, self.quantile = net, int(p), f_x, max_fw, \
            quantile
        self.k = int(p).bit_length()
        self.outs = forward_nodes(net, params, np.asarray(x_calib, np.float64))
        self.params = params

    def plan(self, cls) -> HEGCPlan:
        steps, _, _, _ = self.seq(list(self.net.layers), self.params, self.net.layer_names,
                                  self.net.input_shape, self.f_x, 1 << self.f_x)
        leaves = [st for st in _leaf_steps(steps) if st.kind == "linear"]
        leaves[-1].last = True
        return cls(self.net, self.p, self.f_x, [st.q for st in leaves], steps)

    def clip(self, name: str) -> int:
        act = np.abs(self.outs[name]).reshape(-1)
        return max(1, int(np.ceil(np.percentile(act, self.quantile) * 2.0 ** self.f_x)))

    def linear(self, layer, p, name, shape, e: int, B: int, f_w: int | None):
        """A quantized linear step (``f_w`` given: only that one), or None if none fits p."""
        W = np.asarray(p["W"], np.float64)
        b = np.asarray(p.get("b", np.zeros(W.shape[0])), np.float64)
        for f in ([f_w] if f_w is not None else range(self.max_fw, -1, -1)):
            Wq, bq = fixed_weights(W, f), to_fixed(b, e + f)
            bound = int(np.abs(Wq).reshape(Wq.shape[0], -1).sum(axis=1).max()) * B \
                + int(np.abs(bq).max(initial=0))
            if 2 * bound < self.p:
                q = LayerQ(name, Wq, bq, f, B, None)
                return Step("linear", name, layer, q, in_shape=tuple(shape)), e + f, bound
        return None

    def seq(self, layers, params, names, shape, e: int, B: int, last_fw: int | None = None):
        """Steps of one sequence from fraction bits ``e`` and bound ``B``; ``last_fw`` forces
        the weight bits of a final linear layer (a branch end). Returns ``(steps, e, B,
        shape)``, or None when the forced bits do not fit p."""
        steps: list[Step] = []
        i = 0
        while i < len(layers):
            layer, p, name = layers[i], params[i], names[i]
            out = layer.out_shape(shape)
            if isinstance(layer, Residual):
                st, e, B = self.block(layer, p, name, shape, e, B)
                steps.append(st)
            elif isinstance(layer, Conv2d | Dense):
                forced = last_fw if i == len(layers) - 1 else None
                got = self.linear(layer, p, name, shape, e, B, forced)
                if got is None:
                    if forced is not None:
                        return None
                    raise ValueError(f"plaintext modulus p={self.p} is too small for layer "
                                     f"{name} ({layer.kind}) even with integer weights; use a "
                                     "wider p")
                st, e, B = got
                steps.append(st)
            elif isinstance(layer, ReLU):
                pool = layers[i + 1] if i + 1 < len(layers) else None
                pool = pool if isinstance(pool, MaxPool) else None
                src = steps[-1].name if steps and steps[-1].kind == "linear" else (
                    f"{steps[-1].name}.add" if steps and steps[-1].kind == "residual" else None)
                if src is None:
                    raise ValueError(f"{name}: ReLU must follow a linear layer or a residual "
                                     "block in the HE-GC runner")
                clip = self.clip(src)
                m = pool.kernel**2 if pool is not None else 1
                spec = gc_act.ActSpec(self.k, e - self.f_x, m, p=self.p, clip=clip)
                steps.append(Step("act", name, layer, steps[-1].q, pool=pool, spec=spec))
                if steps[-2].kind == "linear":
                    steps[-2].q = replace(steps[-2].q, clip=clip)
                e, B = self.f_x, clip
                if pool is not None:
                    out = pool.out_shape(out)
                    i += 1
            elif isinstance(layer, MeanPool):
                if layer.padding:
                    raise ValueError(f"{name}: padded mean-pool is not supported")
                kk = layer.kernel**2
                c, t = (1, 0) if layer.scaled else mean_factor(kk)
                B, e = B * kk * c, e + t
                if 2 * B >= self.p:
                    raise ValueError(f"{name}: window sums reach {B}, beyond p/2 = "
                                     f"{self.p // 2}")
                steps.append(Step("meanpool", name, layer, mult=c))
            elif isinstance(layer, Flatten):
                steps.append(Step("flatten", name, layer))
            else:
                raise ValueError(f"{name} ({layer.kind}) is not supported by the HE-GC runner "
                                 "(Conv2d/Dense, ReLU [+ MaxPool], MeanPool, Flatten, residual "
                                 "blocks)")
            shape = out
            i += 1
        return steps, e, B, shape

    def block(self, layer: Residual, p, name: str, shape, e: int, B: int):
        """The residual step: the largest common ``f_w`` whose sum fits p."""
        bn = [f"{name}.body.{n}" for n in _auto_names(layer.body)]
        sn = [f"{name}.shortcut.{n}" for n in _auto_names(layer.shortcut)]
        for f in range(self.max_fw, -1, -1):
            body = self.seq(list(layer.body), p["body"], bn, shape, e, B, f)
            short = self.seq(list(layer.shortcut), p["shortcut"], sn, shape, e, B, f)
            if body is None or short is None:
                continue
            (bs, eb, Bb, _), (ss, es, Bs, _) = body, short
            top = max(eb, es)
            lift = (top - eb, top - es)
            bound = (Bb << lift[0]) + (Bs << lift[1])
            if 2 * bound < self.p:
                return (Step("residual", name, layer, body=bs, shortcut=ss, lift=lift,
                             bound=bound), top, bound)
        raise ValueError(f"plaintext modulus p={self.p} is too small for block {name}: its two "
                         "branches and their sum do not fit p/2 at any weight bits")


def _forward_int(steps, a: np.ndarray) -> np.ndarray:
    """The exact integer pipeline of a residual plan's steps on a batch (the oracle)."""
    for st in steps:
        if st.kind == "linear":
            q = st.q
            if isinstance(st.layer, Dense):
                a = a.reshape(a.shape[0], -1) @ q.W.T + q.b
            else:
                a = ops.conv2d(a, q.W, st.layer.stride, st.layer.padding, st.layer.groups,
                               matmul=np.matmul)[0] + q.b.reshape(1, -1, 1, 1)
        elif st.kind == "act":
            a = gc_act.plain_act(_act_windows(a, st.pool, np.iinfo(np.int64).min), st.spec)
        elif st.kind == "meanpool":
            a = ops.pool_windows(a, st.layer.kernel, st.layer.step).sum(axis=-1) * st.mult
        elif st.kind == "residual":
            lb, ls = st.lift
            a = (_forward_int(st.body, a) << lb) + (_forward_int(st.shortcut, a) << ls)
        else:
            a = a.reshape(a.shape[0], -1)
    return a


def _act_windows(a: np.ndarray, pool: MaxPool | None, fill: int) -> np.ndarray:
    """``(N, C, OH, OW, m)``: the inputs of every garbled activation of ``a`` (N, C, H, W),
    ``m = k*k`` per max-pool window (1 without a pool), a padded window's padding set to
    ``fill``. The oracle pads with the int64 minimum (the max over the real inputs only); the
    protocol with shares of 0: the pool follows its ReLU, ``ReLU(max(S + {0})) = ReLU(max S)``,
    so a zero equals the real-only max exactly, and every circuit keeps the full window's
    ``k*k`` inputs (the size ``count`` books and :meth:`MaxPool.counts` gives)."""
    if pool is None or not pool.padding:
        return _windows(a, pool)
    q = pool.padding
    a = np.pad(a, ((0, 0), (0, 0), (q, q), (q, q)), constant_values=fill)
    return ops.pool_windows(a, pool.kernel, pool.step)


def secure_inference(plan: HEGCPlan, x: np.ndarray, he, method: str,
                     rng: np.random.Generator, ledger: Ledger | None = None,
                     label_rng: np.random.Generator | None = None, *, activation=None
                     ) -> tuple[np.ndarray, dict]:
    """Classify ONE image ``x`` (C, H, W) with ``method`` ("GAZELLE" or "GALA") kernels on the
    BFV backend ``he`` (plaintext modulus ``plan.p``); returns the integer logits and the
    measured GC seconds ``{"garble_s", "evaluate_s"}``. ``activation(cw, sw, spec, ledger)
    -> (z, r, seconds)`` replaces the garbled layer (default: garbled and evaluated here)."""
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
    t = {"garble_s": 0.0, "evaluate_s": 0.0}
    # (client's share, server's share) mod p; None: the client holds the input itself
    shares = _run_steps(plan.steps, (a, None), plan, he, method, rng, ledger, label_rng, t,
                        activation)
    with ledger.label("output"):
        ledger.hold("client", "client's share of the logits", shares[0])
        ledger.send("server", "client", int(shares[1].size) * int(p).bit_length(),
                    "server's share of the logits", value=shares[1])
    return centered(shares[0] + shares[1], p)[None], t


def _run_steps(steps, shares, plan: HEGCPlan, he, method: str, rng, ledger: Ledger, label_rng,
               t: dict, activation=None):
    """The steps of one sequence on ``shares`` (see :func:`secure_inference`)."""
    p = plan.p
    for st in steps:
        a, a_srv = shares
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
                # a padded window's padding enters the circuit as shares of 0 (see _act_windows)
                cw, sw = (_act_windows(s[None], st.pool, 0)[0] for s in shares)
                out_shape = cw.shape[:-1]
                cw, sw = cw.reshape(-1, st.spec.m), sw.reshape(-1, st.spec.m)
                if activation is not None:
                    z, r, tg = activation(cw, sw, st.spec, ledger)
                else:
                    z, r, tg = gc_act.garbled_activation(cw, sw, st.spec, rng, label_rng,
                                                         keep=ledger.records_values)
                    gc_act.book_gc(ledger, z.size, gc_act.act_circuit(st.spec), "online",
                                   PARTIES, wire=tg.get("wire"))
                ledger.hold("client", "z (its share of the activation, decoded from the GC)", z)
                ledger.hold("server", "r (its GC output mask = its share of the activation)", r)
            t["garble_s"] += tg["garble_s"]
            t["evaluate_s"] += tg["evaluate_s"]
            # the activation stays shared: z for the client, r for the server (nobody holds it)
            shares = ((z.astype(np.int64) % p).reshape(out_shape),
                      (r.astype(np.int64) % p).reshape(out_shape))
        elif st.kind == "meanpool":
            # local on the shares (GALA §II: "without extra cost"): window sums mod p, times
            # the public factor; the 1/k^2 moves into the scale
            k, step = st.layer.kernel, st.layer.step
            shares = tuple(np.mod(ops.pool_windows(s[None], k, step)[0].sum(axis=-1) * st.mult,
                                  p) for s in (a, np.zeros_like(a) if a_srv is None else a_srv))
        elif st.kind == "residual":
            # both branches from the same shares; the Add is local: the branch at the smaller
            # scale times 2^lift on both shares, then each party adds its two shares mod p
            # (the sum of the two HE results, below p/2 by the plan's bound)
            lb, ls = st.lift
            body = _run_steps(st.body, shares, plan, he, method, rng, ledger, label_rng, t,
                              activation)
            short = _run_steps(st.shortcut, shares, plan, he, method, rng, ledger, label_rng, t,
                               activation)
            if short[1] is None:
                short = (short[0], np.zeros_like(short[0]))
            shares = tuple(np.mod((bv << lb) + (sv << ls), p) for bv, sv in zip(body, short))
        else:
            shares = (a.reshape(-1), None if a_srv is None else a_srv.reshape(-1))
    return shares


def _kernel(method: str, st: Step, shape: tuple, n: int):
    """The HE kernel of linear step ``st`` on an input of ``shape`` with ``n`` slots."""
    matvec, conv = KERNELS[method]
    if isinstance(st.layer, Dense):
        return matvec(st.q.W.shape[0], st.q.W.shape[1], n)
    c, h, w = shape
    g = st.layer.groups  # g independent convolutions on channel slices
    kern = conv(c // g, st.layer.out_channels // g, h, w, st.layer.kernel, n,
                st.layer.padding, st.layer.stride)
    return kern if g == 1 else GroupedConv(kern, g)


def linear_inputs(plan: HEGCPlan):
    """``(step, input shape)`` of every linear step of ``plan`` (a Dense layer's input
    flattened, as :func:`secure_inference` packs it)."""
    shapes = plan.net.shapes()
    for st in plan.leaf_steps():
        if st.kind == "linear":
            shape = st.in_shape if st.in_shape is not None else shapes[st.q.index]
            yield st, (int(np.prod(shape)),) if isinstance(st.layer, Dense) else tuple(shape)


@dataclass(frozen=True)
class Returned:
    """What the server returns for one linear step, ``[y - r]_C`` before flooding: how many
    ciphertexts and the largest model noise among them (in units of a fresh ciphertext's)."""

    step: str
    layer: str  # e.g. "Dense 25088 -> 4096"
    ciphertexts: int
    noise: float


def returned_noise(plan: HEGCPlan, method: str, he_args: dict) -> list[Returned]:
    """Every linear step's returned ciphertexts and their noise, from running the step's
    kernel on the counting backend with the HE parameters ``he_args`` (shapes and the
    simulator's noise model only, no values: the noise depends on the public shapes and
    operations alone, as :meth:`~ppnn.he.bfv.base.PackedBackend.flood_log2_bound` says)."""
    from ppnn.he.bfv.sim import BFVSim

    out = []
    for st, shape in linear_inputs(plan):
        kern = _kernel(method, st, shape, he_args["n"])
        he = BFVSim(**he_args, values=False)
        he.keygen(kern.rotation_steps())
        ct = kern.evaluate(he, he.encrypt(kern.pack_input(np.zeros(shape, np.int64))), None)
        if isinstance(st.layer, Dense):
            what = f"Dense {shape[0]} -> {st.layer.out_features}"
        else:
            k = st.layer.kernel
            what = (f"Conv2d {shape[0]} -> {st.layer.out_channels} channels, {k}x{k} on "
                    f"{shape[1]}x{shape[2]}")
        out.append(Returned(st.name, what, ct.size, float(np.max(ct.noise))))
    return out


def returned_ciphertexts(plan: HEGCPlan, method: str, n: int) -> int:
    """Ciphertexts the server returns per query (``[y - r]_C`` of every linear layer), counted
    by running each layer's kernel on the counting backend (shapes only, no values)."""
    return sum(r.ciphertexts for r in returned_noise(plan, method, {"n": n}))


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
    :mod:`ppnn.he.bfv.security`). With circuit privacy, ``compile`` refuses
    (:class:`~.api.UnsupportedNetwork`) a network whose flooded noise would not decrypt: the
    test :meth:`~ppnn.he.bfv.base.PackedBackend.flood` makes, on every layer's returned
    ciphertexts (:func:`returned_noise`), before anything runs."""

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
            returned = returned_noise(plan, self.method, he_args)
            cts = sum(r.ciphertexts for r in returned)
            bits = flood_bits_for_session(kappa, N, cts, queries)
            he = BFVSim(**he_args, flood_bits=bits)  # raises now if q has no room for it
            # the test flood() makes on every returned batch, made here on every layer's:
            # a network the flooding cannot decrypt is refused now, not by count or run
            left = [he.flooded_budget(r.noise) for r in returned]
            worst = int(np.argmin(left))
            if left[worst] < 1:
                raise UnsupportedNetwork(self._flood_refusal(
                    net, plan, he_args, he, returned, left, kappa, queries))
            session = {"kappa": kappa, "queries": queries, "ciphertexts": cts,
                       "flood_bits": bits,
                       "log2_distance": session_log2_distance(bits, N, cts, queries),
                       "budget_left": left[worst], "tightest_layer": returned[worst].step}
        return ({"plan": plan, "he": he_args, "session": session},
                {"p": p, "rewrites": rewrites, "N": N, "log2_q": he_args["q_bits"],
                 "flood_bits": session["flood_bits"]})

    def _flood_refusal(self, net, plan: HEGCPlan, he_args: dict, he, returned: list[Returned],
                       left: list[float], kappa: int, queries: int) -> str:
        """Why the flooding of ``net`` cannot decrypt (the tightest layer: its noise, lambda_s,
        the budget) and what fits instead (:func:`_what_fits`)."""
        N, n, lam = he.poly_degree, he.n, he.flood_bits
        fresh = he.noise_model.fresh_bits
        cts = sum(r.ciphertexts for r in returned)
        worst = int(np.argmin(left))
        r, bad = returned[worst], sum(v < 1 for v in left)
        noise_bits = fresh - float(he.noise_model.budget(r.noise))
        others = (f"{bad} of its {len(returned)} linear layers fall{'s' * (bad == 1)} short, "
                  f"{r.step} by the most")
        fits = _what_fits(self, plan, he_args, he, returned, kappa, queries)
        return (f"{self.spec.name} cannot flood {net.name} at n = {n} slots: layer {r.step} "
                f"({r.layer}, {self.method}'s kernel) returns ciphertexts whose noise takes "
                f"{noise_bits:.1f} bits of noise budget; flooding them with lambda_s = {lam} "
                f"bits (kappa = {kappa} over {queries} queries x {cts} returned ciphertexts x "
                f"N = {N} coefficients) and the {he.flood_margin_bits}-bit margin takes "
                f"{fresh - left[worst]:.1f} bits in all, of the {fresh:.1f} bits a fresh "
                f"ciphertext has (N = {N}, {he.q_bits}-bit q): {left[worst]:.1f} bits left, and "
                f"decryption needs at least 1 ({others}). What fits (checked on the same noise "
                "model): " + "; ".join(fits))

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

    count_method = ("dry run on the slot simulator's counting mode (shapes, no values) with "
                    "each garbled layer booked without garbling")

    def _count(self, plan: Plan, batch: int) -> Ledger:
        """The run's bookings: the same kernels on the counting backend (no slot values, so
        no weight encoding), every garbled layer booked as the run books it."""
        def book(cw, sw, spec, ledger):
            gc_act.book_gc(ledger, cw.shape[0], gc_act.act_circuit(spec), "online", PARTIES)
            zero = np.zeros(cw.shape[0], np.uint64)
            return zero, zero, {"garble_s": 0.0, "evaluate_s": 0.0}

        hp = plan.impl["plan"]
        he = _CountingBFV(**plan.impl["he"], flood_bits=plan.impl["session"]["flood_bits"])
        ledger, x = Ledger(PARTIES), np.zeros(plan.net.input_shape)
        for _ in range(batch):
            led = Ledger(PARTIES)
            secure_inference(hp, x, he, self.method, np.random.default_rng(0), led,
                             activation=book)
            ledger.merge(led)
        return ledger

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
        hp = plan.impl["plan"]
        if not hp.residual:
            rows = []
            for st in hp.steps:
                q = st.q
                rows.append({"step": st.name, "kind": st.kind,
                             "weight_frac_bits": getattr(q, "f_w", None) if st.kind != "flatten"
                             else None,
                             "clip": getattr(q, "clip", None) if st.kind == "act" else None,
                             "window": st.spec.m if st.spec is not None else None})
            return pd.DataFrame(rows)

        def rows(steps):
            for st in steps:
                if st.kind == "residual":
                    yield from rows(st.body)
                    yield from rows(st.shortcut)
                    yield {"step": f"{st.name}.add", "kind": "add", "weight_frac_bits": None,
                           "clip": None, "window": None, "rescale": None,
                           "lift": st.lift, "bound": st.bound}
                    continue
                yield {"step": st.name, "kind": st.kind,
                       "weight_frac_bits": st.q.f_w if st.kind == "linear" else None,
                       "clip": st.spec.clip if st.kind == "act" else None,
                       "window": st.spec.m if st.spec is not None else None,
                       "rescale": st.spec.d if st.kind == "act" else None,
                       "lift": None, "bound": st.q.x_bound if st.kind == "linear" else None}

        return pd.DataFrame(list(rows(hp.steps)))

    def costs(self, plan: Plan, results, units) -> Costs:
        from ppnn.protocols.gala.runtime import project_seconds

        hp = plan.impl["plan"]
        unit = _seal_units(units, plan.impl["he"]["poly_degree"])
        led, keys = split_one_time(results[0].ledger)
        he_ops = ("Perm", "HstPerm", "DecPerm", "ScMult", "Add")
        steps = [st for st in hp.leaf_steps() if st.kind == "linear"]
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


def _flood_left(method: str, plan: HEGCPlan, he_args: dict, kappa: int, queries: int):
    """``(lambda_s, smallest budget left after flooding)`` of ``plan`` with ``method``'s
    kernels on the parameters ``he_args``: the test ``compile`` makes."""
    returned = returned_noise(plan, method, he_args)
    bits = flood_bits_for_session(kappa, he_args["poly_degree"],
                                  sum(r.ciphertexts for r in returned), queries)
    he = BFVSim(**he_args)
    return bits, min(he.flooded_budget(r.noise, bits) for r in returned)


def _what_fits(fam: _HEGC, plan: HEGCPlan, he_args: dict, he, returned: list[Returned],
               kappa: int, queries: int) -> list[str]:
    """The single changes under which ``plan``'s flooding decrypts (see
    :meth:`_HEGC._flood_refusal`), each checked as ``compile`` checks: the other kernels at
    the same ``n``; the smallest larger ``n`` (fewer returned ciphertexts, so a smaller
    lambda_s); the most queries per key pair for which every layer fits (lambda_s =
    kappa + ceil(log2(N C Q)) shrinks with Q); the labelled variant without circuit privacy
    (no flooding, and the same plaintext prime, so the same plan)."""
    N, fits = he.poly_degree, []
    other = next(m for m in KERNELS if m != fam.method)
    bits, left = _flood_left(other, plan, he_args, kappa, queries)
    if left >= 1:
        fits.append(f"{_SECURE_KEYS[other]} ({other}'s kernels: lambda_s = {bits}, "
                    f"{left:.1f} bits left)")
    n, top = he.n * 2, (N // 2 if N > HE_PARAMS[fam.params_name]["n"] else N)
    while n <= top:
        bits, left = _flood_left(fam.method, plan, {**he_args, "n": n}, kappa, queries)
        if left >= 1:
            fits.append(f"n={n} (lambda_s = {bits}, {left:.1f} bits left)")
            break
        n *= 2
    cts = sum(r.ciphertexts for r in returned)
    lam = he.flood_bits - 1
    while lam > kappa and min(he.flooded_budget(r.noise, lam) for r in returned) < 1:
        lam -= 1
    q = (1 << (lam - kappa)) // (N * cts) if lam > kappa else 0
    if q >= 1:
        bits = flood_bits_for_session(kappa, N, cts, q)
        left = min(he.flooded_budget(r.noise, bits) for r in returned)
        if left >= 1:
            fits.append(f"queries={q}, a new key pair after {q} queries instead of {queries} "
                        f"(lambda_s = {bits}, {left:.1f} bits left)")
    fits.append(f"{_NO_FLOOD_KEYS[fam.method]}, the papers' setting without circuit privacy "
                f"(N = {_PAPER['poly_degree']}, a {_PAPER['q_bits']}-bit q above the 128-bit "
                "bound, no flooding: the key-holding client can read the weights from the "
                "returned noise)")
    return fits


class _CountingBFV(BFVSim):
    """The slot simulator's counting mode (``values=False``: shapes, noise and operation
    counts only) that decrypts to zeros, so a whole inference books its ledger without
    computing a slot."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs, values=False)

    def _decrypt(self, ct: Ct) -> np.ndarray:
        return np.zeros(ct.shape + (self.n,), np.int64)


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


_LAYERS = ("Conv2d", "Dense", "BatchNorm", "ReLU", "MaxPool", "MeanPool", "Flatten",
           "Residual")
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


#: the families with circuit privacy and their labelled variants without, per kernel method
_SECURE_KEYS = {"GAZELLE": "gazelle_gc", "GALA": "gala_gc"}
_NO_FLOOD_KEYS = {"GAZELLE": "gazelle_gc_noflood", "GALA": "gala_gc_noflood"}


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
