"""Delphi linear layers + garbled-circuit ReLU (Mishra et al. 2020), end to end.

The client holds the image, the server the model. Fixed point: pixels ``x 2^f``, weights
``W 2^f_w``, biases at the accumulator's scale ``2^(f + f_w)``; shares live in ``Z_2^k``.

* **linear layer** -- :mod:`ppnn.protocols.delphi` (offline: the HE mask exchange, counted;
  online: one message ``[x]_c + R_c``);
* **ReLU (+ the max-pool that follows it)** -- one garbled circuit per output
  (:mod:`.gc_act`): it adds the two shares, takes the window maximum, applies ReLU, truncates
  by ``f_w`` exactly and re-shares; Delphi's split (:func:`ppnn.he.gc.book_delphi_split`,
  the same booking as Tabula's GC baseline) puts OT, tables, the labels of the server's
  mask ``r`` and the decoding bits offline; online only the labels of the server's share;
* **mean-pool** -- local: each party sums its shares over every window and multiplies by a
  public integer; the ``1/k^2`` moves into the fraction bits (:func:`ppnn.nn.integer.mean_factor`),
  which the next garbled activation's truncation removes;
* **residual block** -- both branches run on the same shares; the Add is local: the branch
  with fewer fraction bits (an identity shortcut at ``f`` beside a body ending in a
  convolution at ``f + f_w``) is shifted up on both shares, exactly mod ``2^k``, and each
  party adds its two shares; the truncation stays in the next garbled ReLU, as for any
  linear layer;
* **output** -- the server sends its share of the logits to the client, who adds it to its
  own: ``logits = to_signed(client's share + server's share mod 2^k)``.

:class:`DelphiGCPlan` holds the integer network and its exact oracle
(:meth:`DelphiGCPlan.forward_int`); :func:`secure_inference` returns its logits bit for bit
(truncation inside the circuit: no probabilistic error). A recorded run keeps every share,
the garbler's real bytes (size + digest) and lists the counted HE and OT columns ``SIZE_ONLY``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd

from ppnn.core import AdditiveShares, Ledger, Ring
from ppnn.he import gc as gcmod
from ppnn.nn import Conv2d, Dense, Flatten, MaxPool, MeanPool, Network, ReLU, Residual, ops
from ppnn.nn.canonical import canonicalize
from ppnn.nn.integer import fixed_bias, fixed_weights, int_linear, mean_factor, to_fixed
from ppnn.nn.network import _auto_names

from . import delphi, gc_act
from .api import Costs, Family, FamilySpec, Plan

__all__ = ["DelphiGCConfig", "DelphiGCPlan", "secure_inference", "garbled_layer", "PARTIES",
           "DelphiGC"]

PARTIES = ("client", "server")


@dataclass(frozen=True)
class DelphiGCConfig:
    """Share ring ``Z_2^k`` and fixed-point bits (activations ``f``, weights ``f_w``)."""

    k: int = 32
    frac_bits: int = 8
    weight_frac_bits: int = 8

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int) or not 16 <= self.k <= 64:
            raise ValueError(f"k must be an int in 16..64, got {self.k!r}")
        for name in ("frac_bits", "weight_frac_bits"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 16:
                raise ValueError(f"{name} must be an int in 0..16, got {v!r}")
        if self.frac_bits > self.k - 3:
            raise ValueError(f"frac_bits must be <= k - 3 = {self.k - 3} for k = {self.k}: a "
                             f"pixel in [0, 1] encodes up to 2^frac_bits, which must stay below "
                             f"the ring's headroom 2^(k-2); got {self.frac_bits}")


@dataclass
class Step:
    kind: str  # linear | act | meanpool | flatten | residual
    name: str
    layer: object = None
    W: np.ndarray | None = None  # int64
    b: np.ndarray | None = None  # int64, broadcastable to the output (C,1,1) or (n,)
    pool: MaxPool | None = None
    spec: gc_act.ActSpec | None = None
    mult: int = 1  # meanpool: the public integer factor after the window sum
    body: list | None = None  # residual: the body's steps
    shortcut: list | None = None  # residual: the shortcut's steps (empty: identity)
    lift: tuple[int, int] = (0, 0)  # residual: body, shortcut output times 2^lift (aligned)


def _leaf_steps(steps):
    """Every step of a plan, residual branches expanded (body, then shortcut)."""
    for st in steps:
        if st.kind == "residual":
            yield from _leaf_steps(st.body)
            yield from _leaf_steps(st.shortcut)
        else:
            yield st


def _compile(layers, params, names, cfg: DelphiGCConfig, e: int) -> tuple[list, int]:
    """Steps of one sequence of layers whose input has ``e`` fraction bits; returns the steps
    and the fraction bits of their output. A linear layer adds ``f_w`` bits, the garbled
    activation truncates back to ``f``, a mean-pool adds the bits of its 1/k^2, a residual
    block lifts the branch with fewer bits to the other's (a local shift of both shares)."""
    steps: list[Step] = []
    i = 0
    while i < len(layers):
        layer, p, name = layers[i], params[i], names[i]
        if isinstance(layer, Residual):
            body, eb = _compile(layer.body, p["body"], _names(name, "body", layer.body), cfg, e)
            short, es = _compile(layer.shortcut, p["shortcut"],
                                 _names(name, "shortcut", layer.shortcut), cfg, e)
            top = max(eb, es)
            steps.append(Step("residual", name, layer, body=body, shortcut=short,
                              lift=(top - eb, top - es)))
            e = top
        elif isinstance(layer, Conv2d | Dense):
            W = fixed_weights(p["W"], cfg.weight_frac_bits)
            b = fixed_bias(layer, p["b"] if layer.bias else None, e + cfg.weight_frac_bits)
            steps.append(Step("linear", name, layer, W, b))
            e += cfg.weight_frac_bits
        elif isinstance(layer, ReLU):
            pool = layers[i + 1] if i + 1 < len(layers) else None
            pool = pool if isinstance(pool, MaxPool) else None
            if pool is not None and pool.padding:
                raise ValueError(f"{names[i + 1]}: padded max-pool is not supported")
            m = pool.kernel**2 if pool is not None else 1
            steps.append(Step("act", name, layer, pool=pool,
                              spec=gc_act.ActSpec(cfg.k, e - cfg.frac_bits, m)))
            e = cfg.frac_bits
            i += 1 if pool is not None else 0
        elif isinstance(layer, MeanPool):
            if layer.padding:
                raise ValueError(f"{name}: padded mean-pool is not supported")
            c, t = (1, 0) if layer.scaled else mean_factor(layer.kernel**2)
            steps.append(Step("meanpool", name, layer, mult=c))
            e += t
        elif isinstance(layer, Flatten):
            steps.append(Step("flatten", name, layer))
        else:
            raise ValueError(f"{name} ({layer.kind}) is not supported by Delphi + GC here "
                             "(Conv2d/Dense, ReLU [+ MaxPool], MeanPool, Flatten, residual "
                             "blocks): a hidden linear layer must be followed by ReLU")
        i += 1
    return steps, e


