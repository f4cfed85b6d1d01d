"""Wall-clock measurements behind Tabula's runtime columns (Tables 1, 7, 8, 9; Fig. 6, 7).

Every function returns seconds *per element* (per activation, per table, per MAC), the best
of ``repeat`` runs of a vectorized batch of ``n`` elements -- the batch amortises numpy's
per-call overhead the way a real implementation amortises its loop. Fresh single-use
material (tables, garbled circuits) is made outside the timed region. Timings change from
run to run: notebooks write them to ``*_timings.csv`` files, never into counted tables.
"""

from __future__ import annotations

import time

import numpy as np

from ppnn.core import Z2_64, Ledger, Ring, share_additive
from ppnn.he import gc as gcmod
from ppnn.protocols import delphi
from ppnn.protocols.tabula.online import tabula_online
from ppnn.protocols.tabula.preprocessing import preprocess
from ppnn.protocols.tabula.tables import dealer_tables, function_table, relu

__all__ = ["measure_tabula_online", "measure_gather", "measure_gc", "measure_preprocessing",
           "measure_ring_mac"]

PARTIES = ("client", "server")
MAX_TABLE_ENTRIES = 1 << 24  # per party and batch (128 MiB of uint64): n is capped to fit


def _cap(n: int, b: int) -> int:
    return max(1, min(int(n), MAX_TABLE_ENTRIES >> b))


def _activations(n: int, rng: np.random.Generator, input_bits: int = 14):
    x = rng.integers(-(1 << input_bits), 1 << input_bits, size=n)
    return share_additive(Z2_64.from_signed(x), Z2_64, rng)


def measure_tabula_online(b: int, n: int, rng: np.random.Generator, repeat: int = 3,
                          input_bits: int = 14) -> float:
    """Seconds per activation of the online phase (truncate, mod 2^b, blind, look up) with
    materialised tables (real memory lookups); ``n`` is capped so the tables fit in
    ``MAX_TABLE_ENTRIES`` per party."""
    n = _cap(n, b)
    F = function_table(relu, b)
    d = max(input_bits + 1 - b, 0)
    best = np.inf
    for _ in range(repeat):
        X = _activations(n, rng, input_bits)
        T = dealer_tables(F, n, rng)
        ledger = Ledger(PARTIES)
        t0 = time.perf_counter()
        tabula_online(X, T, d, ledger)
        best = min(best, time.perf_counter() - t0)
    return best / n


def measure_gather(b: int, n: int, rng: np.random.Generator, repeat: int = 3) -> float:
    """Seconds per element of a plain numpy gather from the same two (n, 2^b) uint64 tables:
    the memory-bound floor of the lookup step (same cap on n)."""
    n = _cap(n, b)
    p = 1 << b
    T0, T1 = Z2_64.random(rng, (n, p)), Z2_64.random(rng, (n, p))
    rows = np.arange(n)
    best = np.inf
    for _ in range(repeat):
        idx = rng.integers(0, p, size=n)
        t0 = time.perf_counter()
        T0[rows, idx], T1[rows, idx]
        best = min(best, time.perf_counter() - t0)
    return best / n


def measure_gc(b: int, n: int, rng: np.random.Generator, repeat: int = 3,
               chunk: int = 2048) -> dict:
    """Seconds per element to garble and to evaluate our ReLU circuit on b-bit shares."""
    ring = Ring(b)
    g = e = np.inf
    for _ in range(repeat):
        X = share_additive(ring.random(rng, (n,)), ring, rng)
        _, info = gcmod.gc_relu(X, Ledger(PARTIES), rng, chunk=chunk, split="delphi")
        g, e = min(g, info["garble_s"]), min(e, info["evaluate_s"])
    return {"garble_s": g / n, "evaluate_s": e / n, "total_s": (g + e) / n}


def measure_preprocessing(b: int, n: int, rng: np.random.Generator, variant: dict,
                          repeat: int = 1) -> float:
    """Seconds per table of the Fig. 3 preprocessing (``variant``: PUBLISHED or OURS)."""
    F = function_table(relu, b)
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        preprocess(F, n, rng, Ledger(PARTIES), **variant)
        best = min(best, time.perf_counter() - t0)
    return best / n


def measure_ring_mac(rng: np.random.Generator, layer=None, in_shape=(1, 32, 14, 14),
                     repeat: int = 3) -> float:
    """Seconds per multiply-accumulate of the server's online linear layer (uint64 im2col
    convolution in Z_2^64), by default LeNet's second convolution for one image."""
    from ppnn.nn import Conv2d

    layer = layer or Conv2d(64, 5, 1, 2)
    W = Z2_64.random(rng, (layer.out_channels, in_shape[1], layer.kernel, layer.kernel))
    x = Z2_64.random(rng, in_shape)
    out = layer.out_shape(in_shape[1:])
    macs = int(np.prod(out)) * in_shape[0] * int(np.prod(W.shape[1:]))
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        delphi.linear_ring(layer, W, x, Z2_64)
        best = min(best, time.perf_counter() - t0)
    return best / macs
