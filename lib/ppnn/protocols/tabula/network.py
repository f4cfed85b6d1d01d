"""End-to-end secure inference with Tabula activations and Delphi linear layers.

A network (Conv2d / Dense / BatchNorm / ReLU / any activation / MaxPool / MeanPool / Flatten,
residual blocks of those) becomes a *plan*: each linear layer runs Delphi's protocol in
Z_2^64, each activation is one Tabula table layer (truncation by a per-layer static shift
``d`` chosen from calibration data, b-bit tables), each max-pool a tree of
``max(a, b) = b + ReLU(a - b)`` table layers, each residual Add a local sum of the two
branches' shares (the coarser branch first multiplied by the integer that aligns the
steps), and the server finally sends its share of the logits to the client. With
``TabulaConfig(nonlinear="gc")`` each ReLU table is garbled instead (Tabula §4's baseline:
the same b-bit inputs, the same result, booked as Delphi books its garbled ReLU).

Scales: the image and every table output are fixed point with ``act_frac_bits``; weights
with ``weight_frac_bits``; a linear output has step ``2^-(act + weight)`` (batch-norm is
folded into the preceding linear layer, mean-pool is a local sum whose 1/k^2 goes into the next
table). The per-layer shift keeps the truncated value in b bits: ``d = l + 1 - b`` where
``2^l`` bounds the calibration batch's integer pre-activations (times ``margin``) -- the
paper's "static scale parameter per layer" (appendix). Test inputs beyond the calibrated range
wrap mod 2^b, like in the paper's post-training quantization.

:func:`count_network` books the same messages without computing (any zoo network, residual
ones included), so large networks are *counted from the ledger*; the tests check that the
executed protocol and the counter book identical totals on the MNIST networks.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ppnn.core import Z2_64, AdditiveShares, Ledger, Ring
from ppnn.core.randomness import mask_source
from ppnn.core.truncation import local_truncate
from ppnn.he import gc as gcmod
from ppnn.he.gc_circuits import plain_quant_relu, quant_relu_circuit
from ppnn.nn import (
    BatchNorm,
    Conv2d,
    Dense,
    Flatten,
    MaxPool,
    MeanPool,
    Network,
    ReLU,
    Residual,
    Square,
    fold_batchnorm,
    integer,
    ops,
)
from ppnn.nn.network import _auto_names

from .. import delphi
from .online import tabula_online
from .preprocessing import preprocess_fast
from .tables import LazyTables, check_table_bits, dealer_tables, relu, signed_inputs

__all__ = ["TabulaConfig", "Plan", "build_plan", "secure_inference", "plain_inference",
           "count_network", "network_counts", "encode_table"]

PARTIES = ("client", "server")
NONLINEAR = ("table", "gc")
MAX_GC_BITS = 32  # the GC baseline's widest input (Tabula §4: 32-, 16- and 8-bit inputs)


@dataclass(frozen=True)
class TabulaConfig:
    """Precision settings of a Tabula network run."""

    bits: int = 8
    act_frac_bits: int = 12
    weight_frac_bits: int = 12
    ring: Ring = Z2_64
    margin: float = 1.0
    #: ``"table"`` (Tabula) or ``"gc"``: the same plan with each ReLU table garbled instead
    #: (:func:`~ppnn.he.gc_circuits.quant_relu_circuit`, Delphi's split) -- Tabula §4's
    #: baseline, "garbled circuits with quantized inputs": same inputs, same result
    nonlinear: str = "table"

    def __post_init__(self) -> None:
        if self.nonlinear not in NONLINEAR:
            raise ValueError(f"nonlinear must be one of {NONLINEAR}, got {self.nonlinear!r}")
        if self.nonlinear == "table":
            check_table_bits(self.bits)
        elif (isinstance(self.bits, bool) or not isinstance(self.bits, int)
              or not 2 <= self.bits <= MAX_GC_BITS):
            raise ValueError(f"bits must be an int in 2..{MAX_GC_BITS} for nonlinear='gc', "
                             f"got {self.bits!r}")
        for name in ("act_frac_bits", "weight_frac_bits"):
            v = getattr(self, name)
            if not isinstance(v, int) or not 0 <= v <= 24:
                raise ValueError(f"{name} must be an int in 0..24, got {v}")
        if not isinstance(self.ring, Ring):
            raise TypeError(f"ring must be a ppnn.core.Ring, got {type(self.ring).__name__}")
        if (isinstance(self.margin, bool) or not isinstance(self.margin, int | float)
                or not 0 < self.margin < math.inf):
            raise ValueError(f"margin must be a finite number > 0, got {self.margin!r}")


def encode_table(F: Callable, b: int, in_step: float, out_step: float, ring: Ring) -> np.ndarray:
    """``round(F(q * in_step) / out_step)`` for every b-bit signed q, as ring elements."""
    v = np.rint(np.asarray(F(signed_inputs(b) * in_step), np.float64) / out_step)
    lim = 2.0 ** (ring.k - 2)
    if not np.all(np.isfinite(v)) or np.abs(v).max() >= lim:
        raise ValueError(f"table values exceed the ring Z_2^{ring.k} (|v| must be < {lim:.3g})")
    return ring.reduce(v.astype(np.int64))


@dataclass
class Step:
    kind: str  # linear | table | maxpool | meanpool | flatten
    name: str
    layer: object = None
    W_int: np.ndarray | None = None
    bias: np.ndarray | None = None
    F: Callable | None = None
    F_table: np.ndarray | None = None
    d: int = 0
    input_bits: int = 0
    in_step: float = 1.0
    step_out: float = 1.0
    info: dict = field(default_factory=dict)
    body: list | None = None  # residual: the body's steps
    shortcut: list | None = None  # residual: the shortcut's steps (empty: identity)
    lift: tuple[int, int] = (1, 1)  # residual: integer factors aligning the two branches' steps


def _leaves(steps):
    for st in steps:
        if st.kind == "residual":
            yield from _leaves(st.body)
            yield from _leaves(st.shortcut)
        else:
            yield st


@dataclass
class Plan:
    net_name: str
    cfg: TabulaConfig
    input_shape: tuple
    steps: list

    def leaf_steps(self) -> list[Step]:
        """Every step, residual branches expanded (body, then shortcut): the run's order."""
        return list(_leaves(self.steps))

    def table_layers(self) -> list[Step]:
        return [s for s in self.leaf_steps() if s.kind in ("table", "maxpool")]

    def summary(self) -> list[dict]:
        def rows(steps):
            for s in steps:
                if s.kind == "residual":
                    yield from rows(s.body)
                    yield from rows(s.shortcut)
                    yield {"step": f"{s.name}.add", "kind": "add", "d": 0, "input_bits": 0,
                           "in_step": s.step_out, "lift": s.lift}
                    continue
                yield {"step": s.name, "kind": s.kind, "d": s.d, "input_bits": s.input_bits,
                       "in_step": s.in_step, **s.info}

        return list(rows(self.steps))


