"""Exercises of notebook 05 (Falcon).

* 05.1 -- write Falcon's product with its resharing; compared with :meth:`Falcon.mul` ledger
  by ledger (values included: a resharing without its zero sharing leaks);
* 05.2 -- productive failure: plain ABY3 truncation, without Falcon's top-bit fix, is
  catastrophically wrong for some inputs;
* 05.3 -- rounds and bits of private compare, a closed form checked against the ledger.
"""

from __future__ import annotations

import functools

import numpy as np

from ppnn.core import Ledger
from ppnn.core.transcript import EVERY_ELEMENT
from ppnn.protocols.falcon import PARTIES, RSS, Falcon, bits_of, private_compare
from ppnn.protocols.falcon.runtime import truncate_aby3_plain

from . import solutions
from .answers import as_closed_form, as_int, returned
from .ledgers import closed_form_verdict, ledger_mismatch, summary
from .registry import Exercise, Verdict, call_student, own_work, register

__all__ = ["truncation_mask", "bad_truncation_seeds"]

# -- 05.1 -----------------------------------------------------------------------------------
MUL_CASES = ((0, (3,)), (1, (2, 2)))  # (seed, shape)


def _run_mul(fn, seed: int, shape, student: bool):
    led = Ledger(PARTIES, record_values=EVERY_ELEMENT)
    fal = Falcon(np.random.default_rng(seed), ledger=led)
    rng = np.random.default_rng(100 + seed)
    x = fal.ring.from_signed(rng.integers(-5000, 5000, shape))
    y = fal.ring.from_signed(rng.integers(-5000, 5000, shape))
    X, Y = fal.share(x), fal.share(y)
    if student:
        out = call_student(fn, fal, X, Y, what="my_mul")
        returned(out, RSS, "my_mul")
    else:
        out = fal.mul(X, Y)
    return led, out, fal.ring.mul(x, y), (fal, X, Y)


def _reshare_leak(led: Ledger, fal: Falcon, X: RSS, Y: RSS, out: RSS) -> str | None:
    """What the resharing round gives away, judged by what Falcon's product guarantees
    (§3.2), not by the order of the PRF draws: ``P_i`` sends ``z_i`` to ``P_{i-1}``, ``z_i``
    minus its cross terms is a zero sharing ``alpha`` (the three sum to 0) whose components
    are nonzero and differ from each other, and the output holds the ``z_i`` that crossed."""
    ring = fal.ring
    A, B = X.components, Y.components
    cross = ring.add(ring.add(ring.mul(A, B), ring.mul(A, B[[1, 2, 0]])),
                     ring.mul(A[[1, 2, 0]], B))
    sent = {}
    for i, m in enumerate(led.messages):
        rec = led.values.get(i)
        if m.phase == "online" and rec is not None and rec.kind == "array" and rec.complete:
            sent[PARTIES.index(m.sender)] = ring.reduce(np.asarray(rec.array(), np.uint64)
                                                        .reshape(out.shape))
    if sorted(sent) != [0, 1, 2]:
        return "record the z_i each party sends (ledger.send(..., value=z[i]))"
    z = np.stack([sent[i] for i in range(3)])
    alpha = ring.sub(z, cross)
    if np.any(ring.add(ring.add(alpha[0], alpha[1]), alpha[2])):
        return "what the parties send minus their cross terms does not sum to zero"
    if np.any(alpha == 0) or np.any(alpha[0] == alpha[1]) or np.any(alpha[1] == alpha[2]):
        return ("z_i is (nearly) the bare cross term: without a fresh zero sharing alpha, "
                "z_i tells P_{i-1} about x and y")
    if not np.array_equal(out.components, z):
        return "your output's components are not the z_i that crossed"
    return None


def check_mul(fn) -> Verdict:
    if (copied := own_work(fn, Falcon.mul, "Falcon.mul")) is not None:
        return copied
    for seed, shape in MUL_CASES:
        ref_led, _, want, _ = _run_mul(Falcon.mul, seed, shape, student=False)
        led, out, _, (fal, X, Y) = _run_mul(fn, seed, shape, student=True)
        case = f"shape {shape}"
        if out.shape != tuple(shape):
            return Verdict(False, f"{case}: your output has shape {out.shape}")
        right = bool(np.array_equal(out.reveal(), want))
        if (no := ledger_mismatch(
                case, ref_led, led, right, "your components do not sum to x * y",
                "", values=False)) is not None:
            return no
        if (leak := _reshare_leak(led, fal, X, Y, out)) is not None:
            return Verdict(False, f"{case}: {leak}",
                           "z_i = x_i y_i + x_i y_{i+1} + x_{i+1} y_i + alpha_i with alpha = "
                           "fal.zero3(fal.ring, x.shape): without alpha, z_i tells P_{i-1} "
                           "about x and y")
    return Verdict(True, "Your resharing is Falcon's: one round, each P_i sends z_i to "
                         f"P_(i-1), each masked by a fresh zero sharing ({summary(ref_led)}).")


