"""Exercises of notebook 00 (shares, Beaver products, the ledger).

* 00.1 -- write a Beaver product; compared with :func:`ppnn.core.beaver_mul` ledger by ledger;
* 00.2 -- productive failure: one Beaver triple for two products leaks ``x1 - x2``;
* 00.3 -- the online bits of a Beaver product among P parties, as a closed form checked
  against the ledger.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ppnn.core import Z2_64, Dealer, Ledger, Ring, beaver_mul, share_additive
from ppnn.core.sharing import AdditiveShares
from ppnn.core.transcript import EVERY_ELEMENT

from . import solutions
from .answers import as_closed_form, as_int_array, returned, show
from .ledgers import closed_form_verdict, ledger_mismatch, summary
from .registry import Exercise, Verdict, call_student, own_work, register

__all__ = ["ReusingDealer", "reused_triple_view"]


# -- 00.1 -----------------------------------------------------------------------------------
#: (seed, shape, ring bits, parties) of the runs compared
BEAVER_CASES = ((0, (4,), 64, ("client", "server")), (1, (2, 3), 32, ("P0", "P1", "P2")))


def _beaver_inputs(seed: int, shape, k: int, n_parties: int):
    ring = Ring(k)
    rng = np.random.default_rng(seed)
    x = ring.from_signed(rng.integers(-1000, 1000, shape))
    y = ring.from_signed(rng.integers(-1000, 1000, shape))
    return (ring, x, y, share_additive(x, ring, rng, n_parties),
            share_additive(y, ring, rng, n_parties))


class _WatchingDealer(Dealer):
    """The check's dealer: it keeps the triples it hands out, so the check knows which
    openings the protocol allows (``e = x - a``, ``f = y - b``)."""

    def __init__(self, rng, ledger, parties):
        super().__init__(rng, ledger, parties)
        self.handed: list = []

    def triple(self, ring, shape):
        t = super().triple(ring, shape)
        self.handed.append(t)
        return t


@contextlib.contextmanager
def _watched_reveals():
    """Every array ``AdditiveShares.reveal`` reconstructs while the student's code runs."""
    seen: list[np.ndarray] = []
    original = AdditiveShares.reveal

    def reveal(self):
        out = original(self)
        seen.append(np.asarray(out))
        return out

    AdditiveShares.reveal = reveal
    try:
        yield seen
    finally:
        AdditiveShares.reveal = original