# -- float kernels used while building the plan (calibration) --------------------------------
def _windows(x: np.ndarray, layer) -> np.ndarray:
    if layer.padding:
        raise ValueError(f"{layer.kind} with padding is not supported by the Tabula runner")
    return ops.pool_windows(x, layer.kernel, layer.step)


def _window_slices(x: np.ndarray, layer) -> list[np.ndarray]:
    """The ``k*k`` entries of :func:`_windows` (same order) as strided views over the last two
    axes of ``x``: no window copy, any leading axes (e.g. the party axis of shares)."""
    if layer.padding:
        raise ValueError(f"{layer.kind} with padding is not supported by the Tabula runner")
    k, s = layer.kernel, layer.step
    oh, ow = (ops.out_size(n, k, s, 0) for n in x.shape[-2:])
    if oh < 1 or ow < 1:
        raise ValueError(f"{layer.kind}: input {x.shape[-2:]} is smaller than the {k}x{k} window")
    return [v for _, v in ops.window_offsets(x, k, s, oh, ow)]


def _activation(layer) -> Callable | None:
    if isinstance(layer, ReLU):
        return relu
    if isinstance(layer, Square):
        return np.square
    return getattr(layer, "fn", None)


def _fold(net: Network, params) -> tuple[Network, list]:
    """Fold BatchNorm into the preceding linear layer (inference), in float64, also inside
    residual blocks.

    Uses :func:`ppnn.nn.fold_batchnorm`; a BatchNorm that does not follow a Conv2d/Dense
    cannot be folded and raises."""
    def f64(ps):
        return [{k: (f64(v) if isinstance(v, list) else
                     np.asarray(v, np.float64) if isinstance(v, np.ndarray) else v)
                 for k, v in p.items()} for p in ps]

    folded_net, folded_params = fold_batchnorm(net, f64(params))
    if any(isinstance(node.layer, BatchNorm) for node in folded_net.leaves()):
        raise ValueError("a BatchNorm must follow a Conv2d or Dense to be folded")
    return folded_net, folded_params


