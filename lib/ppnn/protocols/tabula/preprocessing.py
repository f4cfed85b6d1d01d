"""Tabula preprocessing (Tabula §3.3, Fig. 3): building shared single-use tables.

Published protocol, step by step (per table, ``p = 2^b``):

1. client draws ``s_0`` and the indicator vector ``P`` (``P[s_0] = 1``); server draws ``s_1``
   and ``Q``. With the paper's *binary-share optimisation* both vectors are XOR-shared:
   the client sends ``P_1`` (p bits) to the server, the server sends ``Q_0`` to the client.
2. the outer product ``[P Q^T]`` by Beaver AND triples, one per entry: p^2 multiplications,
   each party opens ``P_m ^ a`` and ``Q_n ^ b`` (2 p^2 bits per party).
3. each party forms ``T'_i[y] = +- sum_{m,n} F(y - m - n) [PQ^T]_i[m, n]`` (O(p^3) work).
   Read as integers, the XOR shares differ only at ``(s_0, s_1)``, by +1 or -1, so
   ``T'_0 + T'_1 = sigma F(y - s)`` with ``sigma = sum [PQ^T]_0 - sum [PQ^T]_1``.
4. **sign correction**: one Beaver multiplication per entry by the shared ``sigma``
   (sigma^2 = 1), giving ``[T][y] = [F(y - s)]`` with ``s = s_0 + s_1``.

Indexing note: the paper writes ``F(m + n + x)``, which gives ``T[x] = F(x + s)``, while its
online phase looks up ``T[x + s]`` expecting ``F(x)``; the consistent table is
``F(x - m - n)`` (``index_sign = -1``, the default). ``index_sign = +1`` is the literal formula.

Beyond the paper (same tables, checked in the tests):

* **computation** -- the sum depends only on ``m + n``: anti-diagonal sums
  ``D_i[k] = sum_{m+n=k} [PQ^T]_i[m,n]`` then one cyclic convolution with F,
  ``T'_i[y] = sum_k F(y - k) D_i[k]``: O(p^2) instead of O(p^3) (``tables="antidiagonal"``);
* **communication** -- an outer-product (matrix) Beaver triple ``(a, b, C = a b^T)``: only
  ``P ^ a`` and ``Q ^ b`` are opened, O(p) bits per table instead of O(p^2)
  (``outer="matrix"``); the same rank-one idea makes the sign correction open ``sigma - alpha``
  and ``T' - beta`` (p + 1 ring elements) instead of 2p (``correction="rank_one"``).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ppnn.core import Z2_64, AdditiveShares, Dealer, Ledger, Ring, beaver_mul

from .tables import TabulaTables, check_table_bits

__all__ = [
    "PUBLISHED", "OURS", "preprocess", "preprocess_published", "preprocess_fast",
    "indicator", "share_indicators", "outer_product_elementwise", "outer_product_matrix",
    "tables_cubic", "tables_antidiagonal", "sign_shares", "sign_correction_elementwise",
    "sign_correction_rank_one",
]

PUBLISHED = {"outer": "elementwise", "tables": "cubic", "correction": "elementwise"}
OURS = {"outer": "matrix", "tables": "antidiagonal", "correction": "rank_one"}

_CHUNK_ELEMENTS = 1 << 22  # bound on n_chunk * p^2 (and y-chunk * p^2) in memory


def _deal(ledger: Ledger, parties, bits_per_party: int, what: str) -> None:
    """Book correlated randomness from the trusted dealer (offline, one round)."""
    with ledger.offline(), ledger.round():
        for party in parties:
            ledger.send(Ledger.DEALER, party, bits_per_party, what)


def _bits(rng: np.random.Generator, shape) -> np.ndarray:
    return rng.integers(0, 2, size=shape, dtype=np.uint8)


def indicator(s: np.ndarray, p: int) -> np.ndarray:
    """One-hot rows: ``out[j, s_j] = 1`` (uint8, shape (n, p))."""
    s = np.asarray(s, dtype=np.int64)
    out = np.zeros((s.size, p), dtype=np.uint8)
    out[np.arange(s.size), s] = 1
    return out


# -- step 1 ---------------------------------------------------------------------------------
def share_indicators(P: np.ndarray, Q: np.ndarray, rng: np.random.Generator, ledger: Ledger,
                     parties=("client", "server")) -> tuple[np.ndarray, np.ndarray]:
    """XOR-share the client's P and the server's Q (one round, n p bits each way).

    Returns ``P_sh, Q_sh`` of shape (2, n, p): index 0 is the client's share.
    """
    client, server = parties
    n, p = P.shape
    P1 = _bits(rng, P.shape)  # client keeps P ^ P1, sends P1
    Q0 = _bits(rng, Q.shape)  # server keeps Q ^ Q0, sends Q0
    with ledger.round():
        ledger.send(client, server, n * p, "XOR share of indicator P")
        ledger.send(server, client, n * p, "XOR share of indicator Q")
    return np.stack([P ^ P1, P1]), np.stack([Q0, Q ^ Q0])


# -- step 2 ---------------------------------------------------------------------------------
def outer_product_elementwise(P_sh: np.ndarray, Q_sh: np.ndarray, rng: np.random.Generator,
                              ledger: Ledger | None, parties=("client", "server")) -> np.ndarray:
    """[P Q^T] with one Beaver AND triple per entry (published): 2 p^2 bits per party.

    Returns XOR shares (2, n, p, p) uint8. ``ledger=None`` skips booking (used by
    :func:`preprocess`, which books the whole batch once).
    """
    _, n, p = P_sh.shape
    shape = (n, p, p)
    if ledger is not None:
        _deal(ledger, parties, 3 * n * p * p, "bit triples (a, b, c = a & b)")
    a, b = _bits(rng, shape), _bits(rng, shape)
    a1, b1, c1 = _bits(rng, shape), _bits(rng, shape), _bits(rng, shape)
    A, B, C = np.stack([a ^ a1, a1]), np.stack([b ^ b1, b1]), np.stack([(a & b) ^ c1, c1])
    d_sh = P_sh[:, :, :, None] ^ A  # shares of P_m ^ a_mn
    e_sh = Q_sh[:, :, None, :] ^ B  # shares of Q_n ^ b_mn
    if ledger is not None:
        with ledger.round():
            ledger.send(parties[0], parties[1], 2 * n * p * p, "Beaver AND: P^a, Q^b")
            ledger.send(parties[1], parties[0], 2 * n * p * p, "Beaver AND: P^a, Q^b")
    d, e = d_sh[0] ^ d_sh[1], e_sh[0] ^ e_sh[1]
    Z = C ^ (B & d) ^ (A & e)
    Z[0] ^= d & e
    return Z


def outer_product_matrix(P_sh: np.ndarray, Q_sh: np.ndarray, rng: np.random.Generator,
                         ledger: Ledger | None, parties=("client", "server")) -> np.ndarray:
    """[P Q^T] with one outer-product triple (a, b, C = a b^T) per table: 2 p bits per party.

    ``P Q^T = (d ^ a)(e ^ b)^T = d e^T ^ d b^T ^ a e^T ^ a b^T`` over GF(2) with the public
    ``d = P ^ a`` and ``e = Q ^ b``.
    """
    _, n, p = P_sh.shape
    if ledger is not None:
        _deal(ledger, parties, n * (2 * p + p * p), "outer-product triples (a, b, C = a b^T)")
    a, b = _bits(rng, (n, p)), _bits(rng, (n, p))
    a1, b1, c1 = _bits(rng, (n, p)), _bits(rng, (n, p)), _bits(rng, (n, p, p))
    A, B = np.stack([a ^ a1, a1]), np.stack([b ^ b1, b1])
    C = np.stack([(a[:, :, None] & b[:, None, :]) ^ c1, c1])
    d_sh, e_sh = P_sh ^ A, Q_sh ^ B
    if ledger is not None:
        with ledger.round():
            ledger.send(parties[0], parties[1], 2 * n * p, "outer-product Beaver: P^a, Q^b")
            ledger.send(parties[1], parties[0], 2 * n * p, "outer-product Beaver: P^a, Q^b")
    d, e = d_sh[0] ^ d_sh[1], e_sh[0] ^ e_sh[1]
    Z = C ^ (d[None, :, :, None] & B[:, :, None, :]) ^ (A[:, :, :, None] & e[None, :, None, :])
    Z[0] ^= d[:, :, None] & e[:, None, :]
    return Z


# -- step 3 ---------------------------------------------------------------------------------
def _check_F(F_table: np.ndarray, p: int) -> np.ndarray:
    F_table = np.asarray(F_table, dtype=np.uint64)
    if F_table.shape != (p,):
        raise ValueError(f"F_table must have {p} entries for these tables, got {F_table.shape}")
    return F_table


def tables_cubic(Bi: np.ndarray, F_table: np.ndarray, ring: Ring, negate: bool = False,
                 index_sign: int = -1) -> np.ndarray:
    """Published O(p^3): ``T'_i[y] = sum_{m,n} F(y + index_sign (m + n)) B_i[m, n]``.

    Vectorized as the paper suggests ("standard matrix operations"): the p x p^2 matrix
    ``G[y, (m, n)] = F(y +- (m + n))`` times the flattened share, in y-chunks.
    """
    n, p, _ = Bi.shape
    F_table = _check_F(F_table, p)
    flat = Bi.reshape(n, p * p).astype(np.uint64)
    mn = (np.arange(p)[:, None] + np.arange(p)[None, :]).reshape(-1)
    out = np.empty((n, p), dtype=np.uint64)
    step = max(1, _CHUNK_ELEMENTS // (p * p))
    for y0 in range(0, p, step):  # loop over chunks of table entries, not elements
        y = np.arange(y0, min(p, y0 + step))
        G = F_table[(y[:, None] + index_sign * mn[None, :]) % p]  # (chunk, p^2)
        out[:, y0:y0 + y.size] = flat @ G.T
    out = ring.reduce(out)
    return ring.neg(out) if negate else out


def tables_antidiagonal(Bi: np.ndarray, F_table: np.ndarray, ring: Ring, negate: bool = False,
                        index_sign: int = -1) -> np.ndarray:
    """Ours, O(p^2): anti-diagonal sums then one cyclic convolution (correlation if +1)."""
    n, p, _ = Bi.shape
    F_table = _check_F(F_table, p)
    # D[j, k] = sum_m B[j, m, (k - m) mod p]: in [B B] (n, p, 2p) the element
    # B[m, (k - m) mod p] sits at column p - m + k, i.e. a strided view with row step 2p - 1
    B2 = np.concatenate([Bi, Bi], axis=2)
    it = B2.itemsize
    skewed = as_strided(B2[:, :, p:], shape=(n, p, p),
                        strides=(B2.strides[0], (2 * p - 1) * it, it), writeable=False)
    D = skewed.sum(axis=1, dtype=np.uint64)
    k = np.arange(p)
    circ = F_table[(k[:, None] + index_sign * k[None, :]) % p]  # circ[y, k] = F(y +- k)
    out = ring.reduce(D @ circ.T)
    return ring.neg(out) if negate else out


def sign_shares(Z: np.ndarray, ring: Ring) -> np.ndarray:
    """Arithmetic shares of sigma = sum Z_0 - sum Z_1 (= +-1): shape (2, n)."""
    n = Z.shape[1]
    s0 = Z[0].reshape(n, -1).sum(axis=1, dtype=np.uint64)
    s1 = Z[1].reshape(n, -1).sum(axis=1, dtype=np.uint64)
    return np.stack([ring.reduce(s0), ring.neg(ring.reduce(s1))])


# -- step 4 ---------------------------------------------------------------------------------
def sign_correction_elementwise(sig: np.ndarray, Tp: np.ndarray, ring: Ring,
                                rng: np.random.Generator, ledger: Ledger,
                                parties=("client", "server")) -> np.ndarray:
    """Published: one Beaver multiplication sigma * T'[y] per table entry (2 p k bits/party)."""
    n, p = Tp.shape[1:]
    dealer = Dealer(rng, ledger, parties)
    sigma = AdditiveShares(np.broadcast_to(sig[:, :, None], (2, n, p)).copy(), ring)
    return beaver_mul(sigma, AdditiveShares(Tp, ring), dealer, ledger).shares


