"""Exercises of notebook 01 (Tabula).

* 01.1 -- write Tabula's online lookup; compared with :func:`tabula_online` ledger by ledger;
* 01.2 -- productive failure: one table for two lookups leaks ``x1 - x2``;
* 01.3 -- the smallest ring for a whole deployment without a catastrophic truncation, from
  the library's closed form of the local-truncation failure probability.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ppnn.core import Z2_64, Ledger, local_truncation_failure_probability, share_additive
from ppnn.core.sharing import AdditiveShares
from ppnn.core.transcript import EVERY_ELEMENT
from ppnn.protocols.tabula import dealer_tables, function_table, relu, tabula_online

from . import solutions
from .answers import as_int, as_int_array, returned, show
from .ledgers import ledger_mismatch, summary
from .registry import Exercise, Verdict, call_student, own_work, register

__all__ = ["reused_table_view"]

# -- 01.1 -----------------------------------------------------------------------------------
#: (seed, input shape, table bits b, truncation d)
LOOKUP_CASES = ((0, (5,), 6, 3), (1, (2, 2), 8, 2))


def _run_lookup(fn, seed: int, shape, b: int, d: int, student: bool):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    x = rng.integers(-(1 << (b + d - 1)), 1 << (b + d - 1), shape)
    X = share_additive(Z2_64.from_signed(x), Z2_64, rng)
    tables = dealer_tables(function_table(relu, b), n, np.random.default_rng(100 + seed), Z2_64)
    led = Ledger(("client", "server"), record_values=EVERY_ELEMENT)
    if student:
        out = call_student(fn, X, tables, d, led, what="my_lookup")
        returned(out, AdditiveShares, "my_lookup")
    else:
        out = fn(X, tables, d, led)
    return led, out


def check_lookup(fn) -> Verdict:
    if (copied := own_work(fn, tabula_online, "tabula_online")) is not None:
        return copied
    for seed, shape, b, d in LOOKUP_CASES:
        ref_led, ref = _run_lookup(tabula_online, seed, shape, b, d, student=False)
        led, out = _run_lookup(fn, seed, shape, b, d, student=True)
        case = f"{int(np.prod(shape))} activations of shape {shape}, b = {b}, d = {d}"
        if out.shares.shape != ref.shares.shape:
            return Verdict(False, f"{case}: your output shares have shape {out.shares.shape}, "
                                  f"the library's {ref.shares.shape}")
        right = bool(np.array_equal(out.reveal(), ref.reveal()))
        if (no := ledger_mismatch(
                case, ref_led, led, right,
                "your shares do not reconstruct F(x_trunc), the library's output",
                "each party sends its truncated share reduced mod 2^b plus its share of the "
                "table secret (tables.s_client / tables.s_server), mod 2^b")) is not None:
            return no
    return Verdict(True, "Your ledger matches tabula_online's: one round, b bits each way per "
                         f"activation, and the same output ({summary(ref_led)}).")


register(Exercise(
    id="01.1", title="write Tabula's online lookup yourself",
    prompt=(
        "Write `my_lookup(x, tables, d, ledger)`, Tabula's online phase (Fig. 2) for every "
        "element of the client/server sharing `x` (over Z_2^64, any shape), with one "
        "single-use table per element (`tables.b` input bits, secret shares "
        "`tables.s_client`, `tables.s_server`, lookups `tables.lookup(y)`). Steps: (1) local "
        "truncation by `d >= 1` bits (`ppnn.core.local_truncate`), (2) each party reduces its "
        "share mod 2^b, (3) blinds it with its share of the table secret and sends it in "
        "*one* round, (4) both look up `T_i[y]`. The check compares your ledger (parties "
        "`client`, `server`) with `tabula_online`'s on the same seeded inputs, and the "
        "outputs."),
    hints=(
        "Work on flattened shares: `x_trunc.shares[0].reshape(-1) & mask` with "
        "`mask = np.uint64((1 << b) - 1)`; reshape the output back to `x.shape`.",
        "Book both messages inside `with ledger.round():` -- `n * b` bits each way, "
        "`value=` what the party sends.",
        "`y = (y0 + y1) & mask`; `out0, out1 = tables.lookup(y)`; return "
        "`AdditiveShares(np.stack([out0, out1]).reshape(2, *x.shape), tables.ring)`.",
    ),
    expects="a function my_lookup(x, tables, d, ledger) returning AdditiveShares",
    checker=check_lookup, solution=solutions.tabula_lookup, compares_ledgers=True,
    stub='''import numpy as np
from ppnn.core import AdditiveShares, local_truncate


def my_lookup(x, tables, d, ledger):
    """Tabula's online phase: shares of F(x >> d), one table per element of x."""
    b, n = tables.b, x.shares[0].size
    mask = np.uint64((1 << b) - 1)
    ...  # your code here