def _kept_names(layers, prefix: str = "") -> list[str]:
    """The names of ``layers`` (before folding) without the batch-norms folding removes."""
    return [f"{prefix}{n}" for n, layer in zip(_auto_names(layers), layers)
            if not isinstance(layer, BatchNorm)]


def build_plan(net: Network, params, x_calib: np.ndarray | None, cfg: TabulaConfig,
               input_bits: list[int] | None = None) -> Plan:
    """Quantize ``net`` for Tabula: integer weights, per-layer shifts from ``x_calib``.

    ``input_bits`` (one per table layer, e.g. ``[s.input_bits for s in
    other_plan.table_layers()]``) reuses a previous calibration instead of ``x_calib``.

    A residual block runs its body and its shortcut from the same input; both end as shares
    at steps that differ by an integer factor (an identity shortcut at the activations' step
    ``2^-f`` beside a body ending in a linear layer at ``2^-(f + f_w)``): the coarser branch
    is multiplied by it on both shares (local, exact) and the two are added -- the next
    table's shift ``d`` absorbs the extra bits, as after any linear layer."""
    ring, b = cfg.ring, cfg.bits
    gc = cfg.nonlinear == "gc"
    calib = input_bits is None
    given = list(input_bits or [])
    x = np.asarray(x_calib if calib else np.zeros((0, *net.input_shape)), np.float64)
    if x.shape[1:] != tuple(net.input_shape):
        raise ValueError(f"x_calib must have shape (N, {net.input_shape}), got {x.shape}")
    act_step = 2.0 ** -cfg.act_frac_bits
    folded_net, folded_params = _fold(net, params)

    def shift_for(max_abs: float, s: float) -> tuple[int, int]:
        if calib:
            return integer.shift_for(max_abs, s, b, cfg.margin)
        if not given:
            raise ValueError("input_bits has fewer entries than the plan has table layers")
        l_bits = int(given.pop(0))
        return l_bits, max(l_bits + 1 - b, 0)

    def seq(layers, ps, names, x, step):
        steps: list[Step] = []
        for name, layer, p in zip(names, layers, ps):
            if isinstance(layer, Residual):
                orig = orig_blocks[name]
                body, xb, sb = seq(layer.body, p["body"], _kept_names(orig.body, f"{name}.body."),
                                   x, step)
                short, xs, ss = seq(layer.shortcut, p["shortcut"],
                                    _kept_names(orig.shortcut, f"{name}.shortcut."), x, step)
                fine = min(sb, ss)
                lift = tuple(round(v / fine) for v in (sb, ss))
                if any(abs(v / fine - r) > 1e-9 for v, r in zip((sb, ss), lift)):
                    raise ValueError(f"{net.name}: {name}: the branches end at steps {sb:g} and "
                                     f"{ss:g}, which no integer factor aligns")
                steps.append(Step("residual", name, layer, step_out=fine, body=body,
                                  shortcut=short, lift=lift))
                if calib:
                    x = xb + xs
                step = fine
            elif isinstance(layer, Conv2d | Dense):
                W_int = integer.fixed_weights(p["W"], cfg.weight_frac_bits)
                step_out = step * 2.0 ** -cfg.weight_frac_bits  # a power of two
                bias = None
                b_real = np.asarray(p["b"], np.float64) if "b" in p else None
                if b_real is not None:
                    bias = ring.reduce(integer.fixed_bias(layer, b_real,
                                                          round(-math.log2(step_out))))
                if calib:
                    Wq = W_int * 2.0 ** -cfg.weight_frac_bits
                    x = (delphi.conv2d(x, Wq, layer.stride, layer.padding, layer.groups)
                         if isinstance(layer, Conv2d) else x @ Wq.T)
                    if b_real is not None:
                        x = x + b_real.reshape((1, -1) + (1,) * (x.ndim - 2))
                steps.append(Step("linear", name, layer, W_int, bias, step_out=step_out))
                step = step_out
            elif _activation(layer) is not None:
                F = _activation(layer)
                l_bits, d = shift_for(float(np.abs(x).max(initial=0)), step)
                in_step = step * 2.0**d
                info = {"tables_per_output": 1}
                if gc:
                    if not isinstance(layer, ReLU):
                        raise ValueError(f"{net.name}: layer {name} ({layer.kind}): "
                                         "nonlinear='gc' garbles ReLU only")
                    F_table = None
                    info = {**info, **_gc_info(name, b, in_step / act_step, ring)}
                else:
                    F_table = encode_table(F, b, in_step, act_step, ring)
                steps.append(Step("table", name, layer, F=F, F_table=F_table, d=d,
                                  input_bits=l_bits, in_step=in_step, step_out=act_step,
                                  info=info))
                if calib:
                    q = np.floor(x / in_step)
                    q = (q + 2 ** (b - 1)) % 2**b - 2 ** (b - 1)  # the b-bit input the table sees
                    x = np.asarray(F(q * in_step))
                step = act_step
            elif isinstance(layer, MaxPool):
                win = _windows(x, layer) if calib else None
                spread = float(np.abs(x).max(initial=0)) * (1 if x.min(initial=0) >= 0 else 2)
                l_bits, d = shift_for(spread, step)
                in_step = step * 2.0**d
                info = {"tables_per_output": layer.kernel**2 - 1}
                if gc:
                    F_table = None
                    info = {**info, **_gc_info(name, b, in_step / step, ring)}
                else:
                    F_table = encode_table(relu, b, in_step, step, ring)
                steps.append(Step("maxpool", name, layer, F=relu, F_table=F_table, d=d,
                                  input_bits=l_bits, in_step=in_step, step_out=step,
                                  info=info))
                if calib:
                    x = win.max(axis=-1)
            elif isinstance(layer, MeanPool):
                kk = layer.kernel**2
                if calib:
                    x = _windows(x, layer).sum(axis=-1) / (1 if layer.scaled else kk)
                if not layer.scaled:
                    step = step / kk
                steps.append(Step("meanpool", name, layer, step_out=step))
            elif isinstance(layer, Flatten):
                if calib:
                    x = x.reshape(x.shape[0], -1)
                steps.append(Step("flatten", name, layer, step_out=step))
            else:
                raise ValueError(f"{net.name}: layer {name} ({layer.kind}) is not supported")
        return steps, x, step

    orig_blocks: dict = {}
    _find_blocks(net.layers, "", orig_blocks)
    steps, _, _ = seq(folded_net.layers, folded_params, _kept_names(net.layers), x,
                      2.0 ** -cfg.act_frac_bits)
    if given:
        raise ValueError(f"input_bits has {len(given)} more entries than table layers")
    return Plan(net.name, cfg, tuple(net.input_shape), steps)


