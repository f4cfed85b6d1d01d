"""The cost ledger: every cross-party message and every counted cryptographic operation.

A protocol never moves a value between parties without booking it here::

    ledger = Ledger(["client", "server"])
    with ledger.label("conv1"), ledger.round():
        ledger.send("client", "server", bits=n * 64, what="x - r")

* **Messages** carry sender, receiver, size in bits, round, phase (``online``/``offline``),
  a label path (``"net/conv1/relu"``) and a free-text ``what``.
* **Rounds**: every ``send`` outside a ``round()`` block opens a round of its own; all sends in
  one ``with ledger.round():`` block share a round (messages sent in parallel). Nested
  ``round()`` blocks join the outer one. Rounds are counted per phase.
* **Operations**: ``count(op, n)`` books HE/TFHE/GC/Paillier work (``Perm``, ``ScMult``,
  ``bootstrap``, ``and_gate``, ``paillier_exp`` ...), with party, phase and label.
  ``depth(name, d)`` keeps the maximum of a depth-like quantity (multiplicative depth).

Sizes are bits; byte queries divide by 8 (fractional bytes are kept, so nothing is rounded).

**Values** (for teaching: views, the sequence diagram, the protocol player): a ledger made with
``record_values=True`` (or a :class:`~ppnn.core.transcript.ValueBudget`) also keeps the value
each ``send(..., value=x)`` carried and what a party holds at a named step
(``hold(party, name, x)``), as bounded summaries (:mod:`ppnn.core.transcript`). Off by
default: then ``value=`` is ignored and ``hold`` does nothing, so protocol code can always
pass its values.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import pandas as pd

from .transcript import Hold, Recorded, ValueBook, ValueBudget

__all__ = ["Ledger", "Message", "PHASES", "recording"]

PHASES = ("online", "offline")

#: the value budget of ledgers made without an explicit ``record_values`` (see :func:`recording`)
_RECORDING: contextvars.ContextVar[ValueBudget | None] = contextvars.ContextVar(
    "ppnn_recording", default=None)


@contextlib.contextmanager
def recording(budget: bool | ValueBudget = True) -> Iterator[ValueBudget | None]:
    """Every :class:`Ledger` made inside (without its own ``record_values``) records values:
    how ``ppnn.run(..., record_values=True)`` reaches the ledgers a family makes itself."""
    if budget is True:
        budget = ValueBudget()
    if not (budget is False or isinstance(budget, ValueBudget)):
        raise TypeError(f"budget must be a bool or a ValueBudget, got {budget!r}")
    token = _RECORDING.set(budget or None)
    try:
        yield budget or None
    finally:
        _RECORDING.reset(token)


@dataclass(frozen=True)
class Message:
    sender: str
    receiver: str
    bits: int
    round: int
    phase: str
    label: str
    what: str = ""


@dataclass(frozen=True)
class OpRecord:
    op: str
    n: int
    party: str
    phase: str
    label: str


class Ledger:
    """Books messages and operation counts of a simulated multi-party run.

    Parameters
    ----------
    parties : iterable of str
        Names of the parties (e.g. ``["client", "server"]`` or ``["P0", "P1", "P2"]``).
        A trusted ``"dealer"`` is always allowed as a sender of offline material.
    record_values : bool, ValueBudget or None
        Keep the values that cross and that parties hold (``True``: the default
        :class:`~ppnn.core.transcript.ValueBudget`, 64 elements per message, 32 MiB in all);
        None (the default): as the enclosing :func:`recording` block says (off outside one).
    """

    DEALER = "dealer"

    def __init__(self, parties: Iterable[str], record_values: bool | ValueBudget | None = None):
        parties = tuple(parties)
        if len(parties) < 2:
            raise ValueError(f"a ledger needs at least two parties, got {parties!r}")
        if len(set(parties)) != len(parties):
            raise ValueError(f"party names must be unique, got {parties!r}")
        if self.DEALER in parties:
            raise ValueError(f"'{self.DEALER}' is reserved for the trusted dealer")
        self.parties: tuple[str, ...] = parties
        self.messages: list[Message] = []
        self.ops: list[OpRecord] = []
        self.depths: dict[tuple[str, str], int] = {}
        self._labels: list[str] = []
        self._phase: list[str] = ["online"]
        self._round_counter = {p: 0 for p in PHASES}
        self._open_round: int | None = None
        self._round_depth = 0
        if record_values is None:
            record_values = _RECORDING.get() or False
        if record_values is True:
            record_values = ValueBudget()
        if not (record_values is False or isinstance(record_values, ValueBudget)):
            raise TypeError(f"record_values must be a bool or a ValueBudget, got {record_values!r}")
        self._book = ValueBook(record_values) if record_values else None
        #: message index -> the value it carried (only with record_values)
        self.values: dict[int, Recorded] = {}
        #: what parties held at named steps (only with record_values)
        self.holds: list[Hold] = []
        #: for each booked operation, how many messages were booked before it
        self.op_at: list[int] = []
        #: holdings and operations in the order booked (only with record_values): orders
        #: them among themselves at one position between messages
        self._local: list[tuple[str, int]] = []

    @property
    def records_values(self) -> bool:
        """Whether this ledger keeps values (``record_values``)."""
        return self._book is not None

    @property
    def value_bytes(self) -> int:
        """Bytes of values and their metadata kept so far (within the budget)."""
        return 0 if self._book is None else self._book.used

    # -- context ------------------------------------------------------------------------
    @property
    def current_label(self) -> str:
        return "/".join(self._labels)

    @property
    def phase(self) -> str:
        return self._phase[-1]

    @contextlib.contextmanager
    def label(self, name: str) -> Iterator[Ledger]:
        """Nest a label (layer name, protocol step) for everything booked inside."""
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"label must be a non-empty string without '/', got {name!r}")
        self._labels.append(name)
        try:
            yield self
        finally:
            self._labels.pop()

    @contextlib.contextmanager
    def offline(self) -> Iterator[Ledger]:
        """Book everything inside as preprocessing (offline phase)."""
        with self.phase_("offline"):
            yield self

    @contextlib.contextmanager
    def phase_(self, phase: str) -> Iterator[Ledger]:
        if phase not in PHASES:
            raise ValueError(f"phase must be one of {PHASES}, got {phase!r}")
        if self._round_depth and phase != self.phase:
            raise RuntimeError("cannot switch phase inside a round() block")
        self._phase.append(phase)
        try:
            yield self
        finally:
            self._phase.pop()

    @contextlib.contextmanager
    def round(self) -> Iterator[Ledger]:
        """All messages booked inside belong to one communication round."""
        if self._round_depth == 0:
            self._open_round = None  # opened lazily by the first send
        self._round_depth += 1
        try:
            yield self
        finally:
            self._round_depth -= 1
            if self._round_depth == 0:
                self._open_round = None

    def _round_for_send(self) -> int:
        ph = self.phase
        if self._round_depth == 0:
            self._round_counter[ph] += 1
            return self._round_counter[ph]
        if self._open_round is None:
            self._round_counter[ph] += 1
            self._open_round = self._round_counter[ph]
        return self._open_round

    # -- booking ------------------------------------------------------------------------
    def _check_party(self, name: str, role: str, allow_dealer: bool = False) -> None:
        if name in self.parties or (allow_dealer and name == self.DEALER):
            return
        raise ValueError(f"unknown {role} {name!r}; this ledger's parties are {self.parties}")

    def send(self, sender: str, receiver: str, bits: int, what: str = "",
             value=None) -> Message:
        """Book one message of ``bits`` bits from ``sender`` to ``receiver``; ``value`` (what
        crossed) is kept when the ledger records values."""
        self._check_party(sender, "sender", allow_dealer=True)
        self._check_party(receiver, "receiver")
        if sender == receiver:
            raise ValueError(f"a party cannot send to itself ({sender!r})")
        bits = int(bits)
        if bits < 0:
            raise ValueError(f"message size must be >= 0 bits, got {bits}")
        if sender == self.DEALER and self.phase != "offline":
            raise ValueError("dealer material must be booked in the offline phase")
        msg = Message(sender, receiver, bits, self._round_for_send(), self.phase,
                      self.current_label, what)
        self.messages.append(msg)
        if self._book is not None and value is not None:
            self.values[len(self.messages) - 1] = self._book.record(value)
        return msg

    def transmit(self, sender: str, receiver: str, bits: int, what: str, value,
                 recorded=None):
        """Book one message (:meth:`send`) and return ``value`` as the receiver gets it: here
        the value itself; a wire-mode ledger (:mod:`ppnn.wire`) sends it over a socket and
        returns what arrived. Protocol code uses the returned value on the receiver's side,
        which makes this call the choke point of its messages. ``recorded``: what a recording
        ledger keeps instead of ``value`` (e.g. a simulated ciphertext's ``SIZE_ONLY``)."""
        self.send(sender, receiver, bits, what, value=value if recorded is None else recorded)
        return value

    def hold(self, party: str, name: str, value) -> None:
        """Record what ``party`` holds at this point under ``name`` (its share, its mask,
        its key's output ...): a no-op unless the ledger records values."""
        if self._book is None:
            return
        self._check_party(party, "party", allow_dealer=True)
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        self.holds.append(Hold(party, name, len(self.messages), self.phase, self.current_label,
                               self._book.record(value)))
        self._local.append(("held", len(self.holds) - 1))

    def broadcast(self, sender: str, bits: int, what: str = "", value=None) -> None:
        """``sender`` sends the same ``bits`` (and ``value``) to every other party, in one
        round."""
        with self.round():
            for p in self.parties:
                if p != sender:
                    self.send(sender, p, bits, what, value=value)

    def exchange(self, parties, bits: int, what: str = "", values=None) -> None:
        """Every party in ``parties`` sends ``bits`` to every other one, all in one round;
        ``values`` maps a sender to the value it sends."""
        parties = tuple(parties)
        with self.round():
            for sender in parties:
                for receiver in parties:
                    if sender != receiver:
                        self.send(sender, receiver, bits, what,
                                  value=None if values is None else values.get(sender))

    def count(self, op: str, n: int = 1, party: str | None = None) -> None:
        """Book ``n`` operations of kind ``op`` (e.g. ``"Perm"``, ``"bootstrap"``)."""
        if not isinstance(op, str) or not op:
            raise ValueError("operation name must be a non-empty string")
        n = int(n)
        if n < 0:
            raise ValueError(f"operation count must be >= 0, got {n}")
        if party is not None:
            self._check_party(party, "party", allow_dealer=True)
        self.ops.append(OpRecord(op, n, party or "", self.phase, self.current_label))
        self.op_at.append(len(self.messages))
        if self._book is not None:
            self._local.append(("op", len(self.ops) - 1))

    def depth(self, name: str, d: int) -> None:
        """Record a depth-like quantity; the ledger keeps the maximum per label."""
        key = (self.current_label, name)
        self.depths[key] = max(self.depths.get(key, 0), int(d))

    def merge(self, other: Ledger, prefix: str | None = None) -> None:
        """Append another ledger's records (rounds are shifted to follow this one's)."""
        if set(other.parties) - set(self.parties):
            raise ValueError(
                f"cannot merge ledger with parties {other.parties} into {self.parties}")
        shift = dict(self._round_counter)
        pre = (prefix + "/") if prefix else ""
        base = len(self.messages)
        if self._book is not None:
            n_holds, n_ops = len(self.holds), len(self.ops)
            self._local += [(k, j + (n_holds if k == "held" else n_ops))
                            for k, j in other._local_order()]
            self.values.update({base + i: v for i, v in other.values.items()})
            self.holds += [Hold(h.party, h.name, base + h.at, h.phase, pre + h.label, h.value)
                           for h in other.holds]
            self._book.used += other.value_bytes
        self.op_at += [base + a for a in other.op_at]
        for m in other.messages:
            self.messages.append(Message(m.sender, m.receiver, m.bits, m.round + shift[m.phase],
                                         m.phase, pre + m.label, m.what))
        for ph in PHASES:
            self._round_counter[ph] += other._round_counter[ph]
        for o in other.ops:
            self.ops.append(OpRecord(o.op, o.n, o.party, o.phase, pre + o.label))
        for (lab, name), d in other.depths.items():
            key = (pre + lab, name)
            self.depths[key] = max(self.depths.get(key, 0), d)

    def events(self) -> list[tuple[str, int]]:
        """Every holding, operation and message in the order booked, as ``(kind, index)`` with
        kind ``'held'``, ``'op'`` or ``'message'`` (an index into :attr:`holds`, :attr:`ops`
        or :attr:`messages`); at one position the holdings and operations come in the order
        they were booked (a ledger that does not record values: operations only), then the
        message booked there."""
        at = {"held": [h.at for h in self.holds], "op": self.op_at}
        keyed = [((at[k][j], 0, n), k, j) for n, (k, j) in enumerate(self._local_order())]
        keyed += [((i, 1, 0), "message", i) for i in range(len(self.messages))]
        keyed.sort(key=lambda t: t[0])
        return [(kind, i) for _, kind, i in keyed]

    def _local_order(self) -> list[tuple[str, int]]:
        """Holdings and operations in booking order (a ledger that keeps no values has no
        holdings, and its operations are in order already)."""
        return self._local or [("op", j) for j in range(len(self.ops))]

    def subset(self, keep: Callable[[Message], bool]) -> Ledger:
        """A ledger with the messages ``keep`` accepts (rounds keep their numbers), every
        operation and depth, and the values, holds and operation positions re-indexed."""
        out = Ledger(self.parties, record_values=self._book.budget if self._book else False)
        new_index, kept = [], 0
        for i, m in enumerate(self.messages):
            new_index.append(kept)
            if keep(m):
                if i in self.values:
                    out.values[kept] = self.values[i]
                out.messages.append(m)
                kept += 1
        new_index.append(kept)
        out.ops, out.op_at = list(self.ops), [new_index[a] for a in self.op_at]
        out.holds = [Hold(h.party, h.name, new_index[h.at], h.phase, h.label, h.value)
                     for h in self.holds]
        out._local = list(self._local)
        out.depths = dict(self.depths)
        out._round_counter = dict(self._round_counter)
        if out._book is not None:
            out._book.used = self.value_bytes
        return out

    # -- plain data ---------------------------------------------------------------------
    def to_plain(self) -> dict:
        """The ledger as plain data (lists of strings and ints): how a wire-mode process
        returns it to the launcher without pickle (:mod:`ppnn.wire.codec`). Only a ledger
        that records no values and is inside no label or round has one."""
        if self._book is not None:
            raise ValueError("a ledger that records values has no plain form")
        if self._labels or self._round_depth or len(self._phase) != 1:
            raise ValueError("a ledger inside a label, phase or round block has no plain form")
        return {"parties": list(self.parties),
                "messages": [[m.sender, m.receiver, m.bits, m.round, m.phase, m.label, m.what]
                             for m in self.messages],
                "ops": [[o.op, o.n, o.party, o.phase, o.label] for o in self.ops],
                "op_at": list(self.op_at),
                "depths": [[lab, name, d] for (lab, name), d in self.depths.items()],
                "rounds": [self._round_counter[p] for p in PHASES]}

    @classmethod
    def from_plain(cls, data) -> Ledger:
        """The ledger :meth:`to_plain` gave ``data``; a ``ValueError`` names what is not."""
        def rows(key, types):
            got = data.get(key) if isinstance(data, dict) else None
            if not isinstance(got, list) or not all(
                    isinstance(r, list) and len(r) == len(types)
                    and all(type(v) is t for v, t in zip(r, types)) for r in got):
                raise ValueError(f"a plain ledger's {key!r} must be a list of "
                                 f"[{', '.join(t.__name__ for t in types)}]")
            return got

        if not isinstance(data, dict) or not isinstance(data.get("parties"), list) or not all(
                type(p) is str for p in data["parties"]):
            raise ValueError("a plain ledger is a dict with a list of 'parties' (strings)")
        out = cls(data["parties"], record_values=False)
        names = set(out.parties) | {cls.DEALER}
        for m in rows("messages", (str, str, int, int, str, str, str)):
            if m[0] not in names or m[1] not in out.parties or m[2] < 0 or m[4] not in PHASES:
                raise ValueError(f"a plain ledger's message {m!r} is not a message of "
                                 f"{out.parties}")
            out.messages.append(Message(*m))
        for o in rows("ops", (str, int, str, str, str)):
            if o[1] < 0 or o[3] not in PHASES:
                raise ValueError(f"a plain ledger's operation {o!r} is not an operation")
            out.ops.append(OpRecord(*o))
        op_at, rounds = data.get("op_at"), data.get("rounds")
        if not (isinstance(op_at, list) and len(op_at) == len(out.ops)
                and all(type(a) is int and 0 <= a <= len(out.messages) for a in op_at)):
            raise ValueError("a plain ledger's 'op_at' must give each operation's position")
        if not (isinstance(rounds, list) and len(rounds) == len(PHASES)
                and all(type(r) is int and r >= 0 for r in rounds)):
            raise ValueError(f"a plain ledger's 'rounds' must be {len(PHASES)} ints >= 0")
        out.op_at = list(op_at)
        out.depths = {(lab, name): d for lab, name, d in rows("depths", (str, str, int))}
        out._round_counter = dict(zip(PHASES, rounds))
        return out

    # -- queries ------------------------------------------------------------------------
    def _msgs(self, phase: str | None, label: str | None) -> list[Message]:
        if phase is not None and phase not in PHASES:
            raise ValueError(f"phase must be one of {PHASES} or None, got {phase!r}")
        out = self.messages
        if phase is not None:
            out = [m for m in out if m.phase == phase]
        if label is not None:
            out = [m for m in out if m.label == label or m.label.startswith(label + "/")]
        return out

    def total_bits(self, phase: str | None = None, label: str | None = None) -> int:
        return sum(m.bits for m in self._msgs(phase, label))

    def total_bytes(self, phase: str | None = None, label: str | None = None) -> float:
        return self.total_bits(phase, label) / 8

    def rounds(self, phase: str | None = "online", label: str | None = None) -> int:
        """Number of distinct rounds with at least one message."""
        return len({(m.phase, m.round) for m in self._msgs(phase, label)})

    def n_messages(self, phase: str | None = None, label: str | None = None) -> int:
        return len(self._msgs(phase, label))

    def bytes_per_party(self, phase: str | None = None) -> pd.DataFrame:
        """Bytes sent and received by each party (and the dealer, if it sent anything)."""
        names = list(self.parties) + ([self.DEALER] if any(
            m.sender == self.DEALER for m in self.messages) else [])
        sent = dict.fromkeys(names, 0)
        recv = dict.fromkeys(names, 0)
        for m in self._msgs(phase, None):
            sent[m.sender] += m.bits
            recv[m.receiver] += m.bits
        return pd.DataFrame({"sent_bytes": {p: sent[p] / 8 for p in names},
                             "received_bytes": {p: recv[p] / 8 for p in names}})

    def messages_frame(self) -> pd.DataFrame:
        cols = ["sender", "receiver", "bits", "round", "phase", "label", "what"]
        return pd.DataFrame([m.__dict__ for m in self.messages], columns=cols)

    def ops_frame(self) -> pd.DataFrame:
        return pd.DataFrame([o.__dict__ for o in self.ops],
                            columns=["op", "n", "party", "phase", "label"])

    def op_count(self, op: str, phase: str | None = None, label: str | None = None,
                 party: str | None = None) -> int:
        total = 0
        for o in self.ops:
            if o.op != op or (phase is not None and o.phase != phase):
                continue
            if label is not None and not (o.label == label or o.label.startswith(label + "/")):
                continue
            if party is not None and o.party != party:
                continue
            total += o.n
        return total

    def op_counts(self, phase: str | None = None) -> dict[str, int]:
        out: dict[str, int] = {}
        for o in self.ops:
            if phase is None or o.phase == phase:
                out[o.op] = out.get(o.op, 0) + o.n
        return out

    def max_depth(self, name: str = "depth", label: str | None = None) -> int:
        vals = [d for (lab, n), d in self.depths.items() if n == name and (
            label is None or lab == label or lab.startswith(label + "/"))]
        return max(vals, default=0)

    def by_label(self, level: int = 1) -> pd.DataFrame:
        """Bytes, messages and rounds per label prefix (first ``level`` components)."""
        rows: dict[tuple[str, str], dict] = {}
        for m in self.messages:
            key = ("/".join(m.label.split("/")[:level]) if m.label else "(none)", m.phase)
            r = rows.setdefault(key, {"bytes": 0.0, "messages": 0, "rounds": set()})
            r["bytes"] += m.bits / 8
            r["messages"] += 1
            r["rounds"].add(m.round)
        data = [{"label": k[0], "phase": k[1], "bytes": v["bytes"], "messages": v["messages"],
                 "rounds": len(v["rounds"])} for k, v in rows.items()]
        df = pd.DataFrame(data, columns=["label", "phase", "bytes", "messages", "rounds"])
        return df.sort_values(["phase", "label"], kind="stable").reset_index(drop=True)

    def summary(self) -> pd.DataFrame:
        """One row per phase: bytes, messages, rounds; plus operation counts as columns."""
        rows = []
        for ph in PHASES:
            row = {"phase": ph, "bytes": self.total_bytes(ph), "messages": self.n_messages(ph),
                   "rounds": self.rounds(ph)}
            row.update(self.op_counts(ph))
            rows.append(row)
        return pd.DataFrame(rows).set_index("phase").fillna(0)

    def round_loads(self, phase: str = "online") -> list[dict[str, int]]:
        """Per round, bits sent by each sender (used by the network time model)."""
        per: dict[int, dict[str, int]] = {}
        for m in self._msgs(phase, None):
            d = per.setdefault(m.round, {})
            d[m.sender] = d.get(m.sender, 0) + m.bits
        return [per[r] for r in sorted(per)]

    def __repr__(self) -> str:
        return (f"Ledger(parties={self.parties}, online={self.total_bytes('online'):.0f} B/"
                f"{self.rounds('online')} rounds, offline={self.total_bytes('offline'):.0f} B)")
