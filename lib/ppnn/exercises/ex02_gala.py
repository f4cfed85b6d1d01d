"""Exercises of notebook 02 (GALA).

* 02.1 -- write GAZELLE's rotate-and-sum in HE on GALA's products; the HE operations booked
  and the resulting slot vector are compared with the library's GAZELLE kernel;
* 02.2 -- dimensions where GALA needs more Perms than GAZELLE, counted by running both kernels;
* 02.3 -- productive failure: a server that reuses its share mask gives away its weights.
"""

from __future__ import annotations

import numpy as np

from ppnn.core import Ledger
from ppnn.he.bfv.base import Ct
from ppnn.he.bfv.sim import BFVSim
from ppnn.protocols.gala import GalaMatVec, MatVecLayout, centered, plain_ras, run_linear
from ppnn.protocols.gala.costs import count_kernel
from ppnn.protocols.gazelle import GazelleMatVec

from . import solutions
from .answers import as_int_array, as_int_tuple, returned, show
from .ledgers import compare_ops
from .registry import Exercise, Verdict, WrongType, call_student, register

__all__ = ["mask_reuse_oracle"]

# -- 02.1 -----------------------------------------------------------------------------------
#: (seed, n_o, n_i, n slots)
RAS_CASES = ((0, 2, 16, 16), (1, 4, 8, 16), (2, 1, 8, 8))


def _ras_case(seed: int, n_o: int, n_i: int, n: int):
    """GALA's products brought together (the library's kernel, steps (a)-(c)) and what
    GAZELLE's kernel returns after its HE rotate-and-sum, on the slot simulator."""
    he = BFVSim(n=n)
    gala, gazelle = GalaMatVec(n_o, n_i, n), GazelleMatVec(n_o, n_i, n)
    he.keygen(gala.rotation_steps() + gazelle.rotation_steps())
    rng = np.random.default_rng(seed)
    W, x = rng.integers(-3, 4, (n_o, n_i)), rng.integers(-3, 4, n_i)
    u = gala.evaluate(he, he.encrypt(gala.pack_input(x)), W)
    want = he.decrypt(gazelle.evaluate(he, he.encrypt(gazelle.pack_input(x)), W))
    # the HE operations of GAZELLE's RaS: all of its Perms; the Adds GALA does not need
    gz, ga = count_kernel(gazelle), count_kernel(gala)
    ops = {"Perm": gz["Perm"], "Add": gz["Add"] - ga["Add"]}
    return he, u, gala.layout, W, x, want, ops


def check_ras(fn) -> Verdict:
    for seed, n_o, n_i, n in RAS_CASES:
        he, u, layout, W, x, want, ops = _ras_case(seed, n_o, n_i, n)
        led = Ledger([he.client, he.server])
        with he.recording(led):
            out = call_student(fn, he, u, layout, what="my_ras")
        returned(out, Ct, "my_ras")
        case = f"n_o = {n_o}, n_i = {n_i}, n = {n} (RaS steps {layout.ras_steps})"
        if out.shape != u.shape:
            return Verdict(False, f"{case}: your result is a batch of shape {out.shape}, the "
                                  f"input's is {u.shape} (one ciphertext per row block)")
        slots = he.decrypt(out)  # outside the recording: the client's decryption
        diffs = compare_ops(ops, led)
        if not np.array_equal(slots, want):
            first = slots[0, :layout.b_o]
            diffs.append(f"slots: yours hold {show(centered(slots, he.p), 8)}, GAZELLE's "
                         f"kernel {show(centered(want, he.p), 8)}; the first n_o slots "
                         f"should be W x = {show(W @ x)}, yours {show(centered(first, he.p))}")
        if diffs:
            return Verdict(False, f"{case}:\n  " + "\n  ".join(diffs))
    plain = plain_ras(he.decrypt(u), layout.b_o, he.p)
    return Verdict(True, "Your HE operations and slots match GAZELLE's kernel "
                         f"(last case: {ops['Perm']} Perms, {ops['Add']} Adds). GALA does the "
                         "same sums on the plaintext shares instead (plain_ras: "
                         f"{show(centered(plain[0], he.p))}), with no Perm at all.")


register(Exercise(
    id="02.1", title="write GAZELLE's rotate-and-sum in HE",
    prompt=(
        "GALA's kernel leaves one ciphertext per row block whose n/n_o blocks of n_o slots "
        "still have to be added up; GALA does that on the plaintext shares (share-RaS), "
        "GAZELLE in HE. Write `my_ras(he, u, layout)`: the rotate-and-sum on `u`, the "
        "output of GALA's kernel (a batch of ciphertexts, one per row block), with "
        "`he.rotate(ct, k)` (a Perm: slot j gets slot j + k) and "
        "`he.add(a, b)`; `layout` is the `MatVecLayout` (`layout.n`, `layout.b_o` = n_o "
        "padded, `layout.ras_steps`). The check books your HE operations on a ledger and "
        "compares them, and the slots you return, with the library's GAZELLE kernel on the "
        "same inputs."),
    hints=(
        "Rotate by n/2 and add, then by n/4, ... down to n_o: `layout.ras_steps`.",
        "One Perm and one Add per step: `u = he.add(u, he.rotate(u, k))`. Rotating by "
        "anything else needs a Galois key the client never sent.",
    ),
    expects="a function my_ras(he, u, layout) returning a ciphertext batch (Ct)",
    checker=check_ras, solution=solutions.gazelle_rotate_and_sum, compares_ledgers=True,
    stub='''def my_ras(he, u, layout):
    """GAZELLE's final rotate-and-sum, in HE: W x ends up in the first n_o slots."""
    ...  # your code here


answer = ...''',
))