def _find_blocks(layers, prefix: str, out: dict) -> None:
    """``out[block name] = the Residual layer`` for every block (nested ones too)."""
    for name, layer in zip(_auto_names(layers), layers):
        if isinstance(layer, Residual):
            out[f"{prefix}{name}"] = layer
            _find_blocks(layer.body, f"{prefix}{name}.body.", out)
            _find_blocks(layer.shortcut, f"{prefix}{name}.shortcut.", out)


def _gc_info(name: str, b: int, ratio: float, ring: Ring) -> dict:
    """The garbled table's output shift ``t`` (output step = input step / 2^t)."""
    t = round(math.log2(ratio))
    if 2.0**t != ratio:
        raise ValueError(f"layer {name}: the output step is not a power of two times the "
                         f"input step (ratio {ratio:g}), which nonlinear='gc' needs")
    if not -(b - 1) <= t <= ring.k - b - 2:
        raise ValueError(f"layer {name}: output shift 2^{t} is outside 2^-{b - 1}.."
                         f"2^{ring.k - b - 2} for b={b} in Z_2^{ring.k}")
    return {"gc_bits": b, "gc_shift": t}


# -- execution ---------------------------------------------------------------------------
#: the ``tables`` modes of a plan compiled with ``nonlinear="gc"``: garbled, or booked only
GC_MODES = ("gc", "gc-count")