def _names(block: str, part: str, layers) -> list[str]:
    return [f"{block}.{part}.{n}" for n in _auto_names(layers)]


@dataclass
class DelphiGCPlan:
    """The integer network Delphi + GC computes (see the module docstring)."""

    net: Network
    cfg: DelphiGCConfig
    steps: list = field(default_factory=list)
    peak_bits: int = 0  # bits of the largest |accumulator| seen on the calibration images
    out_bits: int | None = None  # fraction bits of the logits (default f + f_w)

    @classmethod
    def build(cls, net: Network, params, cfg: DelphiGCConfig | None = None,
              x_calib: np.ndarray | None = None) -> DelphiGCPlan:
        """Quantize ``net`` (Conv2d/Dense, each hidden one followed by ReLU [+ MaxPool],
        MeanPool, Flatten, residual blocks). With ``x_calib`` the accumulators are checked to
        stay below ``2^(k-2)``."""
        cfg = cfg or DelphiGCConfig()
        steps, e = _compile(list(net.layers), params, net.layer_names, cfg, cfg.frac_bits)
        plan = cls(net, cfg, steps, out_bits=e)
        if x_calib is not None:
            peak = max((int(np.abs(a).max(initial=0)) for a in
                        plan.forward_int(x_calib, return_accumulators=True)), default=0)
            plan.peak_bits = peak.bit_length()
            if plan.peak_bits > cfg.k - 2:
                raise ValueError(f"accumulators reach 2^{plan.peak_bits} on the calibration "
                                 f"images; Z_2^{cfg.k} needs them below 2^{cfg.k - 2}: raise k "
                                 "or lower the fixed-point bits")
        return plan

    def leaf_steps(self):
        """Every step, residual branches expanded (the order a run books them)."""
        return _leaf_steps(self.steps)

    def encode(self, x) -> np.ndarray:
        """Client: images in [0, 1] -> integers at scale ``2^f``."""
        x = np.asarray(x, np.float64)
        if x.shape[1:] != tuple(self.net.input_shape):
            raise ValueError(f"x must have shape (N, {self.net.input_shape}), got {x.shape}")
        return to_fixed(x, self.cfg.frac_bits)

    def forward_int(self, x, return_accumulators: bool = False):
        """Exact integer logits (scale ``2^out_bits``) of float images ``x`` -- the oracle."""
        accs: list = []
        a = _forward_int(self.steps, self.encode(x), accs)
        return accs if return_accumulators else a

    def predict(self, x, batch: int = 500) -> np.ndarray:
        x = np.asarray(x)
        return np.concatenate([self.forward_int(x[i:i + batch]).argmax(axis=1)
                               for i in range(0, len(x), batch)])

    @property
    def out_scale(self) -> float:
        bits = self.cfg.frac_bits + self.cfg.weight_frac_bits if self.out_bits is None \
            else self.out_bits
        return 2.0 ** -bits