def sign_correction_rank_one(sig: np.ndarray, Tp: np.ndarray, ring: Ring,
                             rng: np.random.Generator, ledger: Ledger,
                             parties=("client", "server")) -> np.ndarray:
    """Ours: a scalar-times-vector triple (alpha, beta, gamma = alpha beta) per table; opens
    ``sigma - alpha`` and ``T' - beta``: (p + 1) k bits per party."""
    n, p = Tp.shape[1:]
    _deal(ledger, parties, n * (1 + 2 * p) * ring.bits, "scalar-vector triples")
    alpha, beta = ring.random(rng, (n,)), ring.random(rng, (n, p))
    gamma = ring.mul(alpha[:, None], beta)

    def share(v):
        r = ring.random(rng, v.shape)
        return np.stack([r, ring.sub(v, r)])

    A, B, G = share(alpha), share(beta), share(gamma)
    eps_sh, delta_sh = ring.sub(sig, A), ring.sub(Tp, B)
    with ledger.round():
        ledger.send(parties[0], parties[1], n * (p + 1) * ring.bits, "sigma - alpha, T' - beta")
        ledger.send(parties[1], parties[0], n * (p + 1) * ring.bits, "sigma - alpha, T' - beta")
    eps = ring.add(eps_sh[0], eps_sh[1])
    delta = ring.add(delta_sh[0], delta_sh[1])
    out = ring.add(ring.add(G, ring.mul(eps[None, :, None], B)), ring.mul(A[:, :, None],
                                                                           delta[None]))
    out[0] = ring.add(out[0], ring.mul(eps[:, None], delta))
    return out


