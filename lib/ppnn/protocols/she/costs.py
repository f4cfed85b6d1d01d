"""Counted costs of SHE / TCN networks without evaluating every gate (she.txt Tables 2, 4-7).

Networks like AlexNet or ResNet-18 on ImageNet need 10^9-10^10 gates per image: too many to
evaluate even on plaintext bits. Their costs follow from **closed forms** of the circuits in
:mod:`.circuits` (fully encrypted constants, so every gate bootstraps and counts do not depend
on the data), applied to the number of terms each output accumulates:

=====================  =====================================================================
unit                   gates (HGOPs) per output
=====================  =====================================================================
mixed accumulator      ``sum_n floor(K_n/2) (5 (b0 + n) - 3)``, ``K_{n+1} = ceil(K_n/2)``
fixed accumulator      ``(K - 1) (5 W - 6)``
bias adder             ``5 W - 3`` (widening) / ``5 W - 6`` (fixed width)
ReLU + saturation      ``h - 1 + 2a`` (``h`` magnitude bits above ``a``), ``k`` if ``k <= a``
signed saturation      ``2n - 1 + (a - 1)`` with ``n = W - a`` (MUX: 2 bootstraps)
max unit (w bits)      ``4w - 2`` (signed) / ``4w - 3`` (unsigned) + ``w`` MUX
multiplier (TCN)       ``a bw + (bw-2)(5a-3) + 5a-1`` (unsigned x), ``a bw + (bw-1)(5a-3)``
=====================  =====================================================================

A test checks :func:`plan_costs` of a compiled network against the bit simulator's exact count
(:func:`ppnn.protocols.she.network.encrypted_inference`, ``public_constants=False``).
Multiplicative depth per layer comes from simulating one output with the layer's largest term
count (depth does not depend on the number of outputs); the network's depth is the sum of the
layers' (a test bounds the difference to a full simulation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import lru_cache

import numpy as np
import pandas as pd

from ppnn.he.bitsim import BitSimulator
from ppnn.nn import (
    BatchNorm,
    ChannelShuffle,
    Conv2d,
    Dense,
    Flatten,
    MaxPool,
    MeanPool,
    Network,
    ReLU,
    Residual,
)
from ppnn.nn.ops import out_size

from . import circuits as C
from .quant import QLinear, QPool, QuantNet

__all__ = ["LayerPlan", "plan_from_quantnet", "plan_from_network", "plan_costs", "prune",
           "fit_density", "acc_gates", "eq1_layer_depth", "COST_COLUMNS"]

COST_COLUMNS = ["layer", "kind", "outputs", "pc_shift", "pc_mult", "cc_add", "cc_com", "hops",
                "hgops", "bootstraps", "md_layer"]


def acc_gates(k: int, b0: int) -> int:
    """Gates of the mixed-bitwidth accumulator of ``k`` terms of ``b0`` bits."""
    total, n = 0, 0
    while k > 1:
        total += (k // 2) * (5 * (b0 + n) - 3)
        k, n = (k + 1) // 2, n + 1
    return total


def _bits_for(v: int) -> int:
    v = int(v)
    return (v.bit_length() + 1) if v >= 0 else ((-v - 1).bit_length() + 1)


@dataclass
class LayerPlan:
    """What the cost model needs to know about one layer (see :func:`plan_costs`)."""

    name: str
    kind: str  # "linear" | "pool" | "add" | "meanpool" | "relu"
    counts: np.ndarray  # terms (or window elements) per output
    in_bits: int
    in_signed: bool
    scheme: str = "she"
    guard: int = 0
    weight_bits: int = 5
    act: str | None = None
    shift: int = 0
    out_bits: int = 5
    corr_range: tuple[int, int] = (1, 1)  # smallest / largest public constant added
    tcn_width: int = 16
    extra: dict = field(default_factory=dict)

    @property
    def outputs(self) -> int:
        return int(self.counts.size)


# ---------------------------------------------------------------------------------------------
# plans
# ---------------------------------------------------------------------------------------------
def plan_from_quantnet(qnet: QuantNet, accumulator: str = "mixed") -> list[LayerPlan]:
    """Exact plans of a compiled network (its term counts, shifts and public constants)."""
    from .network import tcn_acc_width

    if any(not isinstance(op, QLinear | QPool) for op in qnet.ops):
        raise ValueError(f"{qnet.name}: closed-form plans cover chains of linear layers and "
                         "max-pools; a network with mean pools or residual blocks is counted "
                         "by the family's dry run (ppnn.count)")
    plans = []
    for op in qnet.ops:
        if isinstance(op, QLinear):
            t = op.terms()
            valid = t["src"] >= 0
            counts = valid.sum(axis=1)
            if op.scheme == "she":
                corr = op.bias + (valid & (t["sign"] < 0)).sum(axis=1)
            else:
                corr = op.bias
            plans.append(LayerPlan(
                op.name, "linear", counts, op.in_bits, op.in_signed, op.scheme, op.guard,
                qnet.weight_bits, op.act, op.shift, op.out_bits,
                (int(corr.min()), int(corr.max())) if np.any(corr) else (0, 0),
                tcn_acc_width(op, qnet.weight_bits) if op.scheme == "tcn" else 16,
                {"accumulator": accumulator}))
            last = op
        elif isinstance(op, QPool):
            counts = (op.src >= 0).sum(axis=1)
            signed = last.act == "signed"
            plans.append(LayerPlan(op.name, "pool", counts, last.out_bits, signed))
    return plans


def _valid_1d(n: int, k: int, s: int, p: int) -> np.ndarray:
    """Kernel taps inside the input for every output position along one axis."""
    o = out_size(n, k, s, p)
    start = np.arange(o) * s - p
    return np.clip(start + k, 0, n) - np.clip(start, 0, n)


def _window_counts(in_shape, kernel: int, stride: int, padding: int, channels_out: int,
                   per_window: int) -> np.ndarray:
    """Terms per output ``(channels_out * OH * OW,)``: ``per_window`` x valid taps (separable,
    so no index array is built -- ImageNet layers have 10^8 terms)."""
    _, h, w = in_shape
    rows = _valid_1d(h, kernel, stride, padding)
    cols = _valid_1d(w, kernel, stride, padding)
    taps = rows[:, None] * cols[None, :]
    return np.broadcast_to(taps * per_window, (channels_out,) + taps.shape).reshape(-1)


def _conv_counts(in_shape, lay: Conv2d) -> np.ndarray:
    return _window_counts(in_shape, lay.kernel, lay.stride, lay.padding, lay.out_channels,
                          in_shape[0] // lay.groups)


def plan_from_network(net: Network, scheme: str = "she", act_bits: int = 5, in_bits: int = 5,
                      weight_bits: int = 5, guard_bits: int = 2,
                      overflow_bits: int = 3) -> list[LayerPlan]:
    """Plans of an (untrained) zoo network with dense weights.

    Assumptions where training would decide: every weight is nonzero; the public bias fits the
    accumulator; each requantizing shift keeps ``overflow_bits`` magnitude bits above the
    ``act_bits`` output bits for the saturation. Batch-norm after a linear layer is folded;
    a residual block adds its two branches (one adder per element) before the ReLU; a
    mean-pool is an accumulator (its division by the window size is a shift when a power of
    two, otherwise folded into the next layer's weights).
    """
    plans: list[LayerPlan] = []
    _plan_seq(list(net.layers), net.input_shape, in_bits, False, plans, "", scheme, act_bits,
              weight_bits, guard_bits, overflow_bits, last_linear=_last_linear(net.layers))
    return plans


def _kept(counts: np.ndarray, density: float) -> np.ndarray:
    """Terms kept per output: ``density x terms`` rounded with the remainders carried from
    output to output (error diffusion), so a layer keeps ``density`` of its terms up to one;
    at least one term per output."""
    cum = np.floor(np.cumsum(counts * density, dtype=np.float64) + 0.5)
    return np.maximum(np.diff(cum, prepend=0.0), 1).astype(np.int64)


def prune(plans: list[LayerPlan], density: float) -> list[LayerPlan]:
    """The plans of the same network with its weights pruned: each output of a linear layer
    keeps ``density`` of its terms (rounded by :func:`_kept`). Pools, residual additions and
    ReLUs are unchanged: pruning removes weights, not activations."""
    if not (isinstance(density, int | float) and 0 < density <= 1):
        raise ValueError(f"density must be in (0, 1], got {density!r}")
    return [replace(p, counts=_kept(p.counts, density)) if p.kind == "linear" else p
            for p in plans]


def fit_density(plans: list[LayerPlan], cc_add: float, rtol: float = 1e-4) -> float:
    """The density (:func:`prune`) at which ``plans`` count ``cc_add`` ciphertext additions
    (within ``rtol``): a linear layer adds ``terms - 1`` per output; the other layers'
    additions (mean-pools, residual additions) do not depend on the weights. The kept terms
    grow in proportion to the density, so a few proportional corrections converge. 1.0 when
    even the dense network adds fewer."""
    lin = [p.counts for p in plans if p.kind == "linear"]
    outputs = sum(k.size for k in lin)
    other = sum(int(np.maximum(p.counts - 1, 0).sum()) if p.kind == "meanpool" else p.outputs
                for p in plans if p.kind in ("meanpool", "add"))

    def kept(d: float) -> int:
        return sum(int(_kept(k, d).sum()) for k in lin)

    want = float(cc_add) - other + outputs          # terms to keep
    if kept(1.0) <= want:
        return 1.0
    d = want / kept(1.0)
    for _ in range(20):
        got = kept(d)
        if abs(got - want) <= rtol * want:
            break
        d = min(d * want / got, 1.0)
    return float(d)


def _last_linear(layers) -> int:
    idx = [i for i, lay in enumerate(layers) if isinstance(lay, Conv2d | Dense)]
    return idx[-1] if idx else -1


def _plan_seq(layers, shape, bits, signed, plans, prefix, scheme, a, wb, g, ovf,
              last_linear=-1):
    i = 0
    names = {}
    while i < len(layers):
        lay = layers[i]
        kind = lay.kind.lower()
        names[kind] = names.get(kind, 0) + 1
        name = prefix + (lay.name or f"{kind}{names[kind]}")
        if isinstance(lay, Conv2d | Dense):
            counts = (_conv_counts(shape, lay) if isinstance(lay, Conv2d)
                      else np.full(lay.out_features, int(np.prod(shape))))
            j = i + 1
            while j < len(layers) and isinstance(layers[j], BatchNorm):
                j += 1
            nxt = layers[j] if j < len(layers) else None
            if i == last_linear and not prefix:
                act = None
            elif isinstance(nxt, ReLU):
                act = "relu"
                j += 1
            else:
                act = "signed"
            b0 = bits + (g if scheme == "she" else 0) + (0 if signed else 1)
            w_acc = b0 + math.ceil(math.log2(max(int(counts.max()), 1)))
            wy = a + ovf + 1
            shift = max(w_acc + 1 - wy, 0)
            prod = bits + (0 if signed else 1) + wb
            tw = max(16, prod + math.ceil(math.log2(max(int(counts.max()), 1))) + 1)
            plans.append(LayerPlan(name, "linear", counts, bits, signed, scheme, g, wb, act,
                                   shift, a, (1, 1), tw, {"accumulator": "mixed"}))
            shape = lay.out_shape(shape)
            if act is not None:
                bits, signed = a, act == "signed"
            i = j
            continue
        if isinstance(lay, MaxPool):
            counts = _window_counts(shape, lay.kernel, lay.step, lay.padding, shape[0], 1)
            plans.append(LayerPlan(name, "pool", counts, bits, signed))
        elif isinstance(lay, MeanPool):
            counts = _window_counts(shape, lay.kernel, lay.step, lay.padding, shape[0], 1)
            plans.append(LayerPlan(name, "meanpool", counts, bits, signed, out_bits=a))
            signed = False
        elif isinstance(lay, Residual):
            _plan_seq(list(lay.body), shape, bits, signed, plans, name + "/", scheme, a, wb, g,
                      ovf)
            if lay.shortcut:
                _plan_seq(list(lay.shortcut), shape, bits, signed, plans, name + "/short/",
                          scheme, a, wb, g, ovf)
            out = lay.out_shape(shape)
            if lay.merge == "concat":  # routing: the a-bit outputs of both branches side by side
                shape, bits, signed = out, a, True
                i += 1
                continue
            n = int(np.prod(out))
            plans.append(LayerPlan(name + "/add", "add", np.full(n, 2), a, True))
            shape, bits, signed = out, a + 1, True
            i += 1
            continue
        elif isinstance(lay, ReLU):
            plans.append(LayerPlan(name, "relu", np.ones(int(np.prod(shape)), int), bits,
                                   signed, out_bits=a))
            bits, signed = a, False
        elif isinstance(lay, BatchNorm | Flatten | ChannelShuffle):
            pass  # folded into the neighbouring linear layer / pure routing
        else:
            raise ValueError(f"no cost model for layer kind {lay.kind}")
        shape = lay.out_shape(shape)
        i += 1


# ---------------------------------------------------------------------------------------------
# closed forms and depth
# ---------------------------------------------------------------------------------------------
def _relu_sat(wy: int, a: int) -> tuple[int, int]:
    k = wy - 1
    if k <= a:
        return k, k
    h = k - a
    return h - 1 + 2 * a, h - 1 + 2 * a


def _sat_signed(wy: int, a: int) -> tuple[int, int]:
    if wy <= a:
        return 0, 0
    n = wy - a
    return 2 * n - 1 + (a - 1), 2 * n - 1 + 2 * (a - 1)


def _max_unit(w: int, signed: bool) -> tuple[int, int]:
    if w == 1:
        return 2, 3
    lt = 4 * w - 2 if signed else 4 * w - 3
    return lt + w, lt + 2 * w


def _mult(a: int, bw: int, signed: bool) -> int:
    if signed:
        return a * bw + (bw - 1) * (5 * a - 3)
    return a * bw + (bw - 2) * (5 * a - 3) + 5 * a - 1


def _linear_costs(p: LayerPlan) -> tuple[int, int, int]:
    """(gates, bootstraps, output width) of a linear layer with activation, all outputs."""
    k = p.counts
    kmax = int(k.max(initial=1))
    levels = math.ceil(math.log2(kmax)) if kmax > 1 else 0
    n = p.outputs
    if p.scheme == "she":
        b0 = p.in_bits + p.guard + (0 if p.in_signed else 1)
        if p.extra.get("accumulator", "mixed") == "mixed":
            gates = sum(acc_gates(int(c), b0) * int(m) for c, m in zip(*np.unique(
                k, return_counts=True)))
            w = b0 + levels
            lo, hi = p.corr_range
            if lo or hi:
                w = max(w, _bits_for(lo), _bits_for(hi))
                gates += n * (5 * w - 3)
                w += 1
        else:
            w = 16
            gates = int(np.maximum(k - 1, 0).sum()) * (5 * w - 6) + n * (5 * w - 6)
    else:
        w = p.tcn_width
        gates = int(k.sum()) * _mult(p.in_bits, p.weight_bits, p.in_signed)
        gates += int(np.maximum(k - 1, 0).sum()) * (5 * w - 6) + n * (5 * w - 6)
    boots = gates
    if p.act is not None:
        wy = w - p.shift
        ga, ba = (_relu_sat if p.act == "relu" else _sat_signed)(wy, p.out_bits)
        gates += n * ga
        boots += n * ba
        w = p.out_bits
    return gates, boots, w


@lru_cache(maxsize=512)
def _depth_linear(scheme, in_bits, in_signed, guard, weight_bits, act, shift, out_bits, kmax,
                  corr_lo, corr_hi, tcn_width, accumulator) -> int:
    be = BitSimulator(public_constants=False)
    lo, hi = C.word_range(in_bits, in_signed)
    x = C.encrypt_word(be, np.full(kmax, hi if hi > 0 else lo), in_bits, in_signed)
    src = np.arange(kmax)[None, :]
    if scheme == "she":
        acc = C.shift_accumulate(x, np.repeat(src, 2, 0), 0, 1, [corr_lo, corr_hi] if (
            corr_lo or corr_hi) else 0, guard_bits=guard, accumulator=accumulator)
    else:
        terms = C.gather(x, src.T)
        prods = C.multiply(terms, C.constant_word(be, np.ones((kmax, 1), int), weight_bits))
        acc = C.accumulate_fixed(prods, tcn_width)
        acc = C.add(acc, C.constant_word(be, [1], tcn_width), widen=False)
    if act is None:
        return acc.md()
    y = C.truncate(C.shift_right(acc, shift), acc.width - shift) if shift else acc
    out = C.relu_saturate(y, out_bits) if act == "relu" else C.saturate_signed(y, out_bits)
    return out.md()


@lru_cache(maxsize=256)
def _depth_pool(kmax: int, bits: int, signed: bool) -> int:
    be = BitSimulator(public_constants=False)
    x = C.encrypt_word(be, np.zeros((kmax, 1), int), bits, signed)
    return C.max_reduce(x).md()


def plan_costs(plans: list[LayerPlan]) -> pd.DataFrame:
    """Per-layer HOPs, HGOPs, bootstraps and multiplicative depth (fully encrypted constants)."""
    rows = []
    for p in plans:
        k = p.counts
        n = p.outputs
        kmax = int(k.max(initial=1))
        row = {"layer": p.name, "kind": p.kind, "outputs": n, "pc_shift": 0, "pc_mult": 0,
               "cc_add": 0, "cc_com": 0}
        if p.kind == "linear":
            terms = int(k.sum())
            row["pc_shift" if p.scheme == "she" else "pc_mult"] = terms
            row["cc_add"] = int(np.maximum(k - 1, 0).sum())
            row["cc_com"] = n if p.act == "relu" else 0
            gates, boots, _ = _linear_costs(p)
            md = _depth_linear(p.scheme, p.in_bits, p.in_signed, p.guard, p.weight_bits, p.act,
                               p.shift, p.out_bits, kmax, p.corr_range[0], p.corr_range[1],
                               p.tcn_width, p.extra.get("accumulator", "mixed"))
        elif p.kind == "pool":
            g1, b1 = _max_unit(p.in_bits, p.in_signed)
            units = int((k - 1).sum())
            row["cc_com"] = units
            gates, boots = units * g1, units * b1
            md = _depth_pool(kmax, p.in_bits, p.in_signed)
        elif p.kind == "add":
            w = p.in_bits  # two signed a-bit branch outputs, one widening adder each
            row["cc_add"] = n
            gates = boots = n * (5 * w - 3)
            md = w
        elif p.kind == "meanpool":
            b0 = p.in_bits + (0 if p.in_signed else 1)
            row["cc_add"] = int(np.maximum(k - 1, 0).sum())
            gates = boots = sum(acc_gates(int(c), b0) * int(m)
                                for c, m in zip(*np.unique(k, return_counts=True)))
            md = b0 + math.ceil(math.log2(kmax)) - 1 if kmax > 1 else 0
        elif p.kind == "relu":
            g1, b1 = _relu_sat(p.in_bits, p.out_bits) if p.in_signed else (0, 0)
            row["cc_com"] = n
            gates, boots = n * g1, n * b1
            md = 2 if p.in_signed else 0
        else:  # pragma: no cover - plans are built above
            raise ValueError(p.kind)
        row["hops"] = row["pc_shift"] + row["pc_mult"] + row["cc_add"] + row["cc_com"]
        row.update({"hgops": gates, "bootstraps": boots, "md_layer": md})
        rows.append(row)
    return pd.DataFrame(rows, columns=COST_COLUMNS)


# ---------------------------------------------------------------------------------------------
# the paper's depth model, Eq. (1)
# ---------------------------------------------------------------------------------------------
def eq1_layer_depth(in_channels: int, kc: int, da: float, dm: float, dr: float = 0.0,
                    kp: int = 1, dmax: float = 0.0) -> float:
    """she.txt Eq. (1): ``IN log2(KC^2) (DA[a] + DM[b]) + DR[c] + log2(KP^2) DM[d]``.

    ``da`` / ``dm`` / ``dr`` / ``dmax``: multiplicative depths of an adder, a multiplier (0 for
    a shift), a ReLU unit and a max unit. The paper sums the adders of all input channels
    one after another; a ripple-carry adder tree overlaps their carries (see the notebook).
    """
    return (in_channels * math.log2(kc * kc) * (da + dm) + dr
            + (math.log2(kp * kp) * dmax if kp > 1 else 0.0))