def _forward_int(steps, a: np.ndarray, accs: list) -> np.ndarray:
    for st in steps:
        if st.kind == "linear":
            a = int_linear(st.layer, st.W, a) + st.b  # exact integer W a + b
            accs.append(a)
        elif st.kind == "act":
            a = gc_act.plain_act(_windows(a, st.pool), st.spec)
        elif st.kind == "meanpool":
            k = st.layer.kernel
            a = ops.pool_windows(a, k, st.layer.step).sum(axis=-1) * st.mult
            accs.append(a)
        elif st.kind == "residual":
            lb, ls = st.lift
            a = (_forward_int(st.body, a, accs) << lb) + (_forward_int(st.shortcut, a, accs)
                                                          << ls)
            accs.append(a)
        else:
            a = a.reshape(a.shape[0], -1)
    return a


def _windows(a: np.ndarray, pool: MaxPool | None) -> np.ndarray:
    """``(..., m)``: the max-pool windows of ``a (N, C, H, W)`` (m = 1 without a pool)."""
    return a[..., None] if pool is None else ops.pool_windows(a, pool.kernel, pool.step)


def garbled_layer(cw: np.ndarray, sw: np.ndarray, spec: gc_act.ActSpec,
                  rng: np.random.Generator, ledger: Ledger,
                  label_rng: np.random.Generator | None = None
                  ) -> tuple[np.ndarray, np.ndarray, dict]:
    """One activation layer in process: the garbled circuit run on both parties' shares
    (:func:`ppnn.protocols.gc_act.garbled_activation`) and booked as Delphi splits it
    (:func:`ppnn.protocols.gc_act.book_gc`). ``cw`` / ``sw``: ``(n, m)`` shares of the
    client and the server; returns ``z`` (client), ``r`` (server) and measured seconds."""
    z, r, tg = gc_act.garbled_activation(cw, sw, spec, rng, label_rng,
                                         keep=ledger.records_values)
    gc_act.book_gc(ledger, z.size, gc_act.act_circuit(spec), "delphi", PARTIES,
                   wire=tg.get("wire"))
    return z, r, tg