# -- the whole protocol -----------------------------------------------------------------------
def preprocess(F_table: np.ndarray, n: int, rng: np.random.Generator, ledger: Ledger, *,
               outer: str = "matrix", tables: str = "antidiagonal",
               correction: str = "rank_one", ring: Ring = Z2_64,
               parties=("client", "server"), index_sign: int = -1) -> TabulaTables:
    """Run Tabula's preprocessing (Fig. 3) for ``n`` tables of ``F_table`` (2^b entries).

    ``outer`` in {"elementwise" (published), "matrix"}; ``tables`` in {"cubic" (published),
    "antidiagonal"}; ``correction`` in {"elementwise" (published), "rank_one"}. Everything is
    booked in the ledger's offline phase: client/server messages plus dealer triples.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator (seed it explicitly)")
    F_table = ring.check(np.asarray(F_table), "F_table")
    if F_table.ndim != 1 or F_table.size < 2 or F_table.size & (F_table.size - 1):
        raise ValueError(f"F_table must hold 2^b entries (b in 1..16), got shape "
                         f"{F_table.shape}")
    b = check_table_bits(int(F_table.size).bit_length() - 1)
    p = 1 << b
    n = int(n)
    if n < 1:
        raise ValueError(f"number of tables n must be >= 1, got {n}")
    for name, val, allowed in (("outer", outer, ("elementwise", "matrix")),
                               ("tables", tables, ("cubic", "antidiagonal")),
                               ("correction", correction, ("elementwise", "rank_one"))):
        if val not in allowed:
            raise ValueError(f"{name} must be one of {allowed}, got {val!r}")
    if index_sign not in (-1, 1):
        raise ValueError(f"index_sign must be -1 (consistent) or +1 (literal), got {index_sign}")
    client, server = parties
    outer_fn = outer_product_elementwise if outer == "elementwise" else outer_product_matrix
    table_fn = tables_cubic if tables == "cubic" else tables_antidiagonal
    with ledger.offline():
        # 1. secrets, indicator vectors, XOR-sharing of P and Q
        s0 = rng.integers(0, p, size=n, dtype=np.uint64)  # client's s_0
        s1 = rng.integers(0, p, size=n, dtype=np.uint64)  # server's s_1
        P_sh, Q_sh = share_indicators(indicator(s0, p), indicator(s1, p), rng, ledger, parties)
        # 2. outer product [P Q^T]: booked once for the batch, computed in chunks of tables
        if outer == "elementwise":
            _deal(ledger, parties, 3 * n * p * p, "bit triples (a, b, c = a & b)")
            per_party, what = 2 * n * p * p, "Beaver AND: P^a, Q^b"
        else:
            _deal(ledger, parties, n * (2 * p + p * p), "outer-product triples (a, b, C = a b^T)")
            per_party, what = 2 * n * p, "outer-product Beaver: P^a, Q^b"
        with ledger.round():
            ledger.send(client, server, per_party, what)
            ledger.send(server, client, per_party, what)
        # 3. local table sums T'_i and sign shares
        Tp = np.empty((2, n, p), dtype=np.uint64)
        sig = np.empty((2, n), dtype=np.uint64)
        step = max(1, _CHUNK_ELEMENTS // (p * p))
        for j0 in range(0, n, step):  # loop over batches of tables
            sl = slice(j0, min(n, j0 + step))
            Z = outer_fn(P_sh[:, sl], Q_sh[:, sl], rng, None, parties)
            Tp[0, sl] = table_fn(Z[0], F_table, ring, negate=False, index_sign=index_sign)
            Tp[1, sl] = table_fn(Z[1], F_table, ring, negate=True, index_sign=index_sign)
            sig[:, sl] = sign_shares(Z, ring)
        # 4. sign correction
        corr = sign_correction_elementwise if correction == "elementwise" else \
            sign_correction_rank_one
        T = corr(sig, Tp, ring, rng, ledger, parties)
    ledger.count("table_entries", n * p, client)
    ledger.count("table_entries", n * p, server)
    return TabulaTables(b, ring, T[0], T[1], s0, s1)


def preprocess_published(F_table, n, rng, ledger, **kw) -> TabulaTables:
    """The protocol exactly as published (elementwise triples, O(p^3) sums)."""
    return preprocess(F_table, n, rng, ledger, **PUBLISHED, **kw)


def preprocess_fast(F_table, n, rng, ledger, **kw) -> TabulaTables:
    """Ours: outer-product triples, anti-diagonal sums + cyclic convolution."""
    return preprocess(F_table, n, rng, ledger, **OURS, **kw)
