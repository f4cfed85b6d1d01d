"""Wall-clock latency of a gate backend: seconds per bootstrapped AND gate, and the client's
encryption and decryption time. The SHE family projects a network's compute time as its
counted bootstrapped gates x the measured seconds per gate."""

from __future__ import annotations

import statistics
import time

import numpy as np

from ppnn.he.bitsim import GateBackend

__all__ = ["gate_latency", "encryption_latency"]


def gate_latency(backend: GateBackend, single: int = 5, batch: int = 32,
                 batches: int = 3) -> dict:
    """Seconds per AND gate on ``backend``: one gate per call (median of ``single`` calls; the
    paper's sequential setting) and calls of ``batch`` gates (all cores; median of
    ``batches`` calls after a warm-up call, which sets up every worker thread's buffers)."""
    x = backend.encrypt(np.ones(batch, np.uint8))
    one = x.take(np.array([0]))
    backend.and_(one, one)  # warm-up
    t = []
    for _ in range(single):
        t0 = time.perf_counter()
        backend.and_(one, one)
        t.append(time.perf_counter() - t0)
    backend.and_(x, x)  # warm-up of the parallel path
    tb = []
    for _ in range(batches):
        t0 = time.perf_counter()
        backend.and_(x, x)
        tb.append(time.perf_counter() - t0)
    return {"and_single_s": statistics.median(t),
            "and_batched_s_per_gate": statistics.median(tb) / batch, "batch": batch}


def encryption_latency(backend: GateBackend, n_in_bits: int, n_out_bits: int) -> dict:
    """Client: encrypt ``n_in_bits`` random bits and decrypt ``n_out_bits`` (seconds)."""
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2, n_in_bits).astype(np.uint8)
    t0 = time.perf_counter()
    enc = backend.encrypt(bits)
    te = time.perf_counter() - t0
    out = enc.take(np.arange(min(n_out_bits, n_in_bits)))
    t0 = time.perf_counter()
    backend.decrypt(out)
    td = time.perf_counter() - t0
    return {"encrypt_s": te, "decrypt_s": td, "edl_s": te + td,
            "bytes": backend.message_bytes(enc)}
