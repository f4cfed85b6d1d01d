"""Pieces shared by the per-family wire-mode tests (``tests/test_wire_*.py``): the small
network every family runs on, and the check that every booked message crossed as its booked
bits packed plus the frame header."""

from __future__ import annotations

import numpy as np

from ppnn.nn import Conv2d, Dense, Flatten, MaxPool, Network, ReLU, init_params
from ppnn.wire import HEADER_BYTES


def tiny_network():
    """A convolution, ReLU, max-pool and dense layer on 6 x 6 images: ``(net, params,
    calibration images, two test images)``."""
    net = Network("tiny_wire", (1, 6, 6), [Conv2d(2, 3, 1, 0), ReLU(), MaxPool(2), Flatten(),
                                           Dense(4)])
    g = np.random.default_rng(1)
    params = init_params(net, np.random.default_rng(0))
    return net, params, g.uniform(0, 1, (16, 1, 6, 6)), g.uniform(0, 1, (2, 1, 6, 6))


def check_booked_bytes(ledger, wire: dict) -> tuple[list, list]:
    """Every online and offline (not dealer) message of ``ledger`` crossed as one frame of its
    booked bits packed plus the header (``wire``: ``result.extra["wire"]``). Returns the
    online and offline messages."""
    msgs = ledger.messages
    online = [m for m in msgs if m.phase == "online"]
    offline = [m for m in msgs if m.phase == "offline" and m.sender != ledger.DEALER]
    classes = wire["classes"]
    for name, ms in (("online", online), ("offline setup", offline)):
        c = classes[name]
        assert c["frames"] == len(ms), name
        assert c["bits"] == sum(m.bits for m in ms), name
        assert c["wire bytes"] == sum(-(-m.bits // 8) + HEADER_BYTES for m in ms), name
        assert c["wire bytes"] == c["expected wire bytes"], name
    return online, offline


def check_one_label_per_wire(server: dict, client: dict) -> int:
    """One garbled layer's OT as both processes recorded it (``WireOT(record=True)``):
    ``server`` the garbler's pairs ``(W0, W0 ^ Delta)`` and the answers it sent, ``client``
    the answers it received, their unmasking with its pads and its bits. What the client
    received holds no label in the clear; unmasked, the place of its bit holds its label and
    the other place neither label, and the two places never xor to ``Delta``. Returns the
    number of OTs checked."""
    pairs, got, opened = server["pairs"], client["received"], client["unmasked"]
    assert np.array_equal(got, server["answers"])  # what the server sent arrived
    b = client["bits"].astype(np.intp)[..., None, None]
    assert b.shape[:-2] == pairs.shape[:-2]

    def place(a, which):
        return np.take_along_axis(a, which, axis=-2)[..., 0, :]

    def same(a, c):  # 128-bit blocks equal, per OT
        return (a == c).all(axis=-1)

    for k in (0, 1):
        for label in (pairs[..., 0, :], pairs[..., 1, :]):
            assert not same(got[..., k, :], label).any()
    assert np.array_equal(place(opened, b), place(pairs, b))
    other = place(opened, 1 - b)
    for label in (pairs[..., 0, :], pairs[..., 1, :]):
        assert not same(other, label).any()
    delta = pairs[..., 0, :] ^ pairs[..., 1, :]
    assert not same(opened[..., 0, :] ^ opened[..., 1, :], delta).any()
    return int(np.prod(pairs.shape[:-2]))


def tiny_plans(families):
    """:func:`tiny_network` compiled for each of ``families``: ``(plans, x, (net, params,
    calib))``."""
    import ppnn

    net, params, calib, x = tiny_network()
    plans = {f: ppnn.compile(f, net, params, calib=calib) for f in families}
    return plans, x, (net, params, calib)


def hegc_view_job(wire, task: dict) -> dict:
    """A GAZELLE / GALA wire party on the slot simulator (:func:`ppnn.wire.hegc.hegc_job`)
    that also returns the client's view of every linear layer: the slots it decrypted from
    ``[y - r]_C``."""
    from ppnn.wire import hegc

    return _with_views(wire, task, hegc._Party, hegc.hegc_job)


def hegc_seal_view_job(wire, task: dict) -> dict:
    """:func:`hegc_view_job` on real SEAL (:func:`ppnn.wire.hegc_seal.hegc_seal_job`)."""
    from ppnn.wire import hegc_seal

    return _with_views(wire, task, hegc_seal._SealParty, hegc_seal.hegc_seal_job)


def _with_views(wire, task, party_cls, job):
    views, decrypt = [], party_cls.decrypt

    def spy(self, he, ct):
        out = decrypt(self, he, ct)
        views.append(np.asarray(out, dtype=np.int64) % he.p)
        return out

    party_cls.decrypt = spy
    try:
        res = job(wire, task)
    finally:
        party_cls.decrypt = decrypt
    return {**res, "views": views if wire.role == "P0" else None}


# -- a malicious party's result (tests of ppnn.wire.codec) --------------------------------
def touch_marker(path: str) -> None:
    """Writes this process's id to ``path``: what a malicious pickle would run on loading."""
    import os

    with open(path, "w") as f:
        f.write(str(os.getpid()))


class Payload:
    """An object whose pickle runs :func:`touch_marker` wherever it is unpickled."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return touch_marker, (self.path,)


def returns_payload_job(wire, task: dict):
    """A party's job that returns a :class:`Payload` (``task["raw"]``: bypassing its
    process's encoder, it sends the launcher the payload's pickle itself)."""
    if task is None:
        return None
    if task["raw"]:
        import pickle

        from ppnn.wire import codec

        codec.encode = pickle.dumps  # this process now sends raw pickles
    return {"output": Payload(task["path"])}


# -- what each process received off-line (tests of where randomness comes from) -----------
def recording_job(wire, task: dict):
    """Runs ``task["job"](wire, task["task"])`` and adds, under ``"received"``, every
    message this process received with :meth:`~ppnn.wire.transport.Wire.recv` (not the
    deferred ones): ``(sender, step, class, arrays)`` -- PRF keys, input shares, key shares,
    the dealer's material."""
    got = []
    recv = wire.recv

    def spy(peer, layout, what, cls="online", into=None):
        out = recv(peer, layout, what, cls, into)
        got.append((peer, what, cls, [np.array(a) for a in out]))
        return out

    wire.recv = spy
    res = task["job"](wire, task["task"])
    return {**res, "received": got}


def received_in(monkeypatch, module, run) -> dict:
    """``run()`` with ``module.launch`` wrapped in :func:`recording_job`: role -> what that
    process received (:func:`recording_job`)."""
    launch, seen = module.launch, []

    def spy(job, tasks, **kw):
        out = launch(recording_job, {r: {"job": job, "task": t} for r, t in tasks.items()},
                     **kw)
        seen.append(out)
        return out

    monkeypatch.setattr(module, "launch", spy)
    run()
    monkeypatch.setattr(module, "launch", launch)
    (launched,) = seen
    return {r: res["received"] for r, (res, _) in launched.items()}


def same(a: list, b: list) -> bool:
    """Two received messages' arrays are equal."""
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def oversized_report_job(wire, task):
    """A party's job that writes, on its own control connection, the header of a message
    stating ``task`` bytes and then 17 bytes, and waits (or, for ``task < 2^30``, exits)."""
    import gc
    import os
    import struct
    import time
    from multiprocessing.connection import Connection

    if task is None:
        return None
    (conn,) = [o for o in gc.get_objects() if isinstance(o, Connection) and not o.closed]
    os.write(conn.fileno(), struct.pack("!i", task) + b"x" * 17)
    if task < 1 << 30:
        os._exit(0)
    time.sleep(30)
