"""Shaped links: a wire-mode run in network namespaces joined by veth pairs, with ``tc``.

``ppnn.wire.run(plan, x, seed, link="lan")`` (CLI: ``python -m ppnn wire ... --link lan``)
runs each process in a network namespace of its own, created for the run and removed after:

* **Topology**: one namespace per process and a hub (``ppnnw-<pid>-{p0,p1,p2,dl,hub}``); the
  hub holds a bridge, each process's namespace one end of a veth pair (``eth0``,
  ``10.213.0.<1..4>/24``) whose other end is a port of the bridge. Nothing is created in the
  caller's namespace, and the launcher's control traffic uses a Unix socket pair, never a
  shaped link.
* **Bandwidth**: a ``tbf`` qdisc on each process's ``eth0`` limits its uplink, the per-party
  uplink of :mod:`ppnn.core.netmodel`.
* **Latency**: ``netem`` where the kernel has ``sch_netem`` (probed on the hub's loopback);
  otherwise the receiving transport holds each frame (:class:`HeldSocket`): a reader thread
  per connection stamps the moment a frame's last byte arrives, and the protocol gets the
  frame a one-way latency later.
* **Root**: namespaces need root and ``ip``/``tc``; without them the run stays on plain
  loopback, unshaped, and says so (``Shaping.how``).
* **Clean-up**: every namespace is deleted when the run ends, also on an error or a signal;
  namespaces of a run whose process is gone are deleted first, and every ``ip``/``tc`` call
  is bounded in time.

Main names: :func:`shaped`, :class:`Link`, :func:`parse_link`, :data:`BASE`,
:class:`Shaping`, :func:`current`, :func:`can_shape`, :func:`stale_namespaces`.

See also
--------
docs/time-model.md : shaped links, what the emulation reproduces and what it does not.
"""

from __future__ import annotations

import contextlib
import math
import os
import queue
import re
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field

from ppnn.core import netmodel

from .framing import HEADER, MAX_PAYLOAD
from .transport import WireError

__all__ = ["Link", "BASE", "parse_link", "Shaping", "shaped", "HeldSocket", "PREFIX",
           "stale_namespaces", "our_namespaces", "current"]

#: prefix of every namespace a run creates (``ppnnw-<pid>-<role>``)
PREFIX = "ppnnw-"
_SUBNET = "10.213.0"
_SHORT = {"P0": "p0", "P1": "p1", "P2": "p2", "dealer": "dl"}
_CMD_TIMEOUT = 10.0


@dataclass(frozen=True)
class Link:
    """A shaped link: one-way latency (seconds) and per-process uplink bandwidth (bytes/s)."""

    name: str
    latency_s: float
    bandwidth_Bps: float

    @property
    def network(self) -> netmodel.Network:
        """The same setting as a :class:`ppnn.core.netmodel.Network` (for projections)."""
        return netmodel.Network(self.name, self.latency_s, self.bandwidth_Bps)

    def __str__(self) -> str:
        if math.isinf(self.bandwidth_Bps):
            return f"{self.name}: {self.latency_s * 1e3:g} ms one-way, no bandwidth limit"
        return (f"{self.name}: {self.latency_s * 1e3:g} ms one-way, "
                f"{self.bandwidth_Bps / 1e6:g} MB/s per process uplink")


#: the shaped runs' stack without shaping: namespaces, veth and bridge, the receiving
#: transport's reader (holding 0 s), no ``tbf`` -- the base the calibrated time model adds the
#: network to (:mod:`.timing`), so that it compares a link with the same stack, not with loopback
BASE = Link("base (namespaces, no latency, no tbf)", 0.0, math.inf)

_FORMS = ("'lan' (Falcon §5.1 as core.netmodel.LAN: 0.1 ms, 625 MB/s), 'wan' (core.netmodel.WAN:"
          " 35 ms, 40 MB/s) or 'LATENCY_MS,MBPS' (one-way milliseconds >= 0, megabytes/s > 0, "
          "e.g. '10,100')")