answer = ...''',
))


# -- 01.2 -----------------------------------------------------------------------------------
def _blinded_indices(led: Ledger, b: int) -> list[np.ndarray]:
    """Per online round, the public index ``y`` both parties reconstruct: the sum of the
    client's and the server's message, mod 2^b."""
    per: dict[int, list] = {}
    for i, m in enumerate(led.messages):
        if m.phase == "online":
            per.setdefault(m.round, []).append(led.values[i].array().astype(np.uint64))
    mask = np.uint64((1 << b) - 1)
    return [(v[0] + v[1]) & mask for _, v in sorted(per.items())]


def reused_table_view(seed: int, n: int = 6, b: int = 8):
    """Two lookups (the library's :func:`tabula_online`) on one set of tables handed out
    twice: the client's view -- its first input ``x1`` and the public indices ``y1``, ``y2``
    read off the ledger -- and the secret ``x2``."""
    rng = np.random.default_rng(seed)
    x1, x2 = (rng.integers(-(1 << (b - 1)), 1 << (b - 1), n) for _ in range(2))
    tables = dealer_tables(function_table(relu, b), n, rng, Z2_64)
    again = dataclasses.replace(tables, used=False)  # the flaw: the same tables again
    led = Ledger(("client", "server"), record_values=EVERY_ELEMENT)
    tabula_online(share_additive(Z2_64.from_signed(x1), Z2_64, rng), tables, 0, led)
    tabula_online(share_additive(Z2_64.from_signed(x2), Z2_64, rng), again, 0, led)
    y1, y2 = _blinded_indices(led, b)
    return {"b": b, "x1": x1, "y1": y1, "y2": y2}, x2


def check_reused_table(fn) -> Verdict:
    for seed in (7, 8, 9):
        view, x2 = reused_table_view(seed)
        got = call_student(fn, {k: (v.copy() if isinstance(v, np.ndarray) else v)
                                for k, v in view.items()}, what="recover_x2")
        got = as_int_array(got, x2.shape, "recover_x2's result")
        p = 1 << view["b"]
        if not all((int(a) - int(c)) % p == 0 for a, c in zip(got, x2)):
            return Verdict(False, f"seed {seed}: you recovered {show(got)}, the secret x2 is "
                                  f"{show(x2)} (b = {view['b']} bits)")
    return Verdict(True, "Right: y2 - y1 = (x2 + s) - (x1 + s) = x2 - x1 mod 2^b. That is why "
                         "every table is single-use (tabula_online raises TableReuseError).")


register(Exercise(
    id="01.2", title="break it: one Tabula table for two lookups",
    prompt=(
        "The library refuses to use a table twice (`TableReuseError`). Here a faulty dealer "
        "hands out a second copy of the same tables, and the client looks up `x1` and then "
        "`x2` (b-bit values, no truncation). You are the client: you know your first input "
        "`x1` and both public indices `y1 = x1 + s`, `y2 = x2 + s` (mod 2^b, read off the "
        "ledger of the library's `tabula_online`). Write `recover_x2(view)`: `view` has "
        "`b` and int arrays `x1`, `y1`, `y2`; return the secret `x2`. The check runs the "
        "flawed protocol on fresh secrets."),
    hints=(
        "The table secret s is the same in both lookups.",
        "x2 = x1 + y2 - y1 (mod 2^b); the signed value is in [-2^(b-1), 2^(b-1)).",
    ),
    expects="a function recover_x2(view) returning x2 (integers, mod 2^b)",
    checker=check_reused_table, solution=solutions.recover_x2_from_reused_table,
    productive_failure=True,
    stub='''def recover_x2(view):
    """The secret x2 from two lookups in the same table."""
    b, x1, y1, y2 = view["b"], view["x1"], view["y1"], view["y2"]
    ...  # your code here


