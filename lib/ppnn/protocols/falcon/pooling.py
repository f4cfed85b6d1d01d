"""Max-pool and its derivative (Falcon §3.6, Algorithm 4).

Input: shares of ``n`` windows of ``k`` values each (shape ``(n, k)``). The running maximum
is updated window element by window element: ``b = DReLU(a_i - max)``, then in one
multiplication round ``max <- max + b (a_i - max)`` and the one-hot index vector
``ind <- ind + b (e_i - ind)`` (the derivative of max-pool, computed alongside as the paper
does). Rounds grow linearly with the window area ``k``. Ties go to the later element
(``DReLU(0) = 1``).
"""

from __future__ import annotations

import numpy as np

from .comparison import bit_inject, drelu
from .runtime import RSS, Falcon

__all__ = ["maxpool", "maxpool_backward"]


def maxpool(fal: Falcon, a: RSS) -> tuple[RSS, RSS]:
    """Algorithm 4: ``(max over the last axis, one-hot argmax over Z_L)`` for ``a`` (n, k)."""
    if len(a.shape) != 2 or a.shape[1] < 1:
        raise ValueError(f"maxpool expects windows of shape (n, k) with k >= 1, got {a.shape}")
    ring = fal.ring
    n, k = a.shape
    with fal.protocol("maxpool"):
        mx = a[:, 0]
        onehot = np.zeros((n, k), dtype=np.uint64)
        onehot[:, 0] = 1
        ind = fal.public(onehot)
        for i in range(1, k):
            ai = a[:, i]
            b = bit_inject(fal, drelu(fal, ai - mx), f"maxpool step {i}: open b xor c")
            e_i = np.zeros((n, k), dtype=np.uint64)
            e_i[:, i] = 1
            diffs = RSS(np.concatenate([(ai - mx).components[..., None],
                                        (fal.public(e_i) - ind).components], axis=-1), ring)
            upd = fal.mul(b.reshape(n, 1), diffs, f"maxpool step {i}: select")
            mx = mx + upd[:, 0]
            ind = ind + upd[:, 1:]
        return mx, ind


def maxpool_backward(fal: Falcon, onehot: RSS, grad: RSS) -> RSS:
    """Route ``grad`` (n,) to the argmax of each window: ``onehot * grad`` (one round)."""
    with fal.protocol("maxpool_backward"):
        return fal.mul(onehot, grad.reshape(*grad.shape, 1), "maxpool derivative: onehot * grad")
