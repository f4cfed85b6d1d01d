"""Tabula's lookup tables: the function table F, the shared single-use tables [T], and an
ideal (trusted-dealer) table source.

Notation (Tabula §3.2): a table has ``p = 2^b`` entries indexed by ``y`` in Z_2^b. The table
secret ``s = s_client + s_server mod 2^b`` is unknown to both parties and the shared table
satisfies ``[T]_client[y] + [T]_server[y] = F(y - s)`` in the output ring, so that looking up
the public blinded value ``y = x + s`` returns shares of ``F(x)``.

Inputs ``x`` are b-bit two's complement integers: index ``u`` in [0, 2^b) stands for
``q = u`` if ``u < 2^(b-1)`` else ``u - 2^b``. Any function fits: the table simply stores
``F`` evaluated at every representable input, encoded in the output ring (fixed point).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ppnn.core import Z2_64, FixedPoint, Ledger, Ring
from ppnn.core.transcript import SIZE_ONLY, Parts

__all__ = [
    "MAX_TABLE_BITS", "check_table_bits", "signed_inputs", "function_table", "relu", "gelu",
    "sigmoid", "TabulaTables", "TableReuseError", "dealer_tables", "LazyTables",
]

MAX_TABLE_BITS = 16


def check_table_bits(b) -> int:
    """Validate the table input width ``b`` (1..16, i.e. at most 65536 entries per table)."""
    if not isinstance(b, int | np.integer) or isinstance(b, bool):
        raise TypeError(f"table bits b must be an int, got {type(b).__name__}")
    if not 1 <= int(b) <= MAX_TABLE_BITS:
        raise ValueError(f"table bits b must be in 1..{MAX_TABLE_BITS}, got b={b}")
    return int(b)


def signed_inputs(b: int) -> np.ndarray:
    """The signed input ``q`` that table index ``u = 0 .. 2^b - 1`` stands for."""
    b = check_table_bits(b)
    u = np.arange(1 << b, dtype=np.int64)
    return np.where(u < (1 << (b - 1)), u, u - (1 << b))


def relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU, tanh form (Hendrycks & Gimpel): 0.5 x (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3)))."""
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def function_table(F: Callable[[np.ndarray], np.ndarray], b: int, in_step: float = 1.0,
                   out: FixedPoint | None = None) -> np.ndarray:
    """The plaintext table ``F_table[u] = encode(F(q(u) * in_step))`` in ``out.ring``.

    Parameters
    ----------
    F : callable on float arrays (ReLU, GELU, sigmoid, ... -- any single-operand function).
    b : table input bits (1..16).
    in_step : real value of one step of the b-bit input (the layer's quantization step).
    out : fixed-point format of the output shares (default: Z_2^64 with 0 fractional bits).
    """
    b = check_table_bits(b)
    if not np.isfinite(in_step) or in_step <= 0:
        raise ValueError(f"in_step must be a positive finite float, got {in_step}")
    out = out or FixedPoint(Z2_64, 0)
    vals = np.asarray(F(signed_inputs(b).astype(np.float64) * in_step), dtype=np.float64)
    if vals.shape != (1 << b,):
        raise ValueError(f"F must map an array of shape ({1 << b},) to the same shape, "
                         f"got {vals.shape}")
    return out.encode(vals)


class TableReuseError(RuntimeError):
    """A Tabula table was used a second time (tables are single-use, Tabula §3.3)."""