def parse_link(value) -> Link:
    """``'lan'``, ``'wan'``, ``'LATENCY_MS,MBPS'`` or a :class:`Link` -> :class:`Link`.

    Bandwidth is in megabytes per second (as :mod:`ppnn.core.netmodel`), latency one-way."""
    if isinstance(value, Link):
        return value
    if isinstance(value, netmodel.Network):
        return Link(value.name, value.latency_s, value.bandwidth_Bps)
    if not isinstance(value, str):
        raise ValueError(f"link must be one of {_FORMS}; got {value!r}")
    v = value.strip().lower()
    if v in ("lan", "wan"):
        n = netmodel.PRESETS[v.upper()]
        return Link(n.name, n.latency_s, n.bandwidth_Bps)
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:e[-+]?\d+)?)\s*,\s*([0-9]*\.?[0-9]+(?:e[-+]?\d+)?)\s*",
                     v)
    if not m:
        raise ValueError(f"link must be one of {_FORMS}; got {value!r}")
    lat_ms, mbps = float(m.group(1)), float(m.group(2))
    if not (0 <= lat_ms <= 10_000) or not (0 < mbps <= 1e5):
        raise ValueError(f"link: latency must be in 0..10000 ms and bandwidth in (0, 1e5] MB/s; "
                         f"got {value!r} (allowed forms: {_FORMS})")
    return Link(f"{lat_ms:g} ms, {mbps:g} MB/s", lat_ms / 1e3, mbps * 1e6)


# -- the receiving transport's latency hold -------------------------------------------------
#: bytes the reader thread of a :class:`HeldSocket` reads into one buffer at most
CHUNK = 1 << 20


class HeldSocket:
    """A connected socket whose received frames reach the reader ``hold_s`` seconds after
    their last byte arrived (see the module docstring). Sending, shutdown, close and options
    go to the real socket; :meth:`recv_into` serves whole frames, each after its release,
    from the buffers the reader thread received them into (no copy in between).

    The reader thread reads a payload in chunks of at most :data:`CHUNK` bytes as they
    arrive and refuses a header stating more than ``limit`` bytes (default
    :data:`~ppnn.wire.framing.MAX_PAYLOAD`); whatever stops it (such a header, an error of
    the socket or of the thread) reaches the next :meth:`recv_into`: a
    :class:`~ppnn.wire.transport.WireError` saying what happened, at once."""

    def __init__(self, sock, hold_s: float, limit: int = MAX_PAYLOAD):
        self._sock, self._hold, self._limit = sock, float(hold_s), int(limit)
        self._frames: queue.SimpleQueue = queue.SimpleQueue()
        self._parts: list[memoryview] = []  # what is left of the frame being served
        self._timeout = sock.gettimeout()
        self._closed = False
        threading.Thread(target=self._read, daemon=True, name="held reader").start()

    def _exact(self, n: int) -> bytearray | None:
        """``n`` bytes read into one new buffer (served from it: no further copy)."""
        buf, got = bytearray(n), 0
        view = memoryview(buf)
        while got < n:
            try:
                k = self._sock.recv_into(view[got:])
            except TimeoutError:  # idle: the reader's timeout is the protocol's business
                if self._closed:
                    return None
                continue
            if k == 0:
                return None
            got += k
        return buf

    def _read(self) -> None:
        try:
            while True:
                head = self._exact(HEADER.size)
                if head is None:
                    break
                seq, _, length = HEADER.unpack(head)
                if length > self._limit:
                    self._frames.put(WireError(
                        f"frame #{seq} states a payload of {length} bytes, more than a frame "
                        f"may carry ({self._limit}): not read"))
                    return
                parts, left = [head], length
                while left:
                    body = self._exact(min(CHUNK, left))
                    if body is None:
                        break
                    parts.append(body)
                    left -= len(body)
                if left:
                    self._frames.put((0.0, parts))  # a partial frame: the reader sees it end
                    break
                self._frames.put((time.monotonic() + self._hold, parts))
        except OSError as e:
            self._frames.put(e)
            return
        except BaseException as e:  # e.g. MemoryError: the receiver must hear of it
            self._frames.put(WireError(f"the reader thread stopped: {type(e).__name__}: {e}"))
            return
        self._frames.put(None)  # end of stream

    def recv_into(self, view) -> int:
        if not self._parts:
            try:
                item = self._frames.get(timeout=self._timeout)
            except queue.Empty:
                raise TimeoutError("timed out") from None
            if item is None:
                self._frames.put(None)
                return 0
            if isinstance(item, Exception):  # an OSError, or the reader's WireError
                self._frames.put(item)  # every later receive fails the same way
                raise item
            release, parts = item
            wait = release - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            self._parts = [memoryview(b) for b in parts if len(b)]
            if not self._parts:  # pragma: no cover - a frame has a header at least
                return self.recv_into(view)
        part = self._parts[0]
        n = min(len(view), len(part))
        view[:n] = part[:n]
        if n == len(part):
            self._parts.pop(0)
        else:
            self._parts[0] = part[n:]
        return n

    def gettimeout(self):
        return self._timeout

    def settimeout(self, t) -> None:
        self._timeout = t

    def sendall(self, data) -> None:
        self._sock.sendall(data)

    def setsockopt(self, *a) -> None:
        self._sock.setsockopt(*a)

    def fileno(self) -> int:  # the sender writes to the real socket directly
        return self._sock.fileno()

    def shutdown(self, how) -> None:
        self._sock.shutdown(how)

    def close(self) -> None:
        self._closed = True
        self._sock.close()


