"""Exercises of notebook 04 (SHE).

* 04.1 -- write SHE's ReLU unit from TFHE gates; gates, bootstraps and depth compared with
  the library's :func:`relu_unit` on the gate ledger;
* 04.2 -- gates and depth of the max unit, counted by running :func:`max_unit`;
* 04.3 -- gates of the mixed-bitwidth accumulator, counted by running :func:`accumulate`.

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
from .answers import as_int, as_int_tuple, returned, show
from .ledgers import compare_ops
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
MAX_WIDTHS = (2, 4, 7, 12)


def _max_cost(w: int) -> tuple[int, int]:
    rng = np.random.default_rng(w)
    a, b = (rng.integers(-(1 << (w - 1)), 1 << (w - 1), 1) for _ in range(2))
    _, be, out = gate_run(max_unit, (a, w), (b, w))
    return be.hgops, out.md()


def check_max_cost(fn) -> Verdict:
    for w in MAX_WIDTHS:
        want = _max_cost(w)
        got = as_int_tuple(call_student(fn, w, what="max_unit_cost"), 2,
                           "max_unit_cost's result (gates, depth)")
        if got != want:
            return Verdict(False, f"w = {w}: you say {got[0]} gates and depth {got[1]}; "
                                  f"max_unit booked {want[0]} gates, depth {want[1]}")
    return Verdict(True, "Right: a borrow-chain comparator (4 w - 2 gates, depth w) and one "
                         "MUX per bit (w gates, one more level).")


register(Exercise(
    id="04.2", title="gates and depth of the max-pooling unit",
    prompt=(
        "SHE's max unit (Fig. 2) compares two signed w-bit words with the borrow chain of "
        "`x + ~y + 1` and selects one of them bit by bit. Write `max_unit_cost(w)` returning "
        "`(gates, depth)`: the bootstrapped gate evaluations per element pair and the "
        "multiplicative depth. The check runs the library's `max_unit` on encrypted words "
        "and reads both off the simulator."),
    hints=(
        "Read `less_than` in `ppnn.protocols.she.circuits`: bit 0 costs one OR, each "
        "middle bit three XORs and one AND, the sign bit one AND and four XORs.",
        "Comparator 4 w - 2 gates with depth w (one AND-type gate per bit on the carry "
        "chain), then w MUX gates: one more level.",
    ),
    expects="a function max_unit_cost(w) returning a tuple (gates, depth)",
    checker=check_max_cost, solution=solutions.max_unit_cost,
    stub='''def max_unit_cost(w):
    """(gates, multiplicative depth) of SHE's max unit on signed w-bit words."""
    ...  # your code here


answer = ...''',
))


# -- 04.3 -----------------------------------------------------------------------------------
ACC_CASES = ((2, 5), (9, 5), (16, 3), (25, 6))  # (terms K, bits b)


def _acc_gates(K: int, b: int, fixed: bool = False) -> int:
    vals = np.random.default_rng(K * 100 + b).integers(-(1 << (b - 1)), 1 << (b - 1), (K, 1))
    fn = (lambda t: accumulate_fixed(t, 16)) if fixed else accumulate
    _, be, _ = gate_run(fn, (vals, b))
    return be.hgops


def check_accumulator(fn) -> Verdict:
    for K, b in ACC_CASES:
        want = _acc_gates(K, b)
        got = as_int(call_student(fn, K, b, what="accumulator_gates"),
                     "accumulator_gates's result")
        if got != want:
            return Verdict(False, f"K = {K} terms of b = {b} bits: you say {got} gates; "
                                  f"accumulate booked {want}")
    K, b = ACC_CASES[-1]
    return Verdict(True, f"Right. For {K} terms of {b} bits the mixed-bitwidth tree costs "
                         f"{_acc_gates(K, b)} gates; the same tree of 16-bit adders "
                         f"{_acc_gates(K, b, fixed=True)}.")


register(Exercise(
    id="04.3", title="gates of the mixed-bitwidth accumulator",
    prompt=(
        "SHE adds the K shifted b-bit terms of a dot product with an adder tree whose level "
        "n uses widening (b + n)-bit adders, where the baseline uses 16-bit adders "
        "throughout (Fig. 3c). Write `accumulator_gates(K, b)`: the gates of the "
        "mixed-bitwidth tree for one output. The check runs the library's `accumulate` on "
        "encrypted terms and counts; it also shows the 16-bit baseline."),
    hints=(
        "A widening w-bit ripple-carry adder costs 5 w - 3 gates (`closed_forms(w)`).",
        "Level n adds floor(K_n / 2) pairs of (b + n)-bit words; an odd word passes up for "
        "free; K_{n+1} = ceil(K_n / 2).",
    ),
    expects="a function accumulator_gates(K, b) returning an int",
    checker=check_accumulator, solution=solutions.accumulator_gates,
    stub='''def accumulator_gates(K, b):
    """Gates of SHE's mixed-bitwidth adder tree over K signed b-bit terms."""
    ...  # your code here


answer = ...''',
))