answer = ...''',
))


# -- 01.3 -----------------------------------------------------------------------------------
#: (value bits l, ReLUs per inference, inferences, target probability of no failure)
RING_CASES = ((14, 300_000, 10**6, 0.999), (14, 10_000, 10_000, 0.999), (10, 1000, 100, 0.99),
              (20, 50_000, 10**5, 0.9))


def _safe(value_bits: int, k: int, trials: int, target: float) -> bool:
    """Whether ``trials`` local truncations in Z_2^k all succeed with probability >= target
    (the library's closed form of one failure, SecureML Thm 1)."""
    p = local_truncation_failure_probability(value_bits, k)
    return p < 1 and trials * math.log1p(-p) >= math.log(target)


def check_smallest_ring(fn) -> Verdict:
    for l_bits, relus, inferences, target in RING_CASES:
        want = next((k for k in range(l_bits + 1, 65)
                     if _safe(l_bits, k, relus * inferences, target)), None)
        got = call_student(fn, l_bits, relus, inferences, target, what="smallest_ring")
        if want is None and got is None:
            continue
        got = as_int(got, "smallest_ring's result")
        case = (f"l = {l_bits}, {relus} ReLUs x {inferences} inferences, target {target}")
        if got != want:
            p = local_truncation_failure_probability(l_bits, want)
            return Verdict(False, f"{case}: you say k = {got}; the smallest ring is Z_2^{want} "
                                  f"(one truncation fails with probability 2^(l-k) = "
                                  f"{p:.3g} there)")
    l_bits, relus, inferences, target = RING_CASES[0]
    k = next(k for k in range(l_bits + 1, 65) if _safe(l_bits, k, relus * inferences, target))
    return Verdict(True, f"Right. The notebook's case (300K ReLUs, a million inferences, "
                         f"99.9 %) needs Z_2^{k}; Tabula runs in Z_2^64, one bit to spare.")


register(Exercise(
    id="01.3", title="the smallest ring for a million inferences",
    prompt=(
        "Local truncation fails catastrophically with probability at most 2^(l-k) for "
        "|x| < 2^l in Z_2^k (`ppnn.core.local_truncation_failure_probability`; "
        "`tb.truncation_error_rates` measures it). Write `smallest_ring(value_bits, relus, "
        "inferences, target)`: the smallest k <= 64 for which `relus` truncations per "
        "inference over `inferences` inferences all succeed with probability >= `target` "
        "(None if no k <= 64 does). The notebook's question is "
        "`smallest_ring(14, 300_000, 10**6, 0.999)`."),
    hints=(
        "All succeed with probability (1 - p)^N for N = relus * inferences truncations.",
        "p is tiny: compare N * log1p(-p) with log(target), and try k upwards from l + 1.",
    ),
    expects="a function smallest_ring(value_bits, relus, inferences, target) returning an int",
    checker=check_smallest_ring, solution=solutions.smallest_ring,
    stub='''import math
from ppnn.core import local_truncation_failure_probability


def smallest_ring(value_bits, relus, inferences, target):
    """Smallest k with P(no catastrophic truncation in the whole deployment) >= target."""
    ...  # your code here


answer = ...''',
))
