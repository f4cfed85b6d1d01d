"""Closed-form costs of SwaNN runs, and time projections from measured unit costs.

:func:`count_model` gives, for every step of a :class:`~ppnn.protocols.swann.model.SwannModel`
and every party, the operation counts and message bits the protocols book -- without running
them. The tests check these formulas against the ledger of real and simulated runs; they are
what Experiment 3 (MiniONN CIFAR-10, too large to run here) is reported from.

:func:`measure_unit_costs` times the primitive operations with real 2048-bit Paillier on this
machine; :func:`project_ms` multiplies counts by those unit costs (labelled *projected*).

Conventions (as implemented in :mod:`.switching`, :mod:`.twopc`, :mod:`ppnn.he.paillier`):
``s = ℓ + κ + 1`` bits per packing slot, ``ρ = ⌊(log₂N − 1)/s⌋``; one rerandomization
(``Enc``) per packed ciphertext that leaves the server; ciphertexts are ``2·log₂N`` bits.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...he.paillier import Paillier, keygen, multiexp_plan, split_private_key
from .model import Step, SwannModel
from .twopc import OTCostModel

__all__ = ["count_step", "count_model", "io_bits", "UnitCosts", "measure_unit_costs",
           "project_ms", "COUNTED_OPS", "TWO_PC", "FORMULA_ONLY"]

COUNTED_OPS = ("Enc", "Dec", "PartialDec", "paillier_mul", "paillier_exp", "paillier_inv",
               "and_gate", "Mult", "ot", "aby_gates", "exp_bits", "pack_sqr")
# formula-only columns: ``exp_bits`` (exponent bits of all exponentiations; for the random
# masks of Protocol 1 its expected value) and ``pack_sqr`` (the squarings inside packing, part
# of ``paillier_mul``); ``aby_gates`` = AND gates a party takes part in
FORMULA_ONLY = ("aby_gates", "exp_bits", "pack_sqr")
TWO_PC = "(2pc)"  # pseudo-party of gate / triple / OT totals (the ledger books them unattributed)


class _Acc:
    """Counts per (party, op) and bits per phase."""

    def __init__(self):
        self.ops: dict[tuple[str, str], int] = defaultdict(int)
        self.bits = {"online": 0, "offline": 0}

    def op(self, party: str, op: str, n: int) -> None:
        self.ops[(party, op)] += int(n)

    def send(self, bits: int, phase: str = "online") -> None:
        self.bits[phase] += int(bits)


def _linear_counts(acc: _Acc, step: Step, ev: str, optimized: bool) -> None:
    if step.kind in ("flatten", "fork", "swap"):
        return
    if step.kind == "add":  # [body]^(2^lb) · [shortcut]^(2^ls)
        n = int(np.prod(step.in_shape))
        for lift in step.lift:
            if lift:
                acc.op(ev, "paillier_exp", n)
                acc.op(ev, "exp_bits", n * (lift + 1))
        acc.op(ev, "paillier_mul", n)
        return
    if step.kind == "sumpool":
        valid = (step.index >= 0).sum(axis=1)
        acc.op(ev, "paillier_mul", int(np.maximum(valid - 1, 0).sum()))
        return
    index = step.index if step.kind == "conv" else np.arange(step.W.shape[1])[None, :]
    W = step.W
    patterns, inverse = np.unique(index >= 0, axis=0, return_inverse=True)
    per = np.bincount(inverse.ravel(), minlength=len(patterns))
    for valid, times in zip(patterns, per):
        Wv = W[:, valid]
        if optimized:
            plan = multiexp_plan(Wv, multiexp_plan(W).h)
            acc.op(ev, "paillier_mul", times * plan.total_mults())
            if plan.offset:
                acc.op(ev, "paillier_exp", times)
                acc.op(ev, "paillier_inv", times)
                acc.op(ev, "exp_bits", times * plan.offset.bit_length())
        else:
            nnz = (Wv != 0).sum(axis=1)
            bits = np.zeros(Wv.shape, dtype=np.int64)
            nzm = Wv != 0
            bits[nzm] = np.floor(np.log2(np.abs(Wv[nzm]))).astype(np.int64) + 1
            acc.op(ev, "exp_bits", times * int(bits.sum()))
            acc.op(ev, "paillier_exp", times * int(nnz.sum()))
            acc.op(ev, "paillier_inv", times * int((Wv < 0).sum()))
            acc.op(ev, "paillier_mul", times * int(np.maximum(nnz - 1, 0).sum()))
    acc.op(ev, "paillier_mul", W.shape[0] * index.shape[0])  # bias (plaintext addition)


def _decrypt_counts(acc: _Acc, n_ct: int, ev: str, hp: str, scenario: str, ct_bits: int):
    if scenario == "client-server":
        acc.op(hp, "Dec", n_ct)
    else:
        acc.op(ev, "PartialDec", n_ct)
        acc.op(hp, "PartialDec", n_ct)
        acc.op(hp, "paillier_mul", n_ct)
        acc.send(n_ct * ct_bits)


def _mask_counts(acc: _Acc, n: int, slot: int, n_bits: int, ev: str, pack: bool) -> int:
    """Server side of Protocols 1/2; returns the number of ciphertexts sent."""
    if pack:
        rho = (n_bits - 1) // slot
        groups = [min(rho, n - i) for i in range(0, n, rho)]
        acc.op(ev, "paillier_mul", n + sum((g - 1) * (slot + 1) for g in groups))
        acc.op(ev, "pack_sqr", sum((g - 1) * slot for g in groups))
        acc.op(ev, "Enc", len(groups))
        return len(groups)
    acc.op(ev, "Enc", n)
    acc.op(ev, "paillier_mul", n)
    return n


def count_step(step: Step, setting: str, scenario: str, optimized: bool, n_bits: int = 2048,
               kappa: int = 80, ot: OTCostModel | None = None,
               roles: tuple[str, str] = ("server", "client")) -> _Acc:
    """Operation counts (per party) and bits of one step for one image."""
    ot = ot or OTCostModel()
    ev, hp = roles
    ct = 2 * n_bits
    acc = _Acc()
    if not step.interactive:
        _linear_counts(acc, step, ev, optimized)
        return acc
    n = int(np.prod(step.in_shape))
    slot = step.ell_in + kappa + 1
    n_ct = _mask_counts(acc, n, slot, n_bits, ev, optimized)
    acc.send(n_ct * ct)
    _decrypt_counts(acc, n_ct, ev, hp, scenario, ct)
    if setting == "phe":                                   # Protocol 1
        acc.op(hp, "Enc", n)
        acc.send(n * ct)
        acc.op(ev, "paillier_exp", n)
        acc.op(ev, "exp_bits", n * (step.ell_in + kappa + 1))   # 2r (expected length)
        acc.op(ev, "paillier_inv", n)
        acc.op(ev, "paillier_mul", 2 * n)
        return acc
    k = 64 if step.act == "square" or step.ell_in > 32 else 32
    acc.send(2 * n * k)                                    # Protocol 2 share messages
    ands = 0
    if step.act == "square":
        if step.pre_trunc:
            ands += n * (step.ell_in - 1)
            m = step.square_bits
            acc.op(TWO_PC, "ot", n * m)
            acc.send(n * m * ot.kappa, "offline")
            acc.send(n * m + n * m * k)
        acc.op(TWO_PC, "Mult", n)
        acc.op(TWO_PC, "ot", n * ot.ots_per_arith(k))
        acc.send(n * ot.arith_triple_bits(k), "offline")
        acc.send(2 * 2 * n * k)                            # Beaver: e, f from both parties
        ands += n * (step.a2b_bits - 1)
        n_out = n
    else:
        ands += 2 * n * (step.ell_in - 1)                  # A2B + ReLU
        n_out = n
        if step.pool_index is not None:
            n_out, win = step.pool_index.shape
            ands += n_out * (win - 1) * 2 * step.ell_in
    width = step.out_bits + kappa                          # Protocol 3
    ands += n_out * width
    acc.send(n_out * width)                                # <r'>_c
    acc.send(n_out * (width + 1))                          # <x + r'>_s
    acc.op(TWO_PC, "and_gate", ands)
    acc.op(TWO_PC, "ot", ands * ot.ots_per_and())
    acc.op(ev, "aby_gates", ands)
    acc.op(hp, "aby_gates", ands)
    acc.send(4 * ands)
    acc.send(ands * ot.and_triple_bits(), "offline")
    acc.op(hp, "Enc", n_out)
    acc.send(n_out * ct)
    acc.op(ev, "paillier_mul", n_out)
    return acc


def count_model(model: SwannModel, scenario: str = "client-server", optimized: bool = True,
                n_bits: int = 2048, ot: OTCostModel | None = None) -> pd.DataFrame:
    """Counted costs per step and party for one run (two images in the two-server setting).

    Columns: ``step``, ``party``, one column per operation in :data:`COUNTED_OPS`, and
    ``online_bits`` / ``offline_bits`` per step (booked on the step's first party row).
    """
    roles = [("server", "client")] if scenario == "client-server" else [
        ("server1", "server2"), ("server2", "server1")]
    rows = []
    for step in model.steps:
        total = _Acc()
        for r in roles:
            a = count_step(step, model.setting, scenario, optimized, n_bits,
                           model.plan.kappa, ot, r)
            for key, v in a.ops.items():
                total.ops[key] += v
            for ph in total.bits:
                total.bits[ph] += a.bits[ph]
        parties = sorted({p for p, _ in total.ops} | {r[0] for r in roles} | {r[1] for r in roles})
        for i, p in enumerate(parties):
            row = {"step": step.label, "party": p}
            for op in COUNTED_OPS:
                row[op] = total.ops.get((p, op), 0)
            row["online_bits"] = total.bits["online"] if i == 0 else 0
            row["offline_bits"] = total.bits["offline"] if i == 0 else 0
            rows.append(row)
    return pd.DataFrame(rows)


def io_bits(model: SwannModel, scenario: str = "client-server", n_bits: int = 2048,
            stat_bits: int = 128) -> dict[str, int]:
    """Bits of one run outside the layers (:func:`count_model` counts the layers only), as
    :func:`~ppnn.protocols.swann.inference.run_inference` books them under the labels
    ``input`` (the client's encrypted image(s): one ciphertext per pixel), ``output`` (the
    rerandomized encrypted logits returned to the client) and ``setup`` (two-server: the two
    secret-key shares, ``2·log₂N + stat_bits + 1`` bits each)."""
    images = 1 if scenario == "client-server" else 2
    ct = 2 * n_bits
    n_in = int(np.prod(model.net.input_shape))
    n_out = int(np.prod(model.steps[-1].out_shape))
    setup = 0 if scenario == "client-server" else 2 * (2 * n_bits + stat_bits + 1)
    return {"input": images * n_in * ct, "output": images * n_out * ct, "setup": setup}


# ----------------------------------------------------------------------------------------
# unit costs and projections
# ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class UnitCosts:
    """Seconds per primitive, measured with real Paillier on this machine."""

    enc: float
    dec: float
    partial_dec: float
    mul: float            # one modular multiplication in a Python loop (multi-exp, additions)
    sqr: float            # one squaring inside gmpy2's powmod (per exponent bit)
    inv: float
    and_gate: float       # simulator seconds per AND gate (both parties)
    n_bits: int

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame({"seconds": self.__dict__}).drop(index="n_bits")


def measure_unit_costs(n_bits: int = 2048, reps: int = 20, keys=None,
                       rng: np.random.Generator | None = None) -> UnitCosts:
    """Time each primitive ``reps`` times with a real key (median-free mean, quick)."""
    from ...core import Ledger, Ring, share_additive
    from .twopc import TwoPC

    pk, sk = keys if keys is not None else keygen(n_bits)
    be = Paillier(pk)
    rng = rng or np.random.default_rng(0)
    vals = rng.integers(-2**31, 2**31, size=reps)

    def clock(f):
        t0 = time.perf_counter()
        out = f()
        return (time.perf_counter() - t0) / reps, out

    t_enc, c = clock(lambda: be.encrypt(vals, "client"))
    t_dec, _ = clock(lambda: be.decrypt(sk, c, "client"))
    s1, _ = split_private_key(sk)
    t_pdec, _ = clock(lambda: be.partial_decrypt(s1, c, "server"))
    data = list(c.data)
    n2 = be.n2
    t_mul, _ = clock(lambda: [[a * b % n2 for a, b in zip(data, data[1:] + data[:1])]
                              for _ in range(20)])
    t_mul /= 20
    e = 1 << 200
    t_sqr, _ = clock(lambda: [be._pow(a, e) for a in data])
    t_sqr /= 200
    t_inv, _ = clock(lambda: [be._inv(a) for a in data])
    led = Ledger(["client", "server"])
    tpc = TwoPC(led, ("client", "server"), rng)
    x = share_additive(Ring(32).random(rng, (2000,)), Ring(32), rng)
    t0 = time.perf_counter()
    tpc.a2b(x, 32)
    t_and = (time.perf_counter() - t0) / (2000 * 31)
    return UnitCosts(t_enc, t_dec, t_pdec, t_mul, t_sqr, t_inv, t_and, n_bits)


def project_ms(counts: pd.DataFrame, units: UnitCosts) -> pd.DataFrame:
    """Projected milliseconds per step (rows) and party (columns) from counted operations."""
    per = {"Enc": units.enc, "Dec": units.dec, "PartialDec": units.partial_dec,
           "paillier_inv": units.inv}
    df = counts.copy()
    df["ms"] = sum(df[op] * t for op, t in per.items()) * 1e3
    # Python-level multiplications; squarings inside powmod (packing, exponentiations: about
    # 1.2 multiplications per exponent bit with gmpy2's sliding window)
    df["ms"] += ((df["paillier_mul"] - df["pack_sqr"]) * units.mul
                 + df["pack_sqr"] * units.sqr + 1.2 * df["exp_bits"] * units.sqr) * 1e3
    # 2PC gates are symmetric: half of the simulator's time to each of the two parties
    df["ms"] += df["aby_gates"] * units.and_gate * 1e3 / 2
    df = df[df["party"] != TWO_PC]
    out = df.pivot_table(index="step", columns="party", values="ms", aggfunc="sum", sort=False)
    return out.fillna(0.0)
