"""SwaNN in wire mode: the client, the server(s) and the dealer as processes, SPMD with garbage.

``swann_cs`` runs the client (``P0``), the server (``P1``) and the dealer; ``swann_2s`` the
client, ``server1`` (``P1``), ``server2`` (``P2``) and the dealer. Every process runs the
in-process protocol (:func:`ppnn.protocols.swann.run_inference`) with a
:class:`SwannWireLedger`, a :class:`WireTwoPC` and a :class:`WirePaillier` (real:
:class:`WireRealPaillier`), which change only where values come from: the client holds the
images and the key pair, a server the model, and every other value is garbage from the
process's own generator until a booked message brings it. A server holds :class:`NotHeld`
in place of the client's secret key; reading it raises :class:`KeyNotHeldError`.

The 2PC's triples and random OTs come from the dealer's process (OS CSPRNG, class
``offline ideal``); the OT extension SwaNN books crosses as zero filler of its booked size.
On the Paillier simulator a ciphertext is its plaintext mod N, so the honesty proof shows
data flow but cannot separate the secret key. With ``backend="real"`` (phe + gmpy2) the key
is in the client's process only; ciphertexts and partial decryptions cross as integers mod
``N^2`` at the booked ``2 log2 N`` bits, and two-server the client sends each server a fresh
share of the key. ``result.extra["swann"]`` gives each process's ciphertext messages.

Main names: :func:`run_plan`, :func:`swann_job`, :data:`SWANN_FAMILIES`, :data:`ROLE_OF`,
:func:`ciphertext_stats`. :func:`input_bits_reading_owner_mask` is a deliberately broken step
(the receiver of a 2PC input uses its own draw of the owner's mask) that the garbage test
catches on both backends.

See also
--------
docs/wire.md : the honesty argument, and SwaNN in "Family by family".
"""

from __future__ import annotations

import copy
import dataclasses
from functools import partial

import numpy as np
from gmpy2 import mpz

from ppnn.core import Ledger
from ppnn.core.dealer import BeaverTriple, BitTriple, Dealer
from ppnn.core.randomness import SecureRandom
from ppnn.core.sharing import AdditiveShares, XorShares
from ppnn.he.paillier import CipherArray, Paillier, SimulatedPaillier, split_private_key
from ppnn.he.paillier.ciphertexts import PackingLayout
from ppnn.he.paillier.keys import KeyShare
from ppnn.protocols.swann import inference as si
from ppnn.protocols.swann.twopc import TwoPC

from .launch import checked_images, launch, swapped
from .transport import Wire, WireError

__all__ = ["SWANN_FAMILIES", "BACKENDS", "ROLE_OF", "SwannWireLedger", "WireTwoPC",
           "WirePaillier", "WireRealPaillier", "NotHeld", "KeyNotHeldError", "run_plan",
           "input_bits_reading_owner_mask", "reading_owner_mask", "ciphertext_stats"]

#: the SwaNN families that run with ``transport="tcp"`` and their scenarios
SWANN_FAMILIES = {"swann_cs": "client-server", "swann_2s": "two-server"}
#: the backends of a wire run ("sim": the Paillier simulator; "real": real Paillier, the
#: secret key in the client's process only)
BACKENDS = ("sim", "real")
#: the launcher's role of each party, per scenario (the family's roles: no idle process)
ROLE_OF = {"client-server": {"client": "P0", "server": "P1", Ledger.DEALER: "dealer"},
           "two-server": {"client": "P0", "server1": "P1", "server2": "P2",
                          Ledger.DEALER: "dealer"}}


class KeyNotHeldError(PermissionError):
    """A process used a secret key its party does not hold (:class:`NotHeld`)."""


class NotHeld:
    """Stands in for a secret key in the process of a party that does not hold it. The
    simulator's decryption reads no key (see the module docstring); on real Paillier
    (:class:`WireRealPaillier`) every use of it -- ``raw_decrypt``, ``p``, ``q``, any
    attribute a decryption would read -- raises :class:`KeyNotHeldError`."""

    def __repr__(self) -> str:
        return "NotHeld()"

    def __getattr__(self, name: str):
        if name.startswith("__"):  # pickling and copying look these up: plain absence
            raise AttributeError(name)
        raise KeyNotHeldError(f"this process does not hold the client's secret key (it read "
                              f"{name!r} of a NotHeld stand-in)")


