"""SwaNN's integer model: what the protocols compute, as a plaintext oracle.

Paillier computes on integers and cannot divide, so SwaNN's fixed-point arithmetic is:

* input pixels ``x·2^f_in``; weights ``W·2^f_w``; biases at the accumulator's scale;
* **linear layers** (Conv, FC, scaled mean pool) are exact integer sums -- the scale grows by
  ``f_w`` per Conv/FC and never shrinks under Paillier;
* **PHE-only setting**: ``x²`` by Protocol 1 doubles the scale; nothing is ever truncated
  (the 2048-bit plaintext space has room for it);
* **hybrid setting**: every activation runs in 2PC, where dropping low bits of a Boolean
  value is free; after ``x²`` or ReLU (+ max-pool) the value is truncated (floor) back to
  scale ``f_act``.

A **residual block** is four kinds of step around its two branches: ``fork`` (keep the
block input), the body's steps, ``swap`` (keep the body's output, take the input back), the
shortcut's steps, ``add``: ``[body] · [shortcut]`` under Paillier, the branch at the smaller
scale first raised to ``2^lift`` (``[x]^(2^l) = [x 2^l]``) so both add at one scale --
the evaluator's own operations, no message. Batch-norm is folded into the convolution before
it when the family compiles (:func:`ppnn.nn.canonical.canonicalize`).

Every activation input must fit ``ℓ`` signed bits (the masked, and in the hybrid setting
shared, width): at least 32 (ABY's shares, the paper's ``t``), raised per activation to a
calibrated bound (the largest magnitude on calibration images times ``2^margin_bits``;
``widths="worst-case"``: every input the client accepts, :mod:`.bounds`). Calibration also
fixes the client's input contract and each activation's worst-case bits (``Step.worst_bits``);
:meth:`SwannModel.check_input` refuses, before anything is encrypted, an input outside the
contract or (unless ``certified``) one whose activations do not fit: never a silent wrap.

:class:`SwannModel` builds the list of :class:`Step` s from a :mod:`ppnn.nn` network and float
parameters, and runs the exact integer forward pass the protocols must reproduce.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...errors import InvalidArgument
from ...nn import integer, ops
from ...nn import layers as L
from ...nn.network import Network, _auto_names
from .bounds import propagate, signed_bits

__all__ = ["FixedPointPlan", "Step", "SwannModel"]

SETTINGS = ("phe", "hybrid")
WIDTHS = ("calibrated", "worst-case")


@dataclass(frozen=True)
class FixedPointPlan:
    """Fixed-point choices of the integer model (all powers of two)."""

    f_in: int = 8
    f_w: int = 8
    f_act: int = 8
    ell: int = 32
    kappa: int = 80
    margin_bits: int = 1
    #: "calibrated": ℓ covers the calibration images (× 2^margin; the paper's counts);
    #: "worst-case": ℓ also covers the worst case of every input within the input contract
    widths: str = "calibrated"

    def __post_init__(self) -> None:
        for name in ("f_in", "f_w", "f_act"):
            v = getattr(self, name)
            if not isinstance(v, int) or not 0 <= v <= 24:
                raise ValueError(f"{name} must be an int in [0, 24], got {v}")
        if not isinstance(self.ell, int) or not 8 <= self.ell <= 64:
            raise ValueError(f"ell must be an int in [8, 64], got {self.ell}")
        if not isinstance(self.kappa, int) or not 1 <= self.kappa <= 256:
            raise ValueError(f"kappa must be an int in [1, 256], got {self.kappa}")
        if not isinstance(self.margin_bits, int) or not 0 <= self.margin_bits <= 8:
            raise ValueError(f"margin_bits must be an int in [0, 8], got {self.margin_bits}")
        if self.widths not in WIDTHS:
            raise ValueError(f"widths must be one of {WIDTHS}, got {self.widths!r}")


@dataclass
class Step:
    """One protocol step: a linear layer (server only) or an activation (interactive)."""

    kind: str                      # conv | fc | sumpool | flatten | act | fork | swap | add
    label: str                     # row label of the paper's tables: "Conv 1", "Act+Pool 2" ...
    in_shape: tuple
    out_shape: tuple
    W: np.ndarray | None = None    # int64 (out, taps)
    b: np.ndarray | None = None    # object ints (out,)
    index: np.ndarray | None = None
    act: str | None = None         # square | relu
    pool_index: np.ndarray | None = None  # max-pool windows after the activation (hybrid)
    pre_trunc: int = 0             # floor-shift before x² (hybrid, when ℓ > 32)
    trunc: int = 0                 # floor-shift after the activation (hybrid)
    ell_in: int = 0                # signed bits of the activation input
    scale_in: int = 0
    scale_out: int = 0
    seen_max: int = 0              # calibration: largest |activation input|
    worst_bits: int = 0            # worst case over the input contract (0: not derived)
    lift: tuple[int, int] = (0, 0)  # add: the body's and the shortcut's output times 2^lift
    info: dict = field(default_factory=dict)

    @property
    def interactive(self) -> bool:
        return self.kind == "act"

    @property
    def square_bits(self) -> int:
        """Signed bits of the squared operand (after the pre-truncation)."""
        return self.ell_in - self.pre_trunc

    @property
    def a2b_bits(self) -> int:
        """Bits of the Boolean value before the final truncation (``2ℓ' − 1`` after x²)."""
        return 2 * self.square_bits - 1 if self.act == "square" else self.ell_in

    @property
    def out_bits(self) -> int:
        """Signed bits of the value handed to Protocol 3 (after truncation)."""
        return self.a2b_bits - self.trunc


def _to_int(a) -> np.ndarray:
    return np.asarray(a, dtype=object)


def _exact_f64_matmul(a, b) -> np.ndarray:
    """``a @ b`` of integer arrays whose every partial sum is below 2^53 in magnitude (the
    caller's bound): exact in float64, returned as int64."""
    return (np.asarray(a, np.int64).astype(np.float64)
            @ np.asarray(b, np.int64).astype(np.float64)).astype(np.int64)


class SwannModel:
    """The integer network of one SwaNN setting (``"phe"`` or ``"hybrid"``).

    Parameters
    ----------
    net : ppnn.nn.Network
        Conv2d / Dense / Flatten / MeanPool / Square / ReLU / MaxPool (after ReLU) layers.
    params : list of dicts
        Float parameters (``ppnn.nn`` layout).
    setting : "phe" or "hybrid"
        PHE only (x² by Protocol 1, no ReLU possible) or hybrid (activations in 2PC).
    plan : FixedPointPlan
    calibration : float array (N, C, H, W), optional
        Images used to size ``ℓ`` per activation (default: only the 32-bit floor).
    """

    def __init__(self, net: Network, params, setting: str, plan: FixedPointPlan | None = None,
                 calibration=None):
        if setting not in SETTINGS:
            raise ValueError(f"setting must be one of {SETTINGS}, got {setting!r}")
        if not isinstance(net, Network):
            raise TypeError("net must be a ppnn.nn.Network")
        if len(net.input_shape) != 3:
            raise ValueError("SwaNN networks take images (C, H, W)")
        self.net, self.setting, self.params = net, setting, params
        self.plan = plan or FixedPointPlan()
        self.steps = self._build(net, params, {})
        #: the client's input contract: largest |encoded pixel| allowed (None: uncalibrated)
        self.input_bound: int | None = None
        self._worst_for: int | None = None  # the input bound Step.worst_bits were derived for
        if calibration is not None:
            self.calibrate(calibration)

    # -- construction ---------------------------------------------------------------------
    def _build(self, net: Network, params, ells: dict) -> list[Step]:
        steps: list[Step] = []
        counts = {"Conv": 0, "FC": 0, "Pool": 0, "Act": 0, "Act+Pool": 0, "Add": 0}
        _, self.out_scale = self._seq(list(net.layers), params, net.layer_names,
                                      net.input_shape, self.plan.f_in, ells, steps, counts)
        return steps

    def _seq(self, layers, params, names, shape, scale: int, ells: dict, steps: list,
             counts: dict, branch: bool = False) -> tuple[tuple, int]:
        """Append the steps of one sequence of layers (``branch``: of a residual block);
        returns its output shape and scale."""
        plan = self.plan
        fold = 1.0  # pending 1/k² of an unscaled mean pool, folded into the next layer
        i = 0
        while i < len(layers):
            layer, p = layers[i], params[i]
            out = layer.out_shape(shape)
            if isinstance(layer, L.Residual):
                if fold != 1.0:
                    raise ValueError(f"{names[i - 1]}: a mean pool must be followed by a linear "
                                     "layer of its own branch (its 1/k² is folded into it)")
                counts["Add"] += 1
                lab = f"Add {counts['Add']}"
                steps.append(Step("fork", lab, shape, shape, scale_in=scale, scale_out=scale))
                b_shape, sb = self._seq(list(layer.body), p["body"],
                                        [f"{names[i]}.body.{n}" for n in _auto_names(layer.body)],
                                        shape, scale, ells, steps, counts, True)
                steps.append(Step("swap", lab, b_shape, shape, scale_in=sb, scale_out=scale))
                s_shape, ss = self._seq(list(layer.shortcut), p["shortcut"],
                                        [f"{names[i]}.shortcut.{n}"
                                         for n in _auto_names(layer.shortcut)],
                                        shape, scale, ells, steps, counts, True)
                top = max(sb, ss)
                steps.append(Step("add", lab, s_shape, out, scale_in=ss, scale_out=top,
                                  lift=(top - sb, top - ss)))
                scale = top
            elif isinstance(layer, L.Conv2d | L.Dense):
                if isinstance(layer, L.Conv2d) and layer.groups != 1:
                    raise ValueError(f"{names[i]}: grouped convolutions are not supported by "
                                     "SwaNN's layers")
                W = np.asarray(p["W"], np.float64) * fold
                fold = 1.0
                W_int = integer.fixed_weights(W.reshape(W.shape[0], -1), plan.f_w)
                scale_out = scale + plan.f_w
                b = np.asarray(p["b"], np.float64) if layer.bias else np.zeros(W.shape[0])
                b_int = _to_int([int(v) for v in np.rint(b * 2.0 ** scale_out)])
                kind = "conv" if isinstance(layer, L.Conv2d) else "fc"
                key = "Conv" if kind == "conv" else "FC"
                counts[key] += 1
                lab = f"{key} {counts[key]}"
                idx = ops.conv_index(shape, layer.kernel, layer.stride, layer.padding) \
                    if kind == "conv" else None
                steps.append(Step(kind, lab, shape, out, W=W_int, b=b_int, index=idx,
                                  scale_in=scale, scale_out=scale_out))
                scale = scale_out
            elif isinstance(layer, L.MeanPool):
                if not layer.scaled:
                    fold = 1.0 / (layer.kernel ** 2)  # SwaNN computes the scaled mean pool
                counts["Pool"] += 1
                steps.append(Step("sumpool", f"Pool {counts['Pool']}", shape, out,
                                  index=ops.pool_index(shape, layer.kernel, layer.step,
                                                     layer.padding),
                                  scale_in=scale, scale_out=scale,
                                  info={"kernel": layer.kernel}))
            elif isinstance(layer, L.Flatten):
                steps.append(Step("flatten", "Flatten", shape, out, scale_in=scale,
                                  scale_out=scale))
            elif isinstance(layer, L.Square | L.ReLU):
                act = "square" if isinstance(layer, L.Square) else "relu"
                if act == "relu" and self.setting == "phe":
                    raise ValueError("ReLU needs the hybrid setting (comparisons in 2PC); the "
                                     "PHE-only setting supports x² only")
                pool_idx = None
                nxt = layers[i + 1] if i + 1 < len(layers) else None
                if isinstance(nxt, L.MaxPool):
                    if self.setting == "phe":
                        raise ValueError(f"{names[i + 1]}: max-pool needs the hybrid setting")
                    pool_idx = ops.pool_index(out, nxt.kernel, nxt.step, nxt.padding)
                    if nxt.padding:
                        raise ValueError(f"{names[i + 1]}: padded max-pool is not supported")
                    out = nxt.out_shape(out)
                    i += 1
                key = "Act+Pool" if pool_idx is not None else "Act"
                counts[key] += 1
                lab = f"{key} {counts[key]}"
                ell_in = ells.get(lab, plan.ell)
                pre = 0
                if self.setting == "hybrid" and act == "square":
                    pre = max(0, ell_in - 32)     # x² of ≤ 32-bit values fits Z_2^64
                s_act = 2 * (scale - pre) if act == "square" else scale
                trunc = max(0, s_act - plan.f_act) if self.setting == "hybrid" else 0
                steps.append(Step("act", lab, shape, out, act=act, pool_index=pool_idx,
                                  pre_trunc=pre, trunc=trunc, ell_in=ell_in,
                                  scale_in=scale, scale_out=s_act - trunc))
                scale = s_act - trunc
            elif isinstance(layer, L.MaxPool):
                raise ValueError(f"{names[i]}: SwaNN evaluates max-pool right after an "
                                 "activation (ReLU + max-pool in one 2PC step)")
            else:
                raise ValueError(f"{names[i]}: layer kind {layer.kind} is not supported by "
                                 "SwaNN")
            shape = out
            i += 1
        if fold != 1.0 and branch:
            raise ValueError(f"{names[-1]}: a mean pool must be followed by a linear layer of "
                             "its own branch (its 1/k² is folded into it)")
        return shape, scale

    def calibrate(self, x) -> None:
        """Raise ``ℓ`` of each activation to cover the calibration images (× 2^margin), fix
        the input contract and derive each activation's worst case under it.

        Activations are sized in order: a wider ``ℓ`` can change the truncations and hence
        the scales of every later layer, so the plan is rebuilt after each one. With
        ``plan.widths == "worst-case"`` each ``ℓ`` also covers the worst case of every input
        the client accepts, and the model is ``certified``."""
        x_int = self.encode(x)
        # the widths below hold for inputs like these: the client refuses larger ones
        top = int(np.max(np.abs(x_int))) if x_int.size else 0
        self.input_bound = max(top, 1) << self.plan.margin_bits
        worst_case = self.plan.widths == "worst-case"
        ells: dict[str, int] = {}
        n_act = sum(s.kind == "act" for s in self.steps)
        for _ in range(n_act + 1):
            # float64 is enough to size ℓ (the margin covers its rounding)
            outs = self.forward_int(x_int, check=False, return_steps=True, exact=False)
            worst = self._worst_into() if worst_case else None
            prev, changed = x_int, False
            for j, (step, y) in enumerate(zip(self.steps, outs)):
                if step.kind == "act":
                    mx = int(np.ceil(np.max(np.abs(np.asarray(prev, dtype=np.float64))))) \
                        if prev.size else 0
                    step.seen_max = mx
                    need = max(self.plan.ell, mx.bit_length() + 1 + self.plan.margin_bits)
                    if worst is not None:
                        need = max(need, signed_bits(worst[j]))
                    if need != step.ell_in:
                        ells[step.label] = need
                        changed = True
                        break
                prev = y
            if not changed:
                break
            seen = {s.label: s.seen_max for s in self.steps if s.kind == "act"}
            self.steps = self._build(self.net, self.params, ells)
            for s in self.steps:
                s.seen_max = seen.get(s.label, s.seen_max)
        for step, bound in zip(self.steps, self._worst_into()):
            self._check_widths(step)
            if step.kind == "act":
                step.worst_bits = signed_bits(bound)
        self._worst_for = self.input_bound

    def _worst_into(self, input_bound: float | None = None) -> list[float]:
        """Worst-case ``|value|`` entering each step for inputs within ``input_bound``
        (default: the input contract)."""
        bound = self.input_bound if input_bound is None else input_bound
        return propagate(self.steps, int(np.prod(self.net.input_shape)), bound)[0]

    @property
    def certified(self) -> bool:
        """Whether the input contract alone guarantees every activation fits its ``ℓ``: the
        model is calibrated and every activation's worst case (``Step.worst_bits``) fits."""
        acts = [s for s in self.steps if s.kind == "act"]
        return (self.input_bound is not None and self._worst_for == self.input_bound
                and all(0 < s.worst_bits <= s.ell_in for s in acts))

    def _check_widths(self, step: Step) -> None:
        if self.setting != "hybrid" or step.kind != "act":
            return
        if step.ell_in > 64:
            raise ValueError(f"{step.label}: {step.ell_in}-bit values do not fit Z_2^64")

    # -- inference ------------------------------------------------------------------------
    def encode(self, x) -> np.ndarray:
        """Float images (…, C, H, W) → integers at scale ``2^f_in`` (int64)."""
        x = np.asarray(x, dtype=np.float64)
        if x.shape[-3:] != self.net.input_shape:
            raise ValueError(f"images must have shape (..., {self.net.input_shape}), "
                             f"got {x.shape}")
        if not np.all(np.isfinite(x)):
            raise ValueError("images contain NaN or infinity")
        return integer.to_fixed(x, self.plan.f_in)

    def check_input(self, x_int) -> None:
        """The check before anything is encrypted: refuse an input whose activations could
        leave their ``ℓ`` bits (on every backend: under real encryption nobody could see it).

        1. **the input contract** (calibrated models): every encoded pixel within the
           calibration maximum × ``2^margin_bits``, as for every activation;
        2. **the worst case** of the contract, propagated through the integer weights at
           calibration (:mod:`.bounds`, ``Step.worst_bits``): if it fits every ``ℓ``
           (``certified``), the input is accepted -- a guarantee for any input within it;
           otherwise the same worst case from this input's own largest pixel;
        3. otherwise **this input's activations**, computed in the clear by the integer
           model: each must fit its ``ℓ``. This is the lab's check (the simulation holds the
           weights and the input; in a deployment neither party holds both): calibrated
           widths are a statistical guess, which this check keeps from failing silently.
           ``FixedPointPlan(widths="worst-case")`` sizes ``ℓ`` so that step 2 always suffices.

        Raises ValueError naming the range, or the activation, the bits it needs and ``ℓ``."""
        x = np.asarray(x_int)
        top = int(np.max(np.abs(x))) if x.size else 0
        if self.input_bound is not None and top > self.input_bound:
            raise InvalidArgument(
                f"input outside the calibrated range: |pixel| up to {top / 2**self.plan.f_in:g} "
                f"(encoded {top}), allowed <= {self.input_bound / 2**self.plan.f_in:g} (encoded "
                f"{self.input_bound} = calibration maximum x 2^{self.plan.margin_bits}); the "
                "client refuses to encrypt it: recalibrate on such inputs or raise margin_bits")
        if self.certified:
            return
        worst = self._worst_into(top)
        if all(signed_bits(w) <= s.ell_in for s, w in zip(self.steps, worst)
               if s.kind == "act"):
            return
        exact: bool | str = "int64" if self.setting == "hybrid" else True
        try:
            try:
                self.forward_int(x, check=True, exact=exact)
            except OverflowError:      # int64 could overflow on the way: exact integers
                self.forward_int(x, check=True, exact=True)
        except ValueError as e:
            raise InvalidArgument(f"input refused before encryption: {e}") from None

    def forward_int(self, x_int, check: bool = True, return_steps: bool = False,
                    exact: bool | str = True):
        """Exact integer forward pass of a batch ``(N, C, H, W)`` (or one image).

        ``exact=True`` computes with Python integers (object arrays; what the protocol
        decrypts); ``exact="int64"`` with int64 (exact while every value stays below 2^63 --
        checked; the hybrid networks do); ``exact=False`` uses float64 (fast, approximate
        once the integers exceed 2^53, as the PHE-only ones do).
        """
        x = np.asarray(x_int)
        single = x.ndim == 3
        if single:
            x = x[None]
        if exact == "int64":
            x = x.astype(np.int64)
        else:
            x = x.astype(object) if exact else x.astype(np.float64)
        n = x.shape[0]
        outs = []
        stack: list = []  # residual blocks: the values a fork or a swap keeps
        for step in self.steps:
            if step.kind == "fork":
                stack.append(x)
            elif step.kind == "swap":
                x, stack[-1] = stack[-1], x
            elif step.kind == "add":
                x = self._add(step, stack.pop().reshape(n, -1), x.reshape(n, -1), exact)
            else:
                x = self._step(step, x.reshape(n, -1), check, exact)
            outs.append(x[0] if single else x)
        if return_steps:
            return outs
        return x[0] if single else x

    @staticmethod
    def _add(step: Step, body, short, exact):
        """A residual Add: ``body 2^lb + shortcut 2^ls`` (what ``[body]·[shortcut]`` adds)."""
        lb, ls = step.lift
        if exact == "int64":
            top = max(float(np.abs(body).max(initial=0)) * 2.0**lb,
                      float(np.abs(short).max(initial=0)) * 2.0**ls)
            if 2 * top >= 2.0**62:
                raise OverflowError(f"{step.label}: int64 evaluation could overflow; use "
                                    "exact=True")
            return (np.asarray(body, np.int64) << lb) + (np.asarray(short, np.int64) << ls)
        return body * (1 << lb) + short * (1 << ls) if exact else \
            body * 2.0**lb + short * 2.0**ls

    def _step(self, step: Step, x, check: bool, exact):
        if exact == "int64":
            return self._step_int64(step, x, check)
        if step.kind in ("conv", "fc"):
            W = step.W.astype(object) if exact else step.W.astype(np.float64)
            b = step.b if exact else step.b.astype(np.float64)
            if step.kind == "fc":
                return x @ W.T + b
            xp = np.concatenate([x, np.zeros((x.shape[0], 1), dtype=x.dtype)], axis=1)
            patches = xp[:, step.index]                 # n, P, taps
            y = patches @ W.T                           # n, P, C_out
            return (y.transpose(0, 2, 1) + b[None, :, None]).reshape(x.shape[0], -1)
        if step.kind == "sumpool":
            xp = np.concatenate([x, np.zeros((x.shape[0], 1), dtype=x.dtype)], axis=1)
            return xp[:, step.index].sum(axis=2)
        if step.kind == "flatten":
            return x
        # activation
        if check:
            self._check_range(step, x)
        if step.pre_trunc:
            x = x // (1 << step.pre_trunc) if exact else np.floor(x / 2.0 ** step.pre_trunc)
        y = x * x if step.act == "square" else np.where(x > 0, x, 0 * x)
        if step.pool_index is not None:
            y = y[:, step.pool_index].max(axis=2)
        if step.trunc:
            y = y // (1 << step.trunc) if exact else np.floor(y / 2.0 ** step.trunc)
        return y

    @staticmethod
    def _check_range(step: Step, x) -> None:
        """An activation's input must fit its ℓ signed bits."""
        if not step.ell_in:
            return
        lim = 1 << (step.ell_in - 1)
        mx = max(abs(int(np.max(x))), abs(int(np.min(x)))) if x.size else 0
        if mx >= lim:
            seen = f" (calibrated on |x| <= {step.seen_max})" if step.seen_max else ""
            raise ValueError(
                f"{step.label}: activation input needs {mx.bit_length() + 1} signed bits "
                f"(|x| up to {mx}), which does not fit ℓ = {step.ell_in}{seen}; recalibrate, "
                "raise margin_bits or size ℓ by the worst case "
                "(FixedPointPlan(widths='worst-case'))")

    def _step_int64(self, step: Step, x, check: bool):
        """The same step in int64, refusing any value that could leave int64."""
        if step.kind in ("conv", "fc", "sumpool"):
            taps = step.index if step.index is not None else None
            width = step.W.shape[1] if step.W is not None else taps.shape[1]
            wmax = int(np.abs(step.W).max()) if step.W is not None else 1
            bound = float(np.abs(x).max() if x.size else 0) * wmax * width
            if step.b is not None:
                bound += float(max(abs(int(v)) for v in step.b))
            if bound >= 2.0 ** 62:
                raise OverflowError(f"{step.label}: int64 evaluation could overflow; use "
                                    "exact=True")
            if step.b is not None:
                b64 = np.array([int(v) for v in step.b], dtype=np.int64)
            # below 2^53 every partial sum of integers is exact in float64: BLAS, not
            # numpy's integer loop (same integers)
            mm = _exact_f64_matmul if bound < 2.0 ** 53 else np.matmul
            if step.kind == "fc":
                return mm(x, step.W.T) + b64
            xp = np.concatenate([x, np.zeros((x.shape[0], 1), dtype=x.dtype)], axis=1)
            if step.kind == "sumpool":
                return xp[:, step.index].sum(axis=2)
            y = mm(xp[:, step.index], step.W.T)
            return (y.transpose(0, 2, 1) + b64[None, :, None]).reshape(x.shape[0], -1)
        if step.kind == "flatten":
            return x
        if step.act == "square":
            mx = int(np.abs(x).max()) >> step.pre_trunc if x.size else 0
            if mx >= 3037000499:  # ⌊√(2^63 − 1)⌋
                raise OverflowError(f"{step.label}: x² leaves int64; use exact=True")
        if check:
            self._check_range(step, x)
        # the activation in int64: >> is floor division by 2^t, as // is on Python ints
        x = np.asarray(x, np.int64)
        if step.pre_trunc:
            x = x >> step.pre_trunc
        y = x * x if step.act == "square" else np.where(x > 0, x, 0)
        if step.pool_index is not None:
            y = y[:, step.pool_index].max(axis=2)
        if step.trunc:
            y = y >> step.trunc
        return y

    def predict(self, x, batch: int = 500, exact: bool | str = False) -> np.ndarray:
        """Arg-max class of float images (the integer model's prediction)."""
        xs = self.encode(x)
        preds = []
        for i in range(0, len(xs), batch):
            logits = self.forward_int(xs[i:i + batch], check=False, exact=exact)
            preds.append(np.argmax(np.asarray(logits, dtype=np.float64), axis=1))
        return np.concatenate(preds)

    def summary(self):
        """One row per step: shapes, scales, ℓ, truncation, operation counts."""
        import pandas as pd

        rows = []
        for s in self.steps:
            n_out = int(np.prod(s.out_shape))
            n_in = int(np.prod(s.in_shape))
            rows.append({
                "step": s.label, "kind": s.act or s.kind, "in_shape": s.in_shape,
                "out_shape": s.out_shape, "values": n_in if s.kind == "act" else n_out,
                "taps": s.W.shape[1] if s.W is not None else (
                    s.index.shape[1] if s.index is not None else 0),
                "scale_in": s.scale_in, "scale_out": s.scale_out,
                "ell_in": s.ell_in or None, "worst_bits": s.worst_bits or None,
                "pre_trunc": s.pre_trunc or None,
                "trunc": s.trunc or None,
                "max_pool": s.pool_index is not None,
                **({"lift": s.lift} if s.kind == "add" else {}),
            })
        return pd.DataFrame(rows)
