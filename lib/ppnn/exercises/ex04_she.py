"""Exercises of notebook 04 (SHE).

* 04.1 -- write SHE's ReLU unit from TFHE gates; gates, bootstraps and depth compared with
  the library's :func:`relu_unit` on the gate ledger;
* 04.2 -- gates and depth of the max unit, a closed form checked against :func:`max_unit`;
* 04.3 -- gates of the mixed-bitwidth accumulator, a closed form checked against
  :func:`accumulate`;
* 04.4 -- break it: terms whose sum a tree of fixed narrow adders wraps, where SHE's widening
  tree is exact.

Every run is on the bit simulator with ``public_constants=False``: every gate on encrypted
bits bootstraps, so the counts are the circuits' own (no tfhe-rs constant shortcuts).
"""

from __future__ import annotations

import numpy as np

from ppnn.core import Ledger
from ppnn.he.bitsim import BitSimulator
from ppnn.protocols.she.circuits import (
    Word,
    accumulate,
    accumulate_fixed,
    decrypt_word,
    encrypt_word,
    max_unit,
    relu_unit,
)

from . import solutions
from .answers import as_closed_form, as_int_array, returned, show
from .ledgers import closed_form_verdict, compare_ops
from .registry import Exercise, Verdict, call_student, own_work, register

__all__ = ["gate_run"]


def gate_run(fn, *words_spec, student: bool = False, what: str = "your function"):
    """Run ``fn`` on freshly encrypted words (``words_spec``: (values, width) pairs, signed)
    on a bit simulator booking on its own ledger; returns (ledger, backend, result)."""
    led = Ledger(("client", "server"))
    be = BitSimulator(public_constants=False, ledger=led)
    words = [encrypt_word(be, v, w, signed=True) for v, w in words_spec]
    out = call_student(fn, *words, what=what) if student else fn(*words)
    return led, be, out


# -- 04.1 -----------------------------------------------------------------------------------
RELU_CASES = ((0, 5, 6), (1, 8, 4), (2, 2, 3))  # (seed, width w, elements)


def check_relu(fn) -> Verdict:
    if (copied := own_work(fn, relu_unit, "relu_unit")) is not None:
        return copied
    first = None
    for seed, w, n in RELU_CASES:
        vals = np.random.default_rng(seed).integers(-(1 << (w - 1)), 1 << (w - 1), n)
        ref_led, ref_be, ref = gate_run(relu_unit, (vals, w))
        led, be, out = gate_run(fn, (vals, w), student=True, what="my_relu")
        returned(out, Word, "my_relu")
        case = f"w = {w} bits, {n} elements"
        got = decrypt_word(be, out)
        if got.shape != vals.shape or not np.array_equal(got, np.maximum(vals, 0)):
            return Verdict(False, f"{case}: inputs {show(vals, 6)}, your ReLU gives "
                                  f"{show(got, 6)}")
        diffs = compare_ops(ref_led.op_counts(), led)
        if out.md() > ref.md():
            diffs.append(f"multiplicative depth: the library's unit has {ref.md()}, "
                         f"yours {out.md()}")
        if diffs:
            return Verdict(False, f"{case}: the ReLU is right, but not the gates:\n  "
                           + "\n  ".join(diffs),
                           "NOT is free; one AND per magnitude bit, all in one level")
        first = first or (f"{ref_be.hgops} gate evaluations for {n} elements of {w} bits "
                          f"({w - 1} ANDs each), {ref_be.bootstraps} bootstraps, "
                          f"multiplicative depth {ref.md()}")
    return Verdict(True, f"Right, with the library's gates: {first}.")


register(Exercise(
    id="04.1", title="write SHE's ReLU unit from TFHE gates",
    prompt=(
        "A `Word` holds encrypted integers bit by bit: `x.planes` (LSB first) are arrays of "
        "encrypted bits, `x.sign` the top plane, `x.backend` the gate backend "
        "(`and_`, `or_`, `xor`, `not_`, `mux`, ...; NOT is free, the others bootstrap). "
        "Write `my_relu(x)`: ReLU of a signed w-bit word, as an unsigned word of w - 1 bits "
        "(`Word(planes, signed=False)`). The check runs it and the library's `relu_unit` on "
        "the same encrypted inputs and compares the results and the gates, bootstraps and "
        "depth booked on the gate ledger."),
    hints=(
        "ReLU(x) is x when the sign bit is 0 and 0 otherwise -- bit by bit.",
        "`ns = be.not_(x.sign)`; every magnitude plane `p` of `x.planes[:-1]` becomes "
        "`be.and_(p, ns)`. A MUX per bit would also be right, but costs two bootstraps each.",
    ),
    expects="a function my_relu(x) returning a Word",
    checker=check_relu, solution=solutions.relu_unit, compares_ledgers=True,
    stub='''from ppnn.protocols.she.circuits import Word


def my_relu(x):
    """SHE's ReLU unit: a signed w-bit Word -> an unsigned (w-1)-bit Word."""
    be = x.backend
    ...  # your code here


answer = ...''',
))