@dataclass
class TabulaTables:
    """``n`` shared single-use tables of ``2^b`` entries over ``ring``.

    ``client[j]``/``server[j]`` are the parties' shares of table j, ``s_client[j]``/
    ``s_server[j]`` their shares (in Z_2^b) of the table secret s_j.
    """

    b: int
    ring: Ring
    client: np.ndarray
    server: np.ndarray
    s_client: np.ndarray
    s_server: np.ndarray
    used: bool = field(default=False)

    def __post_init__(self) -> None:
        self.b = check_table_bits(self.b)
        p = 1 << self.b
        self.client = np.asarray(self.client, dtype=np.uint64)
        self.server = np.asarray(self.server, dtype=np.uint64)
        if self.client.ndim != 2 or self.client.shape[1] != p or \
                self.server.shape != self.client.shape:
            raise ValueError(f"table shares must both have shape (n, {p}), got "
                             f"{self.client.shape} and {self.server.shape}")
        n = self.client.shape[0]
        self.s_client = np.asarray(self.s_client, dtype=np.uint64)
        self.s_server = np.asarray(self.s_server, dtype=np.uint64)
        if self.s_client.shape != (n,) or self.s_server.shape != (n,):
            raise ValueError(f"secret shares must have shape ({n},), got "
                             f"{self.s_client.shape} and {self.s_server.shape}")
        if (self.s_client >= p).any() or (self.s_server >= p).any():
            raise ValueError(f"secret shares must lie in Z_2^{self.b}")

    @property
    def n(self) -> int:
        return self.client.shape[0]

    @property
    def p(self) -> int:
        return 1 << self.b

    def storage_bits_per_party(self) -> int:
        """What each party stores: n tables of 2^b ring elements plus its b-bit secret share."""
        return self.n * (self.p * self.ring.bits + self.b)

    def consume(self) -> None:
        """Mark the tables as used; a second use raises :class:`TableReuseError`."""
        if self.used:
            raise TableReuseError(
                "these Tabula tables were already used: each table (and its secret s) may be "
                "looked up only once, otherwise the two revealed x + s leak x - x'")
        self.used = True

    def lookup(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Local lookups ``T_client[j, y_j]`` and ``T_server[j, y_j]`` (step 4 of Fig. 2)."""
        rows = np.arange(self.n)
        y = np.asarray(y, dtype=np.int64)
        return self.client[rows, y], self.server[rows, y]

    # simulator-side helpers (tests, notebooks) -------------------------------------------
    def secret(self) -> np.ndarray:
        """s = s_client + s_server mod 2^b (never known to either party)."""
        return (self.s_client + self.s_server) & np.uint64(self.p - 1)

    def reconstruct(self) -> np.ndarray:
        """T = [T]_client + [T]_server (n, 2^b) in the ring."""
        return self.ring.add(self.client, self.server)

    def unblinded(self) -> np.ndarray:
        """Row j rotated by s_j, so entry u is the value stored for input index u (= F)."""
        T = self.reconstruct()
        idx = (np.arange(self.p, dtype=np.uint64)[None, :] + self.secret()[:, None]) & \
            np.uint64(self.p - 1)
        return np.take_along_axis(T, idx.astype(np.int64), axis=1)


class LazyTables:
    """Ideal single-use tables materialised only where they are read.

    A fresh table ``T[y] = F(y - s)`` with uniformly random shares, read at one public index
    y, gives the parties a uniformly random sharing of ``F(y - s)``: that is what
    :meth:`lookup` returns, without storing 2^b entries per activation (accuracy sweeps run
    millions of activations at up to 16 bits). Same interface and bookings as
    :func:`dealer_tables`; tests check both give the same outputs.
    """

    def __init__(self, F_table: np.ndarray, n: int, rng: np.random.Generator,
                 ring: Ring = Z2_64, ledger: Ledger | None = None,
                 parties=("client", "server")):
        if not isinstance(rng, np.random.Generator):
            raise TypeError("rng must be a numpy.random.Generator (seed it explicitly)")
        self.F_table = ring.check(np.asarray(F_table), "F_table")
        size = self.F_table.size
        if self.F_table.ndim != 1 or size < 2 or size & (size - 1):
            raise ValueError(f"F_table must be a 1-D table of 2^b entries, got shape "
                             f"{self.F_table.shape}")
        self.b = check_table_bits(int(size).bit_length() - 1)
        self.ring, self.rng, self.used = ring, rng, False
        self.n = int(n)
        if self.n < 0:
            raise ValueError(f"number of tables n must be >= 0, got {n}")
        self.s_client = rng.integers(0, self.p, size=self.n, dtype=np.uint64)
        self.s_server = rng.integers(0, self.p, size=self.n, dtype=np.uint64)
        if ledger is not None:
            _book_dealer(ledger, parties, self.n, self.b, ring)

    @property
    def p(self) -> int:
        return 1 << self.b

    consume = TabulaTables.consume
    secret = TabulaTables.secret
    storage_bits_per_party = TabulaTables.storage_bits_per_party

    def lookup(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        idx = (np.asarray(y, dtype=np.uint64) - self.secret()) & np.uint64(self.p - 1)
        v = self.F_table[idx.astype(np.int64)]
        r = self.ring.random(self.rng, v.shape)
        return r, self.ring.sub(v, r)


def _book_dealer(ledger: Ledger, parties, n: int, b: int, ring: Ring,
                 values: tuple | None = None) -> None:
    """Book each party's tables; ``values``: per party, its ``(s_i, [T]_i)`` to record
    (without them -- :class:`LazyTables` never builds the tables -- ``SIZE_ONLY``)."""
    with ledger.offline(), ledger.round():
        for i, party in enumerate(parties):
            v = SIZE_ONLY
            if values is not None and ledger.records_values:
                v = Parts(values[i], names=(f"s_{i}", f"[T]_{i}"))
            ledger.send(Ledger.DEALER, party, n * ((1 << b) * ring.bits + b),
                        "Tabula table (ideal)", value=v)


def dealer_tables(F_table: np.ndarray, n: int, rng: np.random.Generator, ring: Ring = Z2_64,
                  ledger: Ledger | None = None, parties=("client", "server")) -> TabulaTables:
    """Ideal functionality of the preprocessing: a trusted dealer hands out ``n`` tables.

    Used where running the Fig. 3 protocol is too slow (b >= 11 tables in accuracy sweeps);
    the tables have exactly the distribution the protocol produces. If a ledger is given the
    dealer's material (2^b ring elements + b bits per table per party) is booked offline.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator (seed it explicitly)")
    F_table = ring.check(np.asarray(F_table), "F_table")
    if F_table.ndim != 1 or F_table.size & (F_table.size - 1) or F_table.size < 2:
        raise ValueError(f"F_table must be a 1-D table of 2^b entries, got shape {F_table.shape}")
    b = check_table_bits(int(F_table.size).bit_length() - 1)
    n = int(n)
    if n < 0:
        raise ValueError(f"number of tables n must be >= 0, got {n}")
    p = 1 << b
    s_c = rng.integers(0, p, size=n, dtype=np.uint64)
    s_s = rng.integers(0, p, size=n, dtype=np.uint64)
    s = (s_c + s_s) & np.uint64(p - 1)
    # T[y] = F(y - s)
    idx = (np.arange(p, dtype=np.uint64)[None, :] - s[:, None]) & np.uint64(p - 1)
    T = F_table[idx.astype(np.int64)]
    client = ring.random(rng, T.shape)
    server = ring.sub(T, client)
    if ledger is not None:
        _book_dealer(ledger, parties, n, b, ring, ((s_c, client), (s_s, server)))
    return TabulaTables(b, ring, client, server, s_c, s_s)