def secure_inference(plan: DelphiGCPlan, x: np.ndarray, rng: np.random.Generator,
                     ledger: Ledger | None = None, label_rng: np.random.Generator | None = None,
                     *, preprocess=None, activation=None) -> tuple[np.ndarray, dict]:
    """Run Delphi + GC on a batch ``x``; returns the integer logits and measured seconds
    ``{"online_linear_s", "online_gc_s", "offline_s"}`` (offline: the simulator's mask
    arithmetic and the garbling; Delphi's HE preprocessing is counted, not run).

    Parameters
    ----------
    plan, x, rng, ledger, label_rng
        The plan, images in [0, 1], the simulation's generator (Delphi's masks), the ledger
        (a new one if None) and the garbled circuits' label source (OS CSPRNG if None).
    preprocess : callable, optional
        Delphi's preprocessing of one linear layer, called as
        :func:`ppnn.protocols.delphi.delphi_preprocess` (default: that function; wire mode
        passes the masks its dealer sends, :mod:`ppnn.wire.delphi_gc`).
    activation : callable, optional
        One activation layer, ``activation(cw, sw, spec, ledger) -> (z, r, seconds)``, which
        runs and books it (default: :func:`garbled_layer` with ``rng`` and ``label_rng``;
        wire mode passes its garbler's or evaluator's half).
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator (seed it explicitly)")
    for name, hook in (("preprocess", preprocess), ("activation", activation)):
        if hook is not None and not callable(hook):
            raise TypeError(f"{name} must be callable or None, got {type(hook).__name__}")
    ledger = ledger if ledger is not None else Ledger(PARTIES)
    ring = Ring(plan.cfg.k)
    client, server = PARTIES
    x_int = plan.encode(x)
    # the client holds its input: shares (x, 0)
    X = AdditiveShares(np.stack([ring.from_signed(x_int), np.zeros(x_int.shape, np.uint64)]),
                       ring)
    t = {"online_linear_s": 0.0, "online_gc_s": 0.0, "offline_s": 0.0}
    X = _run_steps(plan.steps, X, ring, rng, ledger, label_rng, preprocess, activation, t)
    with ledger.label("output"):
        ledger.hold(client, "client's share of the logits", X.shares[0])
        theirs = ledger.transmit(server, client, int(np.prod(X.shape)) * ring.bits,
                                 "server's share of the logits", X.shares[1])
        X = AdditiveShares(np.stack([X.shares[0], np.asarray(theirs, dtype=np.uint64)]), ring)
    return ring.to_signed(X.reveal()), t


def _run_steps(steps, X: AdditiveShares, ring: Ring, rng, ledger: Ledger, label_rng,
               preprocess, activation, t: dict) -> AdditiveShares:
    """The steps of one sequence on the parties' shares ``X`` (see :func:`secure_inference`)."""
    client, server = PARTIES
    for st in steps:
        if st.kind == "residual":
            # both branches on the same shares; the Add is local: each party shifts its share
            # of the branch with fewer fraction bits (x 2^lift, exact mod 2^k) and adds its
            # two shares -- nothing is sent
            lb, ls = st.lift
            body = _run_steps(st.body, X, ring, rng, ledger, label_rng, preprocess, activation,
                              t)
            short = _run_steps(st.shortcut, X, ring, rng, ledger, label_rng, preprocess,
                               activation, t)
            X = AdditiveShares(ring.add(ring.mul(body.shares, 1 << lb),
                                        ring.mul(short.shares, 1 << ls)), ring)
            continue
        with ledger.label(st.name):
            if st.kind == "linear":
                out_shape = (X.shape[0],) + st.layer.out_shape(X.shape[1:])
                W = ring.from_signed(st.W)
                t0 = time.perf_counter()
                masks = (preprocess or delphi.delphi_preprocess)(
                    st.layer, W, X.shape, out_shape, ring, rng, ledger, PARTIES)
                t1 = time.perf_counter()
                X = delphi.delphi_online(X, st.layer, W, ring.from_signed(st.b), masks,
                                         ledger, PARTIES)
                t["offline_s"] += t1 - t0
                t["online_linear_s"] += time.perf_counter() - t1
            elif st.kind == "act":
                cw, sw = (_windows(s, st.pool) for s in X.shares)
                out_shape = cw.shape[:-1]
                m = st.spec.m
                if activation is None:
                    z, r, tg = garbled_layer(cw.reshape(-1, m), sw.reshape(-1, m), st.spec, rng,
                                             ledger, label_rng)
                else:
                    z, r, tg = activation(cw.reshape(-1, m), sw.reshape(-1, m), st.spec, ledger)
                t["offline_s"] += tg["garble_s"]
                t["online_gc_s"] += tg["evaluate_s"]
                X = AdditiveShares(np.stack([z, r]).reshape(2, *out_shape), ring)
                ledger.hold(client, "z (its share of the activation, decoded from the GC)",
                            X.shares[0])
                ledger.hold(server, "r (its GC output mask = its share of the activation)",
                            X.shares[1])
            elif st.kind == "meanpool":
                # local: each party sums its shares over every window, times the public factor
                k = st.layer.kernel
                X = AdditiveShares(np.stack([ring.mul(ring.sum(
                    ops.pool_windows(s, k, st.layer.step), axis=-1), st.mult)
                    for s in X.shares]), ring)
            else:
                X = X.reshape(X.shape[0], -1)
    return X