# -- 04.2 -----------------------------------------------------------------------------------
MAX_WIDTHS = (2, 3, 4, 7, 9, 12)


def _max_cost(w: int) -> tuple[int, int]:
    rng = np.random.default_rng(w)
    a, b = (rng.integers(-(1 << (w - 1)), 1 << (w - 1), 1) for _ in range(2))
    _, be, out = gate_run(max_unit, (a, w), (b, w))
    return be.hgops, out.md()


def check_max_cost(answer) -> Verdict:
    exprs = as_closed_form(answer, ("w",), 2, "your (gates, depth)")
    if (no := closed_form_verdict(exprs, [{"w": w} for w in MAX_WIDTHS], _max_cost,
                                  ("gates", "depth"), "max_unit on the simulator")) is not None:
        return no
    return Verdict(True, f"Right: {exprs[0]} gates, depth {exprs[1]} -- a borrow-chain "
                         "comparator (4 w - 2 gates, depth w) and one MUX per bit (w gates, "
                         "one more level).")


register(Exercise(
    id="04.2", title="gates and depth of the max-pooling unit",
    prompt=(
        "SHE's max unit (Fig. 2) compares two signed w-bit words with the borrow chain of "
        "`x + ~y + 1` and selects one of them bit by bit. Derive `(gates, depth)`: the "
        "bootstrapped gate evaluations per element pair and the multiplicative depth, as two "
        "sympy expressions in the symbol `w`. The check evaluates them at several widths "
        "against the library's `max_unit` run on encrypted words."),
    hints=(
        "Read `less_than` in `ppnn.protocols.she.circuits`: bit 0 costs one OR, each "
        "middle bit three XORs and one AND, the sign bit one AND and four XORs.",
        "Comparator 4 w - 2 gates with depth w (one AND-type gate per bit on the carry "
        "chain), then w MUX gates: one more level.",
    ),
    expects="a tuple (gates, depth) of sympy expressions in w",
    checker=check_max_cost, solution=solutions.max_unit_cost, kind="value",
    stub='''import sympy as sp

w = sp.Symbol("w", positive=True, integer=True)
# answer = (gates, depth): two expressions in w

answer = ...''',
))


# -- 04.3 -----------------------------------------------------------------------------------
ACC_CASES = ((2, 5), (4, 3), (8, 5), (16, 3), (32, 6), (64, 4))  # (terms K = 2^m, bits b)


def _acc_gates(K: int, b: int, fixed: bool = False) -> int:
    vals = np.random.default_rng(K * 100 + b).integers(-(1 << (b - 1)), 1 << (b - 1), (K, 1))
    fn = (lambda t: accumulate_fixed(t, 16)) if fixed else accumulate
    _, be, _ = gate_run(fn, (vals, b))
    return be.hgops


def check_accumulator(answer) -> Verdict:
    exprs = as_closed_form(answer, ("K", "b"), what="your closed form")
    cases = [{"K": K, "b": b} for K, b in ACC_CASES]
    if (no := closed_form_verdict(exprs, cases, lambda K, b: (_acc_gates(K, b),), ("gates",),
                                  "accumulate on the simulator")) is not None:
        return no
    K, b = ACC_CASES[-1]
    return Verdict(True, f"Right: {exprs[0]}. For {K} terms of {b} bits the mixed-bitwidth "
                         f"tree costs {_acc_gates(K, b)} gates; the same tree of 16-bit adders "
                         f"{_acc_gates(K, b, fixed=True)}.")


register(Exercise(
    id="04.3", title="gates of the mixed-bitwidth accumulator",
    prompt=(
        "SHE adds the K shifted b-bit terms of a dot product with an adder tree whose level "
        "n uses widening (b + n)-bit adders, where the baseline uses 16-bit adders "
        "throughout (Fig. 3c). Derive the gates of the mixed-bitwidth tree for one output "
        "when K is a power of two, as a sympy expression in the symbols `K` and `b` "
        "(`sp.log(K, 2)` is allowed). The check evaluates it against the library's "
        "`accumulate` on encrypted terms, and shows the 16-bit baseline."),
    hints=(
        "A widening w-bit ripple-carry adder costs 5 w - 3 gates (`closed_forms(w)`).",
        "Level n = 0 .. log2(K) - 1 adds K / 2^(n+1) pairs of (b + n)-bit words; sum the "
        "levels: sum of n 2^(m-1-n) for n < m is 2^m - m - 1.",
    ),
    expects="a sympy expression in K and b",
    checker=check_accumulator, solution=solutions.accumulator_gates, kind="value",
    stub='''import sympy as sp

K, b = sp.symbols("K b", positive=True, integer=True)

answer = ...''',
))