def _make_tables(F_table, n, rng, ring, ledger, mode):
    if mode == "lazy":
        return LazyTables(F_table, n, rng, ring, ledger)
    if mode == "dealer":
        return dealer_tables(F_table, n, rng, ring, ledger)
    if mode == "protocol":
        return preprocess_fast(F_table, n, rng, ledger, ring=ring)
    if callable(mode):  # another source of tables (wire mode: received from the dealer)
        return mode(F_table, n, rng, ring, ledger)
    raise ValueError(f"tables must be 'lazy', 'dealer' or 'protocol', got {mode!r}")


def _table_layer(X: AdditiveShares, st: Step, rng, ledger, mode, check) -> AdditiveShares:
    if mode in GC_MODES:
        return _garbled_layer(X, st, rng, ledger, book_only=mode == "gc-count")
    if st.F_table is None:
        raise ValueError(f"layer {st.name} was compiled with nonlinear='gc': run it with "
                         f"tables in {GC_MODES}")
    T = _make_tables(st.F_table, int(np.prod(X.shape)), rng, X.ring, ledger, mode)
    return tabula_online(X, T, st.d, ledger, input_bits=st.input_bits if check else None)


def _garbled_layer(X: AdditiveShares, st: Step, rng, ledger: Ledger, book_only: bool,
                   chunk: int = 2048) -> AdditiveShares:
    """One table layer garbled: the same local truncation by ``d`` and reduction mod ``2^b``
    as :func:`~.online.tabula_online`, then :func:`~ppnn.he.gc_circuits.quant_relu_circuit`
    per element, booked as Delphi books its ReLU (:func:`ppnn.he.gc.book_delphi_split`).
    The server's mask ``r`` comes from the OS CSPRNG; ``book_only`` books without garbling
    (the bookings do not depend on the values) and returns shares of zero."""
    if st.F_table is not None:
        raise ValueError(f"layer {st.name} was compiled with nonlinear='table': run it with "
                         "tables='lazy', 'dealer' or 'protocol'")
    ring, b, t = X.ring, st.info["gc_bits"], st.info["gc_shift"]
    circuit = quant_relu_circuit(b, ring.k, t)
    n = int(np.prod(X.shape, dtype=np.int64))
    if book_only:
        gcmod.book_delphi_split(ledger, n, circuit, PARTIES)
        return AdditiveShares(np.zeros((2, *X.shape), np.uint64), ring)
    xt = local_truncate(X, int(st.d)) if st.d > 0 else X
    m = np.uint64((1 << b) - 1)
    xc, xs = xt.shares[0].reshape(-1) & m, xt.shares[1].reshape(-1) & m
    ledger.hold(PARTIES[0], "x_trunc_0 mod 2^b", xc)
    ledger.hold(PARTIES[1], "x_trunc_1 mod 2^b", xs)
    # the server's output share hides ReLU(x) in a real garbled circuit: OS CSPRNG
    r = ring.random(mask_source(rng, real=True), (n,))
    keep = ledger.records_values
    out, info = gcmod.garble_and_evaluate(
        circuit, np.concatenate([gcmod.bits_of(xs, b), gcmod.bits_of(r, ring.k)]),
        gcmod.bits_of(xc, b), None, chunk, keep=keep)
    z = gcmod.from_bits(out) & ring.mask
    gcmod.book_delphi_split(ledger, n, circuit, PARTIES,
                            gcmod.GCWire(**info["sent"]) if keep else None)
    ledger.hold(PARTIES[0], "z = F(x_trunc) - r", z)
    ledger.hold(PARTIES[1], "r", r)
    return AdditiveShares(np.stack([z, r]).reshape(2, *X.shape), ring)


