"""Shaped links (ppnn.wire.links): parsing, the latency hold, the non-root fallback, and --
as root -- namespace runs that leave nothing behind, hold latency and carry the same bytes."""

import os
import socket
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from ppnn.wire import links
from ppnn.wire.falcon import relu_program, run_program
from ppnn.wire.framing import HEADER
from ppnn.wire.timing import write_csv

root = pytest.mark.skipif(os.geteuid() != 0 or not links.can_shape()[0],
                          reason="shaped links need root, ip and tc")
X = {"a": np.random.default_rng(1).integers(0, 1 << 32, 200, dtype=np.uint64)}


def _ours() -> tuple[list[str], str]:
    out = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True).stdout
    return links.our_namespaces(), out


def test_parse_link_forms_and_errors():
    assert links.parse_link("lan").latency_s == pytest.approx(0.1e-3)  # half the 0.2 ms ping
    assert links.parse_link("WAN").bandwidth_Bps == pytest.approx(40e6)
    lk = links.parse_link("10,100")
    assert (lk.latency_s, lk.bandwidth_Bps) == (pytest.approx(0.01), pytest.approx(1e8))
    for bad in ("lann", "10", "10,0", "-1,5", "a,b", 3, None):
        with pytest.raises(ValueError, match="link"):
            links.parse_link(bad)


@pytest.mark.parametrize("kind", ["unix", "tcp"])
def test_held_socket_releases_frames_after_the_hold(kind):
    """Each frame is served once its last byte arrived + the hold, never a read past the
    frame; an empty frame (a header alone) is held too; a read of one large buffer gets one
    frame at a time."""
    if kind == "unix":
        a, b = socket.socketpair()
    else:
        with socket.create_server(("127.0.0.1", 0)) as srv:
            b = socket.create_connection(srv.getsockname())
            a, _ = srv.accept()
    a.settimeout(5.0)
    held = links.HeldSocket(a, 0.15)
    try:
        frames = [HEADER.pack(0, 1, 3) + b"xyz", HEADER.pack(1, 2, 0)]
        t0 = time.monotonic()
        b.sendall(frames[0])
        buf = bytearray(len(frames[0]))
        view, got = memoryview(buf), 0
        while got < len(buf):
            got += held.recv_into(view[got:])
        assert time.monotonic() - t0 >= 0.15
        assert bytes(buf) == frames[0]
        t1 = time.monotonic()
        b.sendall(frames[1] + frames[0])  # an empty frame, then the first again
        big = bytearray(100)
        got = bytearray()
        while len(got) < HEADER.size:
            got += big[:held.recv_into(big)]
        assert bytes(got) == frames[1] and time.monotonic() - t1 >= 0.15
        got = bytearray()
        while len(got) < len(frames[0]):
            got += big[:held.recv_into(big)]
        assert bytes(got) == frames[0]
        b.close()
        assert held.recv_into(memoryview(bytearray(1))) == 0  # end of stream
    finally:
        held.close()
        b.close()


def test_a_held_link_reports_an_oversized_header_or_a_failed_reader_at_once(monkeypatch):
    """A header stating more than a frame may carry, or a reader thread that fails (here a
    MemoryError), reaches the protocol's receive as a WireError saying what happened --
    at once, not as a timeout blaming the peer -- and the reader allocates nothing large."""
    import tracemalloc

    from ppnn.wire.transport import Wire, WireError

    layout = [((4,), np.dtype(np.uint64), 32)]
    a, b = socket.socketpair()
    tracemalloc.start()
    try:
        w = Wire("P1", {"P0": links.HeldSocket(a, 0.0)}, 30.0, np.random.default_rng(0))
        b.sendall(HEADER.pack(0, 0, (1 << 32) - 1) + b"x" * 17)
        t0 = time.monotonic()
        with pytest.raises(WireError, match=r"P1: receiving message #0 'share' from P0 failed: "
                           r"frame #0 states a payload of 4294967295 bytes, more than a "
                           r"frame may carry"):
            w.recv("P0", layout, "share")
        assert time.monotonic() - t0 < 5
        assert tracemalloc.get_traced_memory()[1] < 4 << 20
    finally:
        tracemalloc.stop()
        a.close()
        b.close()

    def no_memory(self, n):
        raise MemoryError(f"cannot allocate {n} bytes")

    monkeypatch.setattr(links.HeldSocket, "_exact", no_memory)
    a, b = socket.socketpair()
    try:
        w = Wire("P1", {"P0": links.HeldSocket(a, 0.0)}, 30.0, np.random.default_rng(0))
        t0 = time.monotonic()
        with pytest.raises(WireError, match="the reader thread stopped: MemoryError: cannot "
                           "allocate 12 bytes"):
            w.recv("P0", layout, "share")
        assert time.monotonic() - t0 < 5
    finally:
        a.close()
        b.close()