# -- 04.4 -----------------------------------------------------------------------------------
#: (terms K, bits b, adder width): every width is below b + ceil(log2 K), the root width of
#: SHE's tree, so the sum of K b-bit terms can leave the narrow adders' range
OVERFLOW_CASES = ((9, 5, 6), (4, 3, 4), (25, 6, 8))


def _both_trees(vals: np.ndarray, b: int, width: int) -> tuple[int, int, int, int]:
    """(fixed tree's sum, its gates, SHE's tree's sum, its gates) on encrypted ``vals``."""
    col = vals.reshape(-1, 1)
    _, be_f, out_f = gate_run(lambda t: accumulate_fixed(t, width), (col, b))
    _, be_w, out_w = gate_run(accumulate, (col, b))
    return (int(decrypt_word(be_f, out_f)[0]), be_f.hgops,
            int(decrypt_word(be_w, out_w)[0]), be_w.hgops)


def check_overflow(fn) -> Verdict:
    first = None
    for K, b, width in OVERFLOW_CASES:
        vals = as_int_array(call_student(fn, K, b, width, what="overflow_terms"), (K,),
                            f"overflow_terms({K}, {b}, {width})'s result")
        lo, hi = -(1 << (b - 1)), (1 << (b - 1)) - 1
        if any(v < lo or v > hi for v in vals):
            return Verdict(False, f"K = {K}, b = {b}: every term must be a signed {b}-bit "
                                  f"integer in [{lo}, {hi}], got {show(vals, 6)}")
        vals = vals.astype(np.int64)
        total = int(vals.sum())
        fixed, g_fixed, wide, g_wide = _both_trees(vals, b, width)
        case = f"K = {K} terms of {b} bits, {width}-bit adders"
        if wide != total:  # pragma: no cover - the library's own tree is exact
            return Verdict(False, f"{case}: SHE's tree returned {wide} for a sum of {total}")
        if fixed == total:
            return Verdict(False, f"{case}: your terms {show(vals, 6)} sum to {total} and the "
                                  f"narrow tree returns {total} too. Every adder computes "
                                  f"modulo 2^{width}: a partial sum that wraps wraps back, so "
                                  f"only a final sum outside [{-(1 << (width - 1))}, "
                                  f"{(1 << (width - 1)) - 1}] comes out wrong.",
                           "make the whole sum too large (or too small), not only a pair")
        if first is None:
            first = (f"for {K} terms of {b} bits your terms sum to {total}; the tree of "
                     f"{width}-bit adders returns {fixed} ({total} modulo 2^{width}, read as "
                     f"signed) for {g_fixed} gates, SHE's widening tree the right {wide} for "
                     f"{g_wide} gates, the 16-bit baseline {_acc_gates(K, b, fixed=True)} "
                     "gates")
    return Verdict(True, f"Right: {first}. SHE's tree widens one bit per level, to "
                         f"b + ceil(log2 K) bits at the root: as wide as the sum can be and "
                         f"no wider, so it can never wrap.")


register(Exercise(
    id="04.4", title="break it: an adder tree too narrow for its sum",
    prompt=(
        "SHE's accumulator widens its adders one bit per level, so K signed b-bit terms "
        "end in a word of b + ceil(log2 K) bits. A designer short of gates keeps every "
        "adder at a fixed `width` below that: `accumulate_fixed(terms, width)` computes "
        "modulo 2^width. Write `overflow_terms(K, b, width)` returning K signed b-bit "
        "integers (an int array of shape (K,)) whose sum the narrow tree gets wrong. The "
        "check encrypts your terms, runs the narrow tree and SHE's `accumulate` on them "
        "for three (K, b, width) cases, decrypts both and compares them with the true sum; "
        "it also shows what each tree costs in gates."),
    hints=(
        "A signed width-bit word holds [-2^(width-1), 2^(width-1) - 1]. What is the "
        "largest sum K terms of b bits can make?",
        "A wrapped partial sum wraps back (addition modulo 2^width is exact modulo "
        "2^width): only the final sum matters. Make it too large: every term at "
        "2^(b-1) - 1.",
    ),
    expects="a function overflow_terms(K, b, width) returning K integers",
    checker=check_overflow, solution=solutions.overflow_terms, productive_failure=True,
    stub='''import numpy as np


def overflow_terms(K, b, width):
    """K signed b-bit integers whose sum a tree of fixed width-bit adders gets wrong."""
    ...  # your code here


answer = ...''',
))