# -- namespaces -----------------------------------------------------------------------------
def _run(*cmd: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=_CMD_TIMEOUT)
    if check and r.returncode:
        raise RuntimeError(f"shaped link set-up failed: `{' '.join(cmd)}`: "
                           f"{(r.stderr or r.stdout).strip()}")
    return r


def our_namespaces() -> list[str]:
    """Every network namespace whose name starts with :data:`PREFIX`."""
    if shutil.which("ip") is None:
        return []
    out = _run("ip", "netns", "list", check=False).stdout
    return [ln.split()[0] for ln in out.splitlines() if ln.startswith(PREFIX)]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stale_namespaces() -> list[str]:
    """Our namespaces whose creating process is gone (left by a run that crashed)."""
    out = []
    for ns in our_namespaces():
        m = re.match(re.escape(PREFIX) + r"(\d+)-", ns)
        if m and not _alive(int(m.group(1))):
            out.append(ns)
    return out


def can_shape() -> tuple[bool, str]:
    """Whether this process can create namespaces: root and ``ip``/``tc`` on the PATH."""
    if os.geteuid() != 0:
        return False, "not root (namespaces and tc need root)"
    missing = [t for t in ("ip", "tc") if shutil.which(t) is None]
    if missing:
        return False, f"{' and '.join(missing)} not found"
    return True, ""


@dataclass
class Shaping:
    """What a run's network was: the link, whether it was shaped, and how (for the table)."""

    link: Link | None
    shaped: bool = False
    how: str = "loopback (not shaped)"
    latency: str = "none"
    hold_s: float | None = None  # seconds the receiving transport holds each frame (None:
    # no holding transport -- plain loopback, or netem adds the latency)
    hosts: dict[str, str] = field(default_factory=dict)
    namespaces: dict[str, str] = field(default_factory=dict)

    def prefix(self, role: str) -> list[str]:
        """The command prefix that starts a process of ``role`` in its namespace."""
        return ["ip", "netns", "exec", self.namespaces[role]] if self.shaped else []

    def describe(self) -> dict:
        return {"link": str(self.link) if self.link else "loopback", "shaped": self.shaped,
                "how": self.how, "latency": self.latency}


_current: Shaping | None = None


def current() -> Shaping | None:
    """The shaping of the run in progress in this process (read by the launcher)."""
    return _current


