"""Worst-case value bounds of SwaNN's integer model: which widths an input contract implies.

Every activation input is masked on ``ℓ`` signed bits (Protocols 1 and 2) and, in the hybrid
setting, shared on a ``2^k`` ring. A value outside ``ℓ`` bits breaks all of that silently
under real encryption: its mask no longer hides it, its packed slot carries into the
neighbour's, its share wraps, and the run ends with wrong logits. No party can see it happen
(the client does not know the weights, the server does not see the values), so the widths are
checked before anything is encrypted (:meth:`~.model.SwannModel.check_input`).

This module propagates a bound on ``|x|`` through the integer network with its actual integer
weights, value by value:

* Conv / FC: ``|y_r| <= Σ_j |W_rj| · |x_j| + |b_r|``; sum pool: the sum of its window;
* the floor-shift before ``x²``: ``⌈|x| / 2^p⌉``; ``x²``: the square; ReLU and max-pool keep
  the bound; the floor-shift after the activation (of a non-negative value): ``/ 2^t``;
* a residual Add: the two branches' bounds, each times its ``2^lift``, summed.

The bounds are computed in float64 and multiplied by ``1 + 2^-30`` after every sum and square,
which covers the rounding of sums of up to ``2^22`` non-negative terms: the result is an upper
bound, never an underestimate.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["propagate", "signed_bits"]

_SLACK = 1.0 + 2.0 ** -30  # upward rounding of float64 sums and squares of non-negative terms


def signed_bits(bound: float) -> int:
    """Signed bits needed by integers with ``|x| <= bound`` (``⌈bound⌉.bit_length() + 1``);
    1025 for a bound that overflowed float64 (more than 2^1024)."""
    if not math.isfinite(bound):
        return 1025
    return int(math.ceil(bound)).bit_length() + 1


def _step(step, b: np.ndarray) -> np.ndarray:
    """Bounds on a step's outputs from bounds ``b`` (flat, float64) on its inputs."""
    if step.kind in ("conv", "fc"):
        w = np.abs(step.W).astype(np.float64)
        bias = np.abs(np.array([float(v) for v in step.b], dtype=np.float64))
        if step.kind == "fc":
            return (w @ b + bias) * _SLACK
        patches = np.append(b, 0.0)[step.index]                  # P × taps (-1: padding)
        return ((w @ patches.T) + bias[:, None]).ravel() * _SLACK  # C_out × P, as the model
    if step.kind == "sumpool":
        return np.append(b, 0.0)[step.index].sum(axis=1) * _SLACK
    if step.kind == "flatten":
        return b
    if step.pre_trunc:
        b = np.ceil(b / 2.0 ** step.pre_trunc)
    y = b * b * _SLACK if step.act == "square" else b
    if step.pool_index is not None:
        y = y[step.pool_index].max(axis=1)
    if step.trunc:
        y = y / 2.0 ** step.trunc          # floor of a non-negative value: at most y / 2^t
    return y


def propagate(steps, n_inputs: int, input_bound: float) -> tuple[list[float], float]:
    """Worst-case ``|value|`` entering each step, and of the output (the logits), over all
    inputs with every ``|pixel| <= input_bound`` (encoded integers)."""
    b = np.full(int(n_inputs), float(input_bound))
    into = []
    stack: list = []  # residual blocks (fork / swap / add, as the model runs them)
    with np.errstate(over="ignore"):  # an overflow is an infinite bound (signed_bits: 1025)
        for step in steps:
            into.append(float(b.max()) if b.size else 0.0)
            if step.kind == "fork":
                stack.append(b)
            elif step.kind == "swap":
                b, stack[-1] = stack[-1], b
            elif step.kind == "add":
                lb, ls = step.lift
                b = (stack.pop() * 2.0**lb + b * 2.0**ls) * _SLACK
            else:
                b = _step(step, b)
    return into, float(b.max()) if b.size else 0.0
