"""Reference solutions of the exercises, one per exercise id (``SOLUTIONS``).

Each notebook points here with ``solution_of("NN.k")``, which prints the function's source.
Functions the student writes (``kind="function"``) are the answer themselves; a value answer
(``kind="value"``) is computed by a function of no arguments. Imports sit inside the functions
so that the printed source says where each name comes from.

Try the exercise first: the checks say what differs and give hints.
"""

from __future__ import annotations

__all__ = ["SOLUTIONS"]


# -- 00 overview ----------------------------------------------------------------------------
def beaver_product(x, y, dealer, ledger):
    """00.1 -- ``x * y`` on additive shares with one Beaver triple (one online round)."""
    import numpy as np

    ring, parties = x.ring, dealer.parties
    t = dealer.triple(ring, x.shape)  # offline: [a], [b], [c = a b] from the dealer
    e_sh, f_sh = x - t.a, y - t.b  # local: [e] = [x] - [a], [f] = [y] - [b]
    n = int(np.prod(x.shape))
    # one round: every party sends its shares of e and f to every other party
    ledger.exchange(parties, 2 * n * ring.bits, "e = x - a, f = y - b",
                    values={p: np.stack([e_sh.shares[i], f_sh.shares[i]])
                            for i, p in enumerate(parties)})
    e, f = e_sh.reveal(), f_sh.reveal()  # now public: e and f
    z = t.c + t.b.mul_public(e) + t.a.mul_public(f)  # [c] + e [b] + f [a]
    return z.add_public(ring.mul(e, f))  # + e f, added by one party


def recover_x2_from_reused_triple(view):
    """00.2 -- with one triple for two products, ``e1 - e2 = (x1 - a) - (x2 - a) = x1 - x2``:
    the mask ``a`` cancels, and whoever knows ``x1`` learns ``x2``."""
    # uint64 arithmetic wraps modulo 2^64, exactly as the ring Z_2^64 does
    return view["x1"] - view["e1"] + view["e2"]


def beaver_online_bits():
    """00.3 -- each of the ``P`` parties sends its shares of ``e`` and ``f`` (``2 n`` elements
    of ``k`` bits) to each of the ``P - 1`` others, all in one round."""
    import sympy as sp

    n, P, k = sp.symbols("n P k", positive=True, integer=True)
    return P * (P - 1) * 2 * n * k


# -- 01 Tabula ------------------------------------------------------------------------------
def tabula_lookup(x, tables, d, ledger):
    """01.1 -- Tabula's online phase (Fig. 2): truncate, reduce, blind, one exchange, look up."""
    import numpy as np

    from ppnn.core import AdditiveShares, local_truncate

    b, n = tables.b, x.shares[0].size
    mask = np.uint64((1 << b) - 1)
    tables.consume()  # single use
    x_trunc = local_truncate(x, d)  # 1. SecureML truncation, no messages
    xt0 = x_trunc.shares[0].reshape(-1) & mask  # 2. each party reduces its share mod 2^b
    xt1 = x_trunc.shares[1].reshape(-1) & mask
    y0 = (xt0 + tables.s_client) & mask  # 3. blind with its share of the table secret s
    y1 = (xt1 + tables.s_server) & mask
    with ledger.round():  # ... and exchange, b bits each way per activation
        ledger.send("client", "server", n * b, "x_trunc_0 + s_0 mod 2^b", value=y0)
        ledger.send("server", "client", n * b, "x_trunc_1 + s_1 mod 2^b", value=y1)
    y = (y0 + y1) & mask  # both know y = x_trunc + s
    out0, out1 = tables.lookup(y)  # 4. local lookups T_i[y]: shares of F(x_trunc)
    return AdditiveShares(np.stack([out0, out1]).reshape(2, *x.shape), tables.ring)


