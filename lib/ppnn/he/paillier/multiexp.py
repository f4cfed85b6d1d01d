"""Multi-exponentiation plans (Lim-Lee subset tables sharing one squaring chain), shared by
the real and simulated backends."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass
class MultiExpPlan:
    """How ``∏_i a_i^{W[r, i]}`` is evaluated for every row ``r`` of ``W`` (Lim–Lee style).

    ``W`` is made non-negative by an offset ``o = max(0, -min W)``: each row uses exponents
    ``W + o`` and the result is multiplied by ``(∏ a_i)^{-o}`` (one power and one inversion per
    input vector, shared by all rows). Bases are split into groups of ``h``; bit column ``j`` of
    group ``g`` selects a precomputed subset product ``idx[r, j, g]``.
    """

    h: int
    offset: int
    t: np.ndarray          # (rows,) bit length of the largest shifted exponent of the row
    idx: np.ndarray        # (rows, max_t, groups) subset index per bit (MSB first)
    group_sizes: list[int]

    @property
    def table_mults(self) -> int:
        return sum((1 << g) - 1 - g for g in self.group_sizes)

    def row_mults(self) -> np.ndarray:
        """Multiplications per row: ``t − 1`` squarings + (non-zero selections − 1)."""
        nnz = (self.idx != 0).sum(axis=(1, 2))
        return np.where(self.t > 0, (self.t - 1) + (nnz - 1), 0)

    def total_mults(self) -> int:
        """All modular multiplications of one evaluation (tables, rows, offset correction)."""
        n_groups = len(self.group_sizes)
        corr = (n_groups - 1 + len(self.t)) if self.offset else 0
        return int(self.table_mults + self.row_mults().sum() + corr)


def _choose_h(n_bases: int, n_rows: int, t: int) -> int:
    """Group size minimising tables + rows (expected cost, a deterministic formula)."""
    best, best_cost = 1, math.inf
    for h in range(1, 9):
        groups = -(-n_bases // h)
        cost = groups * ((1 << h) - 1 - h) + n_rows * t * groups * (1 - 2.0 ** -h)
        if cost < best_cost:
            best, best_cost = h, cost
    return best


def multiexp_plan(W, h: int | None = None) -> MultiExpPlan:
    """Plan the multi-exponentiation of integer exponents ``W`` (rows × bases)."""
    W = np.asarray(W)
    if W.dtype.kind not in "iu":
        raise TypeError(f"exponents must be an integer array, got dtype {W.dtype}")
    if W.ndim != 2 or W.shape[1] == 0:
        raise ValueError(f"exponents must be a non-empty (rows, bases) matrix, got {W.shape}")
    W = W.astype(np.int64)
    offset = max(0, -int(W.min()))
    Wp = W + offset
    if int(Wp.max()) >= 1 << 62:
        raise ValueError("exponents must stay below 2^62 for the multi-exponentiation plan")
    maxbits = int(Wp.max()).bit_length()
    t = np.array([int(r.max()).bit_length() for r in Wp], dtype=np.int64)
    rows, n = Wp.shape
    if h is None:
        h = _choose_h(n, rows, max(maxbits, 1))
    if not 1 <= h <= 12:
        raise ValueError(f"group size h must be in 1..12, got {h}")
    groups = -(-n // h)
    pad = groups * h - n
    Wg = np.pad(Wp, ((0, 0), (0, pad))).reshape(rows, groups, h)
    bits = np.arange(max(maxbits, 1) - 1, -1, -1, dtype=np.int64)  # MSB first
    colbits = (Wg[:, None, :, :] >> bits[None, :, None, None]) & 1   # rows, bits, groups, h
    idx = (colbits << np.arange(h, dtype=np.int64)).sum(axis=-1)
    # rows with a shorter top bit: their leading columns are zero anyway; keep one layout
    sizes = [min(h, n - g * h) for g in range(groups)]
    return MultiExpPlan(h, offset, t, idx, sizes)
