"""Measured and projected runtimes (GALA §IV): unit costs on real BFV, kernel timings, network
projections.

* :func:`unit_costs` measures one Perm / ScMult / Add (and the conversions around them) on the
  SEAL backend -- the numbers behind the paper's "Perm is 56x Add and 34x ScMult" (§II-C).
* :func:`time_kernel` runs a kernel on real BFV and separates the server's weight encoding
  (precomputable, as in GAZELLE) from the online HE evaluation.
* :func:`project_seconds` turns counted operations into a *projected* time with measured unit
  costs; :func:`network_time` adds the communication of the two-party flow on a network model.
  SEAL has no hoisting, so a HstPerm costs a Perm here and a DecPerm costs nothing extra (it is
  part of every SEAL rotation); GAZELLE's hoisting would make HstPerm cheaper, which is stated
  wherever HstPerm-heavy rows (Diagonal, GAZELLE convolutions) are projected.

All times are **CPU seconds of this process** (``time.process_time``): SEAL runs in one
thread, and CPU time is immune to other jobs on a shared machine (wall-clock time on a busy
two-core box inflates every long kernel by preemption, which a median of short unit
operations hides -- comparing the two would be unfair).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import pandas as pd
import tenseal.sealapi as sealapi

from ppnn.core import Ledger, Network
from ppnn.he.bfv.base import PackedBackend

from .layout import plain_ras

__all__ = ["GALA_LAN", "GALA_WAN", "unit_costs", "time_kernel", "project_seconds",
           "network_time", "network_seconds", "wrapper_overhead", "UNIT_OPS"]

#: GALA §IV: "Gigabit Ethernet" LAN (latency not stated: 0.15 ms one way assumed) and a WAN of
#: "average bandwidth 200Mbps and round-trip time around 13ms".
GALA_LAN = Network.from_units("GALA-LAN", 0.15, 125.0, "GALA §IV: Gigabit Ethernet")
GALA_WAN = Network.from_units("GALA-WAN", 6.5, 25.0, "GALA §IV: 200 Mbps, RTT 13 ms")

UNIT_OPS = ("Perm", "ScMult", "ScMult_coeff", "Add", "NTT", "Encode", "Enc")


def unit_costs(he, reps: int = 50, seed: int = 0) -> pd.DataFrame:
    """Median seconds of one operation on the SEAL backend (bare ``sealapi`` calls).

    Rows: ``Perm`` (rotate_rows, coefficient form), ``ScMult`` (multiply_plain of an NTT-form
    ciphertext by an NTT-form plaintext, as the kernels do), ``ScMult_coeff`` (SEAL's
    multiply_plain on coefficient-form operands, NTTs included), ``Add``, ``NTT`` (one
    ciphertext to or from NTT form), ``Encode`` (batch-encode one plaintext and NTT it), ``Enc``
    (a public-key encryption of zero: what flooding adds to every returned ciphertext).
    """
    rng = np.random.default_rng(seed)
    ev, enc = he.evaluator, he.encoder
    he.keygen([1])
    ct = he.encrypt(rng.integers(0, he.p, size=he.n)).data[()]
    vals = he._tile(rng.integers(0, he.p, size=he.n)).tolist()
    pt = sealapi.Plaintext()
    enc.encode(vals, pt)
    pt_ntt = sealapi.Plaintext()
    ev.transform_to_ntt(pt, he._parms_id, pt_ntt)
    ct_ntt = sealapi.Ciphertext()
    ev.transform_to_ntt(ct, ct_ntt)
    out = sealapi.Ciphertext()
    gk = he._gk

    def encode():
        q, r = sealapi.Plaintext(), sealapi.Plaintext()
        enc.encode(vals, q)
        ev.transform_to_ntt(q, he._parms_id, r)

    fns = {
        "Perm": lambda: ev.rotate_rows(ct, 1, gk, out),
        "ScMult": lambda: ev.multiply_plain(ct_ntt, pt_ntt, out),
        "ScMult_coeff": lambda: ev.multiply_plain(ct, pt, out),
        "Add": lambda: ev.add(ct, ct, out),
        "NTT": lambda: ev.transform_to_ntt(ct, out),
        "Encode": encode,
        "Enc": lambda: he.encryptor.encrypt_zero(out),
    }
    samples = {op: [] for op in fns}
    for _ in range(reps):  # interleaved: every op sees the same (possibly busy) machine
        for op, f in fns.items():
            t0 = time.process_time()
            f()
            samples[op].append(time.process_time() - t0)
    rows = [{"op": op, "seconds": float(np.median(v))} for op, v in samples.items()]
    df = pd.DataFrame(rows).set_index("op")
    df["per_perm"] = df.loc["Perm", "seconds"] / df["seconds"]
    return df


def project_seconds(counts: dict, unit: pd.DataFrame, hoisting: bool = False) -> float:
    """Counted operations x measured unit costs (seconds), labelled *projected* by callers.

    ``hoisting=False`` (SEAL): HstPerm = Perm, DecPerm = 0. ``True`` models GAZELLE's hoisting
    with a HstPerm at the cost of an NTT-domain key-switch product, taken as one ScMult, and a
    DecPerm at one Perm. A ``unit`` table with its own ``HstPerm`` / ``DecPerm`` rows (a
    paper's per-operation times) uses those instead."""
    s = unit["seconds"]
    perm, sc, add = s["Perm"], s["ScMult"], s["Add"]
    hst, dec = (sc, perm) if hoisting else (perm, 0.0)
    hst, dec = float(s.get("HstPerm", hst)), float(s.get("DecPerm", dec))
    return float(counts.get("Perm", 0) * perm + counts.get("HstPerm", 0) * hst
                 + counts.get("DecPerm", 0) * dec + counts.get("ScMult", 0) * sc
                 + counts.get("Add", 0) * add)


def network_seconds(ops: dict, unit: pd.DataFrame, nonlinear_s: float, comm_bits: float,
                    rounds: int, network: Network) -> float:
    """A whole network's projected seconds: its linear layers' counted HE operations ``ops``
    x ``unit`` costs (:func:`project_seconds`), the non-linear layers' ``nonlinear_s``, and
    ``rounds`` latencies plus ``comm_bits`` at the ``network``'s bandwidth -- the per-layer
    sum of :func:`ppnn.experiments.gala.runs.network_layers`, in one expression."""
    return (project_seconds(ops, unit) + nonlinear_s + rounds * network.latency_s
            + comm_bits / 8 / network.bandwidth_Bps)


def time_kernel(kernel, he: PackedBackend, weights, x, rng: np.random.Generator,
                groups: Sequence[int] | None = None) -> dict:
    """Run ``kernel`` on ``he`` (real BFV) and time it.

    Returns ``online_s`` (server HE evaluation without weight encoding), ``encode_s`` (server
    weight encoding), ``ras_s`` (GALA's plaintext RaS on both shares), the HE op counts of the
    run and the output ciphertexts. ``groups`` restricts a convolution to some output
    ciphertexts (used to measure a subset of a very large layer and scale it, labelled)."""
    old_groups = getattr(kernel, "groups", None)
    if groups is not None:
        kernel.groups = list(groups)
    led = Ledger([he.client, he.server])
    he.keygen(kernel.rotation_steps())
    ct = he.encrypt(kernel.pack_input(x))
    he.timing.clear()
    he.time_ops = True
    try:
        with he.recording(led):
            t0 = time.process_time()
            out = kernel.evaluate(he, ct, weights)
            total = time.process_time() - t0
    finally:
        he.time_ops = False
        kernel.groups = old_groups
    enc = he.timing.get("Encode", [0, 0.0])[1]
    ras = 0.0
    if kernel.name == "GALA" and hasattr(kernel.layout, "ras_steps"):
        r = rng.integers(0, he.p, size=out.shape + (he.n,))
        t0 = time.process_time()
        plain_ras(r, kernel.layout.b_o, he.p)
        plain_ras(r, kernel.layout.b_o, he.p)
        ras = time.process_time() - t0
    counts = {k: int(v) for k, v in led.op_counts().items()}
    return {"online_s": total - enc, "encode_s": enc, "ras_s": ras, "counts": counts,
            "out": out, "timing": {k: v[1] for k, v in he.timing.items()}}


def network_time(n_ct_up: int, n_ct_down: int, ct_bits: int, network: Network) -> float:
    """Seconds to send ``n_ct_up`` ciphertexts client->server and ``n_ct_down`` back
    (two rounds: one latency each plus transfer at the network's bandwidth)."""
    return (2 * network.latency_s
            + (n_ct_up + n_ct_down) * ct_bits / 8 / network.bandwidth_Bps)


def wrapper_overhead(he, reps: int = 200, batch: int = 1, seed: int = 0) -> pd.DataFrame:
    """Our backend calls vs the bare ``sealapi`` calls they wrap (same operands, same run).

    ``batch`` ciphertexts per call: the wrapper's fixed cost (checks, broadcasting, counting,
    noise model) is paid once per call and shared by the batch."""
    rng = np.random.default_rng(seed)
    he.keygen([1])
    ct = he.encrypt(rng.integers(0, he.p, size=(batch, he.n)))
    w = he.encode(rng.integers(0, he.p, size=(batch, he.n)))
    ct_ntt = he.mul_plain(ct, w)  # an NTT-form batch for adds
    ev, gk = he.evaluator, he._gk
    data = list(ct.data)
    ntt_ct = list(he._ntt_data(ct))
    ntt_pt = list(he._pt_ntt(w))
    nd = list(ct_ntt.data)

    # the bare loops keep their results, as any caller must (our calls return them)
    def bare_rot():
        out = []
        for c in data:
            r = sealapi.Ciphertext()
            ev.rotate_rows(c, 1, gk, r)
            out.append(r)
        return out

    def bare_mul():
        out = []
        for c, q in zip(ntt_ct, ntt_pt):
            r = sealapi.Ciphertext()
            ev.multiply_plain(c, q, r)
            out.append(r)
        return out

    def bare_add():
        out = []
        for c in nd:
            r = sealapi.Ciphertext()
            ev.add(c, c, r)
            out.append(r)
        return out

    pairs = {
        "Perm": (bare_rot, lambda: he.rotate(ct, 1)),
        "ScMult": (bare_mul, lambda: he.mul_plain(ct, w)),
        "Add": (bare_add, lambda: he.add(ct_ntt, ct_ntt)),
    }
    rows = []
    for op, (bare, ours) in pairs.items():
        for _ in range(3):  # warm up
            bare()
            ours()
        tb, to = [], []
        for _ in range(reps):  # interleaved, so both see the same machine state
            t0 = time.process_time()
            bare()
            t1 = time.process_time()
            ours()
            t2 = time.process_time()
            tb.append(t1 - t0)
            to.append(t2 - t1)
        b, o = float(np.median(tb)), float(np.median(to))
        rows.append({"op": op, "batch": batch, "bare_s": b, "wrapper_s": o,
                     "overhead": o / b - 1.0})
    return pd.DataFrame(rows)