# -- 02.2 -----------------------------------------------------------------------------------
def _perms(n_o: int, n_i: int, n: int) -> tuple[int, int]:
    return (count_kernel(GalaMatVec(n_o, n_i, n))["Perm"],
            count_kernel(GazelleMatVec(n_o, n_i, n))["Perm"])


def check_more_perms(dims) -> Verdict:
    n_o, n_i, n = as_int_tuple(dims, 3, "(n_o, n_i, n)")
    if n < 16 or n > 8192 or n & (n - 1):
        raise WrongType(f"n must be a power of two in [16, 8192], got {n}")
    for name, v in (("n_o", n_o), ("n_i", n_i)):
        if not 1 <= v <= n:
            raise WrongType(f"{name} must be in [1, n = {n}] (one block), got {v}")
    gala, gazelle = _perms(n_o, n_i, n)
    L = MatVecLayout(n_o, n_i, n)
    counts = (f"GALA {gala} Perms (n_i n_o / n - 1 = {L.G - 1}), GAZELLE {gazelle} "
              f"(log2(n / n_o) = {len(L.ras_steps)})")
    if gala > gazelle:
        return Verdict(True, f"{n_o} x {n_i} with n = {n}: {counts}. GALA trades the RaS "
                             "Perms for one Perm per extra product: it loses when a block "
                             "holds many products and few RaS steps remain.")
    return Verdict(False, f"{n_o} x {n_i} with n = {n}: {counts}; GALA does not need more.")


register(Exercise(
    id="02.2", title="find dimensions where GALA needs more Perms than GAZELLE",
    prompt=(
        "GALA removes GAZELLE's rotate-and-sum Perms but rotates each of its "
        "G = n_i n_o / n products. Find a matrix-vector product `(n_o, n_i, n)` (n a power "
        "of two in [16, 8192], n_o and n_i at most n) where GALA books *more* Perms than "
        "GAZELLE. The check runs both kernels on the counting backend and compares their "
        "Perm counts."),
    hints=(
        "Compare n_i n_o / n - 1 (GALA) with log2(n / n_o) (GAZELLE).",
        "Make G large: n_i = n, and n_o large enough that G - 1 overtakes log2(n / n_o).",
    ),
    expects="a tuple (n_o, n_i, n) of ints",
    checker=check_more_perms, solution=solutions.more_perms_for_gala, kind="value",
    stub='''# a tuple (n_o, n_i, n) for which GALA books more Perms than GAZELLE
answer = ...''',
))


# -- 02.3 -----------------------------------------------------------------------------------
def mask_reuse_oracle(seed: int, n_o: int = 4, n_i: int = 8, n: int = 16):
    """A GALA server that re-seeds its mask generator for every query, so every answer uses
    the same ``r``: returns ``(query, W, p)`` where ``query(x)`` runs the library's
    :func:`run_linear` and gives the client's share ``W x - r`` (mod p)."""
    rng = np.random.default_rng(seed)
    W = rng.integers(-8, 9, (n_o, n_i))
    he = BFVSim(n=n)
    kernel = GalaMatVec(n_o, n_i, n)

    def query(x):
        x = np.asarray(x)
        if x.shape != (n_i,) or x.dtype.kind not in "iu":
            raise ValueError(f"query(x) takes an integer vector of shape ({n_i},), "
                             f"got {x.dtype} {x.shape}")
        if np.abs(x).max(initial=0) > 8:
            raise ValueError("query(x): entries must lie in [-8, 8]")
        res = run_linear(kernel, he, W, x.astype(np.int64), np.random.default_rng(seed + 1),
                         x_bound=8)  # the flaw: the same seed, the same mask r every time
        return res.client_share.copy()

    return query, W, he.p


def check_mask_reuse(fn) -> Verdict:
    for seed, j in ((10, 3), (11, 0), (12, 7)):
        query, W, p = mask_reuse_oracle(seed)
        got = call_student(fn, query, W.shape[1], j, p, what="steal_column")
        got = as_int_array(got, (W.shape[0],), "steal_column's result")
        if not all((int(a) - int(b)) % p == 0 for a, b in zip(got, W[:, j])):
            return Verdict(False, f"seed {seed}, column {j}: you found {show(got)}, the "
                                  f"server's column is {show(W[:, j])}")
    return Verdict(True, "Right: with one mask r for every query, share(e_j) - share(0) = "
                         "W e_j. A fresh uniform r per query hides W x; reusing it turns the "
                         "protocol into a weight oracle.")


register(Exercise(
    id="02.3", title="break it: a server that reuses its share mask",
    prompt=(
        "In step 3 of a GALA layer the server returns `[W x - r]` and keeps `r`, so the two "
        "parties hold shares of W x. This server re-seeds its mask generator on every query, "
        "so `r` is the same each time. You are the client and may query any input with "
        "entries in [-8, 8]: `query(x)` runs the library's `run_linear` and returns your "
        "share (residues mod p, one per output). Write `steal_column(query, n_i, j, p)` that "
        "returns column `j` of the server's secret weight matrix (signed integers). The check "
        "draws fresh weights and compares."),
    hints=(
        "Your share is W x - r (mod p) with the same r every time: what do two queries "
        "differ by?",
        "query(e_j) - query(0) = W e_j (mod p); map residues above p/2 to negative numbers.",
    ),
    expects="a function steal_column(query, n_i, j, p) returning the n_o weights of column j",
    checker=check_mask_reuse, solution=solutions.steal_column, productive_failure=True,
    stub='''import numpy as np


def steal_column(query, n_i, j, p):
    """Column j of the server's weights from a server that reuses its mask r."""
    ...  # your code here


answer = ...''',
))