def _netem_available(ns: str) -> bool:
    r = _run("tc", "-n", ns, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms",
             check=False)
    if r.returncode == 0:
        _run("tc", "-n", ns, "qdisc", "del", "dev", "lo", "root", check=False)
        return True
    return False


def _tbf(bandwidth_Bps: float) -> list[str]:
    rate_bit = max(int(bandwidth_Bps * 8), 8000)
    burst = max(int(bandwidth_Bps * 0.002), 128 * 1024)  # >= one GSO segment, ~2 ms of rate
    limit = max(int(bandwidth_Bps * 0.5), 4 * 1024 * 1024)  # no drops from a full queue
    return ["tbf", "rate", f"{rate_bit}bit", "burst", str(burst), "limit", str(limit)]


def _delete(names) -> list[str]:
    failed = []
    for ns in names:
        if _run("ip", "netns", "del", ns, check=False).returncode and ns in our_namespaces():
            failed.append(ns)
    return failed


def _raise_on_signal(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


@contextlib.contextmanager
def shaped(link):
    """Context in which wire-mode runs of this process use ``link`` (see the module
    docstring); yields the :class:`Shaping`. ``link=None``: plain loopback."""
    global _current
    link = None if link is None else parse_link(link)
    if link is None:
        yield Shaping(None)
        return
    ok, why = can_shape()
    if not ok:
        sh = Shaping(link, how=f"loopback, NOT shaped: {why}", latency="none (not shaped)")
        _current = sh
        try:
            yield sh
        finally:
            _current = None
        return
    _delete(stale_namespaces())
    tag = f"{PREFIX}{os.getpid()}-"
    names = {r: tag + s for r, s in _SHORT.items()}
    hub = tag + "hub"
    created: list[str] = []
    old = {}
    in_main = threading.current_thread() is threading.main_thread()
    try:
        if in_main:
            for s in (signal.SIGTERM, signal.SIGHUP):
                old[s] = signal.signal(s, _raise_on_signal)
        for ns in (hub, *names.values()):
            if ns in our_namespaces():  # this pid's own leftover
                _delete([ns])
            _run("ip", "netns", "add", ns)
            created.append(ns)
        netem = _netem_available(hub)
        _run("ip", "-n", hub, "link", "add", "br0", "type", "bridge")
        _run("ip", "-n", hub, "link", "set", "br0", "up")
        hosts = {}
        for i, (role, ns) in enumerate(names.items()):
            host = f"{_SUBNET}.{i + 1}"
            _run("ip", "-n", hub, "link", "add", f"v{i}", "type", "veth", "peer", "name",
                 "eth0", "netns", ns)
            _run("ip", "-n", hub, "link", "set", f"v{i}", "master", "br0", "up")
            _run("ip", "-n", ns, "link", "set", "lo", "up")
            _run("ip", "-n", ns, "addr", "add", f"{host}/24", "dev", "eth0")
            _run("ip", "-n", ns, "link", "set", "eth0", "up")
            limited = not math.isinf(link.bandwidth_Bps)  # BASE: no tbf
            if netem and link.latency_s > 0:
                _run("tc", "-n", ns, "qdisc", "add", "dev", "eth0", "root", "handle", "1:",
                     "netem", "delay", f"{link.latency_s * 1e6:.0f}us", "limit", "100000")
                if limited:
                    _run("tc", "-n", ns, "qdisc", "add", "dev", "eth0", "parent", "1:1",
                         "handle", "10:", *_tbf(link.bandwidth_Bps))
            elif limited:
                _run("tc", "-n", ns, "qdisc", "add", "dev", "eth0", "root",
                     *_tbf(link.bandwidth_Bps))
            hosts[role] = host
        sh = Shaping(link, True, "network namespaces + veth/bridge, tbf uplink per process",
                     "netem" if netem else "transport hold (no netem)",
                     None if netem else link.latency_s, hosts, names)
        _current = sh
        yield sh
    finally:
        _current = None
        failed = _delete(reversed(created))
        for s, h in old.items():
            signal.signal(s, h)
        if failed:
            raise RuntimeError(f"could not delete the namespaces {failed}")