def _maxpool(X: AdditiveShares, st: Step, rng, ledger, mode, check) -> AdditiveShares:
    """Max over windows by a tree of max(a, b) = b + ReLU(a - b): one round per level."""
    ring = X.ring
    cur = [AdditiveShares(w, ring) for w in _window_slices(X.shares, st.layer)]
    while len(cur) > 1:
        a, bb = cur[0::2], cur[1::2]
        pairs = len(bb)
        diff = AdditiveShares(np.stack([(x - y).shares for x, y in zip(a[:pairs], bb)], 1), ring)
        r = _table_layer(diff, st, rng, ledger, mode, False)
        nxt = [bb[i] + AdditiveShares(r.shares[:, i], ring) for i in range(pairs)]
        cur = nxt + a[pairs:]
    return cur[0]


def secure_inference(plan: Plan, x: np.ndarray, rng: np.random.Generator,
                     ledger: Ledger | None = None, linear: str = "delphi",
                     tables: str | Callable = "lazy", check_scale: bool = False,
                     timings: dict | None = None, preprocess: Callable | None = None
                     ) -> np.ndarray:
    """Run the client/server protocol on a batch ``x`` (N, *input_shape); returns logits.

    ``linear``: "delphi" (masks, the server computes on ``x + R_c`` in Z_2^64) or "ideal"
    (same output distribution and bookings, exact float64 BLAS -- for accuracy sweeps).
    ``tables``: "lazy" (ideal on-demand), "dealer" (materialised ideal) or "protocol"
    (Fig. 3 preprocessing, ours), or a callable ``(F_table, n, rng, ring, ledger) -> tables``.
    ``preprocess``: Delphi's preprocessing of one layer (default
    :func:`~ppnn.protocols.delphi.delphi_preprocess`; wire mode receives the masks instead).
    ``timings`` (dict) receives measured seconds per step kind.
    """
    cfg, ring = plan.cfg, plan.cfg.ring
    ledger = ledger or Ledger(PARTIES)
    preprocess = preprocess or delphi.delphi_preprocess
    x = np.asarray(x, np.float64)
    if x.shape[1:] != plan.input_shape:
        raise ValueError(f"x must have shape (N, {plan.input_shape}), got {x.shape}")
    # the client holds its input: shares (x, 0)
    x_int = integer.to_fixed(x, cfg.act_frac_bits)
    X = AdditiveShares(np.stack([ring.reduce(x_int), np.zeros(x.shape, np.uint64)]), ring)
    X = _run_steps(plan.steps, X, rng, ledger, linear, tables, check_scale, timings, preprocess,
                   x.shape[0])
    with ledger.label("output"):
        theirs = ledger.transmit(PARTIES[1], PARTIES[0], int(np.prod(X.shape)) * ring.bits,
                                 "server's share of the logits", X.shares[1])
    logits = ring.add(X.shares[0], theirs)  # the client's share and the one it received
    ledger.hold(PARTIES[0], "logits (fixed point)", logits)
    return ring.to_signed(logits).astype(np.float64) * plan.steps[-1].step_out


