"""The TCP transport of one process of a wire-mode run (real sockets on 127.0.0.1).

Every process holds one TCP connection to every other process of the run (a full mesh,
ports chosen by the OS, ``TCP_NODELAY``). :class:`Wire` sends and receives the frames of
:mod:`ppnn.wire.framing` on them:

* **send** writes the frame at once without blocking; what the socket's buffer does not take
  goes to the connection's sender thread, so a party sends its messages of a round and then
  waits for the ones it receives;
* **receive** blocks until the whole frame has arrived; no byte for ``timeout`` seconds is a
  :class:`WireTimeout`, and a closed connection a :class:`WireError`, each naming the
  receiver, the sender, the frame and the protocol step;
* :meth:`Wire.expect` defers a receive to :meth:`Wire.settle` at the round's end, and
  :meth:`Wire.barrier` starts a timed phase on every party at once.

Every frame belongs to one of :data:`CLASSES` (``online``, the booked offline classes, and
the unbooked ``inputs``, ``offline ideal``, ``unbooked keys``, ``unbooked base OT``,
``unbooked sync``); :meth:`Wire.stats` counts frames, booked bits, payload and wire bytes per
class and direction. An online frame carries its causal depth (a Lamport clock taken at round
boundaries), so the largest depth of a run is its measured number of one-way latencies.
A wait that begins in a ledger round that already had one is an *extra wait* (it can cost a
second latency); :meth:`Wire.stats` counts them with the steps of the first ones.

Main names: :class:`Wire`, :class:`Traffic`, :class:`WireError`, :class:`WireTimeout`,
:func:`accept_hellos`, :func:`connect_mesh`, :data:`ROLES`, :data:`CLASSES`.

See also
--------
docs/wire.md : frames, traffic classes, measured rounds and extra waits.
"""

from __future__ import annotations

import collections
import math
import os
import queue
import resource
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from . import split
from .framing import HEADER, MAX_PAYLOAD, frame_bytes, pack, payload_bytes, unpack

__all__ = ["Wire", "WireError", "WireTimeout", "ROLES", "CLASSES", "Traffic", "connect_mesh",
           "accept_hellos", "HELLO_S"]

ROLES = ("P0", "P1", "P2", "dealer")
CLASSES = ("online", "offline dealer", "offline setup", "inputs", "offline ideal",
           "unbooked keys", "unbooked base OT", "unbooked sync")
#: the transport's part of a process's wire path (:mod:`.split`, ``PPNN_WIRE_SPLIT``)
WIRE_PATH = {"Wire": ("send", "_recv")}
_HELLO = 17  # 16 bytes of the run's token and the connecting role's index
_CHUNK = 1 << 20  # a payload whose length the sender states is read this much at a time


