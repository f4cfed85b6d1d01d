"""Exercises of notebook 03 (SwaNN).

* 03.1 -- how many masked values share a Paillier ciphertext (``rho``), from the library's
  packing layout;
* 03.2 -- the AND gates saved by max-pooling before the ReLU, counted on the 2PC ledger;
* 03.3 -- productive failure: with a short statistical mask (small ``kappa``) the key holder
  guesses the sign of the values it decrypts in Protocol 2.
"""

from __future__ import annotations

import functools

import numpy as np

from ppnn.core import Ledger, Ring
from ppnn.core.transcript import EVERY_ELEMENT
from ppnn.he.paillier import PackingLayout, SimulatedPaillier, keygen
from ppnn.protocols.swann import KeyHolderDecryption, Masking, Roles, TwoPC, phe_to_2pc
from ppnn.protocols.swann.twopc import bits_of

from . import solutions
from .answers import as_int
from .registry import Exercise, Verdict, WrongType, call_student, register

__all__ = ["and_gates", "key_holder_view"]

# -- 03.1 -----------------------------------------------------------------------------------
#: (ell, kappa, bits of the Paillier modulus N)
RHO_CASES = ((32, 80, 2048), (32, 40, 2048), (16, 1, 1024), (64, 128, 3072), (20, 10, 512))


def check_rho(fn) -> Verdict:
    for ell, kappa, n_bits in RHO_CASES:
        want = PackingLayout(Masking(ell, kappa).slot_bits, n_bits).rho
        got = as_int(call_student(fn, ell, kappa, n_bits, what="rho"), "rho's result")
        if got != want:
            return Verdict(False, f"l = {ell}, kappa = {kappa}, {n_bits}-bit N: you say "
                                  f"rho = {got}, the library packs {want} values per "
                                  "ciphertext")
    return Verdict(True, "Right: rho = floor((log2 N - 1) / (l + kappa + 1)). Halving kappa "
                         "from 80 to 40 packs "
                         f"{PackingLayout(Masking(32, 40).slot_bits, 2048).rho} values instead "
                         f"of {PackingLayout(Masking(32, 80).slot_bits, 2048).rho} -- at the "
                         "price of a weaker mask (exercise 03.3).")


register(Exercise(
    id="03.1", title="rho: masked values per Paillier ciphertext",
    prompt=(
        "Protocols 1 and 2 pack the masked values `x + 2^(l-1) + r`, with `r` of `l + kappa` "
        "bits, into one Paillier plaintext. Write `rho(ell, kappa, n_bits)`: how many values "
        "share a ciphertext for an `n_bits`-bit modulus N. The check compares with the "
        "packing layout the library uses (`Masking`, `PackingLayout`). Then change kappa "
        "in `Masking` and watch rho, the packed ciphertext count and Table 3 move."),
    hints=(
        "A slot must hold x + 2^(l-1) + r without overflowing into its neighbour: how many "
        "bits is that?",
        "l + kappa + 1 bits per slot (a carry above r); one bit of N is kept in reserve so "
        "a full packing stays below N.",
    ),
    expects="a function rho(ell, kappa, n_bits) returning an int",
    checker=check_rho, solution=solutions.rho,
    stub='''def rho(ell, kappa, n_bits):
    """Masked ell-bit values (masks of ell + kappa bits) per n_bits-bit Paillier plaintext."""
    ...  # your code here


answer = ...''',
))


# -- 03.2 -----------------------------------------------------------------------------------
#: (m bits per value, n values: n/4 windows of 2 x 2)
POOL_CASES = ((8, 16), (5, 8), (16, 4))


