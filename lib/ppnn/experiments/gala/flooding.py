"""Noise flooding for GALA/GAZELLE on real BFV: the leak it closes and what it costs.

Without flooding, the ciphertext ``[y - r]`` the server returns carries noise ``w * e_x + ...``
(``w`` the batch-encoded weights, ``e_x`` the client's own input noise) and a ``c1`` equal to
``w * c1_x``: the client, who holds the secret key, reads both. :func:`leakage_curve` shows the
noise as a function of the weights (constant weight rows ``c``: the encoded plaintext is the
constant polynomial ``c`` and the noise grows as ``c``; random weights: ~``sqrt(N) p/2``), with
and without flooding. :func:`flooding_runs` runs every Table II-VII dimension on the flooding
parameters (SEAL N = 8192, 174-bit q, 128-bit security) and records the noise budget before and
after flooding, the model's prediction, the ciphertext size and whether decryption is still
exact. :func:`ks_2samp` is the two-sample Kolmogorov-Smirnov statistic the tests use.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ppnn.core import Ledger
from ppnn.core.views import ks_test, ks_threshold
from ppnn.he.bfv.sim import BFVSim
from ppnn.protocols.gala.protocol import run_linear

from .runs import CONV_DIMS, MATVEC_DIMS, conv_kernel, conv_label, matvec_kernel, mv_label

__all__ = ["ks_2samp", "ks_critical", "leakage_curve", "flooding_runs", "flooded_counts",
           "count_flooded", "FLOOD_BITS"]

#: statistical security parameter of the flooding (bits)
FLOOD_BITS = 40


def ks_2samp(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample Kolmogorov-Smirnov statistic ``sup |F_a - F_b|``
    (:func:`ppnn.core.views.ks_test`)."""
    return ks_test(a, b).statistic


#: asymptotic critical value of :func:`ks_2samp` at level ``alpha``
ks_critical = ks_threshold


def leakage_curve(he, scales=(1, 4, 16, 64, 256, 1024), n_o: int = 16, n_i: int = 128,
                  reps: int = 1, seed: int = 0) -> pd.DataFrame:
    """The client's view (secret key) of the returned ciphertext's noise, GALA ``n_o x n_i``.

    Weights: constant matrices ``c`` for each ``c`` in ``scales`` (the encoded plaintext is
    the constant polynomial ``c``) and one random matrix (``|w| <= 8``); one input in
    ``{-1, 0, 1}``. For each, with flooding off and on (``he`` must be able to flood):
    ``log2 max|e|``, the mean ``|e|`` and SEAL's noise budget of the returned ciphertext, and
    whether the shares still reconstruct ``W x``."""
    bits = he.flood_bits or FLOOD_BITS
    rng = np.random.default_rng(seed)
    x = rng.integers(-1, 2, n_i)
    cases = [(f"constant {c}", float(c), np.full((n_o, n_i), c)) for c in scales]
    w_rand = rng.integers(-8, 9, (n_o, n_i))
    cases.append(("random |w|<=8", float(np.abs(w_rand).max()), w_rand))
    rows = []
    kernel = matvec_kernel("GALA", n_o, n_i, he.n)
    old = (he.flood_bits, he.flood_margin_bits)
    try:
        for flooded in (False, True):
            he.set_flooding(bits if flooded else 0)
            for label, wmax, W in cases:
                for rep in range(reps):
                    res = run_linear(kernel, he, W, x, np.random.default_rng(seed + rep))
                    e = he.phase_noise(res.returned)
                    ok = bool(np.array_equal(res.reveal(), W @ x))
                    rows.append({"weights": label, "max_abs_w": wmax,
                                 "norm_w": float(np.linalg.norm(W)), "flooded": flooded,
                                 "rep": rep, "log2_max_noise": float(np.log2(np.abs(e).max())),
                                 "mean_abs_noise": float(np.abs(e).mean()),
                                 "budget": int(np.min(he.noise_budget(res.returned))),
                                 "correct": ok})
    finally:
        he.set_flooding(*old)
    return pd.DataFrame(rows)


def flooded_counts(kernel, n: int = 2048, flood_bits: int = FLOOD_BITS,
                   poly_degree: int = 8192, q_bits: int = 174) -> dict:
    """Counted operations of one layer with its returned ciphertexts flooded (kernel + share
    generation + flooding) on the counting backend: ``Flood`` = returned ciphertexts (each
    also one server ``Enc`` of zero and two ``Add``, included in ``Add``)."""
    he = BFVSim(n=n, values=False, poly_degree=poly_degree, q_bits=q_bits,
                flood_bits=flood_bits)
    led = Ledger([he.client, he.server])
    with he.recording(led):
        he.keygen(kernel.rotation_steps())
        L = kernel.layout
        ct = he.encrypt(np.zeros((int(getattr(L, "ct_in", getattr(L, "C", 1))), n), np.int64))
        out = kernel.evaluate(he, ct, None)
        he.flood(he.sub_plain(out, he.encode(None, out.shape)))
    c = led.op_counts()
    return {op: int(c.get(op, 0)) for op in ("Perm", "DecPerm", "HstPerm", "ScMult", "Add",
                                              "Flood")}


