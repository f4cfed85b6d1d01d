"""Measured simulation seconds per ReLU and per ring multiply-accumulate: the unit costs that
project the compute time of networks too large to simulate here (Falcon family, notebook 05).
"""

from __future__ import annotations

import time

import numpy as np

from .comparison import relu
from .runtime import Falcon

__all__ = ["unit_compute_costs"]


def unit_compute_costs(seed: int = 0, n_relu: int = 20000, mm=(256, 512, 256),
                       repeats: int = 2) -> dict:
    """Measured simulation seconds per ReLU and per ring MAC (semi-honest and malicious), used
    to project the compute time of networks too large to simulate here."""
    out = {}
    for mal in (False, True):
        fal = Falcon(np.random.default_rng(seed), malicious=mal)
        x = fal.share_fixed(np.random.default_rng(1).normal(size=n_relu))
        best = np.inf
        for _ in range(repeats):
            t0 = time.perf_counter()
            relu(fal, x)
            best = min(best, time.perf_counter() - t0)
        out[("relu", mal)] = best / n_relu
        a = fal.share_fixed(np.random.default_rng(2).normal(size=mm[:2]) * 0.1)
        w = fal.share_fixed(np.random.default_rng(3).normal(size=mm[1:]) * 0.1)
        best = np.inf
        for _ in range(repeats):
            t0 = time.perf_counter()
            with fal.protocol("mm"):
                fal.matmul_fixed(a, w)
            best = min(best, time.perf_counter() - t0)
        out[("mac", mal)] = best / (mm[0] * mm[1] * mm[2])
    return out