def and_gates(m: int, n: int, pool_first: bool) -> tuple[int, np.ndarray]:
    """AND gates the 2PC engine books for ReLU and 2x2 max-pool on ``n`` m-bit values (in
    either order), and the result."""
    led = Ledger(("client", "server"))
    rng = np.random.default_rng(m * 1000 + n)
    tpc = TwoPC(led, ("client", "server"), rng)
    vals = rng.integers(-(1 << (m - 1)), 1 << (m - 1), n)
    xb = tpc.input_bits("server", bits_of(Ring(m).from_signed(vals), m), "x")
    windows = np.arange(n).reshape(n // 4, 4)
    if pool_first:
        out = tpc.relu(tpc.max_pool(xb, windows))
    else:
        out = tpc.max_pool(tpc.relu(xb), windows)
    return led.op_count("and_gate"), tpc.reveal_bits(out)


def check_pool_first(fn) -> Verdict:
    for m, n in POOL_CASES:
        relu_first, out1 = and_gates(m, n, pool_first=False)
        pool_first, out2 = and_gates(m, n, pool_first=True)
        if not np.array_equal(out1, out2):  # the library's claim this exercise rests on
            raise AssertionError("ReLU and max-pool did not commute on the 2PC engine")
        want = relu_first - pool_first
        got = as_int(call_student(fn, m, n, what="and_gates_saved"),
                     "and_gates_saved's result")
        if got != want:
            return Verdict(False, f"m = {m} bits, n = {n} values: you say {got} ANDs saved; "
                                  f"the ledger books {relu_first} ANDs for ReLU then max-pool "
                                  f"and {pool_first} for max-pool then ReLU ({want} saved)")
    return Verdict(True, "Right: ReLU is monotone, so max(ReLU(a), ReLU(b)) = ReLU(max(a, b)): "
                         "rectify the n/4 window maxima instead of all n values.")


register(Exercise(
    id="03.2", title="max-pool before ReLU: the AND gates saved",
    prompt=(
        "ReLU and max-pool commute. In SwaNN's 2PC part a ReLU on an m-bit Boolean-shared "
        "value costs AND gates, and so does each comparison of the max-pool. Write "
        "`and_gates_saved(m, n)`: how many AND gates evaluating max-pool *before* ReLU saves "
        "on `n` m-bit values pooled in 2 x 2 windows (n/4 windows). The check runs "
        "`TwoPC.relu` and `TwoPC.max_pool` in both orders and reads the AND gates off the "
        "ledger."),
    hints=(
        "Look at `TwoPC.relu`: every bit but the sign is ANDed with NOT sign.",
        "The max-pool costs the same in both orders (same widths, same windows); only the "
        "number of values to rectify changes: n before pooling, n/4 after.",
    ),
    expects="a function and_gates_saved(m, n) returning an int",
    checker=check_pool_first, solution=solutions.and_gates_saved,
    stub='''def and_gates_saved(m, n):
    """AND gates saved by max-pooling (2 x 2) before the ReLU, n values of m bits."""
    ...  # your code here


answer = ...''',
))


# -- 03.3 -----------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _keys():
    return keygen(256)  # the simulated backend uses only the modulus


def key_holder_view(seed: int, ell: int, kappa: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Protocol 2 (the library's ``phe_to_2pc``) on ``n`` secret ``ell``-bit values with masks
    of ``ell + kappa`` bits: what the key holder decrypted, ``x + 2^(ell-1) + r``, as the
    ledger recorded it, and the secret ``x``."""
    pk, sk = _keys()
    led = Ledger(("client", "server"), record_values=EVERY_ELEMENT)
    be = SimulatedPaillier(pk, led)
    rng = np.random.default_rng(seed)
    tpc = TwoPC(led, ("client", "server"), rng)
    x = rng.integers(-(1 << (ell - 1)), 1 << (ell - 1), n)
    phe_to_2pc(be, be.encrypt(x, "client"), Roles("server", "client", KeyHolderDecryption(sk)),
               tpc, rng, Masking(ell, kappa), Ring(max(ell, 16)))
    z = next(h.value.array() for h in led.holds
             if h.party == "client" and "(decrypted)" in h.name)
    return np.asarray(z, dtype=np.int64), x


def _accuracy(fn, seed: int, ell: int, kappa: int, n: int) -> float:
    z, x = key_holder_view(seed, ell, kappa, n)
    guess = call_student(fn, z.copy(), ell, kappa, what="guess_sign")
    arr = np.asarray(guess)
    if arr.shape != x.shape or not (arr.dtype == bool or (arr.dtype.kind in "iu" and
                                                          np.isin(arr, (0, 1)).all())):
        raise WrongType(f"guess_sign must return {x.size} booleans (True: x >= 0), got "
                        f"{arr.dtype} of shape {arr.shape}")
    return float(np.mean(arr.astype(bool) == (x >= 0)))


#: the share of right guesses that no coin-flipping guesser reaches (7 sigma at n = 3000)
THRESHOLD = 0.57


def check_sign_guess(fn) -> Verdict:
    ell, n = 8, 3000
    accs = [_accuracy(fn, seed, ell, 1, n) for seed in (20, 21)]
    strong = _accuracy(fn, 22, ell, 40, n)
    text = (f"with kappa = 1 your guess is right for {accs[0]:.1%} and {accs[1]:.1%} of "
            f"{n} values; with kappa = 40 for {strong:.1%}")
    if min(accs) < THRESHOLD:
        return Verdict(False, f"{text}. Beat {THRESHOLD:.0%} at kappa = 1 (a coin gets 50 %).")
    return Verdict(True, f"Right: {text}. A mask one bit longer than the value leaves the "
                         "ends of its range readable; with kappa = 40 or 80 the advantage is "
                         "about 2^-kappa.")


register(Exercise(
    id="03.3", title="break it: a statistical mask that is too short",
    prompt=(
        "In Protocol 2 the key holder decrypts `z = x + 2^(l-1) + r`, with `x` an l-bit "
        "signed value and `r` uniform in [0, 2^(l + kappa)): a statistical mask, as hiding "
        "as kappa is long. Here kappa = 1. Write `guess_sign(z, ell, kappa)` that, from the "
        "decrypted values alone (an int array), guesses for each whether `x >= 0` (return "
        "booleans). The check runs the library's `phe_to_2pc` on 3000 secret values and "
        "needs you right for at least 57 % of them (a coin gets 50 %); it also shows how "
        "your guess fares at kappa = 40."),
    hints=(
        "x + 2^(l-1) lies in [0, 2^l); r in [0, 2^(l+kappa)). What can a small z or a large "
        "z tell you?",
        "Given z, x + 2^(l-1) is uniform on [max(0, z - 2^(l+kappa) + 1), min(2^l - 1, z)]: "
        "guess x >= 0 when most of that interval lies at or above 2^(l-1).",
    ),
    expects="a function guess_sign(z, ell, kappa) returning one boolean per value",
    checker=check_sign_guess, solution=solutions.guess_sign, productive_failure=True,
    stub='''import numpy as np


def guess_sign(z, ell, kappa):
    """For each decrypted z = x + 2^(ell-1) + r, a guess whether x >= 0."""
    ...  # your code here


answer = ...''',
))