def count_flooded(matvec_dims=MATVEC_DIMS, conv_dims=CONV_DIMS,
                  mv_methods=("Naive", "Diagonal", "GAZELLE", "GALA"),
                  conv_methods=("GAZELLE", "GALA"), n: int = 2048) -> pd.DataFrame:
    """:func:`flooded_counts` for every Table V / VII dimension and method."""
    rows = []
    for n_o, n_i in matvec_dims:
        for m in mv_methods:
            rows.append({"dims": mv_label(n_o, n_i), "method": m,
                         **flooded_counts(matvec_kernel(m, n_o, n_i, n), n)})
    for d in conv_dims:
        for m in conv_methods:
            rows.append({"dims": conv_label(*d), "method": m,
                         **flooded_counts(conv_kernel(m, *d, n), n)})
    return pd.DataFrame(rows)


def flooding_runs(he, matvec_dims=MATVEC_DIMS, conv_dims=CONV_DIMS,
                  methods=("GAZELLE", "GALA"), groups: int = 1,
                  scale_channels: int | None = None, seed: int = 0) -> pd.DataFrame:
    """Every Table II-VII dimension on a flooding backend ``he`` (real SEAL).

    Matrix-vector: the whole two-party layer (``run_linear``), correct iff the shares
    reconstruct to ``W x``. Convolution: ``groups`` output ciphertexts of the kernel (every
    output ciphertext does the same work), share generation and flooding, correct iff the
    decryption equals the exact slot simulator's output minus ``r``; ``scale_channels`` caps
    ``c_i`` (quick mode). Columns: SEAL's budget before/after flooding, the model's budget
    after, the flooding bound ``log2 B`` (noise units), the largest noise measured before
    flooding (secret key), the smallest ``log2 q`` that would still flood it, the ciphertext
    size and the count of flooded ciphertexts of the whole layer."""
    if not he.flood_bits:
        raise ValueError("flooding_runs needs a backend that floods (flood_bits > 0)")
    rng = np.random.default_rng(seed)
    log2_t = math.log2(he.p)
    rows = []

    def record(kind, method, label, run_c_i, masked, flooded, correct, n_flooded):
        e_before = he.phase_noise(masked)
        log2_b = he.flood_log2_bound(masked) + he.fresh_noise_log2  # in units of |e|
        rows.append({
            "computation": kind, "method": method, "dims": label, "run_c_i": run_c_i,
            "N": he.poly_degree, "log2_q": he.q_bits, "flood_bits": he.flood_bits,
            "budget_before": int(np.min(he.noise_budget(masked))),
            "budget_after": int(np.min(he.noise_budget(flooded))),
            "model_budget_after": float(np.min(he.model_budget(flooded))),
            "log2_noise_before": float(np.log2(np.abs(e_before).max())),
            "log2_flood_bound": float(log2_b),
            "min_log2_q": math.ceil(log2_b + log2_t + 2),
            "ct_KB": he.ciphertext_bits / 8 / 1e3, "flooded_cts": n_flooded,
            "correct": bool(correct)})

    for n_o, n_i in matvec_dims:
        W, x = rng.integers(-8, 9, (n_o, n_i)), rng.integers(-8, 9, n_i)
        for m in methods:
            k = matvec_kernel(m, n_o, n_i, he.n)
            with he.key_scope():  # one layer's Galois keys at a time (memory)
                res = run_linear(k, he, W, x, np.random.default_rng(seed))
            # before flooding: the kernel's output (masking with r moves no noise)
            record("Matrix-vector", m, mv_label(n_o, n_i), n_i, res.out, res.returned,
                   np.array_equal(res.reveal(), W @ x), res.returned.size)
    for H, Wd, c_i, kk, c_o in conv_dims:
        ci = min(c_i, scale_channels) if scale_channels else c_i
        K, x = rng.integers(-8, 9, (c_o, ci, kk, kk)), rng.integers(-8, 9, (ci, H, Wd))
        for m in methods:
            k = conv_kernel(m, H, Wd, ci, kk, c_o, he.n)
            g = min(groups, k.layout.ct_out)
            k.groups = list(range(g))
            sim = BFVSim(n=he.n, p=he.p, noise_model=he.noise_model)
            sim.keygen(k.rotation_steps())
            want = sim.decrypt(k.evaluate(sim, sim.encrypt(k.pack_input(x)), K))
            with he.key_scope():  # one layer's Galois keys at a time (memory)
                he.keygen(k.rotation_steps())
                out = k.evaluate(he, he.encrypt(k.pack_input(x)), K)
            r = rng.integers(0, he.p, size=out.shape + (he.n,), dtype=np.int64)
            masked = he.sub_plain(out, he.encode(r))
            flooded = he.flood(masked)
            ok = np.array_equal(he.decrypt(flooded), np.mod(want - r, he.p))
            full = conv_kernel(m, H, Wd, c_i, kk, c_o, he.n)
            record("Convolution", m, conv_label(H, Wd, c_i, kk, c_o), ci, masked, flooded, ok,
                   full.layout.ct_out)
    return pd.DataFrame(rows)