# -- the bytes of one message ---------------------------------------------------------------
def _int_layout(size: int, per: int):
    """Frame parts of ``size`` big integers of ``per`` bits: bytes when ``per`` is whole bytes,
    else one bit string."""
    if per % 8 == 0:
        return [((size, per // 8), np.dtype(np.uint8), 8)]
    return [((size * per,), np.dtype(np.uint8), 1)]


def _ints_to_parts(values, per: int):
    nb = -(-per // 8)
    raw = np.frombuffer(b"".join(int(v).to_bytes(nb, "little") for v in values), np.uint8)
    raw = raw.reshape(len(values), nb)
    if per % 8 == 0:
        return [(raw, 8)]
    bits = np.unpackbits(raw, axis=1, bitorder="little")[:, :per]
    return [(bits.reshape(-1), 1)]


def _parts_to_ints(got, size: int, per: int) -> list[int]:
    if per % 8 == 0:
        raw = got[0]
    else:
        bits = got[0].reshape(size, per)
        pad = np.zeros((size, -per % 8), np.uint8)
        raw = np.packbits(np.concatenate([bits, pad], axis=1), axis=1, bitorder="little")
    return [int.from_bytes(row.tobytes(), "little") for row in raw]


def ciphertext_stats() -> dict:
    """Empty counters of the ciphertext messages a process sent and received."""
    return {way: {"messages": 0, "ciphertexts": 0, "booked bits": 0, "payload bytes": 0}
            for way in ("sent", "received")}


class SwannWireLedger(Ledger):
    """The ledger of one party's process: books every message as the simulation does and
    carries it over ``wire``. ``me``: the process's party; ``roles``: party -> launcher role."""

    def __init__(self, parties, wire: Wire, me: str, roles: dict[str, str],
                 ciphertexts: dict | None = None):
        super().__init__(parties)
        if me not in parties:
            raise ValueError(f"me must be one of {parties}, got {me!r}")
        self.wire, self.me, self.roles = wire, me, dict(roles)
        #: the ciphertext messages this process sent and received: counts, booked bits and
        #: the bytes of their frames' payloads (``ciphertext_stats``)
        self.ciphertexts = ciphertext_stats() if ciphertexts is None else ciphertexts

    def send(self, sender, receiver, bits, what="", value=None):
        """A message booked by size only (the OT extension's columns, B2A's random OTs): the
        sender's process sends that many bits of zero filler."""
        msg = super().send(sender, receiver, bits, what, value)
        if sender != self.DEALER:  # nothing reads the filler: its receive is deferred
            self._cross(msg, [((bits // 8,), np.dtype(np.uint8), 8),
                              ((bits % 8,), np.dtype(np.uint8), 1)], None, defer=True)
        return msg

    def transmit(self, sender, receiver, bits, what, value, recorded=None):
        msg = Ledger.send(self, sender, receiver, bits, what,
                          value=value if recorded is None else recorded)
        if isinstance(value, CipherArray):  # big integers at 2 log2 N bits each
            per = self._per(msg, value.size)

            def parts():
                out = _ints_to_parts(value.data.ravel(), per)
                self._count_ciphertexts("sent", msg, value.size, out)
                return out

            got = self._cross(msg, _int_layout(value.size, per), parts)
            if got is None:
                return value
            self._count_ciphertexts("received", msg, value.size, got)
            ints = _parts_to_ints(got, value.size, per)
            bound = int(value.public_key.n) ** (1 if value.simulated else 2)
            if any(v >= bound for v in ints):
                raise WireError(f"{msg.label}::{msg.what}: a received ciphertext is not below "
                                f"N{'' if value.simulated else '^2'}")
            out = copy.copy(value)  # the receiver's own array: same key, kind, shape (index)
            out.data = np.array([mpz(v) for v in ints] if not value.simulated else ints,
                                dtype=object).reshape(value.shape)
            out.shadow = None
            return out
        if isinstance(value, KeyShare):  # d_i as a signed integer of wire_bits bits
            w = msg.bits
            got = self._cross(msg, _int_layout(1, w),
                              lambda: _ints_to_parts([value.d % (1 << w)], w))
            if got is None:
                return value
            d = _parts_to_ints(got, 1, w)[0]
            return dataclasses.replace(value, d=d - (1 << w) if d >> (w - 1) else d)
        arr = np.asarray(value)
        per = self._per(msg, arr.size)
        got = self._cross(msg, [(arr.shape, arr.dtype, per)], lambda: [(arr, per)])
        return arr if got is None else got[0]

    def swap(self, parties, bits: int, what: str, values: np.ndarray) -> np.ndarray:
        """An exchange between the two ``parties`` in one round (booked as
        :meth:`Ledger.exchange`): ``values[i]`` is what ``parties[i]`` sends; the result has
        the other party's row as received (a process of neither keeps its garbage)."""
        p0, p1 = parties
        with self.round():
            m01 = Ledger.send(self, p0, p1, bits, what)
            m10 = Ledger.send(self, p1, p0, bits, what)
        out = values.copy()
        mine = {p0: (m01, m10, 0, 1), p1: (m10, m01, 1, 0)}.get(self.me)
        if mine is None:
            return out
        sent, recv, i, j = mine
        per = self._per(sent, values[i].size)
        layout = [(values[i].shape, values.dtype, per)]
        self._cross(sent, layout, lambda: [(values[i], per)])
        out[j] = self._cross(recv, layout, None)[0]
        return out

    def _count_ciphertexts(self, way: str, msg, size: int, parts) -> None:
        c = self.ciphertexts[way]
        c["messages"] += 1
        c["ciphertexts"] += size
        c["booked bits"] += msg.bits
        c["payload bytes"] += sum(int(np.asarray(p[0] if isinstance(p, tuple) else p).nbytes)
                                  for p in parts)

    @staticmethod
    def _per(msg, size: int) -> int:
        per, rest = divmod(msg.bits, max(size, 1))
        if rest or not 1 <= per:
            raise WireError(f"a message of {msg.bits} bits cannot carry {size} elements at one "
                            "width")
        return per

    def _cross(self, msg, layout, parts, defer: bool = False):
        """Send (``parts()``: the frame's parts; None: zero filler of ``layout``) or receive
        one booked message; None in the process of a party that is neither end. ``defer``:
        the receiver does not wait for it here (``Wire.expect``: nothing reads it; it is
        taken off the socket before the next receive), so the OT extension's filler of an
        AND layer does not make a party wait before it sends its Beaver openings."""
        w = self.wire
        online = msg.phase == "online"
        cls = "online" if online else "offline setup"
        if online:
            w.enter_round(msg.round)
        step = f"{msg.label}::{msg.what}"
        if self.me == msg.sender:
            data = [(np.zeros(s, t), b) for s, t, b in layout] if parts is None else parts()
            w.send(self.roles[msg.receiver], data, step, cls,
                   round=msg.round if online else None)
            return None
        if self.me == msg.receiver:
            if defer:
                w.expect(self.roles[msg.sender], layout, step, cls)
                return None
            return w.recv(self.roles[msg.sender], layout, step, cls)
        return None


# -- the Paillier simulator in a party's process -----------------------------------------
class _Unchecked(PackingLayout):
    """A packing layout without the lab's checks of values (garbage in this process)."""

    def check_values(self, values) -> np.ndarray:
        return np.asarray(values, dtype=object).ravel()

    def unpack_plain(self, packed, count: int) -> np.ndarray:
        mask = (1 << self.slot_bits) - 1
        out = []
        for v, g in zip([int(v) for v in np.asarray(packed, dtype=object).ravel()],
                        self.groups(count)):
            out.extend((v >> (self.slot_bits * j)) & mask for j in range(len(g)))
        return np.array(out, dtype=object)


class WirePaillier(SimulatedPaillier):
    """The Paillier simulator of a party's process: no lab checks of plaintexts (they run in
    the launcher and the dealer's in-process run), and a secret key this party does not hold
    is :class:`NotHeld` (the simulator reads no key)."""

    lab_checks = False

    def layout(self, slot_bits: int) -> PackingLayout:
        return _Unchecked(slot_bits, self.n_bits)

    def _check_sk(self, private_key) -> None:
        if not isinstance(private_key, NotHeld):
            super()._check_sk(private_key)


class _DealerPaillier(SimulatedPaillier):
    """The simulator of the dealer's in-process run: the lab's checks on, and no secret key
    (the dealer gets the public key and :class:`NotHeld`; the simulator reads no key)."""

    def _check_sk(self, private_key) -> None:
        if not isinstance(private_key, NotHeld):
            super()._check_sk(private_key)


class WireRealPaillier(Paillier):
    """Real Paillier (gmpy2 on ``phe`` keys) in the process of the party ``me``.

    Every homomorphic operation, encryption and rerandomization is real, whichever party's
    step it is (SPMD: this process also runs the other parties' steps, on garbage). What needs
    a secret -- :meth:`decrypt`, :meth:`decrypt_raw`, :meth:`partial_decrypt`,
    :meth:`combine` -- is computed with the key only for ``me``'s own steps; for another
    party's step the process reads no key and makes garbage residues from its generator
    ``garbage`` (that party's result is garbage in this process anyway: its real value, if
    ``me`` ever needs it, arrives as a message). So a server's process, which holds
    :class:`NotHeld` for the client's secret key, never reads it while it plays the client's
    steps, and decrypting *as itself* with it raises :class:`KeyNotHeldError`.

    No lab copies: the ciphertexts of a party's process carry no
    :attr:`~ppnn.he.paillier.CipherArray.shadow` (the lab's copy of their plaintexts), and
    packing layouts skip the value checks (:attr:`lab_checks` off; the launcher and the
    dealer's in-process run make them)."""

    lab_checks = False

    def __init__(self, public_key, ledger=None, timings=None, *, me: str,
                 garbage: np.random.Generator, obfuscation: str = "djn"):
        super().__init__(public_key, ledger, timings, obfuscation)
        self.me, self.garbage = me, garbage
        self._acting: str | None = None

    def layout(self, slot_bits: int) -> PackingLayout:
        return _Unchecked(slot_bits, self.n_bits)

    def _wrap(self, data, shadow=None) -> CipherArray:
        return CipherArray(np.asarray(data, dtype=object), self.pk, False, None)

    def _follow(self, fn, *operands):
        return None

    def _check_sk(self, private_key) -> None:
        if not isinstance(private_key, NotHeld):
            super()._check_sk(private_key)

    def _garbage_below(self, bound: int):
        nb = (int(bound).bit_length() + 71) // 8  # 64 bits more: the residue near uniform
        return mpz(int.from_bytes(self.garbage.bytes(nb), "little") % int(bound))

    def _as(self, party: str, fn, *args, **kw):
        self._acting = party
        try:
            return fn(*args, **kw)
        finally:
            self._acting = None

    def _mine(self) -> bool:
        return self._acting == self.me

    def decrypt(self, private_key, c, party: str):
        return self._as(party, super().decrypt, private_key, c, party)

    def decrypt_raw(self, private_key, c, party: str):
        return self._as(party, super().decrypt_raw, private_key, c, party)

    def partial_decrypt(self, share, c, party: str):
        return self._as(party, super().partial_decrypt, share, c, party)

    def combine(self, p1, p2, party: str, signed: bool = True):
        return self._as(party, super().combine, p1, p2, party, signed)

    #: another party's decrypted plaintexts in this process: garbage below 2^64 (any width
    #: would do; 64 bits keep the logits a server's process "decrypts" for the client within
    #: float range, for the arg-max every process takes)
    GARBAGE_PLAIN = 1 << 64

    def _dec(self, private_key, c):
        return super()._dec(private_key, c) if self._mine() else \
            self._garbage_below(self.GARBAGE_PLAIN)

    def _partial(self, c, d: int):
        return super()._partial(c, d) if self._mine() else self._garbage_below(self.n2)

    def _combine_one(self, u):
        return super()._combine_one(u) if self._mine() else \
            self._garbage_below(self.GARBAGE_PLAIN)


# -- the 2PC engine and its dealer ----------------------------------------------------------
class _WireDealer(Dealer):
    """In a party's process: the triples and random OTs come from the dealer process (its
    own shares; the other party's, garbage). In a process of neither party: all garbage."""

    def __init__(self, rng, ledger, parties, wire: Wire, me: str):
        super().__init__(rng, ledger, parties)
        self.wire, self.me = wire, me

    def _receive(self, what: str, shapes_bits) -> list[np.ndarray] | None:
        if self.me not in self.parties:
            return None
        return self.wire.recv("dealer", [(s, np.uint64, b) for s, b in shapes_bits],
                              f"{self.ledger.current_label}::{what} ({self.me})",
                              "offline ideal")

    def bit_triples(self, shape, k: int = 1) -> BitTriple:
        t = super().bit_triples(shape, k)  # garbage of the right shapes
        got = self._receive("bit triple", [(tuple(shape), k)] * 3)
        if got is not None:
            i = self.parties.index(self.me)
            for sh, real in zip((t.a, t.b, t.c), got):
                sh.shares[i] = real
        return t

    def triple(self, ring, shape) -> BeaverTriple:
        t = super().triple(ring, shape)
        got = self._receive("beaver triple", [(tuple(shape), ring.bits)] * 3)
        if got is not None:
            i = self.parties.index(self.me)
            for sh, real in zip((t.a, t.b, t.c), got):
                sh.shares[i] = real
        return t

    def random_ots(self, ring, shape):
        """B2A's random OTs: the evaluator (sender) ``m0, m1``, the helper (receiver) ``c``
        and ``m_c``."""
        g = self.rng
        m0, m1 = ring.random(g, shape), ring.random(g, shape)
        c = g.integers(0, 2, size=shape, dtype=np.uint64)
        mc = ring.random(g, shape)
        helper, evaluator = self.parties
        if self.me == evaluator:
            m0, m1 = self._receive("random OTs", [(tuple(shape), ring.bits)] * 2)
        elif self.me == helper:
            c, mc = self._receive("random OTs", [(tuple(shape), 1), (tuple(shape), ring.bits)])
        return m0, m1, c, mc


class WireTwoPC(TwoPC):
    """SwaNN's 2PC engine in a party's process: the same circuits, with the openings of the
    Beaver steps and B2A's OT messages on the wire and the dealer's material received."""

    def __init__(self, ledger, parties, rng, ot=None, timings=None):
        super().__init__(ledger, parties, rng, ot, timings)
        self.dealer = _WireDealer(rng, self._scratch, self.parties, ledger.wire, ledger.me)

    def and_(self, a: XorShares, b: XorShares) -> XorShares:
        n = int(np.prod(a.shape, dtype=np.int64))
        self._offline_and(n)
        with self.timed():
            t = self.dealer.bit_triples(a.shape, a.k)
            d_sh, e_sh = a ^ t.a, b ^ t.b
            both = np.stack([d_sh.shares, e_sh.shares], axis=1)  # (party, 2, ...)
            both = self.ledger.swap(self.parties, 2 * n * a.k, "beaver AND: x^a, y^b", both)
            d, e = both[0, 0] ^ both[1, 0], both[0, 1] ^ both[1, 1]
            z = XorShares(t.c.shares ^ (t.b.shares & d) ^ (t.a.shares & e), a.k)
            return z ^ (d & e)

    def mul(self, x: AdditiveShares, y: AdditiveShares) -> AdditiveShares:
        n = int(np.prod(x.shape, dtype=np.int64))
        self._offline_mul(n, x.ring.k)
        ring = x.ring
        with self.timed():
            t = self.dealer.triple(ring, x.shape)
            e_sh, f_sh = x - t.a, y - t.b
            both = np.stack([e_sh.shares, f_sh.shares], axis=1)
            both = self.ledger.swap(self.parties, 2 * n * ring.bits, "beaver: x-a, y-b", both)
            e, f = ring.add(both[0, 0], both[1, 0]), ring.add(both[0, 1], both[1, 1])
            z = t.c + t.b.mul_public(e) + t.a.mul_public(f)
            return z.add_public(ring.mul(e, f))

    def b2a(self, x: XorShares, ring) -> AdditiveShares:
        """:meth:`TwoPC.b2a` with its correlated OTs run from the dealer's random OTs, in the
        one booked round: the helper (receiver, bit ``a``, random choice ``c``, ``m_c``)
        sends ``e = a ^ c``; the evaluator (sender, bit ``b``, ``m0, m1``) sends
        ``y = m0 + b - m1``, which does not depend on ``e``. The helper gets ``t' = m_c +
        c y = m0 + c b`` and takes ``t = t'`` (``e = 0``) or ``-t'``; the evaluator takes
        ``s = m0`` or ``-m0 - b``: ``t = s + a b``."""
        m, n = self._b2a_offline(x, ring)
        helper, evaluator = self.parties
        led = self.ledger
        a = x.shares[0].astype(np.uint64)
        b = x.shares[1].astype(np.uint64)
        m0, m1, c, mc = self.dealer.random_ots(ring, a.shape)
        with led.round():
            e = led.transmit(helper, evaluator, m * n, "B2A: OT choice bits", a ^ c)
            y = led.transmit(evaluator, helper, m * n * ring.k, "B2A: OT corrections",
                             ring.sub(ring.add(m0, b), m1))
        with self.timed():
            t1 = ring.add(mc, ring.mul(c, y))
            t = np.where(e == 1, ring.neg(t1), t1)
            s = np.where(e == 1, ring.sub(ring.neg(m0), b), m0)
            return self._b2a_shares(a, b, t, s, ring)


# -- the dealer process ----------------------------------------------------------------------
class _RecordingDealer(Dealer):
    def __init__(self, rng, ledger, parties, events):
        super().__init__(rng, ledger, parties)
        self.events = events

    def bit_triples(self, shape, k: int = 1):
        t = super().bit_triples(shape, k)
        self.events.append(("bit", self.parties, k, [(t.a.shares[i], t.b.shares[i],
                                                      t.c.shares[i]) for i in (0, 1)]))
        return t

    def triple(self, ring, shape):
        t = super().triple(ring, shape)
        self.events.append(("arith", self.parties, ring.bits,
                            [(t.a.shares[i], t.b.shares[i], t.c.shares[i]) for i in (0, 1)]))
        return t


class _RecordingTwoPC(TwoPC):
    """The in-process 2PC engine, recording the triples its dealer makes and the shapes of
    its B2A's OTs (the dealer process deals the random OTs for them). ``material``: where
    the triples come from (None: the simulation's ``rng``)."""

    def __init__(self, ledger, parties, rng, ot=None, timings=None, *, events, material=None):
        super().__init__(ledger, parties, rng, ot, timings)
        self.events = events
        self.dealer = _RecordingDealer(rng if material is None else material, self._scratch,
                                       self.parties, events)

    def b2a(self, x, ring):
        self.events.append(("ot", self.parties, ring, x.shares[0].shape))
        return super().b2a(x, ring)


def _dealer_run(plan, x, seed, material=None):
    """The in-process run (the simulation's draws and checks) and the 2PC material, drawn
    from ``material`` (the dealer process: a :class:`SecureRandom`; None: the simulation's
    generator of ``seed``, the material a guesser of the seed would redraw)."""
    imp, scenario = plan.impl, SWANN_FAMILIES[plan.family]
    per = 1 if scenario == "client-server" else 2
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    events: list = []
    led = Ledger(si.PARTIES[scenario])
    logits = []
    for j in range(0, len(x), per):
        res = si.run_inference(imp["model"], x[j:j + per], scenario, imp["optimized"],
                               imp["keys"], rng, simulated=True,
                               twopc=partial(_RecordingTwoPC, events=events,
                                             material=material),
                               paillier=_DealerPaillier)
        led.merge(res.ledger)
        logits += [np.asarray(z, dtype=object) for z in res.logits]
    return np.stack(logits), led, events


def _send_material(wire: Wire, events, roles: dict[str, str], g) -> None:
    for kind, parties, bits, payload in events:
        if kind == "ot":
            ring, shape = bits, payload
            helper, evaluator = parties
            m0, m1 = ring.random(g, shape), ring.random(g, shape)
            c = g.integers(0, 2, size=shape, dtype=np.uint64)
            mc = np.where(c == 1, m1, m0)
            wire.send(roles[evaluator], [(m0, ring.bits), (m1, ring.bits)], "random OTs",
                      "offline ideal")
            wire.send(roles[helper], [(c, 1), (mc, ring.bits)], "random OTs", "offline ideal")
            continue
        for p, shares in zip(parties, payload):
            wire.send(roles[p], [(s, bits) for s in shares], f"{kind} triple",
                      "offline ideal")


# -- jobs run in each process ---------------------------------------------------------------
def _no_check(x_int) -> None:
    """A party's process skips the lab's input check (neither party holds both the model
    and the input; the launcher and the dealer's in-process run make it)."""


def _garbage_model(model, g: np.random.Generator):
    """The client's copy of the model: weights, biases and float parameters replaced by
    garbage of their (public) shapes; the layers, widths and windows are public."""
    out = copy.copy(model)

    def garbage(params):
        return [{k: garbage(v) if isinstance(v, list) else g.uniform(-1.0, 1.0, np.shape(v))
                 for k, v in p.items()} for p in params]

    out.params = garbage(model.params)
    out.steps = [dataclasses.replace(
        s, W=None if s.W is None else g.integers(-127, 128, s.W.shape),
        b=None if s.b is None else np.array([int(v) for v in g.integers(-(1 << 20), 1 << 20,
                                                                         np.shape(s.b))],
                                            dtype=object).reshape(np.shape(s.b)))
        for s in model.steps]
    return out


def _party_keys(keys, me: str, g: np.random.Generator):
    """The keys as the party ``me`` holds them: the client all; a server the public key, a
    stand-in for the secret key and garbage exponents for both shares (its own arrives in
    the setup message)."""
    if me == "client":
        return keys
    shares = None if keys.shares is None else tuple(
        dataclasses.replace(s, d=int(g.integers(1 << 62))) for s in keys.shares)
    return si.SwannKeys(keys.public_key, NotHeld(), shares)


def _client_keys(keys, scenario: str):
    """The client's keys in its process on real Paillier: the key pair it was handed (the
    plan's) and, two-server, secret-key shares it makes here (:func:`split_private_key`, the
    OS CSPRNG) and sends each server in the setup message."""
    shares = split_private_key(keys.private_key) if scenario == "two-server" else None
    return si.SwannKeys(keys.public_key, keys.private_key, shares)


def swann_job(wire: Wire, task: dict) -> dict:
    """What each process of a SwaNN wire run does (module-level for pickling)."""
    if wire.role == "dealer":  # the material from the OS CSPRNG (module docstring)
        _, led, events = _dealer_run(task["plan"], task["x"], task["seed"], SecureRandom())
        _send_material(wire, events, task["roles"], SecureRandom())
        return {"output": None, "ledger": led}
    scenario, roles = task["scenario"], task["roles"]
    real = task.get("backend", "sim") == "real"
    me = {r: p for p, r in roles.items()}[wire.role]
    g = wire.garbage
    model = copy.copy(task["model"])
    model.check_input = _no_check
    x = task.get("x")
    if me != "client":
        x = g.uniform(0.0, 1.0, task["x_shape"])
        keys = _party_keys(task["keys"], me, g)
    else:
        keys = _client_keys(task["keys"], scenario) if real else task["keys"]
    paillier = partial(WireRealPaillier, me=me, garbage=g) if real else WirePaillier
    # the process's own draws (2PC masks and shares): the OS CSPRNG on real Paillier, a
    # generator seeded from OS entropy on the simulator (module docstring)
    rng = SecureRandom() if real else np.random.Generator(
        np.random.SFC64(np.random.SeedSequence()))
    per = 1 if scenario == "client-server" else 2
    led, logits, cts = Ledger(si.PARTIES[scenario]), [], ciphertext_stats()
    with reading_owner_mask(task.get("broken", False)):
        for j in range(0, len(x), per):
            wl = SwannWireLedger(si.PARTIES[scenario], wire, me, roles, cts)
            res = si.run_inference(model, x[j:j + per], scenario, task["optimized"], keys,
                                   rng, simulated=not real, ledger=wl, twopc=WireTwoPC,
                                   paillier=paillier)
            led.merge(res.ledger)
            logits += [np.asarray(z, dtype=object) for z in res.logits]
    info = {"party": me, "paillier": paillier.func.__name__ if real else paillier.__name__,
            "secret key": type(keys.private_key).__name__, "ciphertexts": cts}
    return {"output": np.stack(logits) if me == "client" else None, "ledger": led,
            "info": info}


# -- the deliberately broken step ---------------------------------------------------------
def input_bits_reading_owner_mask(self: TwoPC, owner: str, bits, what: str) -> XorShares:
    """A broken 2PC input: it sends and books what :meth:`TwoPC.input_bits` does, but the
    receiver's share is the mask as *its own process* drew it -- reading the owner's draw
    instead of the message it received."""
    bits = np.asarray(bits, dtype=np.uint64)
    other = self.parties[1 - self.parties.index(owner)]
    mask = self.rng.integers(0, 2, size=bits.shape, dtype=np.uint64)
    self.ledger.transmit(owner, other, bits.size, what, mask)  # received, then ignored
    shares = np.stack([mask, bits ^ mask] if owner == self.parties[1]
                      else [bits ^ mask, mask])
    return XorShares(shares, 1)


def reading_owner_mask(on: bool = True):
    """Within the block, 2PC inputs are :func:`input_bits_reading_owner_mask` (in process:
    the same logits; in wire mode: the garbage test fails)."""
    return swapped(TwoPC, "input_bits", input_bits_reading_owner_mask, on)


# -- the run ------------------------------------------------------------------------------
def run_plan(plan, x, seed=0, *, backend: str = "sim", timeout: float | None = None,
             deadline: float | None = 600.0, broken: bool = False):
    """``ppnn.run(plan, x, seed, backend, transport="tcp")`` for SwaNN: a
    :class:`~ppnn.protocols.api.Result` whose ``extra["wire"]`` is
    :func:`~ppnn.wire.summary.wire_summary` and ``extra["swann"]`` what each process held and
    sent (its Paillier backend, the type of its secret key -- ``NotHeld`` in every process but
    the client's -- and its ciphertext messages: counts, booked bits, payload bytes).

    ``backend``: ``"sim"`` (the Paillier simulator) or ``"real"`` (real Paillier, the secret
    key in the client's process only; see the module docstring); ``timeout``: seconds a
    process waits for a message (None: 30 s, 600 s on ``"real"``, where a party waits while
    another computes on ciphertexts); ``broken``: the parties run
    :func:`input_bits_reading_owner_mask` (the garbage test's negative control)."""
    import pandas as pd

    from ppnn.protocols.api import Result, family

    from .summary import wire_summary

    x = checked_images(plan, x, SWANN_FAMILIES)
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if timeout is None:
        timeout = 600.0 if backend == "real" else 30.0
    scenario = SWANN_FAMILIES[plan.family]
    per = family(plan.family).spec.images_per_run
    if len(x) % per:
        raise ValueError(f"{plan.family} classifies {per} images per run, got {len(x)}")
    imp = plan.impl
    for img in x:  # the lab's input check (needs the model and the input: no party has both)
        imp["model"].check_input(imp["model"].encode(img))
    roles = ROLE_OF[scenario]
    g = np.random.default_rng(np.random.SeedSequence())
    base = {"scenario": scenario, "roles": roles, "optimized": imp["optimized"],
            "broken": bool(broken), "backend": backend}
    client_keys = imp["keys"] if backend == "sim" else \
        si.SwannKeys(imp["keys"].public_key, imp["keys"].private_key, None)
    tasks = {"P0": {**base, "model": _garbage_model(imp["model"], g), "x": x,
                    "keys": client_keys}}
    for p in si.PARTIES[scenario][1:]:
        tasks[roles[p]] = {**base, "model": imp["model"], "x_shape": x.shape,
                           "keys": _party_keys(imp["keys"], p, g)}
    # the dealer's in-process run is simulated: the public key is all it needs
    public = dataclasses.replace(
        plan, impl={**imp, "keys": _party_keys(imp["keys"], Ledger.DEALER, g)})
    tasks["dealer"] = {"plan": public, "x": x, "seed": seed, "roles": roles}
    launched = launch(swann_job, tasks, timeout=timeout, deadline=deadline)
    led = launched["dealer"][0]["ledger"]
    for p in si.PARTIES[scenario]:
        if launched[roles[p]][0]["ledger"].messages != led.messages:
            raise WireError(f"{p}'s process booked a different ledger than the dealer's "
                            "in-process run")
    summary = wire_summary(led, launched)
    seconds = max(summary["party seconds"][roles[p]] for p in si.PARTIES[scenario])
    timings = pd.DataFrame([("online", "input, all layers, output", seconds)],
                           columns=["phase", "layer", "seconds"])
    who = ", ".join(si.PARTIES[scenario])
    info = {roles[p]: launched[roles[p]][0]["info"] for p in si.PARTIES[scenario]}
    if backend == "real":
        n_bits = int(imp["keys"].public_key.n).bit_length()
        ct = ("real Paillier ciphertexts: each element of Z_{N^2} at the booked 2 log2 N = "
              f"{2 * n_bits} bits; the secret key in the client's process only (the servers' "
              "processes hold the public key and NotHeld)")
        if scenario == "two-server":
            ct += ("; the secret-key shares made in the client's process and sent in the "
                   "booked setup message")
        compute = ("measured: the slowest party's process on real Paillier (SPMD with "
                   "garbage: each runs every party's homomorphic steps; decryption only its "
                   "own)")
    else:
        ct = "simulated Paillier ciphertexts: their residues at the booked 2 log2 N bits"
        compute = ("measured: the slowest party's process (SPMD with garbage: each runs "
                   "every party's steps, like the simulator)")
    own = ("the OS CSPRNG in each party's process (SecureRandom)" if backend == "real" else
           "a generator seeded from OS entropy in each party's process (simulation grade)")
    prov = {"communication": f"measured on a wire: {who} and the dealer as processes over "
            "loopback TCP; ledger booked by every party's process and the dealer's in-process "
            f"run (equal); {ct}; OT extension: zero filler of its booked size (the dealer "
            "supplies the triples)",
            "compute": compute,
            "randomness": f"masks, shares and 2PC input masks: {own}; triples and random OTs: "
            "the OS CSPRNG in the dealer's process; the run seed drives only the dealer's "
            "in-process simulation (nothing drawn from it is sent) and reaches no party's "
            "process"}
    logits = np.asarray(launched["P0"][0]["output"])
    return Result(plan.family, backend, logits, led, timings, prov,
                  {"wall_s": launched.seconds, "wire": summary, "transport": "tcp",
                   "swann": info})