register(Exercise(
    id="05.1", title="write Falcon's product and its resharing",
    prompt=(
        "`x` and `y` are 2-out-of-3 replicated sharings: `x.components` has the three "
        "additive components, P_i holds `(x_i, x_{i+1})`. Write `my_mul(fal, x, y)`: each P_i "
        "computes `z_i = x_i y_i + x_i y_{i+1} + x_{i+1} y_i + alpha_i` locally (`alpha = "
        "fal.zero3(fal.ring, x.shape)`, a 3-out-of-3 sharing of zero from the PRF keys) and "
        "sends `z_i` to P_{i-1}, all in one round on `fal.ledger` (parties `PARTIES`, "
        "`value=` what is sent); return `RSS(z, fal.ring)`. The check compares your ledger "
        "with the one of `fal.mul` on the same seeded inputs (who sends whom how many bits "
        "in which round) and checks what crossed: each z_i masked by a zero sharing."),
    hints=(
        "`X[[1, 2, 0]]` puts x_{i+1} in row i; the ring's `add`, `mul` work on whole arrays.",
        "`with fal.ledger.round():` then `fal.ledger.send(PARTIES[i], PARTIES[(i - 1) % 3], "
        "z[i].size * fal.ring.bits, 'reshare', value=z[i])` for i = 0, 1, 2.",
        "`fal.zero3(fal.ring, x.shape)` gives the three alpha_i, which sum to zero: add "
        "alpha_i to z_i before it is sent.",
    ),
    expects="a function my_mul(fal, x, y) returning ReplicatedShares (RSS)",
    checker=check_mul, solution=solutions.falcon_product, compares_ledgers=True,
    stub='''from ppnn.protocols.falcon import PARTIES, RSS


def my_mul(fal, x, y):
    """x * y on replicated shares: local cross terms + zero sharing, then reshare."""
    ring = fal.ring
    X, Y = x.components, y.components
    ...  # your code here


answer = ...''',
))


# -- 05.2 -----------------------------------------------------------------------------------
def truncation_mask(seed: int) -> int:
    """The mask ``r`` (signed) that plain ABY3 truncation draws in a Falcon made from
    ``seed``, read off a probe run on ``x = 0``: the opened ``c = x - r`` is ``-r``."""
    fal = Falcon(np.random.default_rng(seed), record_openings=True)
    truncate_aby3_plain(fal, fal.share(np.zeros(1, np.uint64)), fal.f)
    c = fal.openings[-1].value
    return int(fal.ring.to_signed(fal.ring.neg(c))[0])


@functools.lru_cache(maxsize=1)
def bad_truncation_seeds(count: int = 3) -> tuple[int, ...]:
    """Seeds whose mask leaves room for a bad input inside ``|x| < 2^(k-2)``."""
    k, out, seed = Falcon(np.random.default_rng(0)).k, [], 30
    while len(out) < count:
        if abs(truncation_mask(seed)) >= (1 << (k - 2)) + 2:
            out.append(seed)
        seed += 1
    return tuple(out)


def _truncate(seed: int, x: int, plain: bool) -> int:
    """The error of truncating ``x`` by ``frac_bits`` (plain ABY3 or Falcon's), in units."""
    fal = Falcon(np.random.default_rng(seed))
    X = fal.share(fal.ring.from_signed(np.array([x])))
    out = truncate_aby3_plain(fal, X, fal.f) if plain else fal.truncate(X, fal.f)
    return int(fal.ring.to_signed(fal.reveal(out))[0]) - (x >> fal.f)


def check_bad_truncation(fn) -> Verdict:
    probe = Falcon(np.random.default_rng(0))
    k, d = probe.k, probe.f
    lim = 1 << (k - 2)
    for seed in bad_truncation_seeds():
        r = truncation_mask(seed)
        x = as_int(call_student(fn, r, k, d, what="bad_input"), "bad_input's result")
        if not -lim < x < lim:
            return Verdict(False, f"r = {r}: x = {x} is outside |x| < 2^(k-2) = {lim}, the "
                                  "range truncation is used in (Falcon's contract)")
        err = _truncate(seed, x, plain=True)
        if abs(err) <= 1:
            return Verdict(False, f"r = {r}: with x = {x} plain ABY3 truncation is off by "
                                  f"{err} unit(s) only -- right up to the last place")
    fixed = _truncate(seed, x, plain=False)
    return Verdict(True, f"Right: with r = {r} and x = {x}, x - r leaves [-2^(k-1), 2^(k-1)), "
                         f"the opened c wraps, and the result is off by {err} units "
                         f"(about 2^(k-d) = {1 << (k - d)}). Falcon's truncation, which "
                         f"carries the top bit of r, is off by {fixed} on the same input.")


