"""Where a wire party's CPU goes: the wire path vs the protocol's own steps (a diagnostic).

With ``PPNN_WIRE_SPLIT=1`` in the environment, every process of a wire-mode run
(:mod:`.launch`) counts the CPU seconds its protocol thread spends inside the *wire path*
(``time.thread_time``): the functions a wire module lists in its ``WIRE_PATH`` (for
Falcon: the choke point ``_transmit`` with the ledger booking it wraps, the reshare and settle
of a round, the dealer's material read from the stream, the garbage of the honesty apparatus;
for :mod:`.transport`: :meth:`Wire.send` and :meth:`Wire._recv`). Only the outermost such
call is counted. The process's other threads only move bytes (sender threads, a shaped
link's reader threads), so their CPU is wire path too. What is left is the protocol
thread's CPU outside the wire path: the protocol's own steps, which the in-process
simulation runs too.

:meth:`Wire.mark` notes both counts at each mark, and :meth:`Wire.stats` reports them
(``"split cpu s"``, ``"mark split cpu s"``); :func:`ppnn.wire.summary.wire_summary` gives
each party's wire-path CPU in the online phase (``"party online wire path cpu s"``). Off by
default: it costs two clock reads per outermost call. ``benchmarks/bench_wire.py --split``
uses it.

Main names: :data:`ENV`, :func:`enabled`, :func:`install`, :func:`seconds`, :func:`counts`.
"""

from __future__ import annotations

import functools
import os
import sys
import time

__all__ = ["ENV", "enabled", "install", "seconds", "counts"]

#: the environment variable that turns the count on in every process of a run
ENV = "PPNN_WIRE_SPLIT"

_state = {"installed": False, "depth": 0, "acc": 0.0}
_done: set = set()


def enabled() -> bool:
    """Whether this process counts (the variable is set and :func:`install` ran)."""
    return _state["installed"]


def seconds() -> float | None:
    """CPU seconds the protocol thread spent in the wire path so far (None: not
    counting)."""
    return _state["acc"] if _state["installed"] else None


def counts() -> tuple[float, float] | None:
    """``(wire path, this thread's CPU)`` seconds so far, called from the protocol thread
    (None: not counting)."""
    return (_state["acc"], time.thread_time()) if _state["installed"] else None


def _wrap(f):
    clock = time.thread_time

    @functools.wraps(f)
    def counted(*args, **kwargs):
        st = _state
        if st["depth"]:
            st["depth"] += 1
            try:
                return f(*args, **kwargs)
            finally:
                st["depth"] -= 1
        st["depth"] = 1
        t0 = clock()
        try:
            return f(*args, **kwargs)
        finally:
            st["acc"] += clock() - t0
            st["depth"] = 0

    counted.__wire_path__ = True
    return counted


def _install_owner(owner, names) -> None:
    for name in names:
        f = getattr(owner, name)
        if getattr(f, "__wire_path__", False):
            continue
        setattr(owner, name, _wrap(f))


def install() -> None:
    """Count from now on (if ``PPNN_WIRE_SPLIT`` is set): wrap the ``WIRE_PATH`` of every
    wire module imported so far (``{"Class": ("method", ...), None: ("function", ...)}``:
    :mod:`.transport`'s :meth:`Wire.send` and :meth:`Wire._recv`, a family module's steps).
    Call it again after a job's module is imported: what is wrapped stays wrapped once."""
    if os.environ.get(ENV, "") in ("", "0"):
        return
    for name, mod in list(sys.modules.items()):
        if not name.startswith("ppnn.wire.") or name in _done:
            continue
        path = getattr(mod, "WIRE_PATH", None)
        if path is None:
            continue
        for cls, names in path.items():
            _install_owner(mod if cls is None else getattr(mod, cls), names)
        _done.add(name)
    _state["installed"] = True