def _forbidden_reveal(seen, ring: Ring, x, y, triples) -> str | None:
    """What the student's code reconstructed that no party may see, or None. The protocol
    opens ``e = x - a`` and ``f = y - b`` only (each alone, or the two side by side)."""
    allowed = [ring.sub(x, t.a.reveal()).ravel() for t in triples] + \
        [ring.sub(y, t.b.reveal()).ravel() for t in triples]
    for r in seen:
        flat = r.ravel().astype(np.uint64)
        parts = np.split(flat, flat.size // x.size) if flat.size % x.size == 0 else [flat]
        if not all(any(p.size == a.size and np.array_equal(p, a) for a in allowed)
                   for p in parts):
            what = next((name for name, v in (("x", x), ("y", y), ("x * y", ring.mul(x, y)))
                         if flat.size == v.size and np.array_equal(flat, v.ravel())), None)
            what = what or "a value that is neither e = x - a nor f = y - b"
            return (f"your code reconstructed {what} with .reveal(): no party may see it. "
                    "Open only e and f; the product must come from the triple.")
    return None


def _run_beaver(fn, seed: int, shape, k: int, parties, student: bool):
    ring, x, y, X, Y = _beaver_inputs(seed, shape, k, len(parties))
    led = Ledger(parties, record_values=EVERY_ELEMENT)
    dealer = _WatchingDealer(np.random.default_rng(1000 + seed), led, parties)
    leak = None
    if student:
        with _watched_reveals() as seen:
            out = call_student(fn, X, Y, dealer, led, what="my_beaver")
        returned(out, AdditiveShares, "my_beaver")
        leak = _forbidden_reveal(seen, ring, x, y, dealer.handed)
    else:
        out = fn(X, Y, dealer, led)
    return led, out, ring.mul(x, y), leak


def check_beaver(fn) -> Verdict:
    if (copied := own_work(fn, beaver_mul, "beaver_mul")) is not None:
        return copied
    for seed, shape, k, parties in BEAVER_CASES:
        ref_led, _, want, _ = _run_beaver(beaver_mul, seed, shape, k, parties, student=False)
        led, out, _, leak = _run_beaver(fn, seed, shape, k, parties, student=True)
        case = f"{len(parties)} parties {parties}, shape {shape}, Z_2^{k}"
        if leak is not None:
            return Verdict(False, f"{case}: {leak}")
        if out.shape != tuple(shape) or out.n_parties != len(parties):
            return Verdict(False, f"{case}: your output has {out.n_parties} shares of shape "
                                  f"{out.shape}, expected {len(parties)} of shape {shape}")
        right = bool(np.array_equal(out.reveal(), want))
        if (no := ledger_mismatch(
                case, ref_led, led, right, "your shares do not reconstruct x * y",
                "each party must send its shares of e = x - a and f = y - b, nothing else: a "
                "share of x itself would be a leak",
                record_tip="pass values={party: its shares of e and f} to ledger.exchange, so "
                           "the ledger keeps what crossed")) is not None:
            return no
    return Verdict(True, "Your ledger matches the library's message for message (offline "
                         "triple, one online round of e and f) and the product is right: "
                         f"{summary(ref_led)}.")


register(Exercise(
    id="00.1", title="write a Beaver product yourself",
    prompt=(
        "Write `my_beaver(x, y, dealer, ledger)`: the elementwise product of two additive "
        "sharings `x`, `y` held by `dealer.parties` (two or three of them), with one Beaver "
        "triple `t = dealer.triple(x.ring, x.shape)`. Open `e = x - a` and `f = y - b` in "
        "*one* round with `ledger.exchange(parties, bits, what, values={party: what it "
        "sends})`, then combine locally. The check runs your function and "
        "`ppnn.core.beaver_mul` on the same seeded inputs and compares the two ledgers "
        "message by message (who sends whom how many bits in which round, and what "
        "crosses), then the product."),
    hints=(
        "Shares support `-`, `+`, `.mul_public(c)`, `.add_public(c)` and `.reveal()` (the "
        "simulator's reconstruction: it books nothing, so book the opening yourself, and use "
        "it only on what the protocol opens, e and f -- the check refuses any other reveal).",
        "Each party sends its shares of e and f together: 2 n ring elements, i.e. "
        "`2 * n * x.ring.bits` bits, to every other party -- one `ledger.exchange` call.",
        "z = c + e b + f a + e f: `t.c + t.b.mul_public(e) + t.a.mul_public(f)`, then "
        "`.add_public(x.ring.mul(e, f))` (the public e f is added once).",
    ),
    expects="a function my_beaver(x, y, dealer, ledger) returning AdditiveShares",
    checker=check_beaver, solution=solutions.beaver_product, compares_ledgers=True,
    stub='''def my_beaver(x, y, dealer, ledger):
    """x * y on additive shares with one Beaver triple (one online round)."""
    parties, ring = dealer.parties, x.ring
    t = dealer.triple(ring, x.shape)  # t.a, t.b, t.c: shares of a, b and c = a b
    ...  # your code here


answer = ...''',
))


# -- 00.2 -----------------------------------------------------------------------------------
class ReusingDealer(Dealer):
    """A flawed dealer: it hands out the *same* Beaver triple again for every product of the
    same shape (the library's :func:`beaver_mul` then runs unchanged on it)."""

    def __init__(self, rng, ledger, parties):
        super().__init__(rng, ledger, parties)
        self._triples: dict = {}

    def triple(self, ring, shape):
        key = (ring, tuple(shape))
        if key not in self._triples:
            self._triples[key] = super().triple(ring, shape)
        return self._triples[key]


def _opened(led: Ledger, rnd: int, ring: Ring) -> np.ndarray:
    """What everybody reconstructs in online round ``rnd``: the sum of each party's message
    (each sends the same shares to every other party)."""
    rounds = sorted({m.round for m in led.messages if m.phase == "online"})
    first = {}
    for i, m in enumerate(led.messages):
        if m.phase == "online" and m.round == rounds[rnd - 1]:
            first.setdefault(m.sender, led.values[i].array())
    return ring.sum(np.stack(list(first.values())), axis=0)


def reused_triple_view(seed: int, n: int = 5):
    """Two Beaver products on one triple (the library's ``beaver_mul`` with a
    :class:`ReusingDealer`): the client's view -- its own first input ``x1`` and the opened
    ``e1, f1, e2, f2`` read off the ledger -- and the secret ``x2``."""
    ring, parties = Z2_64, ("client", "server")
    rng = np.random.default_rng(seed)
    x1, y1, x2, y2 = (ring.from_signed(rng.integers(-10**6, 10**6, n)) for _ in range(4))
    led = Ledger(parties, record_values=EVERY_ELEMENT)
    dealer = ReusingDealer(np.random.default_rng(seed + 1), led, parties)
    beaver_mul(share_additive(x1, ring, rng), share_additive(y1, ring, rng), dealer)
    beaver_mul(share_additive(x2, ring, rng), share_additive(y2, ring, rng), dealer)
    ef1, ef2 = _opened(led, 1, ring), _opened(led, 2, ring)
    view = {"x1": x1, "e1": ef1[0], "f1": ef1[1], "e2": ef2[0], "f2": ef2[1]}
    return view, x2


def check_reused_triple(fn) -> Verdict:
    for seed in (3, 4, 5):
        view, x2 = reused_triple_view(seed)
        got = call_student(fn, {k: v.copy() for k, v in view.items()}, what="recover_x2")
        got = as_int_array(got, x2.shape, "recover_x2's result")
        if not all((int(a) - int(b)) % (1 << 64) == 0 for a, b in zip(got, x2)):
            return Verdict(False, f"seed {seed}: you recovered {show(got, bits=64)}, the "
                                  f"secret x2 is {show(x2, bits=64)} (both as signed "
                                  "residues mod 2^64)")
    return Verdict(True, "Right: e1 - e2 = (x1 - a) - (x2 - a) = x1 - x2. A triple masks "
                         "one product only; the dealer must never hand one out twice.")


register(Exercise(
    id="00.2", title="break it: one Beaver triple for two products",
    prompt=(
        "A lazy dealer hands out the same triple (a, b, c) for two products, x1 * y1 and then "
        "x2 * y2. Both products are right, but the openings are not safe: you are the client, "
        "you know your own first input `x1`, and you saw the opened `e1 = x1 - a`, "
        "`f1 = y1 - b`, `e2 = x2 - a`, `f2 = y2 - b` (read off the ledger of the library's "
        "`beaver_mul`). Write `recover_x2(view)`: `view` is a dict of uint64 arrays (ring "
        "Z_2^64) with keys `x1, e1, f1, e2, f2`; return the secret `x2`. The check runs the "
        "flawed protocol on fresh secrets and compares with them."),
    hints=(
        "Subtract the two openings of the same kind: what happens to a?",
        "e1 - e2 = x1 - x2. numpy's uint64 arithmetic wraps modulo 2^64, as the ring does.",
    ),
    expects="a function recover_x2(view) returning x2 (integers, mod 2^64)",
    checker=check_reused_triple, solution=solutions.recover_x2_from_reused_triple,
    productive_failure=True,
    stub='''def recover_x2(view):
    """The secret x2 from the openings of two products that shared one triple."""
    x1, e1, f1, e2, f2 = (view[k] for k in ("x1", "e1", "f1", "e2", "f2"))
    ...  # your code here


answer = ...''',
))


# -- 00.3 -----------------------------------------------------------------------------------
#: sizes (n elements, P parties, ring bits k) at which the closed form meets the ledger
BITS_CASES = ((4, 2, 64), (3, 3, 32), (5, 4, 16), (1, 5, 8), (7, 3, 64), (2, 6, 20))
NAMES_00_3 = ("n", "P", "k")


def _beaver_ledger(n: int, n_parties: int, k: int) -> Ledger:
    parties = tuple(f"P{i}" for i in range(n_parties))
    ring = Ring(k)
    rng = np.random.default_rng(n * 100 + n_parties)
    led = Ledger(parties)
    X = share_additive(ring.random(rng, (n,)), ring, rng, n_parties)
    Y = share_additive(ring.random(rng, (n,)), ring, rng, n_parties)
    beaver_mul(X, Y, Dealer(rng, led, parties))
    return led


def check_online_bits(expr) -> Verdict:
    exprs = as_closed_form(expr, NAMES_00_3, what="your closed form")
    cases = [dict(zip(NAMES_00_3, c)) for c in BITS_CASES]
    if (no := closed_form_verdict(
            exprs, cases, lambda n, P, k: (_beaver_ledger(n, P, k).total_bits("online"),),
            ("online bits",))) is not None:
        return no
    return Verdict(True, f"Right: {exprs[0]} -- every party sends 2 n k bits to each of the "
                         "P - 1 others, so the online cost grows with the square of the number "
                         "of parties. Checked against the ledger of beaver_mul at "
                         f"{len(cases)} sizes.")


register(Exercise(
    id="00.3", title="the online cost of a Beaver product among P parties",
    prompt=(
        "The notebook multiplies between two parties. Derive the online bits of `beaver_mul` "
        "on `n` elements shared among `P` parties in Z_2^k as a closed form: a sympy "
        "expression in the symbols `n`, `P` and `k` (not a number, not a function). The check "
        "evaluates it at several sizes against the ledger of real runs."),
    hints=(
        "Run `beaver_mul` with `Ledger(['P0', 'P1', 'P2'])` and count the messages of "
        "`ledger.messages_frame()`: who sends whom how many bits?",
        "Every party sends its shares of e and f (2 n elements of k bits) to every other "
        "party.",
    ),
    expects="a sympy expression in n, P and k",
    checker=check_online_bits, solution=solutions.beaver_online_bits, kind="value",
    stub='''import sympy as sp

n, P, k = sp.symbols("n P k", positive=True, integer=True)

answer = ...''',
))