def recover_x2_from_reused_table(view):
    """01.2 -- one table (one secret ``s``) for two lookups: the public indices are
    ``y1 = x1 + s`` and ``y2 = x2 + s`` mod 2^b, so ``x2 = x1 + y2 - y1``."""
    import numpy as np

    p = 1 << view["b"]
    x2 = (view["x1"].astype(np.int64) + view["y2"].astype(np.int64)
          - view["y1"].astype(np.int64)) % p
    return np.where(x2 >= p // 2, x2 - p, x2)  # the signed b-bit value


def smallest_ring(value_bits, relus, inferences, target):
    """01.3 -- the smallest ``k`` with ``(1 - p_k)^(relus * inferences) >= target``, where
    ``p_k = 2^(l - k)`` bounds the chance that one local truncation fails."""
    import math

    from ppnn.core import local_truncation_failure_probability

    trials = relus * inferences
    for k in range(value_bits + 1, 65):
        p = local_truncation_failure_probability(value_bits, k)
        if trials * math.log1p(-p) >= math.log(target):  # log1p: p is tiny
            return k
    return None


# -- 02 GALA --------------------------------------------------------------------------------
def gazelle_rotate_and_sum(he, u, layout):
    """02.1 -- GAZELLE's final rotate-and-sum in HE (GALA §III-A2): rotate by
    ``n/2, n/4, ..., n_o`` and add, one Perm and one Add per step and row block."""
    for k in layout.ras_steps:
        u = he.add(u, he.rotate(u, k))
    return u


def more_perms_for_gala():
    """02.2 -- GALA pays ``n_i n_o / n - 1`` Perms, GAZELLE ``log2(n / n_o)``: GALA loses when
    a block holds many products (``n_i n_o`` much larger than ``n``) and few RaS steps remain
    (``n_o`` close to ``n``)."""
    import math

    from ppnn.protocols.gala import MatVecLayout

    n = 2048
    for n_o in (2**e for e in range(12)):
        for n_i in (2**e for e in range(12)):
            L = MatVecLayout(n_o, n_i, n)
            if L.G - 1 > math.log2(L.M):
                return (n_o, n_i, n)
    return None


def steal_column(query, n_i, j, p):
    """02.3 -- with the same mask ``r`` every time, the client's share is ``W x - r`` (mod p):
    ``share(e_j) - share(0) = W e_j``, column ``j`` of the server's weights."""
    import numpy as np

    zero = np.zeros(n_i, dtype=np.int64)
    e_j = zero.copy()
    e_j[j] = 1
    col = (np.asarray(query(e_j), dtype=np.int64) - np.asarray(query(zero), dtype=np.int64)) % p
    return np.where(col > p // 2, col - p, col)  # signed weights


# -- 03 SwaNN -------------------------------------------------------------------------------
def rho(ell, kappa, n_bits):
    """03.1 -- a packing slot holds ``x + 2^(l-1) + r``: ``l + kappa + 1`` bits (one carry bit
    above the mask ``r`` of ``l + kappa`` bits); one bit of ``N`` is kept in reserve."""
    slot = ell + kappa + 1
    return (n_bits - 1) // slot


def and_gates_saved(m, n):
    """03.2 -- a ReLU costs ``m - 1`` ANDs per value; pooling 2x2 windows first leaves ``n/4``
    values to rectify instead of ``n``. The max-pool costs the same either way."""
    return (n - n // 4) * (m - 1)


def guess_sign(z, ell, kappa):
    """03.3 -- the key holder sees ``z = u + r`` with ``u = x + 2^(l-1)`` uniform in
    ``[0, 2^l)`` and ``r`` uniform in ``[0, 2^(l+kappa))``. Given ``z``, ``u`` is uniform on
    ``[max(0, z - 2^(l+kappa) + 1), min(2^l - 1, z)]``: guess ``x >= 0`` when most of that
    interval lies at or above ``2^(l-1)``. With a small ``kappa`` the interval is often short
    (``z`` near either end) and the guess is right well over half the time."""
    import numpy as np

    z = np.asarray(z, dtype=np.int64)
    lo = np.maximum(0, z - (1 << (ell + kappa)) + 1)
    hi = np.minimum((1 << ell) - 1, z)
    positive = np.maximum(0, hi - np.maximum(lo, 1 << (ell - 1)) + 1)
    return 2 * positive > hi - lo + 1


# -- 04 SHE ---------------------------------------------------------------------------------
def relu_unit(x):
    """04.1 -- SHE's ReLU unit (Fig. 2): every magnitude bit AND NOT sign; the NOT is free,
    so ``w - 1`` AND gates in one level (multiplicative depth 1)."""
    from ppnn.protocols.she.circuits import Word

    be = x.backend
    not_sign = be.not_(x.sign)
    planes = tuple(be.and_(p, not_sign) for p in x.planes[:-1])
    return Word(planes, signed=False)  # ReLU values are >= 0: no sign plane


def max_unit_cost():
    """04.2 -- the max unit: a signed comparator from the borrow chain (``4 w - 2`` gates, one
    AND-type gate per bit on the chain: depth ``w``) and one MUX per bit (depth + 1)."""
    import sympy as sp

    w = sp.Symbol("w", positive=True, integer=True)
    return (4 * w - 2 + w, w + 1)


def accumulator_gates():
    """04.3 -- the mixed-bitwidth adder tree on ``K = 2^m`` terms: level ``n`` adds ``K /
    2^(n+1)`` pairs with widening ``(b + n)``-bit adders of ``5 (b + n) - 3`` gates; summed
    over the levels, ``(5 b - 3)(K - 1) + 5 (K - 1 - m)``."""
    import sympy as sp

    K, b = sp.symbols("K b", positive=True, integer=True)
    m, n = sp.log(K, 2), sp.Symbol("n", integer=True, nonnegative=True)
    return sp.simplify(sp.summation(K / 2 ** (n + 1) * (5 * (b + n) - 3), (n, 0, m - 1)))


def overflow_terms(K, b, width):
    """04.4 -- every term at its largest, ``2^(b-1) - 1``: the sum ``K (2^(b-1) - 1)`` lies
    above ``2^(width-1) - 1`` whenever ``width < b + ceil(log2 K)`` (all cases of the check),
    so the fixed tree, which computes modulo ``2^width``, returns it wrapped."""
    import numpy as np

    return np.full(K, (1 << (b - 1)) - 1, dtype=np.int64)


# -- 05 Falcon ------------------------------------------------------------------------------
def falcon_product(fal, x, y):
    """05.1 -- Falcon's product (§3.2): local cross terms plus a zero sharing, then one
    resharing round in which ``P_i`` sends ``z_i`` to ``P_{i-1}``."""
    from ppnn.protocols.falcon import PARTIES, RSS

    ring = fal.ring
    X, Y = x.components, y.components
    X1, Y1 = X[[1, 2, 0]], Y[[1, 2, 0]]  # P_i also holds x_{i+1} and y_{i+1}
    z = ring.add(ring.add(ring.mul(X, Y), ring.mul(X, Y1)), ring.mul(X1, Y))
    z = ring.add(z, fal.zero3(ring, x.shape))  # + alpha_i: a 3-out-of-3 sharing of zero
    bits = z[0].size * ring.bits
    with fal.ledger.round():  # reshare: one element per party and output
        for i in range(3):
            fal.ledger.send(PARTIES[i], PARTIES[(i - 1) % 3], bits, "reshare z_i", value=z[i])
    return RSS(z, ring)


def bad_truncation_input(r, k, d):
    """05.2 -- plain ABY3 truncation opens ``c = x - r`` and is right only while ``x - r``
    stays in ``[-2^(k-1), 2^(k-1))``. Push it out from inside ``|x| < 2^(k-2)``: against a
    negative ``r`` take the largest ``x``, against a positive one the smallest."""
    lim = 1 << (k - 2)
    return lim - 1 if r < 0 else -(lim - 1)


def private_compare_cost():
    """05.3 -- step 5 (one product over ``n ell`` elements of Z_37: position 0 of the
    ``ell + 1`` is local), the product tree
    over ``ell + 2`` factors (``ell + 1`` products per comparison in ``ceil(log2(ell + 2))``
    rounds) and the opening of ``d``; semi-honest, each element costs 3 messages of 6 bits."""
    import sympy as sp

    from ppnn.protocols.falcon import Zp

    n, ell = sp.symbols("n ell", positive=True, integer=True)
    bp = Zp(37).bits
    rounds = 1 + sp.ceiling(sp.log(ell + 2, 2)) + 1
    bits = 3 * bp * (n * ell + n * (ell + 1) + n)
    return (rounds, sp.expand(bits))


SOLUTIONS = {
    "00.1": beaver_product, "00.2": recover_x2_from_reused_triple, "00.3": beaver_online_bits,
    "01.1": tabula_lookup, "01.2": recover_x2_from_reused_table, "01.3": smallest_ring,
    "02.1": gazelle_rotate_and_sum, "02.2": more_perms_for_gala, "02.3": steal_column,
    "03.1": rho, "03.2": and_gates_saved, "03.3": guess_sign,
    "04.1": relu_unit, "04.2": max_unit_cost, "04.3": accumulator_gates, "04.4": overflow_terms,
    "05.1": falcon_product, "05.2": bad_truncation_input, "05.3": private_compare_cost,
}