def _faults() -> int:
    """The process's minor page faults so far (first touches of memory: on some VMs the
    largest single cost of a large run, see ``launch.CHILD_ENV``)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


class WireError(RuntimeError):
    """A wire-mode run failed: a process died, sent something unexpected, or hung."""


class WireTimeout(WireError):
    """A process waited longer than the timeout for a message."""


@dataclass
class Traffic:
    """Frames of one class in one direction: count, booked bits, payload and wire bytes."""

    frames: int = 0
    bits: int = 0
    payload: int = 0
    wire: int = 0

    def add(self, bits: int, payload: int) -> None:
        self.frames += 1
        self.bits += bits
        self.payload += payload
        self.wire += payload + HEADER.size


#: seconds a connection may take to send its hello before it is dropped (a silent one delays
#: no other: this only bounds how long it holds a socket)
HELLO_S = 10.0
#: connections waiting for their hello at most (beyond, the one waiting longest is dropped)
_PENDING = 64


def accept_hellos(listener: socket.socket, token: bytes, roles: Sequence[str], until: float
                  ) -> dict[str, socket.socket]:
    """The connections of ``roles`` on ``listener``, each identified by its hello (the run's
    ``token`` and the role's index in :data:`ROLES`), accepted until every role is there or
    ``until`` (``time.monotonic()``) has passed (then a :class:`WireTimeout` names the
    missing roles).

    Any other connection is dropped, and accepting goes on: one whose hello is wrong (not
    the token, not a missing role), one that closes, one that has sent no hello
    :data:`HELLO_S` seconds after it was accepted (what has arrived is read first). Hellos
    are read as they arrive, from every connection at once, so a connection that stays
    silent delays no other."""
    import hmac
    import selectors

    want = set(roles)
    got: dict[str, socket.socket] = {}
    pending: dict[socket.socket, tuple[float, bytearray]] = {}  # -> (drop at, hello so far)
    sel = selectors.DefaultSelector()
    listener.setblocking(False)
    sel.register(listener, selectors.EVENT_READ)

    def drop(s: socket.socket) -> None:
        pending.pop(s, None)
        sel.unregister(s)
        s.close()

    def accept() -> None:
        while True:
            try:
                c, _addr = listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            if len(pending) >= _PENDING:  # the one waiting longest goes
                drop(min(pending, key=lambda q: pending[q][0]))
            c.setblocking(False)
            pending[c] = (time.monotonic() + HELLO_S, bytearray())
            sel.register(c, selectors.EVENT_READ)

    def read(s: socket.socket) -> None:
        """What has arrived of ``s``'s hello; the whole hello decides: keep or drop."""
        buf = pending[s][1]
        try:
            chunk = s.recv(_HELLO - len(buf))
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:
            return drop(s)
        buf += chunk
        if len(buf) < _HELLO:
            return None
        peer = ROLES[buf[16]] if buf[16] < len(ROLES) else None
        if not hmac.compare_digest(bytes(buf[:16]), token) or peer not in want or peer in got:
            return drop(s)
        pending.pop(s)
        sel.unregister(s)
        s.setblocking(True)
        got[peer] = s

    try:
        while want - set(got):
            wake = min([until, *(t for t, _ in pending.values())])
            for key, _ in sel.select(max(0.0, wake - time.monotonic())):
                if key.fileobj is listener:
                    accept()
                elif key.fileobj in pending:
                    read(key.fileobj)
            now = time.monotonic()
            for s in [s for s, (t, _) in pending.items() if t <= now]:
                read(s)  # what arrived while this process did not run still counts
                if s in pending:
                    drop(s)
            if want - set(got) and now >= until:
                missing = [r for r in roles if r not in got]
                raise WireTimeout(f"no connection from {', '.join(missing)}")
    except BaseException:
        for s in got.values():
            s.close()
        raise
    finally:
        for s in list(pending):
            drop(s)
        sel.close()
    return got


def connect_mesh(role: str, listener: socket.socket, ports: dict[str, int], token: bytes,
                 timeout: float, hosts: dict[str, str] | None = None,
                 roles: tuple[str, ...] = ROLES) -> dict[str, socket.socket]:
    """Open the connections of ``role`` to every other role: connect to the roles before it
    in :data:`ROLES` (sending the run's ``token`` and its index), accept the roles after it
    on ``listener`` (:func:`accept_hellos`: a connection that is not one of them is dropped),
    then close ``listener``. ``hosts``: each role's
    address (default 127.0.0.1; shaped links give each process its own, :mod:`.links`).
    ``roles``: the roles of the run, in :data:`ROLES` order (a two-party family starts no
    ``P2``, :mod:`.launch`)."""
    me = ROLES.index(role)
    before = [r for r in roles if ROLES.index(r) < me]
    after = [r for r in roles if ROLES.index(r) > me]
    socks: dict[str, socket.socket] = {}
    try:
        for peer in before:
            host = (hosts or {}).get(peer, "127.0.0.1")
            s = socket.create_connection((host, ports[peer]), timeout=timeout)
            s.sendall(token + bytes([me]))
            socks[peer] = s
        try:
            socks.update(accept_hellos(listener, token, after, time.monotonic() + timeout))
        except WireTimeout as e:
            raise WireTimeout(f"{role}: {e} within {timeout:g} s") from None
    except BaseException:
        for s in socks.values():
            s.close()
        raise
    finally:
        listener.close()
    for s in socks.values():
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.settimeout(timeout)
    return socks


def _fill(sock, view: memoryview, role: str, peer: str, what: str) -> None:
    """Receive exactly ``len(view)`` bytes into ``view``."""
    got, n = 0, len(view)
    while got < n:
        try:
            k = sock.recv_into(view[got:])
        except TimeoutError:
            raise WireTimeout(f"{role} waited more than {sock.gettimeout():g} s for {what} "
                              f"from {peer} (is {peer} alive?)") from None
        except WireError as e:  # a held link's reader thread failed (.links.HeldSocket)
            raise WireError(f"{role}: receiving {what} from {peer} failed: {e}") from None
        except OSError as e:
            raise WireError(f"{role}: the connection from {peer} failed while receiving "
                            f"{what}: {e}") from None
        if k == 0:
            raise WireError(f"{role}: {peer} closed the connection before {what} "
                            f"(did {peer} die?)")
        got += k


def _recv_exact(sock: socket.socket, n: int, role: str, peer: str, what: str
                ) -> bytearray:
    """``n`` bytes, in one buffer allocated at once (``n`` is what this process expects)."""
    buf = bytearray(n)
    _fill(sock, memoryview(buf), role, peer, what)
    return buf


def _recv_chunked(sock, n: int, role: str, peer: str, what: str) -> bytearray:
    """``n`` bytes whose count the sender stated: the buffer grows by at most
    :data:`_CHUNK` bytes ahead of what has arrived, so a header that states more than the
    sender sends costs no memory."""
    buf = bytearray()
    while len(buf) < n:
        got = len(buf)
        buf.extend(bytes(min(_CHUNK, n - got)))
        with memoryview(buf) as view:
            _fill(sock, view[got:], role, peer, what)
    return buf


class _Replay:
    """What :meth:`Wire.prefetch` read from a peer, read again like its socket (each chunk
    dropped once read)."""

    def __init__(self, chunks: list[bytes], role: str, peer: str):
        self.size = sum(len(c) for c in chunks)
        self._chunks = collections.deque(memoryview(c) for c in chunks)
        self._role, self._peer = role, peer

    def recv_into(self, view) -> int:
        if not self._chunks:
            raise WireError(f"{self._role} expected more from {self._peer}, but {self._peer}'s "
                            "stream ended: the parties disagree on the protocol")
        head = self._chunks[0]
        n = min(len(view), len(head))
        view[:n] = head[:n]
        if n == len(head):
            self._chunks.popleft()
        else:
            self._chunks[0] = head[n:]
        return n

    def gettimeout(self) -> float:
        return 0.0

    def shutdown(self, how) -> None:
        pass

    def close(self) -> None:
        self._chunks.clear()


class Wire:
    """One process's end of the mesh: framed sends and receives, traffic counters, and the
    process's garbage generator (what it uses for every value it does not hold).

    Parameters
    ----------
    role : one of :data:`ROLES`.
    socks : the connected sockets, peer role -> socket (from :func:`connect_mesh`).
    timeout : seconds without a byte after which a receive fails.
    garbage : this process's own generator of garbage (a different one per process).
    """

    def __init__(self, role: str, socks: dict[str, socket.socket], timeout: float,
                 garbage: np.random.Generator):
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, got {role!r}")
        self.role, self.socks, self.timeout = role, socks, float(timeout)
        self.party: int | None = ROLES.index(role) if role != "dealer" else None
        self.garbage = garbage
        self.depth = 0
        self.max_depth = 0
        self._round: int | None = None  # the ledger round of the last online message
        self._round_base = 0  # the depth when that round began
        self.waits = 0  # receives of a party's message after a send (module docstring)
        self.extra_waits = 0  # waits beginning in a round that already had one
        self.extra_wait_steps: list[str] = []  # the first few of them (protocol steps)
        self._sent_last = True  # the last message sent or received was a send
        self._wait_round: int | None = None  # the ledger round of the last wait
        self.sent = {c: Traffic() for c in CLASSES}
        self.received = {c: Traffic() for c in CLASSES}
        self._seq_out = dict.fromkeys(socks, 0)
        self._seq_in = dict.fromkeys(socks, 0)
        self._later: list[tuple] = []  # receives deferred to the next settle()
        self._queues: dict[str, queue.SimpleQueue] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._errors: dict[str, BaseException] = {}
        self._locks = {peer: threading.Lock() for peer in socks}
        self._backlog = dict.fromkeys(socks, 0)  # frames handed to the sender thread
        self.marks: dict[str, float] = {}  # named moments (perf_counter), see mark()
        self.mark_cpu: dict[str, float] = {}  # the process's CPU seconds at each mark
        self.mark_faults: dict[str, int] = {}  # its minor page faults at each mark
        self.mark_split: dict[str, tuple | None] = {}  # wire path, protocol thread (.split)
        for peer, s in socks.items():
            if s.gettimeout() is None:  # _write needs a non-blocking descriptor
                s.settimeout(self.timeout)
            q: queue.SimpleQueue = queue.SimpleQueue()
            t = threading.Thread(target=self._pump, args=(peer, s, q), daemon=True,
                                 name=f"wire {role}->{peer}")
            self._queues[peer], self._threads[peer] = q, t
            t.start()
        self.t_start = time.perf_counter()
        self._cpu_start = resource.getrusage(resource.RUSAGE_SELF)

    def _pump(self, peer: str, sock: socket.socket, q: queue.SimpleQueue) -> None:
        while True:
            item = q.get()
            if item is None:
                return
            try:
                sock.sendall(item)
            except OSError as e:  # reported by the next send or by close()
                self._errors[peer] = e
                return
            with self._locks[peer]:
                self._backlog[peer] -= 1

    def _write(self, peer: str, frame: bytes) -> None:
        """Write ``frame`` to ``peer``'s socket now if nothing is queued before it (the
        socket is non-blocking: a timeout socket); the rest goes to the sender thread."""
        with self._locks[peer]:
            if not self._backlog[peer]:
                try:
                    n = os.write(self.socks[peer].fileno(), frame)
                except (BlockingIOError, InterruptedError):
                    n = 0
                except OSError as e:
                    self._errors[peer] = e
                    raise WireError(f"{self.role}: sending to {peer} failed: {e}") from None
                if n == len(frame):
                    return
                frame = memoryview(frame)[n:]
            self._backlog[peer] += 1
        self._queues[peer].put(frame)

    def _check_peer(self, peer: str) -> None:
        if peer not in self.socks:
            raise ValueError(f"{self.role} has no connection to {peer!r}; peers: "
                             f"{sorted(self.socks)}")
        if peer in self._errors:
            raise WireError(f"{self.role}: sending to {peer} failed: {self._errors[peer]}")

    def send(self, peer: str, parts: Sequence[tuple[np.ndarray, int]], what: str,
             cls: str = "online", round: int | None = None) -> None:
        """Send one message to ``peer``: ``parts`` as ``(array, bits per element)``;
        ``round``: the ledger round of an online message (its depth is taken from the
        depth at that round's first message here; None: the current depth)."""
        self._check_peer(peer)
        payload = pack(parts)
        if len(payload) > MAX_PAYLOAD:
            raise WireError(f"{self.role}: frame '{what}' to {peer} would carry {len(payload)} "
                            f"bytes, more than a frame may ({MAX_PAYLOAD}, framing.MAX_PAYLOAD)")
        bits = sum(int(np.size(a)) * int(b) for a, b in parts)
        if len(payload) != payload_bytes(bits):  # pragma: no cover - pack guarantees it
            raise WireError(f"{self.role}: frame '{what}' packs {bits} bits into "
                            f"{len(payload)} bytes")
        depth = 0
        if cls == "online":
            self.enter_round(round)
            depth = self._round_base + 1
            self.max_depth = max(self.max_depth, depth)
        seq = self._seq_out[peer]
        self._seq_out[peer] = seq + 1
        self._write(peer, HEADER.pack(seq, depth, len(payload)) + payload)
        self.sent[cls].add(bits, len(payload))
        self._sent_last = True

    def enter_round(self, round: int | None) -> None:
        """The program reached a message of ledger round ``round`` (sent, received or
        neither): the first time, the round's base depth is the current depth."""
        if round is None or round != self._round:
            self._round, self._round_base = round, self.depth

    def expect(self, peer: str, layout: Sequence[tuple[tuple[int, ...], np.dtype, int]],
               what: str, cls: str = "online", into: Sequence[np.ndarray] | None = None
               ) -> list[np.ndarray]:
        """A receive deferred to the next :meth:`settle`: returns the arrays (``into``, or
        new ones of ``layout``'s shapes) that :meth:`settle` fills with the message. So a
        party sends every message of a round before it waits for the round's receives,
        whatever their order in the SPMD program (a round costs one latency, not more)."""
        self._check_peer(peer)
        if into is None:
            into = [np.empty(shape, dtype) for shape, dtype, _ in layout]
        self._later.append((peer, layout, what, cls, into))
        return list(into)

    def settle(self, peer: str | None = None) -> None:
        """Receive every deferred message (:meth:`expect`), in program order; ``peer``: only
        those from ``peer`` (the others stay deferred)."""
        later = self._later
        if peer is None:
            self._later, todo = [], later
        else:
            todo = [it for it in later if it[0] == peer]
            self._later = [it for it in later if it[0] != peer]
        for src, layout, what, cls, into in todo:
            self._recv(src, layout, what, cls, into=into)  # unpacked straight into them

    def recv(self, peer: str, layout: Sequence[tuple[tuple[int, ...], np.dtype, int]],
             what: str, cls: str = "online", into: Sequence[np.ndarray] | None = None
             ) -> list[np.ndarray]:
        """Receive the next message from ``peer``; ``layout`` is what this process's copy
        of the protocol expects: each part's ``(shape, dtype, bits per element)``, unpacked
        into the arrays ``into`` if given. Deferred receives (:meth:`expect`) from ``peer``
        are settled first (its frames arrive in order on one connection); those from other
        peers need not have arrived yet."""
        self._check_peer(peer)
        if self._later:
            self.settle(peer)
        return self._recv(peer, layout, what, cls, into=into)

    def recv_bytes(self, peer: str, what: str, cls: str, limit: int) -> bytes:
        """Receive the next message from ``peer`` as the bytes of its payload, of whatever
        length its frame states (at most ``limit`` bytes, stated by the call site, else a
        :class:`WireError` before any of the payload is read): a message whose size the
        receiver cannot know in advance -- a serialized key, whose size is measured, not
        booked. The payload is read in chunks (:func:`_recv_chunked`). Counted as
        ``8 x length`` bits."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 0 <= limit <= MAX_PAYLOAD:
            raise ValueError(f"limit must be an int in [0, {MAX_PAYLOAD}], got {limit!r}")
        self._check_peer(peer)
        if self._later:
            self.settle(peer)
        return self._recv(peer, None, what, cls, limit)

    def _recv(self, peer: str, layout, what: str, cls: str, limit: int | None = None,
              into: Sequence[np.ndarray] | None = None):
        sock, seq = self.socks[peer], self._seq_in[peer]
        label = f"message #{seq} '{what}'"
        if peer != "dealer" and self._sent_last:  # a wait begins (module docstring)
            self._sent_last = False
            self.waits += 1
            if self._round is not None and self._wait_round == self._round:
                self.extra_waits += 1
                if len(self.extra_wait_steps) < 8:
                    self.extra_wait_steps.append(what)
            self._wait_round = self._round
        got_seq, depth, length = HEADER.unpack(
            _recv_exact(sock, HEADER.size, self.role, peer, label))
        if layout is None:  # recv_bytes: the frame states the length
            if got_seq != seq or length > limit:
                raise WireError(f"{self.role} expected {label} from {peer} (at most {limit} "
                                f"bytes), got frame #{got_seq} stating {length} bytes")
            payload = _recv_chunked(sock, length, self.role, peer, label) if length else b""
            self._seq_in[peer] = seq + 1
            self.received[cls].add(8 * length, length)
            return bytes(payload)
        bits = sum(math.prod(s) * int(b) for s, _, b in layout)
        if got_seq != seq or length != payload_bytes(bits):
            raise WireError(f"{self.role} expected {label} from {peer} ({payload_bytes(bits)} "
                            f"bytes), got frame #{got_seq} of {length} bytes: the parties "
                            "disagree on the protocol")
        payload = _recv_exact(sock, length, self.role, peer, label) if length else b""
        self._seq_in[peer] = seq + 1
        if cls == "online":
            self.depth = max(self.depth, depth)
            self.max_depth = max(self.max_depth, depth)
        self.received[cls].add(bits, length)
        return unpack(payload, layout, out=into)

    def prefetch(self, peer: str) -> int:
        """Read everything ``peer`` will ever send, until it closes the connection, and
        serve the receives that follow from it (they then wait for nothing): the offline
        phase of a run whose dealer sends all its material first. Returns the bytes read.
        A receive past the end is a :class:`WireError`."""
        self._check_peer(peer)
        if self._later or self._seq_in[peer]:
            raise WireError(f"{self.role}: prefetch from {peer} must come before any receive "
                            "from it")
        sock, chunks, buf = self.socks[peer], [], bytearray(1 << 20)
        while True:
            try:
                k = sock.recv_into(buf)
            except TimeoutError:
                raise WireTimeout(f"{self.role} waited more than {sock.gettimeout():g} s for "
                                  f"{peer}'s material (is {peer} alive?)") from None
            if not k:  # the peer closed: everything has arrived
                break
            chunks.append(bytes(memoryview(buf)[:k]))
        sock.close()
        self.socks[peer] = replay = _Replay(chunks, self.role, peer)
        return replay.size

    def barrier(self, peers: Sequence[str]) -> None:
        """Wait until every process of ``peers`` has reached its own ``barrier`` call: an
        empty frame (a header, class ``unbooked sync``) to each, then one from each. A timed
        phase that starts after it starts on every process at once, as the C++ reference's
        ``synchronize()`` before its ``start_m()`` does; not a wait of the protocol (the
        waits of :meth:`stats` do not count it)."""
        sent_last, waits = self._sent_last, self.waits
        for p in peers:
            self.send(p, [], "barrier", "unbooked sync")
        for p in peers:
            self.recv(p, [], "barrier", "unbooked sync")
        self._sent_last, self.waits = sent_last, waits

    def mark(self, name: str) -> None:
        """Note the moment ``name`` (``time.perf_counter``, comparable between the processes
        of one host: the system's monotonic clock) and the process's CPU seconds then
        (user + system, since the start); :meth:`stats` reports both."""
        self.marks[name] = time.perf_counter()
        self.mark_cpu[name] = sum(self._cpu())
        self.mark_faults[name] = _faults()
        self.mark_split[name] = split.counts()

    def _cpu(self) -> tuple[float, float]:
        """The process's CPU seconds since the start: (user, system), to the microsecond
        (``getrusage``; ``os.times`` counts in clock ticks of 10 ms)."""
        t, t0 = resource.getrusage(resource.RUSAGE_SELF), self._cpu_start
        return t.ru_utime - t0.ru_utime, t.ru_stime - t0.ru_stime

    def close(self) -> None:
        """Flush every sender thread, then close the connections (no port stays open)."""
        try:
            self.settle()
            for q in self._queues.values():
                q.put(None)
            deadline = time.monotonic() + self.timeout
            for peer, t in self._threads.items():
                t.join(max(0.0, deadline - time.monotonic()))
                if t.is_alive():
                    raise WireTimeout(f"{self.role} could not finish sending to {peer} within "
                                      f"{self.timeout:g} s")
            if self._errors:
                peer, e = next(iter(self._errors.items()))
                raise WireError(f"{self.role}: sending to {peer} failed: {e}")
            for s in self.socks.values():
                try:
                    s.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
        finally:
            for s in self.socks.values():
                s.close()

    def stats(self) -> dict:
        """Traffic per direction and class, measured depth, waits and extra waits (see the
        module docstring), seconds since the start, the process's CPU seconds since the start
        (user, system) and its peak memory (MB, from ``getrusage``); with ``PPNN_WIRE_SPLIT``
        also the CPU seconds of its wire path and of its protocol thread (:mod:`.split`), in
        all and at each mark."""
        user, system = self._cpu()
        return {"role": self.role, "depth": self.max_depth, "waits": self.waits,
                "t start": self.t_start, "t end": time.perf_counter(), "marks": dict(self.marks),
                "mark cpu s": dict(self.mark_cpu), "mark faults": dict(self.mark_faults),
                "split cpu s": split.counts(), "mark split cpu s": dict(self.mark_split),
                "page faults": _faults(),
                "cpu user s": user, "cpu system s": system,
                "max rss MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "extra waits": self.extra_waits, "extra wait steps": list(self.extra_wait_steps),
                "seconds": time.perf_counter() - self.t_start,
                "sent": {c: asdict(t) for c, t in self.sent.items()},
                "received": {c: asdict(t) for c, t in self.received.items()}}

    def frame_bytes(self, bits: int) -> int:
        """Wire bytes of one message of ``bits`` booked bits (see :mod:`.framing`)."""
        return frame_bytes(bits)
