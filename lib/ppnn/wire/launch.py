"""The launcher: one OS process per role of the run (some of P0, P1, P2, dealer), started,
joined and cleaned up by the run itself.

A family declares its roles by the tasks it gives (Falcon all four; a two-party family with
a dealer three, e.g. :data:`ppnn.wire.delphi.ROLE_OF`). :func:`launch` starts one fresh
interpreter per role (``sys.executable -c``: nothing of the caller's memory is inherited, and
the caller's script needs no ``__main__`` guard) and hands it the caller's ``sys.path``, the
control port and the run's random token on its stdin. Each process then

1. connects to the launcher's control socket on 127.0.0.1 (a connection without the token is
   dropped, :func:`~ppnn.wire.transport.accept_hellos`) and opens a listener of its own;
2. receives only its own task and the port table, and connects to the others
   (:func:`~ppnn.wire.transport.connect_mesh`);
3. on the launcher's go runs ``job(wire, task)`` and sends back its result and traffic
   counters, as arrays and plain data (:mod:`.codec`), never a pickle.

Each process runs with :data:`CHILD_ENV`: glibc's allocator keeps what it frees, in one arena.
With ``PPNN_WIRE_SPLIT=1`` every process counts its wire path's CPU apart (:mod:`.split`);
with ``PPNN_WIRE_PROFILE=PREFIX`` each writes a ``cProfile`` of its job to ``PREFIX.ROLE``.
The traffic counters always give every process's CPU seconds and peak memory.

A process that raises reports its error and the run stops after :data:`GRACE` seconds; one
that dies or hangs is seen at once or named by the peer that timed out; the whole run is
bounded by ``deadline``. Every process is terminated and waited for before :func:`launch`
returns, and one whose launcher dies exits by itself.

See also
--------
docs/wire.md : processes and roles, and why the allocator is set.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import secrets
import select
import socket
import struct
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection, wait

import numpy as np

from . import codec, split
from .framing import MAX_PAYLOAD
from .transport import ROLES, Wire, WireError, WireTimeout, accept_hellos, connect_mesh

__all__ = ["launch", "Launched", "GRACE", "CHILD_ENV"]

#: environment added to every process's: glibc keeps freed memory for reuse (docstring)
CHILD_ENV = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(1 << 40),
             "MALLOC_ARENA_MAX": "1"}
#: seconds the other processes may take to report their errors after the first one
GRACE = 1.0
#: seconds a process may pause in the middle of one message to the launcher
_PAUSE = 30.0
_BOOT = ("import json, sys; c = json.loads(sys.stdin.readline()); sys.path[:0] = c['path']; "
         "from ppnn.wire.launch import _child; _child(c)")


class Launched(dict):
    """role -> ``(result, traffic stats)``, with ``ports`` (the listening ports the run
    used, all closed again) and ``seconds`` (from "go" to the last result)."""

    ports: dict[str, int]
    seconds: float


def _watch(conn: Connection) -> None:
    """Exit this process when the launcher goes away (its control connection closes)."""
    try:
        conn.recv()
    except (EOFError, OSError):
        pass
    os._exit(3)


def _child(cfg: dict) -> None:
    """Entry point of one process (see the module docstring)."""
    role, timeout = cfg["role"], float(cfg["timeout"])
    token = bytes.fromhex(cfg["token"])
    if "fd" in cfg:  # shaped links (.links): a socket pair from the launcher, no hello
        ctl = socket.socket(fileno=int(cfg["fd"]))
    else:
        ctl = socket.create_connection(("127.0.0.1", cfg["port"]), timeout=timeout)
        ctl.sendall(token + bytes([ROLES.index(role)]))
    ctl.settimeout(None)
    conn = Connection(ctl.detach())
    wire = None

    def report(*message) -> None:  # to the launcher: arrays and plain data (.codec)
        conn.send_bytes(codec.encode(message))

    try:
        listener = socket.create_server((cfg.get("host", "127.0.0.1"), 0))
        report("port", listener.getsockname()[1])
        if not conn.poll(timeout):
            raise WireTimeout(f"{role}: no task from the launcher within {timeout:g} s")
        job, task, ports = pickle.loads(conn.recv_bytes())
        split.install()  # PPNN_WIRE_SPLIT: count the wire path's CPU (module docstring)
        socks = connect_mesh(role, listener, ports, token, timeout, cfg.get("hosts"),
                             tuple(cfg.get("roles", ROLES)))
        if cfg.get("hold") is not None:  # shaped, no netem: the receiver holds each frame
            # (also for 0 s: a zero link runs the same receiving code as the shaped ones)
            from .links import HeldSocket

            socks = {p: HeldSocket(s, cfg["hold"]) for p, s in socks.items()}
        report("ready", None)
        if not conn.poll(timeout):
            raise WireTimeout(f"{role}: no go from the launcher within {timeout:g} s")
        conn.recv()
        threading.Thread(target=_watch, args=(conn,), daemon=True).start()
        garbage = np.random.default_rng(np.random.SeedSequence())  # fresh OS entropy
        wire = Wire(role, socks, timeout, garbage)
        if os.environ.get("PPNN_WIRE_PROFILE"):  # a profile per role (module docstring)
            import cProfile

            prof = cProfile.Profile(time.process_time)
            result = prof.runcall(job, wire, task)
            prof.dump_stats(f"{os.environ['PPNN_WIRE_PROFILE']}.{role}")
        else:
            result = job(wire, task)
        wire.close()
        report("done", (result, wire.stats()))
    except BaseException as e:  # report, then exit: the launcher stops the others
        if wire is not None:
            for s in wire.socks.values():
                s.close()
        try:
            report("error", f"{type(e).__name__}: {e}", "".join(traceback.format_exception(e)))
        except OSError:
            pass
        sys.exit(1)
    finally:
        conn.close()


def _stop(procs: dict[str, subprocess.Popen]) -> None:
    for p in procs.values():
        if p.poll() is None:
            p.terminate()
    for p in procs.values():
        try:
            p.wait(2.0)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _gather(kind: str, conns: dict[str, Connection], procs: dict[str, subprocess.Popen],
            deadline: float | None, phase: str) -> dict[str, object]:
    """Wait until every process sent ``(kind, payload)``; raise a :class:`WireError` naming
    the processes that failed, died or stayed silent."""
    got: dict[str, object] = {}
    errors: dict[str, str] = {}
    stop_at = deadline
    while len(got) + len(errors) < len(conns):
        pending = [r for r in conns if r not in got and r not in errors]
        left = None if stop_at is None else stop_at - time.monotonic()
        if left is not None and left <= 0:
            break
        ready = wait([conns[r] for r in pending], timeout=left)
        if not ready:
            break
        for r in pending:
            if conns[r] not in ready:
                continue
            msg = _receive(conns[r], procs[r], phase)
            if msg[0] == kind:
                got[r] = msg[1]
                continue
            errors[r] = msg[1]
            grace = time.monotonic() + GRACE  # let the others report theirs, then stop
            stop_at = grace if stop_at is None else min(stop_at, grace)
    if errors or len(got) < len(conns):
        silent = [r for r in conns if r not in got and r not in errors]
        lines = [f"{r}: {m}" for r, m in errors.items()]
        if silent:
            lines.append(f"{', '.join(silent)}: no answer during {phase} "
                         + ("(stopped after the errors above)" if errors else
                            "within the deadline (hung?)"))
        cls = WireError if errors else WireTimeout
        raise cls("wire-mode run failed:\n  " + "\n  ".join(lines))
    return got


def _read(fd: int, n: int) -> bytes:
    """``n`` bytes from ``fd``, read as they arrive, in chunks of at most 1 MiB (a length
    the sender states costs no memory before its bytes arrive)."""
    buf = bytearray()
    while len(buf) < n:
        if not select.select([fd], [], [], _PAUSE)[0]:
            raise OSError(f"no byte for {_PAUSE:g} s inside a message")
        chunk = os.read(fd, min(n - len(buf), 1 << 20))
        if not chunk:
            raise EOFError("the connection closed")
        buf += chunk
    return bytes(buf)


def _recv_message(conn: Connection) -> bytes:
    """One message a process sent with ``Connection.send_bytes`` (a big-endian length, then
    the bytes), read off the socket by :func:`_read` and refused beyond
    :data:`~ppnn.wire.framing.MAX_PAYLOAD` bytes before any of it is read."""
    fd = conn.fileno()
    (n,) = struct.unpack("!i", _read(fd, 4))
    if n == -1:
        (n,) = struct.unpack("!Q", _read(fd, 8))
    if not 0 <= n <= MAX_PAYLOAD:
        raise OSError(f"a message stated as {n} bytes (at most {MAX_PAYLOAD})")
    return _read(fd, n)


def _receive(conn: Connection, proc: subprocess.Popen, phase: str) -> tuple:
    """The next message of a process, decoded from arrays and plain data (:mod:`.codec`:
    nothing it sends is unpickled), or ``("died" | "refused", why)``."""
    try:
        data = _recv_message(conn)
    except (EOFError, OSError) as e:
        try:
            code = proc.wait(1.0)
        except subprocess.TimeoutExpired:
            return ("refused", f"sent a message the launcher cannot read during {phase} "
                    f"({e}; at most {MAX_PAYLOAD} bytes)")
        return ("died", f"died (exit code {code}) during {phase}")
    try:
        msg = codec.decode(data)
    except ValueError as e:
        return ("refused", f"sent a message that is not arrays and plain data during {phase}: "
                f"{e}")
    if not (isinstance(msg, tuple) and msg and msg[0] in ("port", "ready", "done", "error")
            and len(msg) == (3 if msg[0] == "error" else 2)):
        return ("refused", f"sent an unexpected message during {phase}")
    return msg


def _accept(server: socket.socket, token: bytes, until: float, roles: tuple[str, ...] = ROLES
            ) -> dict[str, Connection]:
    """The control connections of ``roles``, each identified by the run's token
    (:func:`~ppnn.wire.transport.accept_hellos`: any other connection is dropped)."""
    try:
        socks = accept_hellos(server, token, roles, until)
    except WireTimeout as e:
        raise WireTimeout(f"wire-mode run failed: {e} within the start-up timeout (did a "
                          "process not start?)") from None
    return {r: Connection(s.detach()) for r, s in socks.items()}


def launch(job: Callable, tasks: dict[str, object], *, timeout: float = 30.0,
           deadline: float | None = 600.0) -> Launched:
    """Run ``job(wire, tasks[role])`` in one process per role of ``tasks`` (two or more of
    :data:`~ppnn.wire.transport.ROLES`: the roles the family declares), connected over
    loopback TCP.

    ``job`` must be importable by name (a module-level function); each task is pickled to
    its own process only; what ``job`` returns must be arrays, plain data and ledgers
    (:mod:`.codec`). ``timeout``: seconds a receive (and each start-up step) waits;
    ``deadline``: seconds the whole run may take (None: no limit beyond the receive
    timeouts). Returns a :class:`Launched`; raises :class:`WireError` (or
    :class:`WireTimeout`) naming every process that failed."""
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if deadline is not None and (isinstance(deadline, bool) or not isinstance(
            deadline, int | float) or not deadline > 0):
        raise ValueError(f"deadline must be a positive number of seconds or None, got "
                         f"{deadline!r}")
    if not isinstance(tasks, dict) or not set(tasks) <= set(ROLES) or len(tasks) < 2:
        raise ValueError(f"tasks must give one task per role, two or more of {ROLES}, got "
                         f"{sorted(tasks) if isinstance(tasks, dict) else tasks!r}")
    roles = tuple(r for r in ROLES if r in tasks)
    token = secrets.token_bytes(16)
    procs: dict[str, subprocess.Popen] = {}
    conns: dict[str, Connection] = {}
    end = None if deadline is None else time.monotonic() + deadline

    def step(seconds: float) -> float:
        t = time.monotonic() + seconds
        return t if end is None else min(t, end)

    from .links import current

    shaping = current()  # shaped links (.links): one network namespace per process
    ns = shaping is not None and shaping.shaped
    server = socket.create_server(("127.0.0.1", 0))
    try:
        cfg = {"path": [p for p in sys.path if p], "token": token.hex(),
               "port": server.getsockname()[1], "timeout": float(timeout),
               "roles": list(roles)}
        pairs: dict[str, socket.socket] = {}
        for role in roles:
            extra, fds, prefix = {}, (), []
            if ns:
                pairs[role], theirs = socket.socketpair()
                extra = {"fd": theirs.fileno(), "host": shaping.hosts[role],
                         "hosts": shaping.hosts, "hold": shaping.hold_s}
                fds, prefix = (theirs.fileno(),), shaping.prefix(role)
            p = subprocess.Popen([*prefix, sys.executable, "-c", _BOOT], stdin=subprocess.PIPE,
                                 stdout=subprocess.DEVNULL, pass_fds=fds,
                                 env={**os.environ, **CHILD_ENV})
            procs[role] = p
            if ns:
                theirs.close()
            p.stdin.write((json.dumps({**cfg, **extra, "role": role}) + "\n").encode())
            p.stdin.close()
        # start-up: a fresh interpreter imports numpy and ppnn first
        if ns:
            conns = {r: Connection(s.detach()) for r, s in pairs.items()}
        else:
            conns = _accept(server, token, step(max(timeout, 60.0)), roles)
        server.close()
        ports = _gather("port", conns, procs, step(max(timeout, 60.0) if ns else timeout),
                        "start-up")
        bad = {r: p for r, p in ports.items() if type(p) is not int or not 0 < p < 1 << 16}
        if bad:
            raise WireError(f"wire-mode run failed: {', '.join(bad)} reported no port number "
                            f"({bad})")
        for role, c in conns.items():
            c.send_bytes(pickle.dumps((job, tasks[role], ports)))
        _gather("ready", conns, procs, step(timeout), "connection set-up")
        t0 = time.perf_counter()
        for c in conns.values():
            c.send(("go", None))
        done = _gather("done", conns, procs, end, "the protocol")
        seconds = time.perf_counter() - t0
        for p in procs.values():
            p.wait(timeout)
    finally:
        server.close()
        _stop(procs)
        for c in conns.values():
            c.close()
    out = Launched(done)
    out.ports, out.seconds = dict(ports), seconds
    return out


@contextlib.contextmanager
def swapped(owner, name: str, replacement, on: bool = True):
    """Within the block, ``owner.name`` is ``replacement`` when ``on`` (a wire family's
    deliberately broken step: the garbage test's negative control), restored after."""
    original = getattr(owner, name)
    if on:
        setattr(owner, name, replacement)
    try:
        yield
    finally:
        setattr(owner, name, original)


def checked_images(plan, x, families):
    """``x`` as ``plan`` takes it (:func:`ppnn.protocols.api._check_images`), after checking
    that ``plan`` is a compiled plan of one of ``families`` (a wire family's run)."""
    from ppnn.protocols.api import Plan, _check_images

    if not isinstance(plan, Plan):
        raise TypeError(f"plan must be a Plan from ppnn.compile, got {type(plan).__name__}")
    if plan.family not in families:
        raise ValueError(f"plan must be of {tuple(families)}, got {plan.family!r}")
    return _check_images(plan, x)
