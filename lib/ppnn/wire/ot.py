"""The oblivious transfer of the garbled-circuit families on the wire (:mod:`.hegc`,
:mod:`.delphi_gc`): one :class:`WireOT` per party's process, run with :mod:`ppnn.he.ot`.

The server (the garbler) is IKNP's sender, the client (the evaluator) its receiver; there is
one direction, so one set of base OTs per run:

* **Base OTs, unbooked** (class :data:`BASE_OT_CLASS`). At the start of its job the server's
  process sends the base OTs' first message (:data:`ppnn.he.ot.BASE_REQUEST_BYTES`) before
  anything else; the client defers its receive (:meth:`~ppnn.wire.transport.Wire.expect`)
  and answers with ``g^r`` (:data:`ppnn.he.ot.BASE_REPLY_BYTES`) right before its first
  receiver columns, which the server reads with it. The ledger's cost model amortises base
  OTs away (:mod:`ppnn.he.gc`), so their bytes are reported beside the booked classes; no
  round is added. In :mod:`.delphi_gc` the client receives nothing from the server before
  its first columns, so it waits once for the first message, which has long been sent.
* **IKNP, booked.** Each garbled layer's ``IKNP OT: receiver columns`` frame carries the
  client's real columns for its input bits (``kappa = 128`` bits per bit: the booked size),
  and the garbler's pairs ``(W0, W0 ^ Delta)`` cross as the IKNP answers (two 128-bit
  strings per bit, in the pairs' place in the booked frame), so the client opens the label
  of its bit and nothing of the other.
"""

from __future__ import annotations

import time

import numpy as np

from ppnn.he import ot

from .transport import Wire, WireError

__all__ = ["WireOT", "BASE_OT_CLASS"]

#: the traffic class of the base OTs (not booked by the ledger)
BASE_OT_CLASS = "unbooked base OT"
_ROLE = {"client": "P0", "server": "P1"}
_REQUEST = "base OT: the server's 128 group elements"
_REPLY = "base OT: the client's g^r"


class WireOT:
    """One party's end of a run's OT (module docstring).

    Parameters
    ----------
    wire : the process's :class:`~ppnn.wire.transport.Wire`.
    me : ``"client"`` (IKNP's receiver) or ``"server"`` (IKNP's sender).
    record : keep, per garbled layer, what this process sent or received of the OT in
        :attr:`record` (tests: the server its pairs and answers, the client the answers it
        received, their unmasking and its bits).
    """

    def __init__(self, wire: Wire, me: str, record: bool = False):
        if me not in _ROLE:
            raise ValueError(f"me must be 'client' or 'server', got {me!r}")
        self.wire, self.me = wire, me
        self.peer = _ROLE["server" if me == "client" else "client"]
        self.seconds = 0.0  # this party's OT compute (base OTs and extension)
        self._base: ot.BaseOTReceiver | None = None
        self._got: np.ndarray | None = None  # the deferred receive of the peer's base message
        self._receiver: ot.IKNPReceiver | None = None
        self._sender: ot.IKNPSender | None = None
        self._replied = False
        self._started = False
        self.record: list[dict] | None = [] if record else None

    def start(self) -> None:
        """At the start of the job, before any other frame between the two: the server sends
        the base OTs' first message, the client defers its receive."""
        if self._started:
            raise WireError("the OT session was already started")
        self._started = True
        if self.me == "server":
            t0 = time.perf_counter()
            self._base = ot.BaseOTReceiver()
            request = self._base.request()
            self.seconds += time.perf_counter() - t0
            self.wire.send(self.peer, [(request, 8)], _REQUEST, BASE_OT_CLASS)
        else:
            (self._got,) = self.wire.expect(
                self.peer, [((ot.KAPPA, ot.ELEMENT_BYTES), np.dtype(np.uint8), 8)], _REQUEST,
                BASE_OT_CLASS)

    def before_columns(self) -> None:
        """Both parties, right before a garbled layer's receiver columns: the first time,
        the client completes the base OTs (it needs the server's first message: received
        now if no earlier receive from the server took it) and sends ``g^r``; the server
        defers the receive of ``g^r`` (it arrives just before the columns)."""
        if not self._started:
            raise WireError("the OT session was not started")
        if self._replied:
            return
        self._replied = True
        if self.me == "server":
            (self._got,) = self.wire.expect(
                self.peer, [((ot.ELEMENT_BYTES,), np.dtype(np.uint8), 8)], _REPLY,
                BASE_OT_CLASS)
            return
        self.wire.settle(self.peer)  # no-op unless the first message is still deferred
        t0 = time.perf_counter()
        reply, seeds = ot.BaseOTSender().reply(self._got)
        self._receiver = ot.IKNPReceiver(seeds)
        self.seconds += time.perf_counter() - t0
        self.wire.send(self.peer, [(reply, 8)], _REPLY, BASE_OT_CLASS)

    def columns(self, bits: np.ndarray) -> ot.ReceiverBatch:
        """The client: the OTs of its input ``bits`` (any shape, C order); the batch's
        ``columns`` go in the booked receiver-columns frame."""
        if self._receiver is None:
            raise WireError("the client has no OT receiver: call before_columns first")
        t0 = time.perf_counter()
        batch = self._receiver.extend(bits)
        self.seconds += time.perf_counter() - t0
        return batch

    def unmask(self, batch: ot.ReceiverBatch, answers: np.ndarray) -> np.ndarray:
        """The client: both places of each received answer with its pad removed
        (:meth:`ppnn.he.ot.ReceiverBatch.unmask`: its label where its bit is, a pseudorandom
        string in the other)."""
        t0 = time.perf_counter()
        out = batch.unmask(answers)
        self.seconds += time.perf_counter() - t0
        if self.record is not None:
            self.record.append({"received": np.array(answers), "unmasked": out.copy(),
                                "bits": batch.choices.reshape(np.shape(answers)[:-2])})
        return out

    def answer(self, columns: np.ndarray, pairs: np.ndarray) -> np.ndarray:
        """The server: the IKNP answers for the garbler's ``pairs`` (``(..., 2, 2)`` words)
        to the received ``columns``; the first time, it completes the base OTs with the
        client's ``g^r`` (received with the columns, which follow it)."""
        if self.me != "server" or self._base is None:
            raise WireError("only the server's process answers the OT")
        t0 = time.perf_counter()
        if self._sender is None:
            if self._got is None or not self._replied:
                raise WireError("the client's g^r was never expected: call before_columns")
            self.wire.settle(self.peer)  # no-op: receiving the columns took it
            self._sender = ot.IKNPSender(self._base.choices, self._base.seeds(self._got))
        y = self._sender.answer(columns, pairs)
        self.seconds += time.perf_counter() - t0
        if self.record is not None:
            self.record.append({"pairs": np.array(pairs), "answers": y.copy()})
        return y