register(Exercise(
    id="05.2", title="break it: truncation without the top-bit fix",
    prompt=(
        "Plain ABY3 truncation by d bits opens `c = x - r` for a uniform mask `r` and outputs "
        "`(r >> d) + (c >> d)` (signed shifts, `truncate_aby3_plain`). Falcon adds the shared "
        "top bit of r; here it is missing. Given the mask's signed value `r` (as a curious "
        "dealer would know it), `k` = 32 ring bits and `d` = 13, write `bad_input(r, k, d)` "
        "returning an input `x` with |x| < 2^(k-2) that the plain protocol truncates "
        "catastrophically wrong (off by more than one unit). The check runs the library's "
        "`truncate_aby3_plain` on your x with that r."),
    hints=(
        "The result is right when the signed value of c = x - r mod 2^k equals x - r; when "
        "does it not?",
        "x - r must leave [-2^(k-1), 2^(k-1)): against a negative r take x as large as "
        "allowed, against a positive r as small.",
    ),
    expects="a function bad_input(r, k, d) returning an int",
    checker=check_bad_truncation, solution=solutions.bad_truncation_input,
    productive_failure=True,
    stub='''def bad_input(r, k, d):
    """An x with |x| < 2^(k-2) that plain truncation with the mask r gets badly wrong."""
    ...  # your code here


answer = ...''',
))


# -- 05.3 -----------------------------------------------------------------------------------
PC_CASES = ((2, 16), (5, 32), (3, 20), (1, 30), (4, 24), (6, 18))  # (n, ring bits ell)


def private_compare_ledger(n: int, ell: int) -> Ledger:
    """The ledger of the library's private compare on ``n`` random comparisons in Z_2^ell."""
    fal = Falcon(np.random.default_rng(n * 100 + ell), k=ell, frac_bits=(ell - 6) // 2)
    F, ring = fal.field, fal.ring
    rng = np.random.default_rng(ell)
    r, x = ring.random(rng, (n,)), ring.random(rng, (n,))
    beta = rng.integers(0, 2, n).astype(np.uint64)
    m = F.random_nonzero(rng, (n,)).astype(np.uint64)
    out = private_compare(fal, fal.share(bits_of(ring, r, dtype=F.dtype), F), x,
                          fal.share(beta, fal.bit), fal.share(beta, F), fal.share(m, F))
    if not np.array_equal(fal.reveal(out), (r > x).astype(np.uint64)):
        raise AssertionError("private compare disagrees with its oracle")
    return fal.ledger


def check_pc_cost(answer) -> Verdict:
    exprs = as_closed_form(answer, ("n", "ell"), 2, "your (rounds, bits)")
    cases = [{"n": n, "ell": ell} for n, ell in PC_CASES]

    def measure(n, ell):
        led = private_compare_ledger(n, ell)
        return led.rounds("online"), led.total_bits("online")

    if (no := closed_form_verdict(exprs, cases, measure, ("rounds", "bits"))) is not None:
        return no
    return Verdict(True, f"Right: {exprs[0]} rounds and {exprs[1]} bits, as the ledger books "
                         "them. A sequential product instead of the tree would keep the bits "
                         "and need ell + 1 rounds instead of ceil(log2(ell + 2)).")


register(Exercise(
    id="05.3", title="rounds and bits of private compare, from the ledger",
    prompt=(
        "Private compare (Algorithm 1) multiplies by (-1)^beta (step 5), multiplies "
        "ell + 2 factors per comparison with a product tree (step 9) and opens d. Derive "
        "`(rounds, bits)`, the online rounds and bits of the semi-honest protocol on `n` "
        "comparisons in Z_2^ell (over Z_37), as two sympy expressions in the symbols `n` and "
        "`ell` (`sp.ceiling(sp.log(x, 2))` is allowed). Derive them from the protocol; the "
        "check evaluates them at several sizes against the ledger of fresh runs."),
    hints=(
        "A semi-honest product or opening of N elements of b bits costs one round and "
        "3 N b bits (each party sends one element per output); Z_37 elements have "
        "`fal.field.bits` = 6 bits.",
        "Step 5 multiplies n ell elements (of the ell + 1 positions, position 0 has "
        "S[0] = 0 and is local); the tree does ell + 1 products per comparison in "
        "ceil(log2(ell + 2)) rounds; d is n elements.",
    ),
    expects="a tuple (rounds, bits) of sympy expressions in n and ell",
    checker=check_pc_cost, solution=solutions.private_compare_cost, kind="value",
    stub='''import sympy as sp

n, ell = sp.symbols("n ell", positive=True, integer=True)
# answer = (rounds, bits): two expressions in n and ell

answer = ...''',
))