def _run_steps(steps, X: AdditiveShares, rng, ledger: Ledger, linear, tables, check_scale,
               timings, preprocess, n: int) -> AdditiveShares:
    """The steps of one sequence on the two parties' shares (see :func:`secure_inference`)."""
    ring = X.ring
    for st in steps:
        t0 = time.perf_counter()
        if st.kind == "residual":
            # both branches from the same shares; the Add is local: each party multiplies its
            # share of each branch by the public factor that aligns the steps and adds them
            body = _run_steps(st.body, X, rng, ledger, linear, tables, check_scale, timings,
                              preprocess, n)
            short = _run_steps(st.shortcut, X, rng, ledger, linear, tables, check_scale,
                               timings, preprocess, n)
            t0 = time.perf_counter()
            lb, ls = (np.uint64(v) for v in st.lift)
            X = AdditiveShares(ring.add(ring.mul(body.shares, lb), ring.mul(short.shares, ls)),
                               ring)
            if timings is not None:
                timings["local"] = timings.get("local", 0.0) + time.perf_counter() - t0
            continue
        with ledger.label(st.name):
            if st.kind == "linear":
                if linear == "delphi":
                    out_shape = (n,) + st.layer.out_shape(X.shape[1:])
                    masks = preprocess(st.layer, ring.reduce(st.W_int), X.shape, out_shape,
                                       ring, rng, ledger, PARTIES)
                    X = delphi.delphi_online(X, st.layer, ring.reduce(st.W_int), st.bias, masks,
                                             ledger, PARTIES)
                elif linear == "ideal":
                    X = delphi.delphi_ideal(X, st.layer, st.W_int, st.bias, ledger, rng, PARTIES)
                else:
                    raise ValueError(f"linear must be 'delphi' or 'ideal', got {linear!r}")
            elif st.kind == "table":
                X = _table_layer(X, st, rng, ledger, tables, check_scale)
            elif st.kind == "maxpool":
                X = _maxpool(X, st, rng, ledger, tables, check_scale)
            elif st.kind == "meanpool":
                X = AdditiveShares(np.stack([_windows(s, st.layer).sum(axis=-1, dtype=np.uint64)
                                             & ring.mask for s in X.shares]), ring)
            elif st.kind == "flatten":
                X = X.reshape(n, -1)
        if timings is not None:
            key = "linear" if st.kind == "linear" else (
                "nonlinear" if st.kind in ("table", "maxpool") else "local")
            timings[key] = timings.get(key, 0.0) + time.perf_counter() - t0
    return X


def plain_inference(plan: Plan, x: np.ndarray) -> np.ndarray:
    """The same integer pipeline in the clear with exact floor truncation (the oracle)."""
    cfg = plan.cfg
    v = integer.to_fixed(x, cfg.act_frac_bits)
    return _plain_steps(plan.steps, v, cfg).astype(np.float64) * plan.steps[-1].step_out


def _plain_steps(steps, v: np.ndarray, cfg: TabulaConfig) -> np.ndarray:
    ring = cfg.ring
    m = (1 << cfg.bits) - 1  # & m == % 2^b (two's complement)
    for st in steps:
        if st.kind == "residual":
            lb, ls = st.lift
            v = _plain_steps(st.body, v, cfg) * lb + _plain_steps(st.shortcut, v, cfg) * ls
        elif st.kind == "linear":
            v = ring.to_signed(delphi.exact_linear(st.layer, st.W_int, v, ring))
            if st.bias is not None:
                v = v + ring.to_signed(st.bias)
        elif st.kind == "table":
            v = _lookup(st, (v >> st.d) & m, ring)
        elif st.kind == "maxpool":
            cur = _window_slices(v, st.layer)
            while len(cur) > 1:
                a, bb = cur[0::2], cur[1::2]
                nxt = [y + _lookup(st, ((z - y) >> st.d) & m, ring) for z, y in zip(a, bb)]
                cur = nxt + a[len(bb):]
            v = cur[0]
        elif st.kind == "meanpool":
            v = _windows(v, st.layer).sum(axis=-1)
        elif st.kind == "flatten":
            v = v.reshape(v.shape[0], -1)
    return v


