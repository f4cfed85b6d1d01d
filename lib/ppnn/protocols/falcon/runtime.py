"""The three computing servers P0, P1, P2 and their basic operations (Falcon §3.1-3.2).

One :class:`Falcon` object simulates the three parties in one process. Values are 2-out-of-3
replicated shares (:data:`RSS`: additive components ``x0 + x1 + x2 = x``, ``Pi`` holds
``(x_i, x_{i+1})``). Every value that crosses between parties goes through
:meth:`Falcon._transmit`, which books it in the ledger and is the one place where a corrupt
party (a :class:`Deviation` or a :class:`Tamper`) may change what it sends.

* correlated randomness from pairwise PRF keys (a seeded generator per key stands in for AES:
  a simulation, the keys are not secret from anyone); linear operations are local;
* :meth:`Falcon.mul`, :meth:`Falcon.matmul` -- products by resharing (one round);
* :meth:`Falcon.open` -- reconstruction, each call site naming what it opens
  (:data:`OPEN_KINDS`); malicious, every party compares the two copies it received and a
  mismatch raises :class:`MaliciousAbort`;
* malicious multiplication -- every product verified with a dealer triple (Furukawa et al.),
  its check value ``v`` opened one way, the checks batched (:meth:`Falcon.verify`);
* :meth:`Falcon.truncate` -- ABY3-style pairs with the shared top bit of ``r``, exact up to
  one unit in the last place for ``|x| < 2^(ell-2)`` (:func:`truncate_aby3_plain` is the
  plain variant, for comparison).

Preprocessing (triples, truncation pairs, random bits, the Wrap3 mask) comes from a trusted
dealer (:class:`FalconDealer`) and is booked as *offline* traffic. With ``record_values``
every online message carries the elements that crossed (:attr:`Falcon.altered` lists those a
corrupt sender changed), a PRF key its 16 bytes (:func:`key_bytes`), a dealer message the
receiver's two components, and an honest party that aborts holds what it compared.

See also
--------
docs/protocols.md : Falcon's three parties (why ``v`` may be opened one way, when checks run).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ppnn.core import FixedPoint, Ledger, ReplicatedShares, Ring
from ppnn.core.dealer import ReplicatedDealer
from ppnn.core.transcript import Parts

from .adversary import Tamper
from .algebra import Z2, Zp, ring_matmul, wrap3

__all__ = ["Falcon", "MaliciousAbort", "Deviation", "Tamper", "Opened", "PARTIES", "ACTIONS",
           "OPEN_KINDS", "RSS", "FalconDealer", "key_bytes"]

PARTIES = ("P0", "P1", "P2")
ACTIONS = ("flip_share", "inconsistent_send", "bad_triple")
# plain: revealed as it is; masked: hidden by an independent uniform mask; blinded: a product
# times a random nonzero mask (private compare's d); check: a multiplication check value v
OPEN_KINDS = ("plain", "masked", "blinded", "check")
#: Z_p products and checks over arrays whose rows (the leading axis: private compare's bit
#: positions) hold at least this many elements go one row at a time (small temporaries, the
#: PRF drawn while in cache); smaller ones in whole-array steps (fewer numpy calls: LeNet)
ROW_MIN = 1 << 14
RSS = ReplicatedShares


def _shapes_only(alg, *shapes) -> list[np.ndarray]:
    """Dealer material of these shapes as a wire party forms it (:meth:`Falcon._deals` is
    False): zeros that take no memory, since its components arrive when the material is
    booked."""
    zero = np.zeros((), alg.dtype)
    return [np.broadcast_to(zero, s) for s in shapes]


def _row_blocks(shape: tuple[int, ...]) -> tuple:
    """``(blocks, inner)``: the indices to work through ``shape`` by (rows of the leading
    axis when each holds :data:`ROW_MIN` elements or more, else the whole array at once) and
    the shape of one block."""
    if len(shape) >= 2 and math.prod(shape[1:]) >= ROW_MIN:
        return range(shape[0]), shape[1:]
    return (slice(None),), shape


def key_bytes(seed: int) -> np.ndarray:
    """A PRF key as the 16 bytes its holder hands over (little-endian, ``uint8``): the
    simulation's key is the seed of its SFC64 generator (below ``2^62`` in process; 128 bits
    of OS entropy in wire mode, :mod:`ppnn.wire.falcon`), padded to the 128 bits booked for
    it -- opaque key material, not a share of anything."""
    return np.frombuffer(int(seed).to_bytes(16, "little"), dtype=np.uint8).copy()


class FalconDealer(ReplicatedDealer):
    """The trusted dealer of Falcon's preprocessing, whose bookings carry their values.

    :meth:`book` takes the replicated sharings it hands out; when the ledger records values,
    the message to ``Pi`` carries what ``Pi`` receives: of each sharing, in the order given,
    its two components ``x_i`` then ``x_{i+1}`` (flattened, concatenated, in the widest dtype
    among them). Recording off, nothing is built."""

    def book(self, bits_per_party: int, what: str, *material: RSS,
             names: tuple[str, ...] | None = None) -> None:
        values = None
        if names is not None and len(names) != len(material):
            raise ValueError(f"names must name each of the {len(material)} sharings of "
                             f"'{what}', got {names!r}")
        if material and self.ledger.records_values:
            dt = np.result_type(*(m.components.dtype for m in material))
            values = [Parts([m.components[j] for m in material for j in (i, (i + 1) % 3)], dt,
                            None if names is None else
                            [f"{n}_{j}" for n in names for j in (i, (i + 1) % 3)])
                      for i in range(3)]
        self._book(bits_per_party, what, values)


class Opened(NamedTuple):
    """One value the honest parties opened (recorded with ``record_openings=True``).

    ``tainted``: a tampered product was unverified when it was opened (so the value may
    depend on it); ``exposed``: tainted in a way its kind does not hide -- a plain opening,
    or a blinded one with a tampered product other than its own final product."""

    step: str
    kind: str
    material: str | None
    tainted: bool
    exposed: bool
    value: np.ndarray


class MaliciousAbort(RuntimeError):
    """An honest party detected a deviation and aborts the computation."""

    def __init__(self, check: str, party: str, step: str, detail: str = ""):
        self.check, self.party, self.step = check, party, step
        msg = f"{party} aborts: {check} failed at step '{step}'"
        super().__init__(msg + (f" ({detail})" if detail else ""))


@dataclass
class Deviation:
    """A corrupt party changes one message it sends at a chosen step.

    Parameters
    ----------
    party : ``"P0"``, ``"P1"`` or ``"P2"`` -- the corrupt party.
    step : ``"<ledger label path>::<what>"`` of the message (see ``Falcon.steps_sent_by``).
    action : ``"flip_share"`` (flip the lowest bit of one element of its share before sending),
        ``"inconsistent_send"`` (send a value shifted by a random nonzero offset), or
        ``"bad_triple"`` (subtract 1 from one element of the ``rho``/``sigma`` share it sends, as
        if it used a wrong copy of ``a``/``b``; only at ``mult-check rho/sigma`` steps -- an
        inconsistent send caught by the opening check, like the others). The richer
        :class:`~ppnn.protocols.falcon.adversary.Tamper` reaches every message class.
    occurrence : which matching message (0 = the first) is changed.
    """

    party: str
    step: str
    action: str = "inconsistent_send"
    occurrence: int = 0
    seen: int = field(default=0, init=False)
    fired: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        if self.party not in PARTIES:
            raise ValueError(f"deviating party must be one of {PARTIES}, got {self.party!r}")
        if self.action not in ACTIONS:
            raise ValueError(f"deviation action must be one of {ACTIONS}, got {self.action!r}")
        if self.action == "bad_triple" and "mult-check rho" not in self.step:
            raise ValueError("a bad triple can only be used at a 'mult-check rho/sigma' step")
        if not isinstance(self.occurrence, int) or self.occurrence < 0:
            raise ValueError(f"occurrence must be an int >= 0, got {self.occurrence!r}")


class Falcon:
    """Three parties running Falcon's protocols, semi-honest or malicious.

    Parameters
    ----------
    rng : numpy.random.Generator
        Seeds the PRF keys, the dealer and the input sharing (outputs are deterministic).
    malicious : bool
        Malicious security (redundant openings, verified multiplications, aborts).
    k : int
        Ring ``Z_2^k`` (Falcon: 32). Supported: 16..32.
    p : int
        Prime of private compare; must exceed ``k + 2`` (Falcon: 37).
    frac_bits : int
        Fixed-point precision (Falcon §3.1: 13). A product has ``2 frac_bits`` fractional bits
        and must fit with room to spare: ``2 frac_bits <= k - 6``.
    ledger : Ledger, optional
    deviation : Deviation or Tamper, optional
        A corrupt party's deviation (for the tampering harness).
    record_openings : bool
        Keep every opened value in :attr:`openings` (:class:`Opened`, for the harness).
    """

    #: Malicious: verify every pending product before a plain value is opened (and private
    #: compare's products before its last round). False restores the order of the first
    #: implementation -- checks only at the end of the outermost protocol -- so a test can show
    #: what the tamper harness finds without it (issue finding 2).
    VERIFY_BEFORE_OPEN = True

    def __init__(self, rng: np.random.Generator, *, malicious: bool = False, k: int = 32,
                 p: int = 37, frac_bits: int = 13, ledger: Ledger | None = None,
                 deviation: Deviation | Tamper | None = None, record_openings: bool = False):
        if not isinstance(rng, np.random.Generator):
            raise TypeError("rng must be a numpy.random.Generator (seed it explicitly)")
        if isinstance(k, bool) or not isinstance(k, int) or not 16 <= k <= 32:
            raise ValueError(f"ring bit width k must be an int in 16..32 (Falcon uses 32), got {k}")
        if isinstance(p, bool) or not isinstance(p, int) or p <= k + 2:
            raise ValueError(f"private-compare prime p must exceed k + 2 = {k + 2} (every "
                             f"c[i] must be nonzero mod p unless it is 0), got p={p}")
        if p >= 128:
            raise ValueError(f"private-compare prime p must be below 128 (private compare adds "
                             f"two elements of Z_p in one byte), got p={p}")
        if isinstance(frac_bits, bool) or not isinstance(frac_bits, int) or not (
                1 <= frac_bits and 2 * frac_bits <= k - 6):
            raise ValueError(f"frac_bits must be an int in [1, {(k - 6) // 2}] for Z_2^{k} "
                             f"(a product carries 2*frac_bits fractional bits), got {frac_bits}")
        if deviation is not None and not isinstance(deviation, Deviation | Tamper):
            raise TypeError("deviation must be a Deviation, a Tamper or None")
        self.malicious = bool(malicious)
        self.ring, self.bit, self.field = Ring(k), Z2(), Zp(p)
        self.fp = FixedPoint(self.ring, frac_bits)
        self.f = frac_bits
        self.k = k
        self.ledger = ledger or Ledger(PARTIES)
        if tuple(self.ledger.parties) != PARTIES:
            raise ValueError(f"the ledger's parties must be {PARTIES}, got {self.ledger.parties}")
        self.deviation = deviation
        self.tamper = deviation if isinstance(deviation, Tamper) else None
        self.openings: list[Opened] | None = [] if record_openings else None
        # every event a corrupt party could influence, in order: (kind, step, material)
        self.trace: list[tuple[str, str | None, str | None]] | None = (
            [] if record_openings else None)
        keys, inputs, *dealer = rng.spawn(8)
        seeds = [int(s.integers(1 << 62)) for s in keys.spawn(3)]
        self._keys = [np.random.Generator(np.random.SFC64(s)) for s in seeds]
        self._input_rng = inputs
        streams = ("triple", "trunc", "bits", "wrap", "pc", "misc")
        # Only the truncation mask r reaches an output (as the one-ulp rounding of a
        # truncation); every other stream is re-seeded on numpy's fastest generator
        rngs = {name: g if name == "trunc" else
                np.random.Generator(np.random.SFC64(g.bit_generator.seed_seq))
                for name, g in zip(streams, dealer)}
        self.dealer = FalconDealer(rngs, self.ledger, PARTIES)
        self._pending: list[tuple[RSS, str, bool]] = []  # (v, what, tampered product?)
        self._depth = 0
        # a wrong copy of k_i handed to P_{i-1} (key-setup tampering): (i, P_{i-1}'s generator)
        self._key_copy: tuple[int, np.random.Generator] | None = None
        self._zero_off = False
        #: ledger indices of the messages a corrupt party changed (a Deviation or a Tamper)
        self.altered: list[int] = []
        record = self.ledger.records_values
        with self.ledger.offline(), self.ledger.label("setup"), self.ledger.round():
            for i in range(3):  # Pi samples k_i and gives it to P_{i-1}
                if self.trace is not None:
                    self.trace.append(("key", f"setup::PRF key k_{i}", None))
                t, sent = self.tamper, seeds[i]
                if t is not None and t.index == i and t.hit("key", f"setup::PRF key k_{i}"):
                    sent = int(np.random.default_rng([t.seed, 7 + i]).integers(1 << 62))
                    self._key_copy = (i, np.random.Generator(np.random.SFC64(sent)))
                    self.altered.append(len(self.ledger.messages))
                self.ledger.send(PARTIES[i], PARTIES[(i - 1) % 3], 128, f"PRF key k_{i}",
                                 value=key_bytes(sent) if record else None)

    # ------------------------------------------------------------------ helpers
    @property
    def mode(self) -> str:
        return "malicious" if self.malicious else "semi-honest"

    def _honest(self) -> int:
        """Index of the party whose view is reported (the first honest one)."""
        bad = self.deviation.party if self.deviation is not None else None
        return next(i for i, p in enumerate(PARTIES) if p != bad)

    def share(self, x, alg=None) -> RSS:
        """A data holder shares integers ``x`` (not booked: inputs arrive from outside)."""
        alg = alg or self.ring
        x = np.asarray(x)
        if isinstance(alg, Ring):
            x = alg.check(x, "secret")
        r = alg.random(self._input_rng, (2, *x.shape))
        last = alg.sub(x, alg.add(r[0], r[1]))
        return RSS(np.concatenate([r, np.asarray(last, dtype=r.dtype)[None]]), alg)

    def share_fixed(self, x) -> RSS:
        """Encode reals in fixed point (``frac_bits``) and share them."""
        return self.share(self.fp.encode(x))

    def public(self, x, alg=None) -> RSS:
        """A public value as a (trivial) sharing: component 0 = x, others 0."""
        alg = alg or self.ring
        x = np.asarray(alg.reduce(np.asarray(x)), dtype=alg.dtype)
        comps = np.zeros((3, *x.shape), dtype=alg.dtype)
        comps[0] = x
        return RSS(comps, alg)

    def reveal(self, x: RSS) -> np.ndarray:
        """Oracle view for tests (no messages)."""
        return np.asarray(x.reveal(), dtype=np.uint64)

    def reveal_fixed(self, x: RSS) -> np.ndarray:
        return self.fp.decode(self.reveal(x))

    # ------------------------------------------------------------------ randomness
    def zero3(self, alg, shape) -> np.ndarray:
        """3-out-of-3 randomness: ``alpha_i = F(k_i) - F(k_{i+1})``, ``sum alpha_i = 0``."""
        f = np.stack([alg.random(g, shape) for g in self._keys])
        nxt = self._key_view(alg, f)
        return alg.sub(f, nxt)

    def _key_view(self, alg, f: np.ndarray) -> np.ndarray:
        """``F(k_{i+1})`` as ``Pi`` computes it (``f[[1, 2, 0]]``; with a tampered key setup
        the holder of the wrong copy derives its value from that copy). Sets
        :attr:`_zero_off` when the resulting zero sharing does not sum to zero."""
        nxt = f[[1, 2, 0]]
        self._zero_off = False
        if self._key_copy is not None:
            i, g = self._key_copy
            wrong = alg.random(g, f.shape[1:])
            self._zero_off = not np.array_equal(wrong, f[i])
            if self._zero_off:
                self.tamper.changed += 1
            nxt = nxt.copy()
            nxt[(i - 1) % 3] = wrong
        return nxt

    def rand2of3(self, alg, shape) -> RSS:
        """2-out-of-3 randomness: ``r_i = F(k_i)``, known to ``Pi`` and ``P_{i-1}``."""
        return RSS(np.stack([alg.random(g, shape) for g in self._keys]), alg)

    # ------------------------------------------------------------------ messages
    def _step(self, what: str) -> str:
        return f"{self.ledger.current_label}::{what}"

    def _transmit(self, sender: int, receiver: int, value: np.ndarray, alg, what: str,
                  change: bool = False) -> np.ndarray:
        """Book one message and deliver it (possibly changed by the corrupt sender: by a
        :class:`Deviation`, or by the :class:`Tamper` when the caller says ``change``)."""
        value = np.asarray(value, dtype=alg.dtype)
        out = value
        if change or isinstance(self.deviation, Deviation):  # an honest run skips this
            out = self._deliver(sender, value, alg, what, change)
            if out is not value:  # the corrupt sender changed it
                self.altered.append(len(self.ledger.messages))
        self.ledger.send(PARTIES[sender], PARTIES[receiver], value.size * alg.bits, what,
                         value=out)  # kept only when the ledger records values
        return out

    def _deliver(self, sender: int, value: np.ndarray, alg, what: str,
                 change: bool) -> np.ndarray:
        """What arrives of ``value``: itself, or its change by the corrupt sender."""
        if change:
            return self.tamper.perturb(value, alg)
        dev = self.deviation
        if (not isinstance(dev, Deviation) or dev.fired or PARTIES[sender] != dev.party
                or self._step(what) != dev.step):
            return value
        dev.seen += 1
        if dev.seen - 1 != dev.occurrence:
            return value
        dev.fired = True
        out = value.copy()
        flat = out.reshape(-1)
        if flat.size == 0:
            return out
        if dev.action == "flip_share":
            flat[0:1] = alg.reduce(flat[0:1].astype(np.uint64) ^ np.uint64(1))
        elif dev.action == "bad_triple":  # x_i - (a_i + delta) instead of x_i - a_i
            flat[0:1] = alg.sub(flat[0:1], np.ones(1, dtype=flat.dtype))
        else:
            g = np.random.default_rng(len(dev.step))
            delta = alg.reduce(g.integers(1, 1 << 16, size=flat.shape))
            delta[delta == 0] = 1
            flat[:] = alg.add(flat, delta)
        return out

    def _settle(self) -> None:
        """Messages received in the current round are read after this call. A no-op here
        (:meth:`_transmit` delivers at once); in wire mode (:mod:`ppnn.wire`) a party sends
        every message of a round before it waits for the ones it receives, as a real party
        does, and this is where it waits."""

    def _checking(self) -> tuple[int, ...]:
        """The parties whose checks run here: those of :meth:`_local` (all three in the
        simulation; in wire mode, one process per party, only the process's own party)."""
        return self._local()

    def _tampered_pending(self, skip_last: bool = False) -> bool:
        """Is a product whose resharing was tampered still unverified?"""
        items = self._pending[:-1] if skip_last else self._pending
        return any(t for _, _, t in items)

    def open(self, x: RSS, what: str = "open", kind: str = "plain",
             material: str | None = None, held: str | None = None) -> np.ndarray:
        """Reconstruct ``x`` for all parties (Falcon §3.2, "Reconstruction").

        Semi-honest: ``Pi`` sends ``x_i`` to ``P_{i+1}`` (one element each, one round).
        Malicious: ``Pi`` also sends ``x_{i+1}`` to ``P_{i-1}``; each party compares the two
        copies of its missing component and aborts on a mismatch -- except for a ``"check"``
        value, opened one way (see :meth:`verify`).

        ``kind`` (one of ``OPEN_KINDS``) is decided by the caller, per call site:

        * ``"plain"`` -- ``x`` itself is revealed (a pow bit, an output). Malicious: every
          pending product is verified first (:meth:`verify`, one extra round if something is
          pending), so no plain value is ever opened while a product it may depend on is
          unverified. Must not be called inside an open ``ledger.round()``.
        * ``"masked"`` -- ``x`` plus an independent uniform mask from the dealer (``x - a``
          of a triple, ``x + r`` of truncation and Wrap3, ``b xor c`` of bit injection):
          uniform whatever ``x`` is, so opening it before ``x``'s products are verified
          reveals nothing, even if ``x`` is wrong. Public values computed from it (Wrap3's
          ``delta`` and the ``x`` fed to private compare, truncation's carry) are functions of
          this uniform value only.
        * ``"blinded"`` -- private compare's ``d = m * prod c``: reveals only whether a
          factor is zero, and that bit is masked by the random ``beta`` -- *provided every
          factor is genuine*. An additive error in an earlier product of the tree (or in
          step 5) could test whether a chosen ``c[i]`` equals a chosen value, which ``m``
          and ``beta`` do not hide; so the caller verifies every earlier product no later
          than the round of the final product. An error ``e`` in the final product only
          shifts the opened value by the adversary's own ``e`` and is caught in the round
          of the opening.
        * ``"check"`` -- a multiplication check ``v``: zero, or the adversary's own error.

        ``material`` names the dealer item that masks the opening (for the harness: a
        corrupt party may use a wrong copy of its component of it). ``held``: when the
        ledger records values, every party holds the value *it* reconstructed (its two
        components plus the one it received) under this name -- after a corrupt sender's
        change they differ. The value returned is the first honest party's.
        """
        return self._open(x, what, kind, material, held)[0]

    def _open(self, x: RSS, what: str, kind: str, material: str | None = None,
              held: str | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
        """:meth:`open`, also returning what each party reconstructed (its two components
        plus the one it received first)."""
        return self._open_many([(x, what, kind, material, held)])[0]

    def open_many(self, items, verify_pending: bool = False, checks_last: bool = False,
                  native: bool = False) -> list[np.ndarray]:
        """Several openings in one round: ``items`` of ``(x, what, kind[, material[,
        held]])`` (as for :meth:`open`). Every party sends the messages of all of them
        before it waits for any (:meth:`_settle` once), so in wire mode the round costs one
        latency, not one per opening; the ledger is the same as opening them one after the
        other in one round (the malicious multiplication check's ``rho`` and ``sigma``).
        ``verify_pending``:
        the checks of every pending product are opened in the same round and judged
        (:meth:`verify`) -- before the items (their messages first, and the items' values
        are used only if the checks pass), or with ``checks_last`` after them (private
        compare's ``d`` and the check of the tree's last level). ``native``: the values in
        their algebra's dtype (uint8 for Z_p, Z_2) instead of uint64."""
        full = [(*it, *(None,) * (5 - len(it))) for it in items]
        return [value for value, _ in self._open_many(full, verify_pending, checks_last,
                                                       native)]

    def _open_many(self, items, verify_pending: bool = False, checks_last: bool = False,
                   native: bool = False) -> list[tuple[np.ndarray, list[np.ndarray]]]:
        """:meth:`open_many` with ``held`` per item, returning each item's value and what each
        party reconstructed. The checks run after every message has arrived, in order."""
        for _, _, kind, _, _ in items:
            if kind not in OPEN_KINDS:
                raise ValueError(f"opening kind must be one of {OPEN_KINDS}, got {kind!r}")
        if (self.malicious and self._pending and self.VERIFY_BEFORE_OPEN
                and any(kind == "plain" for _, _, kind, _, _ in items)):
            if getattr(self.ledger, "_round_depth", 0):
                raise RuntimeError("a plain opening inside an open round cannot verify the "
                                   "products it depends on first")
            self.verify()
        pending = list(self._pending) if verify_pending else []
        checks = [(v, f"mult-check v: {what}", "check", "triple c", None)
                  for v, what, _ in pending]
        order = items + checks if checks_last else checks + items
        with self.ledger.round():
            sent = [self._open_send(x, what, kind, material)
                    for x, what, kind, material, _ in order]
        self._settle()  # what was received is read below
        sent_items = sent[:len(items)] if checks_last else sent[len(checks):]
        sent_checks = sent[len(items):] if checks_last else sent[:len(checks)]

        def judge():
            if checks:
                self._judge(pending, [self._open_finish(*c, *got, native=True)[1]
                                      for c, got in zip(checks, sent_checks)])

        if not checks_last:
            judge()
        out = [self._open_finish(*it, *got, native=native) for it, got in zip(items, sent_items)]
        if checks_last:
            judge()
        return out

    def _open_send(self, x: RSS, what: str, kind: str, material: str | None):
        """An opening's messages, as :meth:`open` describes (inside the caller's round);
        returns what each party receives, and the second copies when malicious."""
        alg, C = x.ring, x.components
        step = self._step(what)
        # malicious: a redundant second copy, except for a check value (one way, see verify)
        redundant = self.malicious and kind != "check"
        if self.trace is not None:  # "open1": a malicious opening without a second copy
            self.trace.append(("open" if redundant or not self.malicious else "open1", step,
                               material))
        first = copy2 = False
        t = self.tamper
        if t is not None and (t.kind in ("open", "open_both")
                              or (t.kind == "open_copy" and redundant)
                              or (t.kind == "dealer_local" and material is not None)):
            if t.hit("dealer_local" if t.kind == "dealer_local" else "open", step, material):
                first, copy2 = t.sends()
        bad = t.index if t is not None else -1
        got = [self._transmit((i - 1) % 3, i, C[(i - 1) % 3], alg, what,
                              first and (i - 1) % 3 == bad) for i in range(3)]
        copy = None
        if redundant:
            copy = [self._transmit((i + 1) % 3, i, C[(i - 1) % 3], alg, what,
                                   copy2 and (i + 1) % 3 == bad) for i in range(3)]
        return got, copy

    def _public(self, value: np.ndarray) -> np.ndarray:
        """An opened value as this process uses it (itself here; see :mod:`ppnn.wire`)."""
        return value

    def _open_finish(self, x: RSS, what: str, kind: str, material: str | None,
                     held: str | None, got, copy, native: bool = False
                     ) -> tuple[np.ndarray, list[np.ndarray]]:
        """After the round's messages arrived: the malicious consistency check, what each
        party holds, and the opened value (``native``: in the algebra's dtype, else uint64)."""
        alg, C = x.ring, x.components
        step = self._step(what)
        if copy is not None:
            for i in self._checking():
                if not np.array_equal(got[i], copy[i]):
                    j, a, b = (i - 1) % 3, PARTIES[(i - 1) % 3], PARTIES[(i + 1) % 3]
                    # what the honest party compared, and the check that fired (recording)
                    self.ledger.hold(PARTIES[i], f"copy of x_{j} from {a}", got[i])
                    self.ledger.hold(PARTIES[i], f"copy of x_{j} from {b}", copy[i])
                    self.ledger.hold(PARTIES[i], "check: copies differ -> abort",
                                     (got[i] != copy[i]).astype(np.uint8))
                    raise MaliciousAbort("open consistency check", PARTIES[i], step,
                                         f"copies of x_{j} from {a} and {b} differ")
        if held is not None and self.ledger.records_values:
            for i in range(3):
                self.ledger.hold(PARTIES[i], held, alg.add(alg.add(C[i], C[(i + 1) % 3]),
                                                           got[i]))
        h = self._honest()
        # what each party reconstructed: the reported party's and, for a check value, every
        # checking party's (see verify); none in a process of no party (wire mode's dealer)
        need = set()
        if self._local():  # (a process of no party reconstructs nothing)
            need = {h, *self._checking()} if kind == "check" else {h}
        dt = alg.dtype if native else np.dtype(np.uint64)
        views = [np.asarray(alg.add(alg.add(C[i], C[(i + 1) % 3]), got[i]), dtype=dt)
                 if i in need else None for i in range(3)]
        value = self._public(views[h] if views[h] is not None else np.zeros(C.shape[1:], dt))
        if self.openings is not None:
            tainted = self._tampered_pending()
            exposed = (kind == "plain" and tainted) or (
                kind == "blinded" and self._tampered_pending(skip_last=True))
            self.openings.append(Opened(step, kind, material, tainted, exposed, value))
        return value, views

    def open_components(self, x: RSS, what: str = "open", kind: str = "plain",
                        material: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Like :meth:`open` but also return all three components (every party learns them)."""
        value = self.open(x, what, kind, material)
        return value, x.components

    def _reshare(self, z: np.ndarray, alg, what: str) -> tuple[RSS, bool]:
        """``Pi`` sends its 3-out-of-3 share ``z_i`` to ``P_{i-1}`` (inside the caller's round).

        Returns the new sharing and whether it carries an error (a tampered resharing, or a
        zero sharing off because of a tampered key setup): a *tampered product*."""
        if self.trace is not None:
            self.trace.append(("reshare", self._step(what), None))
        t = self.tamper
        bad = t.index if t is not None and t.kind == "reshare" and t.hit(
            "reshare", self._step(what)) else -1
        comps = np.stack([self._transmit(i, (i - 1) % 3, z[i], alg, what, i == bad)
                          for i in range(3)])
        tampered = self._zero_off or (bad >= 0 and not np.array_equal(comps[bad], z[bad]))
        if isinstance(self.deviation, Deviation) and not tampered:
            tampered = not np.array_equal(comps, z)
        return RSS(comps, alg), tampered

    # ------------------------------------------------------------------ protocols frame
    @contextlib.contextmanager
    def protocol(self, name: str) -> Iterator[Falcon]:
        """Label a (sub)protocol; at the end of the outermost one, run pending checks."""
        with self.ledger.label(name):
            self._depth += 1
            try:
                yield self
            except BaseException:
                self._depth -= 1
                self._pending.clear()
                raise
            self._depth -= 1
            self.dealer.flush()
            if self._depth == 0:
                self.verify()

    def verify(self) -> None:
        """Open every pending multiplication check ``v`` (one round, or the caller's round)
        and abort unless v = 0."""
        if self._pending:
            self._open_many([], verify_pending=True)

    def _judge(self, pending: list, opened: list[list[np.ndarray]]) -> None:
        """The pending checks' verdict: every honest party tests the ``v`` it reconstructed
        (``opened``, one-way openings) and aborts unless it is zero."""
        self._pending = []
        bad = self.deviation.party if self.deviation is not None else None
        for views, (_, what, _) in zip(opened, pending):
            nonzero = [i for i in self._checking()
                       if PARTIES[i] != bad and np.any(views[i] != 0)]
            if nonzero:
                honest = PARTIES[nonzero[0]]
                val = views[nonzero[0]].astype(np.uint64)
                self.ledger.hold(honest, f"mult-check v: {what} (opened)", val)
                self.ledger.hold(honest, "check: v != 0 -> abort", (val != 0).astype(np.uint8))
                raise MaliciousAbort("multiplication check", honest,
                                     self._step(f"mult-check v: {what}"),
                                     f"{int(np.count_nonzero(val))} product(s) inconsistent")

    # ------------------------------------------------------------------ multiplication
    def mul(self, x: RSS, y: RSS, what: str = "mult", verify_pending: bool = False) -> RSS:
        """Elementwise product (no truncation), one round; verified when malicious.

        Shapes broadcast like numpy (the output shape is reshared). ``verify_pending``: also
        open the checks of every earlier unverified product in this round (malicious)."""
        if not isinstance(x, RSS) or not isinstance(y, RSS):
            raise TypeError("mul expects two ReplicatedShares")
        if x.ring != y.ring:
            raise ValueError(f"ring mismatch: {x.ring!r} vs {y.ring!r}")
        try:
            shape = np.broadcast_shapes(x.shape, y.shape)
        except ValueError:
            raise ValueError(f"share shape mismatch: {x.shape} vs {y.shape}") from None
        alg = x.ring
        X, Y = x.components, y.components
        # z_i = x_i y_i + x_i y_{i+1} + x_{i+1} y_i = x_i (y_i + y_{i+1}) + x_{i+1} y_i
        if isinstance(alg, Zp):
            z = self._mul_local_zp(alg, X, Y, shape)
        else:
            z = self._mul_local_ring(alg, X, Y, shape)
        triple = self._triple(alg, x.shape, y.shape) if self.malicious else None
        with self.ledger.round():
            out, tampered = self._reshare(z, alg, what)
            if self.malicious:
                self._check_mul(x, y, out, triple, what, tampered, verify_pending)
        self._settle()  # the reshared product is read by the caller
        if self._depth == 0:  # a product outside any protocol is verified at once
            self.verify()
        return out

    def query_begins(self) -> None:
        """The moment the query starts (the model is shared, the image not yet): nothing in
        the simulation; a wire party marks its online phase here (:mod:`ppnn.wire.falcon`)."""

    def _local(self) -> tuple[int, ...]:
        """The parties whose local computation this process performs: all three in the
        simulation; in wire mode (:mod:`ppnn.wire`) only the process's own party, and none in
        the dealer's process."""
        return (0, 1, 2)

    def _deals(self) -> bool:
        """Whether this process forms the dealer's material values: the simulation and the
        wire dealer's process do; a wire party's process, whose components of the material
        arrive from the dealer, needs only their shapes."""
        return True

    def _rows(self) -> tuple[int, ...]:
        """The share components this process computes: those the parties of :meth:`_local`
        hold (``i`` and ``i + 1`` for ``Pi``) -- all three in the simulation, a wire party's
        two, none in the wire dealer's process."""
        return tuple(sorted({j for i in self._local() for j in (i, (i + 1) % 3)}))

    def _not_computed(self, comps: np.ndarray, alg, rows: tuple[int, ...]) -> None:
        """Rows of ``comps`` this process did not compute (not in ``rows``): nothing to do in
        the simulation, which computes them all; wire mode fills them with garbage."""

    def _sub_rows(self, x: RSS, y: RSS) -> RSS:
        """``x - y`` on the components of :meth:`_rows` (broadcasting); the others are not
        computed (:meth:`_not_computed`)."""
        alg, rows = x.ring, self._rows()
        if rows == (0, 1, 2):
            return x - y
        shape = np.broadcast_shapes(x.components.shape, y.components.shape)
        comps = np.empty(shape, alg.dtype)
        for r in rows:
            comps[r] = alg.sub(x.components[r], y.components[r])
        self._not_computed(comps, alg, rows)
        return RSS(comps, alg)

    def _prf(self, alg, shape) -> tuple[list, list]:
        """``F(k_i)`` and ``F(k_{i+1})`` for every party ``i`` of :meth:`_local`: the keys
        of :meth:`_rows` are drawn (a party holds both of its keys), the others are None."""
        keys = self._rows()
        if isinstance(alg, Zp):  # the draws' own dtype (Z_p's products sum them widened)
            f = [alg._draw(self._keys[j], 0, shape, cast=False) if j in keys else None
                 for j in range(3)]
        else:
            f = [alg.random(self._keys[j], shape) if j in keys else None for j in range(3)]
        if self._key_copy is not None:
            nxt = list(self._key_view(alg, np.stack(f)))
        else:
            nxt, self._zero_off = f[1:] + f[:1], False
        return f, nxt

    def _mul_local_ring(self, alg, X: np.ndarray, Y: np.ndarray, shape) -> np.ndarray:
        """The local product shares over Z_L or Z_2 of the parties of :meth:`_local`: ``z_i
        = x_i (y_i + y_{i+1}) + x_{i+1} y_i + F(k_i) - F(k_{i+1})`` (the zero share of
        :meth:`zero3`); the other rows are left unwritten, as in :meth:`_mul_local_zp`."""
        rows = self._local()
        f, nxt = self._prf(alg, shape)
        z = np.empty((3, *shape), dtype=alg.dtype)
        for i in rows:
            j = (i + 1) % 3
            zi = alg.add(alg.mul(X[i], alg.add(Y[i], Y[j])), alg.mul(X[j], Y[i]))
            z[i] = alg.add(zi, alg.sub(f[i], nxt[i]))
        return z

    def _mul_local_zp(self, F: Zp, X: np.ndarray, Y: np.ndarray, shape) -> np.ndarray:
        """Every party's local product share over Z_p plus its 3-out-of-3 zero share, formed
        in ``F.wide`` and reduced once: ``x_i (y_i + y_{i+1}) + x_{i+1} y_i + F(k_i) + p -
        F(k_{i+1})`` (below ``3 (p-1)^2 + 2p``). Only the parties of :meth:`_local`; the
        other rows of the result are left unwritten (wire mode: :meth:`_reshare` sends only
        the process's own ``z_i`` and fills the rest from the wire or with garbage). Formed a
        row of the leading axis at a time when rows are large (private compare's bit
        positions; :func:`_row_blocks`), so the wide temporaries are one row each; the PRF is
        drawn a row at a time too, and used while the row is in cache (a tampered key setup,
        which compares whole draws, draws whole)."""
        wide, p = F.wide, F.wide.type(F.p)
        rows = self._local()
        z = np.empty((3, *shape), dtype=F.dtype)
        blocks, inner = _row_blocks(shape)
        acc, tmp = np.empty(inner, dtype=wide), np.empty(inner, dtype=wide)
        if self._key_copy is None:  # the PRF drawn one block at a time, used while in cache
            keys, self._zero_off = self._rows(), False

            def prf(t):  # F(k_i), F(k_{i+1}) of block t for each party of rows
                d = {j: F._draw(self._keys[j], 0, inner, cast=False) for j in keys}
                return {i: (d[i], d[(i + 1) % 3]) for i in rows}
        else:  # a tampered key setup compares whole draws (_key_view)
            f, nxt = self._prf(F, shape)

            def prf(t):
                return {i: (f[i][t], nxt[i][t]) for i in rows}
        ops = [(i, *(a if a.shape == shape else np.broadcast_to(a, shape)
                     for a in (X[i], X[(i + 1) % 3], Y[i], Y[(i + 1) % 3])))
               for i in rows]
        for t in blocks:
            pair = prf(t)
            for i, Xi, Xj, Yi, Yj in ops:
                np.add(Yi[t], Yj[t], out=acc, dtype=wide)
                acc *= Xi[t]
                np.multiply(Xj[t], Yi[t], out=tmp, dtype=wide)
                acc += tmp
                acc += pair[i][0]
                np.subtract(p, pair[i][1], out=tmp, dtype=wide)
                acc += tmp
                z[i][t] = F.mod(acc)
        return z

    def _triple(self, alg, shape_a, shape_b) -> tuple[RSS, RSS, RSS]:
        """A (broadcasting) triple: ``a`` of ``x``'s shape, ``b`` of ``y``'s, ``c = a * b``."""
        if self._deals():
            a = alg.random(self.dealer.rngs["triple"], shape_a)
            b = alg.random(self.dealer.rngs["triple"], shape_b)
            c = self._material("triple c", alg.mul(a, b), alg)
        else:
            a, b, c = _shapes_only(alg, shape_a, shape_b,
                                   np.broadcast_shapes(shape_a, shape_b))
        ta, tb = self.dealer.share(a, alg, "triple"), self.dealer.share(b, alg, "triple")
        tc = self.dealer.share(c, alg, "triple")
        self.dealer.book(2 * (a.size + b.size + c.size) * alg.bits, "multiplication triple",
                         ta, tb, tc, names=("a", "b", "c"))
        return ta, tb, tc

    def _material(self, name: str, x: np.ndarray, alg) -> np.ndarray:
        """Dealer material ``name`` as handed out: ``x``, or -- under a ``dealer`` tamper,
        outside the threat model -- a wrong value given consistently to both holders."""
        if self.trace is not None:
            self.trace.append(("dealer", None, name))
        t = self.tamper
        if t is None or t.kind != "dealer" or not t.hit("dealer", None, name):
            return x
        return t.perturb(np.asarray(x, dtype=alg.dtype), alg).astype(np.asarray(x).dtype)

    def _check_mul(self, x: RSS, y: RSS, z: RSS, triple, what: str, tampered: bool,
                   verify_pending: bool = False) -> None:
        """Open ``rho = x - a`` and ``sigma = y - b`` (with every pending check, if
        ``verify_pending``, in the same round) and queue ``v = z - c - rho b - sigma a -
        rho sigma`` as pending."""
        alg = x.ring
        ta, tb, tc = triple
        rho, sigma = self.open_many([(self._sub_rows(x, ta), f"mult-check rho: {what}",
                                      "masked", "triple a"),
                                     (self._sub_rows(y, tb), f"mult-check sigma: {what}",
                                      "masked", "triple b")], verify_pending, native=True)
        # v = z - c - rho b - sigma a - rho sigma (broadcasting like the product)
        if isinstance(alg, Zp):  # one reduction: z + (p - c) + (p^2 - rho b) + (p^2 - sigma a)
            wide = alg.wide
            p, pp = wide.type(alg.p), wide.type(alg.p * alg.p)  # sum < 2p^2 + 2p fits wide
            rho_r, sigma_r = alg.reduce(rho), alg.reduce(sigma)
            rows = self._rows()
            comps = np.empty(z.components.shape, alg.dtype)
            # a row of the leading axis at a time (as in _mul_local_zp): wide rows only
            shape = z.components.shape[1:]
            blocks, inner = _row_blocks(shape)
            acc, tmp = np.empty(inner, wide), np.empty(inner, wide)
            rho_b, sigma_b = np.broadcast_to(rho_r, shape), np.broadcast_to(sigma_r, shape)
            for r in rows:  # the components this process computes (see _rows)
                Z, C, TB, TA = (np.broadcast_to(a.components[r], shape) for a in (z, tc, tb, ta))
                for t in blocks:
                    np.subtract(p, C[t], out=acc, dtype=wide)
                    acc += Z[t]
                    np.multiply(TB[t], rho_b[t], out=tmp, dtype=wide)
                    np.subtract(pp, tmp, out=tmp)
                    acc += tmp
                    np.multiply(TA[t], sigma_b[t], out=tmp, dtype=wide)
                    np.subtract(pp, tmp, out=tmp)
                    acc += tmp
                    comps[r][t] = alg.mod(acc)
            self._not_computed(comps, alg, rows)
        else:
            comps = alg.sub(alg.sub(z.components, tc.components), alg.mul(tb.components, rho))
            comps = alg.sub(comps, alg.mul(ta.components, sigma))
        v = RSS(comps, alg).add_public(alg.neg(alg.mul(rho, sigma)))
        self._pending.append((v, what, tampered))

    def matmul(self, x: RSS, w: RSS, what: str = "matmul", verify_pending: bool = False
               ) -> RSS:
        """Matrix product ``x @ w`` of shared matrices (no truncation), one round.

        Only the ``m x p`` output is reshared. Malicious: verified with a matrix triple."""
        if not isinstance(w, RSS) or x.ring != w.ring:
            raise ValueError("matmul needs ReplicatedShares over the same ring")
        if len(x.shape) != 2 or len(w.shape) != 2 or x.shape[1] != w.shape[0]:
            raise ValueError(f"matmul shapes do not chain: {x.shape} @ {w.shape}")
        ring = x.ring
        X, W = x.components, w.components
        shape = (x.shape[0], w.shape[1])
        # z_i = x_i (w_i + w_{i+1}) + x_{i+1} w_i + F(k_i) - F(k_{i+1}), for the parties of
        # _local only (a wire party forms its own z_i; the other rows are left unwritten, as
        # in _mul_local_ring). Each x_k needed is multiplied once, against the matrices it
        # meets side by side: w_k + w_{k+1} (for z_k) and w_{k-1} (for z_{k-1})
        rows = self._local()
        f, nxt = self._prf(ring, shape)
        meets: dict[int, list] = {}  # k -> [(i, matrix)]: x_k @ matrix goes into z_i
        for i in rows:
            meets.setdefault(i, []).append((i, ring.add(W[i], W[(i + 1) % 3])))
            meets.setdefault((i + 1) % 3, []).append((i, W[i]))
        z = np.empty((3, *shape), dtype=ring.dtype)
        for i in rows:
            z[i] = ring.sub(f[i], nxt[i])
        p = shape[1]
        for k, pairs in meets.items():
            mats = [m for _, m in pairs]  # (a wire party's x_k meets one: no copy)
            prod = ring_matmul(ring, X[k], mats[0] if len(mats) == 1 else
                               np.concatenate(mats, axis=1))
            for t, (i, _) in enumerate(pairs):
                z[i] = ring.add(z[i], prod[:, t * p:(t + 1) * p])
        triple = self._matrix_triple(x.shape, w.shape) if self.malicious else None
        with self.ledger.round():
            out, tampered = self._reshare(z, ring, what)
            if self.malicious:
                self._check_matmul(x, w, out, triple, what, tampered, verify_pending)
        self._settle()  # the reshared product is read by the caller
        if self._depth == 0:
            self.verify()
        return out

    def _matrix_triple(self, shape_a, shape_b) -> tuple[RSS, RSS, RSS]:
        ring = self.ring
        if self._deals():
            g = self.dealer.rngs["triple"]
            a, b = ring.random(g, shape_a), ring.random(g, shape_b)
            c = self._material("triple c", ring_matmul(ring, a, b), ring)
        else:
            a, b, c = _shapes_only(ring, shape_a, shape_b, (shape_a[0], shape_b[1]))
        ta, tb = self.dealer.share(a, ring, "triple"), self.dealer.share(b, ring, "triple")
        tc = self.dealer.share(c, ring, "triple")
        self.dealer.book(2 * (a.size + b.size + c.size) * ring.bits, "matrix triple",
                         ta, tb, tc, names=("A", "B", "C"))
        return ta, tb, tc

    def _check_matmul(self, x: RSS, w: RSS, z: RSS, triple, what: str, tampered: bool,
                      verify_pending: bool = False) -> None:
        ring = x.ring
        ta, tb, tc = triple
        rho, sigma = self.open_many([(self._sub_rows(x, ta), f"mult-check rho: {what}",
                                      "masked", "triple a"),
                                     (self._sub_rows(w, tb), f"mult-check sigma: {what}",
                                      "masked", "triple b")], verify_pending)
        m, n = x.shape
        p = w.shape[1]
        # rho b_i and a_i sigma for the components this process computes (_rows), each as
        # one product; the others are not computed (_not_computed)
        rows = list(self._rows())
        k = len(rows)
        comps = np.empty(z.components.shape, ring.dtype)
        if k:  # (none in the wire dealer's process, whose outputs are not used)
            rb = ring_matmul(ring, rho, np.concatenate(list(tb.components[rows]), axis=1))
            rb = rb.reshape(m, k, p).transpose(1, 0, 2)
            asg = ring_matmul(ring, ta.components[rows].reshape(k * m, n), sigma)
            comps[rows] = ring.sub(ring.sub(ring.sub(z.components[rows], tc.components[rows]),
                                            rb), asg.reshape(k, m, p))
        self._not_computed(comps, ring, tuple(rows))
        v = RSS(comps, ring).add_public(ring.neg(ring_matmul(ring, rho, sigma)))
        self._pending.append((v, what, tampered))

    # ------------------------------------------------------------------ truncation
    def truncate(self, x: RSS, d, what: str = "truncate") -> RSS:
        """Divide by ``2^d`` (floor, or floor + 1 ulp) for ``|x| < 2^(k-2)``; one round.

        ``d`` is an int or an integer array broadcastable to ``x.shape`` (0 leaves x as is).
        Preprocessing: ``r`` uniform in ``Z_L``, shares of its top bit ``r_msb`` and of
        ``(r mod 2^(k-1)) >> d``. Online: ``y = x + 2^(k-2)`` lies in ``[0, 2^(k-1))``; open
        ``c = y + r``; with ``u = msb(c) XOR r_msb`` (the carry of ``y + (r mod 2^(k-1))``),
        ``y >> d = (c mod 2^(k-1)) >> d - (r mod 2^(k-1)) >> d + u 2^(k-1-d)``, or one less.
        """
        ring, k = self.ring, self.k
        if x.ring != ring:
            raise ValueError(f"truncate works on shares over {ring!r}, got {x.ring!r}")
        d = np.broadcast_to(np.asarray(d, dtype=np.int64), x.shape)
        if d.size and (d.min() < 0 or d.max() > k - 2):
            raise ValueError(f"truncation amount d must be in [0, {k - 2}], got "
                             f"[{d.min()}, {d.max()}]")
        du = d.astype(np.uint64)
        g = self.dealer.rngs["trunc"]
        r = ring.random(g, x.shape)
        half = np.uint64(1 << (k - 1))
        r_msb = r >> np.uint64(k - 1)
        r_low = r & (half - np.uint64(1))
        sh_r = self.dealer.share(r, ring, "trunc")
        sh_msb = self.dealer.share(r_msb, ring, "trunc")
        sh_lowt = self.dealer.share(self._material("truncation r >> d", r_low >> du, ring),
                                    ring, "trunc")
        self.dealer.book(3 * 2 * int(np.prod(x.shape, dtype=np.int64)) * ring.bits,
                         "truncation pair (r, msb(r), (r mod 2^(k-1)) >> d)",
                         sh_r, sh_msb, sh_lowt, names=("r", "msb(r)", "r' >> d"))
        offset = np.uint64(1 << (k - 2))
        c = self.open((x + offset) + sh_r, what, "masked", "truncation r")
        c_msb, c_low = c >> np.uint64(k - 1), c & (half - np.uint64(1))
        # u = c_msb XOR r_msb = c_msb + r_msb - 2 c_msb r_msb (linear in the shared r_msb)
        u = sh_msb.mul_public(ring.reduce(1 - 2 * c_msb.astype(np.int64))).add_public(c_msb)
        top = np.asarray(ring.reduce(np.left_shift(np.uint64(1), (k - 1) - du)), np.uint64)
        y_tr = u.mul_public(top) - sh_lowt
        y_tr = y_tr.add_public(c_low >> du)
        return y_tr.add_public(ring.neg(offset >> du))

    def mul_fixed(self, x: RSS, y: RSS, what: str = "mult") -> RSS:
        """Fixed-point product: :meth:`mul` then :meth:`truncate` by ``frac_bits``."""
        return self.truncate(self.mul(x, y, what), self.f, f"truncate: {what}")

    def matmul_fixed(self, x: RSS, w: RSS, what: str = "matmul") -> RSS:
        return self.truncate(self.matmul(x, w, what), self.f, f"truncate: {what}")

    def mul_public_fixed(self, x: RSS, c, what: str = "scale") -> RSS:
        """Multiply by public reals ``c`` (encoded with ``frac_bits``) and truncate."""
        return self.truncate(x.mul_public(self.fp.encode(c)), self.f, f"truncate: {what}")


def truncate_aby3_plain(fal: Falcon, x: RSS, d: int, what: str = "truncate (plain ABY3)"
                        ) -> RSS:
    """ABY3's plain pair truncation ``(x - r) >> d + (r >> d)`` with ``r`` uniform in Z_L.

    Kept to show why it is not used: it is wrong by about ``2^(k-d)`` whenever ``x - r`` wraps,
    i.e. with probability about ``|x| / 2^(k-1)`` -- often, for a 32-bit ring.
    """
    ring = fal.ring
    r = ring.random(fal.dealer.rngs["trunc"], x.shape)
    sh_r = fal.dealer.share(r, ring, "trunc")
    sh_rt = fal.dealer.share(ring.reduce(ring.to_signed(r) >> d), ring, "trunc")
    fal.dealer.book(2 * 2 * int(np.prod(x.shape, dtype=np.int64)) * ring.bits,
                    "truncation pair (r, r >> d)", sh_r, sh_rt, names=("r", "r >> d"))
    c = fal.open(x - sh_r, what, "masked", "truncation r")
    return sh_rt.add_public(ring.reduce(ring.to_signed(c) >> d))


def exact_wrap_oracle(ring: Ring, x: RSS) -> np.ndarray:
    """Plaintext oracle of the exact wrap count of the three components (tests/notebook)."""
    return wrap3(ring, *x.components, exact=True)