def test_without_root_runs_on_plain_loopback(monkeypatch):
    monkeypatch.setattr(links.os, "geteuid", lambda: 1000)
    before = links.our_namespaces()
    with links.shaped("wan") as sh:
        r = run_program(relu_program, X, 0, timeout=30, deadline=60)
    assert not sh.shaped and "NOT shaped" in sh.how and "not root" in sh.how
    assert sh.describe()["latency"].startswith("none")
    assert r["wire"]["measured rounds"] > 0  # it ran; that no latency was added is the link's
    # description above, not a timing (a loaded machine can take longer than WAN would)
    assert links.our_namespaces() == before


def test_write_csv_is_atomic(tmp_path):
    p = write_csv(pd.DataFrame({"a": [1, 2]}), tmp_path / "t.csv")
    assert p.read_text().splitlines() == ["a", "1", "2"]
    assert [q.name for q in tmp_path.iterdir()] == ["t.csv"]


@root
def test_shaped_run_holds_latency_same_bytes_and_cleans_up():
    ns0, link0 = _ours()
    loop = run_program(relu_program, X, 0, timeout=30, deadline=60)["wire"]
    with links.shaped("50,100") as sh:
        assert sh.shaped and sh.latency in ("netem", "transport hold (no netem)")
        assert len(links.our_namespaces()) == len(ns0) + 5
        shaped = run_program(relu_program, X, 0, timeout=30, deadline=60)["wire"]
    assert _ours() == (ns0, link0)  # no namespace, veth or bridge left
    for c, v in loop["classes"].items():
        assert shaped["classes"][c]["wire bytes"] == v["wire bytes"], c
    assert shaped["ledger rounds"] == loop["ledger rounds"]
    # every round of the causal chain waits one 50 ms latency at least (a bound, not loopback
    # + latency: the namespaces' reader threads can make the rest faster than plain loopback)
    assert shaped["measured rounds"] == shaped["ledger rounds"]
    assert shaped["seconds"] >= shaped["ledger rounds"] * 0.05


@root
def test_the_base_stack_runs_in_namespaces_with_no_tc_and_the_reader_holding_nothing():
    """links.BASE, the calibrated model's base: the shaped runs' namespaces, veth pairs and
    receiving transport (holding 0 s where there is no netem), no qdisc of ours."""
    ns0, link0 = _ours()
    with links.shaped(links.BASE) as sh:
        assert sh.shaped and sh.hold_s in (None, 0.0)
        ns = sh.namespaces["P0"]
        qd = subprocess.run(["tc", "-n", ns, "qdisc", "show", "dev", "eth0"],
                            capture_output=True, text=True).stdout
        assert "tbf" not in qd and "netem" not in qd
        base = run_program(relu_program, X, 0, timeout=30, deadline=60)["wire"]
    assert _ours() == (ns0, link0)
    assert base["ledger rounds"] > 0 and "no bandwidth limit" in str(links.BASE)


@root
def test_failed_run_and_stale_namespaces_are_cleaned_up():
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = f"{links.PREFIX}{dead.pid}-p0"
    subprocess.run(["ip", "netns", "add", stale], check=True)
    ns0, link0 = _ours()
    assert stale in ns0
    with pytest.raises(Exception, match="KeyError"), links.shaped("lan"):
        assert stale not in links.our_namespaces()  # removed before the run
        run_program(relu_program, {"not a": X["a"]}, 0, timeout=10, deadline=30)
    ns, lk = _ours()
    assert stale not in ns and set(ns) == set(ns0) - {stale} and lk == link0