# -- the family interface ------------------------------------------------------------------
class DelphiGC(Family):
    """Delphi + GC through :mod:`ppnn.protocols.api`: ``compile`` options are
    :class:`DelphiGCConfig`'s fields (``k``, ``frac_bits``, ``weight_frac_bits``)."""

    spec = FamilySpec(
        "delphi_gc", "Delphi + GC ReLU", "baseline (Tabula §4, GALA §II)", PARTIES,
        "2PC, semi-honest", "semi-honest", "two parties",
        real="garbled circuits (half-gates, free-XOR, fixed-key AES): garbled and evaluated; "
             "their inputs are shares under Delphi's masks, which the simulation draws from "
             "its seed (a deployment draws them from a CSPRNG)",
        simulated="Delphi's HE preprocessing: booked from its closed form, not run on BFV; "
                  "OT simulated: the client's input labels are handed over and the IKNP OT "
                  "is booked, not run",
        layers=("Conv2d", "Dense", "BatchNorm", "ReLU", "MaxPool", "MeanPool", "Flatten",
                "Residual"),
        input_encoding="a pixel is x 2^frac_bits in Z_2^k; the ring's headroom is checked on "
                       "calibration images in this range")
    count_method = "dry run without garbling (the bookings do not depend on the values)"

    def option_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in fields(DelphiGCConfig))

    def _compile(self, net, params, calib, **options):
        cfg = DelphiGCConfig(**options)
        net, params, rewrites = canonicalize(net, params)
        plan = DelphiGCPlan.build(net, params, cfg, None if calib is None else np.asarray(calib))
        return plan, {"peak_bits": plan.peak_bits, "rewrites": rewrites}

    def _run(self, plan: Plan, x, rng, backend):
        led = Ledger(PARTIES)
        logits, t = secure_inference(plan.impl, x, rng, led)
        times = [("online", "linear", t["online_linear_s"]),
                 ("online", "nonlinear", t["online_gc_s"]),
                 ("offline", "garbling and masks", t["offline_s"])]
        prov = {"communication": "counted: ledger of this run; GC sizes exact; Delphi's HE "
                "preprocessing from its closed form (BFV N = 8192 ciphertexts)",
                "compute": "measured: the server's linear layers and the client's GC "
                "evaluation (online); garbling (offline)"}
        return logits, led, times, prov

    def _count(self, plan: Plan, batch: int) -> Ledger:
        """The run's bookings on a zero input, each garbled layer booked without garbling."""
        def book(cw, sw, spec, ledger):
            gc_act.book_gc(ledger, cw.shape[0], gc_act.act_circuit(spec), "delphi", PARTIES)
            zero = np.zeros(cw.shape[0], np.uint64)
            return zero, zero, {"garble_s": 0.0, "evaluate_s": 0.0}

        led = Ledger(PARTIES)
        secure_inference(plan.impl, np.zeros((batch, *plan.net.input_shape)),
                         np.random.default_rng(0), led, activation=book)
        return led

    def oracle(self, plan: Plan, x):
        return plan.impl.forward_int(x)

    def describe(self, plan: Plan) -> pd.DataFrame:
        cfg = plan.impl.cfg

        def rows(steps):
            for st in steps:
                if st.kind == "residual":
                    yield from rows(st.body)
                    yield from rows(st.shortcut)
                    lb, ls = st.lift
                    yield {"step": f"{st.name}.add", "kind": "add",
                           "detail": f"local: body x 2^{lb} + shortcut x 2^{ls} on each share"}
                    continue
                detail = ""
                if st.kind == "linear":
                    detail = f"W int {st.W.shape}, scale 2^{cfg.weight_frac_bits}"
                elif st.kind == "act":
                    detail = (f"GC: {'max over ' + str(st.spec.m) + ' + ' if st.pool else ''}"
                              f"ReLU, truncate by {st.spec.d}, shares in Z_2^{st.spec.k}")
                elif st.kind == "meanpool":
                    detail = f"local: window sums x {st.mult}"
                yield {"step": st.name, "kind": st.kind, "detail": detail}

        return pd.DataFrame(list(rows(plan.impl.steps)))

    def costs(self, plan: Plan, results, units) -> Costs:
        cfg, led = plan.impl.cfg, results[0].ledger
        gc_bits = 0
        for st in plan.impl.leaf_steps():
            if st.kind == "act":
                c = gc_act.act_circuit(st.spec)
                n = led.op_count("garble", label=st.name) // c.n_and
                gc_bits += n * gcmod.gc_cost(c).evaluator_storage_delphi_relu
        t = pd.concat([r.timings for r in results]).groupby("layer")["seconds"].sum() \
            / len(results)
        lin, gcs = float(t.get("linear", 0.0)), float(t.get("nonlinear", 0.0))
        return Costs(
            lin + gcs, "measured",
            f"online only: server's linear layers + client's GC evaluation, mean of "
            f"{len(results)} image(s); garbling (offline) and Delphi's HE preprocessing "
            "(counted, not run) excluded",
            {"linear": lin, "nonlinear": gcs},
            (gc_bits + delphi.mask_bits(plan.net, cfg.k)) / 8,
            "client: garbled tables, its input labels, the labels of the server's mask r "
            "and decoding bits, Delphi masks",
            "integer oracle (= protocol output bit for bit, checked)",
            f"fixed point Z_2^{cfg.k}, f = {cfg.frac_bits}, f_w = {cfg.weight_frac_bits}; exact "
            "truncation inside the GC",
            "ledger of a real run, GC sizes exact; Delphi's HE preprocessing from its closed form "
            "(BFV N = 8192 ciphertexts)",
            {"garble_s": float(t.get("garbling and masks", 0.0)),
             "peak_bits": plan.impl.peak_bits})
