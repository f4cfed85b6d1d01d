"""Tabula online phase (Tabula §3.2, Fig. 2), vectorized over every activation of a layer.

The client holds ``[x]_0`` and the server ``[x]_1`` (additive shares in Z_2^k, k = 64 in the
paper). For each activation j, with its own single-use table:

1. **secure truncation** (SecureML local truncation): client ``x_trunc_0 = floor(x_0 / 2^d)``,
   server ``x_trunc_1 = 2^k - floor((2^k - x_1) / 2^d)`` -- no communication;
2. **reduction mod 2^b**: each party keeps ``x_trunc_i mod 2^b`` (valid because 2^b | 2^k);
3. **one exchange** of the blinded values ``y_i = x_trunc_i + s_i mod 2^b`` -- client and
   server each send b bits, so 2 b bits per activation in a single round;
4. **local lookups**: both compute ``y = y_0 + y_1 = x_trunc + s`` and output ``T_i[y]``,
   shares of ``F(x_trunc)``.

Truncation is exact up to +1 in the last place, except with probability ``|x| / 2^k`` where
the result is catastrophically wrong (:func:`truncation_error_rates` measures both).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppnn.core import Z2_64, AdditiveShares, Ledger, Ring, local_truncate, share_additive

from .tables import LazyTables, TabulaTables, check_table_bits

__all__ = ["tabula_online", "online_bits", "truncation_error_rates", "scale_shift",
           "walkthrough"]


def scale_shift(input_bits: int, b: int) -> int:
    """Truncation d that maps integer activations |x| < 2^input_bits onto b-bit inputs.

    With ``d = input_bits + 1 - b`` the truncated value lies in [-2^(b-1), 2^(b-1)).
    """
    b = check_table_bits(b)
    if not isinstance(input_bits, int | np.integer) or input_bits < 1:
        raise ValueError(f"input_bits must be a positive int, got {input_bits}")
    return max(int(input_bits) + 1 - b, 0)


def online_bits(n: int, b: int) -> int:
    """Closed form: total online bits of Tabula on n activations with b-bit tables (2 b n)."""
    return 2 * check_table_bits(b) * int(n)


def tabula_online(x: AdditiveShares, tables: TabulaTables, d: int, ledger: Ledger,
                  parties=("client", "server"), input_bits: int | None = None
                  ) -> AdditiveShares:
    """Evaluate F on every element of ``x`` with one table each (Tabula Fig. 2).

    Parameters
    ----------
    x : 2-party additive shares over Z_2^k (party 0 = client, party 1 = server).
    tables : ``x.size`` unused tables (consumed by this call; reuse raises).
    d : truncation shift (0 = none), 0 <= d < k.
    ledger : books the single exchange round (b bits each way per activation).
    input_bits : optional *simulator-side* check of the per-layer scale contract
        ``|x| < 2^input_bits`` (the paper keeps activations within 2^14). It reveals x in the
        simulator only and raises ``ValueError`` if the contract is broken; no party could
        run this check in a real deployment.

    Returns
    -------
    AdditiveShares over ``tables.ring`` with the shape of ``x``: shares of F(x_trunc).
    """
    if not isinstance(x, AdditiveShares):
        raise TypeError(f"x must be AdditiveShares, got {type(x).__name__}")
    if not isinstance(tables, TabulaTables | LazyTables):
        raise TypeError(f"tables must be TabulaTables or LazyTables, got "
                        f"{type(tables).__name__}")
    if x.n_parties != 2:
        raise ValueError(f"Tabula is a 2-party protocol, got shares of {x.n_parties} parties")
    ring: Ring = x.ring
    b = tables.b
    if ring.k < b:
        raise ValueError(f"the share ring Z_2^{ring.k} is smaller than the table input "
                         f"Z_2^{b}")
    if not isinstance(d, int | np.integer) or not 0 <= d < ring.k:
        raise ValueError(f"truncation shift d must be an int in 0..{ring.k - 1}, got {d}")
    n = int(np.prod(x.shape, dtype=np.int64))
    if tables.n != n:
        raise ValueError(f"need one table per activation: {n} activations of shape {x.shape} "
                         f"but {tables.n} tables")
    if input_bits is not None:
        v = ring.to_signed(x.reveal())
        if v.size and np.abs(v).max() >= (1 << int(input_bits)):
            raise ValueError(f"activation outside the layer scale: |x| must be < "
                             f"2^{input_bits}, got max |x| = {int(np.abs(v).max())}")
    tables.consume()
    client, server = parties
    mask = np.uint64((1 << b) - 1)

    # 1. secure truncation (local, no communication)
    x_trunc = local_truncate(x, int(d)) if d > 0 else x
    # 2. each party reduces its share mod 2^b
    xt0 = x_trunc.shares[0].reshape(-1) & mask
    xt1 = x_trunc.shares[1].reshape(-1) & mask
    # 3. blind with the table secret shares and exchange (one round, b bits each way)
    y0 = (xt0 + tables.s_client) & mask
    y1 = (xt1 + tables.s_server) & mask
    ledger.hold(client, "x_trunc_0 mod 2^b", xt0)
    ledger.hold(server, "x_trunc_1 mod 2^b", xt1)
    with ledger.round():
        y0 = ledger.transmit(client, server, n * b, "x_trunc_0 + s_0 mod 2^b", y0)
        y1 = ledger.transmit(server, client, n * b, "x_trunc_1 + s_1 mod 2^b", y1)
    y = (y0 + y1) & mask  # both parties now hold y = x_trunc + s
    ledger.hold(client, "y = x_trunc + s", y)
    ledger.hold(server, "y = x_trunc + s", y)
    # 4. local lookups T_i[y]
    out0, out1 = tables.lookup(y)
    ledger.hold(client, "T_0[y]", out0)
    ledger.hold(server, "T_1[y]", out1)
    ledger.count("lookup", n, client)
    ledger.count("lookup", n, server)
    return AdditiveShares(np.stack([out0, out1]).reshape(2, *x.shape), tables.ring)


def truncation_error_rates(x_int: np.ndarray, d: int, ring: Ring, rng: np.random.Generator,
                           trials: int = 1) -> dict:
    """Measure SecureML local truncation errors over fresh random sharings of ``x_int``.

    Returns measured rates and their exact predictions for uniform shares:
    ``off_by_one`` (result = floor(x/2^d) + 1) has probability ``(x mod 2^d) / 2^d``;
    ``catastrophic`` (anything else) has probability ``|x| / 2^k`` <= 2^(l-k) for |x| < 2^l.
    """
    x_int = np.asarray(x_int, dtype=np.int64).reshape(-1)
    if not 0 < d < ring.k:
        raise ValueError(f"truncation shift d must be in 1..{ring.k - 1}, got {d}")
    if trials < 1:
        raise ValueError(f"trials must be >= 1, got {trials}")
    xs = np.tile(x_int, trials)
    X = share_additive(ring.from_signed(xs), ring, rng)
    err = ring.to_signed(ring.sub(local_truncate(X, d).reveal(), ring.from_signed(xs >> d)))
    exact = err == 0
    off = err == 1
    cat = ~(exact | off)
    frac = (xs & ((1 << d) - 1)).astype(np.float64) / (1 << d)
    return {
        "n": int(xs.size), "d": d, "k": ring.k,
        "exact_rate": float(exact.mean()),
        "off_by_one_rate": float(off.mean()),
        "catastrophic_rate": float(cat.mean()),
        "catastrophic_count": int(cat.sum()),
        "predicted_off_by_one": float(frac.mean()),
        "predicted_catastrophic": float(np.abs(xs).astype(np.float64).mean() / 2.0**ring.k),
    }


def walkthrough(x_int, b: int, d: int, F_table: np.ndarray, rng: np.random.Generator,
                ring: Ring | None = None) -> list[tuple[str, pd.DataFrame]]:
    """What each party holds after every step of Fig. 2, for a handful of values.

    Runs :func:`tabula_online` on fresh tables and returns ``[(step title, frame), ...]``
    (client's and server's view per step); the last frame checks the reconstructed output
    against ``F_table`` at the truncated input.
    """
    from .tables import dealer_tables

    ring = ring or Z2_64
    x_int = np.asarray(x_int, dtype=np.int64).reshape(-1)
    n = x_int.size
    X = share_additive(ring.from_signed(x_int), ring, rng)
    T = dealer_tables(F_table, n, rng, ring)
    s0, s1 = T.s_client.copy(), T.s_server.copy()
    ledger = Ledger(("client", "server"))
    Y = tabula_online(X, T, d, ledger)
    mask = np.uint64((1 << b) - 1)
    xt = local_truncate(X, d) if d > 0 else X
    xb0, xb1 = xt.shares[0] & mask, xt.shares[1] & mask
    y0, y1 = (xb0 + s0) & mask, (xb1 + s1) & mask
    y = (y0 + y1) & mask
    q = ring.to_signed(xt.reveal())
    idx = (q % (1 << b)).astype(np.int64)
    steps = [
        ("0. inputs: additive shares in Z_2^64",
         pd.DataFrame({"x (secret)": x_int, "client [x]_0": X.shares[0],
                       "server [x]_1": X.shares[1]})),
        (f"1. local truncation by d = {d} bits (SecureML)",
         pd.DataFrame({"floor(x / 2^d)": x_int >> d, "client x_trunc_0": xt.shares[0],
                       "server x_trunc_1": xt.shares[1], "x_trunc (secret)": q})),
        (f"2. reduce shares mod 2^{b}",
         pd.DataFrame({"client": xb0, "server": xb1, "sum mod 2^b": (xb0 + xb1) & mask})),
        ("3. blind with s_i and exchange (one round, b bits each way)",
         pd.DataFrame({"client sends x_0 + s_0": y0, "server sends x_1 + s_1": y1,
                       "both know y = x + s": y, "s (nobody knows)": (s0 + s1) & mask})),
        ("4. local lookups T_i[y]",
         pd.DataFrame({"client T_0[y]": Y.shares[0], "server T_1[y]": Y.shares[1],
                       "sum (secret)": ring.to_signed(Y.reveal()),
                       "F(x_trunc) plaintext": ring.to_signed(F_table[idx]),
                       "equal": Y.reveal() == F_table[idx]})),
    ]
    return steps