def _lookup(st: Step, u: np.ndarray, ring: Ring) -> np.ndarray:
    """The signed table value at index ``u`` (the garbled circuit's function without a table
    when the plan has none)."""
    if st.F_table is not None:
        return ring.to_signed(st.F_table[u])
    return plain_quant_relu(u, np.zeros_like(u), st.info["gc_bits"], st.info["gc_shift"])


# -- counting without computing (any zoo network) ----------------------------------------
def network_counts(net: Network) -> dict:
    """Linear-layer inputs, outputs and nonlinear calls of ``net`` from the zoo's shapes."""
    lin_in = lin_layers = 0
    relus = comparisons = 0
    for node in net.leaves():
        if isinstance(node.layer, Conv2d | Dense):
            lin_in += int(np.prod(node.in_shape))
            lin_layers += 1
        relus += node.counts["relus"] + node.counts["squares"]
        comparisons += node.counts["comparisons"]
    return {"linear_layers": lin_layers, "linear_inputs": lin_in, "relus": relus,
            "comparisons": comparisons, "outputs": int(np.prod(net.output_shape))}


def count_network(net: Network, scheme: str, bits: int, ledger: Ledger | None = None,
                  ring_bits: int = 64, include_maxpool: bool = True) -> Ledger:
    """Book the online messages of one inference of ``net`` without computing.

    ``scheme``: "tabula" (2 b bits per nonlinear call, one round per table layer / max-pool
    level) or "gc" (our garbled ReLU circuit on b-bit inputs per call, booked as Delphi's ReLU
    protocol books it -- Tabula §4's baseline, Mishra et al. 2020 §4, with the booking
    :func:`ppnn.he.gc.gc_relu` uses for ``split="delphi"``,
    :func:`ppnn.he.gc.book_delphi_split`: online one round per layer with the
    labels of the server's share, :attr:`~ppnn.he.gc.GCCost.online_delphi_relu`; the garbled
    tables, decoding bits, labels of the mask r and the client's IKNP OT are booked in the
    offline phase, :attr:`~ppnn.he.gc.GCCost.offline_delphi_relu`). Linear layers: Delphi
    (``ring_bits`` per input element; their HE preprocessing and Tabula's table
    preprocessing are not booked here).
    """
    if scheme not in ("tabula", "gc"):
        raise ValueError(f"scheme must be 'tabula' or 'gc', got {scheme!r}")
    ledger = ledger or Ledger(PARTIES)
    client, server = PARTIES
    if scheme == "gc":
        circuit = gcmod.relu_circuit(bits)
    else:
        check_table_bits(bits)
    for node in net.leaves():
        layer = node.layer
        with ledger.label(node.name.replace(".", "_")):
            if isinstance(layer, Conv2d | Dense):
                ledger.send(client, server, int(np.prod(node.in_shape)) * ring_bits,
                            "[x]_c + R_c")
                continue
            calls = node.counts["relus"] + node.counts["squares"]
            calls_levels = [calls] if calls else []
            if isinstance(layer, MaxPool) and include_maxpool:
                outs, k, calls_levels = int(np.prod(node.out_shape)), layer.kernel**2, []
                while k > 1:  # the pairwise tree of _maxpool: k//2 maxima per level
                    calls_levels.append(outs * (k // 2))
                    k -= k // 2
            for c in calls_levels:
                if scheme == "tabula":
                    with ledger.round():
                        ledger.send(client, server, c * bits, "x_trunc_0 + s_0 mod 2^b")
                        ledger.send(server, client, c * bits, "x_trunc_1 + s_1 mod 2^b")
                else:
                    gcmod.book_delphi_split(ledger, c, circuit, PARTIES)
    with ledger.label("output"):
        ledger.send(server, client, int(np.prod(net.output_shape)) * ring_bits,
                    "server's share of the logits")
    return ledger
