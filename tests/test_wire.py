"""Wire mode (issue 29, step 1): Falcon's parties and the dealer as four processes over
loopback TCP. Every message crosses as its booked bits plus the stated header; the outputs
and the ledger equal the in-process run; the garbage test passes for the honest protocol
and fails for a step that reads a component its party does not hold; a party that dies or
hangs is named within the timeout, and no process or port outlives a run."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import numpy as np
import pytest

import ppnn
from ppnn.nn import Conv2d, Dense, Flatten, MaxPool, Network, ReLU, init_params
from ppnn.protocols.falcon import Falcon
from ppnn.wire import (
    HEADER_BYTES,
    WireError,
    WireTimeout,
    frame_bytes,
    pack,
    payload_bytes,
    unpack,
)
from ppnn.wire.falcon import (
    relu_program,
    relu_reading_all_components,
    run_program,
)
from ppnn.wire.launch import launch
from ppnn.wire.summary import summary_frame

SEED = 5


def _relu_input(n: int = 300) -> dict:
    a = np.random.default_rng(1).integers(-(1 << 20), 1 << 20, n) % (1 << 32)
    return {"a": a.astype(np.uint64)}


def _children() -> set[int]:
    """Live child processes of this process (Linux /proc)."""
    me, out = os.getpid(), set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me and fields[0] != "Z":
            out.add(int(stat.parent.name))
    return out


def _closed(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
    except OSError:
        return True
    return False


# -- framing -------------------------------------------------------------------------------
@pytest.mark.parametrize("bits", [1, 6, 8, 13, 32, 64])
def test_pack_round_trips_at_the_booked_width(bits):
    g = np.random.default_rng(bits)
    a = g.integers(0, 1 << bits, size=(7, 5), dtype=np.uint64) if bits < 64 else \
        g.integers(0, np.iinfo(np.uint64).max, size=(7, 5), dtype=np.uint64)
    payload = pack([(a, bits)])
    assert len(payload) == payload_bytes(a.size * bits) == -(-a.size * bits // 8)
    (back,) = unpack(payload, [(a.shape, a.dtype, bits)])
    assert np.array_equal(back, a)


def test_a_mixed_message_packs_to_the_ceiling_of_its_total_bits():
    g = np.random.default_rng(0)
    ring = g.integers(0, 1 << 32, 10, dtype=np.uint64)
    zp = g.integers(0, 37, (10, 32)).astype(np.uint8)
    bit = g.integers(0, 2, 10).astype(np.uint8)
    parts = [(ring, 32), (zp, 6), (bit, 1), (ring, 32)]
    bits = 10 * 32 + 320 * 6 + 10 + 10 * 32
    payload = pack(parts)
    assert len(payload) == -(-bits // 8)
    assert frame_bytes(bits) == len(payload) + HEADER_BYTES == len(payload) + 12
    back = unpack(payload, [(p.shape, p.dtype, b) for p, b in parts])
    assert all(np.array_equal(x, y) for x, y in zip(back, [p for p, _ in parts]))


def _bit_string_oracle(parts) -> bytes:
    """The documented format, element by element: aligned parts as little-endian integers,
    then every other part's low bits, LSB first, one bit string padded to a byte."""
    aligned = b"".join(int(v).to_bytes(b // 8, "little") for a, b in parts
                       if b in (8, 16, 32, 64) for v in a.reshape(-1))
    stream = [(int(v) >> j) & 1 for a, b in parts if b not in (8, 16, 32, 64)
              for v in a.reshape(-1) for j in range(b)]
    stream += [0] * (-len(stream) % 8)
    return aligned + bytes(sum(stream[i + j] << j for j in range(8))
                           for i in range(0, len(stream), 8))


@pytest.mark.parametrize("seed", range(40))
def test_pack_matches_the_bit_string_element_by_element(seed):
    # runs of one narrow width start on and off byte boundaries (the fast path and the other)
    g = np.random.default_rng(seed)
    parts = []
    for _ in range(int(g.integers(1, 6))):
        bits = int(g.choice([1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 32]))
        parts.append((g.integers(0, 1 << bits, int(g.integers(0, 30)), dtype=np.uint64), bits))
    payload = pack(parts)
    assert payload == _bit_string_oracle(parts)
    back = unpack(payload, [(a.shape, a.dtype, b) for a, b in parts])
    assert all(np.array_equal(x, a) for x, (a, _) in zip(back, parts))


@pytest.mark.parametrize("seed", range(40))
def test_unpack_into_given_arrays_fills_them_with_the_same_values(seed):
    # the receiver's destinations: contiguous uint8 rows (filled in place by the narrow
    # path), uint64 rows, strided views; single and joined runs, any width and length
    g = np.random.default_rng(seed)
    parts, dests = [], []
    for _ in range(int(g.integers(1, 5))):
        bits = int(g.choice([1, 2, 3, 4, 5, 6, 7, 8, 13, 32]))
        dtype = np.uint8 if bits <= 8 and g.integers(2) else np.uint64
        n = int(g.integers(0, 3)) * 4 * int(g.integers(1, 9)) + int(g.integers(0, 2))
        parts.append((g.integers(0, 1 << bits, n, dtype=np.uint64).astype(dtype), bits))
        base = np.full((2, n), 255, dtype)
        dests.append(base[0] if g.integers(2) else base.T[:, 1])  # contiguous or strided
    payload = pack(parts)
    got = unpack(payload, [(a.shape, a.dtype, b) for a, b in parts], out=dests)
    for back, dst, (a, _) in zip(got, dests, parts):
        assert back is dst and np.array_equal(dst, a)
    with pytest.raises(ValueError, match="out has 0 arrays"):
        unpack(payload, [(a.shape, a.dtype, b) for a, b in parts], out=[])


@pytest.mark.parametrize("bits", [2, 3, 5, 6, 7, 8])
@pytest.mark.parametrize("aligned", [True, False])
def test_unpack_into_a_joined_run_of_one_narrow_width(bits, aligned):
    # a dealer's triple: several parts of one width in one frame; when every part starts on
    # a byte each is unpacked straight into its destination, else the run is unpacked whole
    g = np.random.default_rng(bits + 10 * aligned)
    group = 8 // np.gcd(bits, 8)
    sizes = [group * int(g.integers(1, 40)) + (0 if aligned else int(g.integers(1, group + 1)))
             for _ in range(4)]
    parts = [(g.integers(0, 1 << bits, n, dtype=np.uint64).astype(np.uint8), bits)
             for n in sizes]
    base = [np.full((2, n), 255, np.uint8) for n in sizes]
    dests = [base[0][0], base[1].T[:, 1], base[2][1], base[3][0]]  # one strided
    got = unpack(pack(parts), [(a.shape, a.dtype, b) for a, b in parts], out=dests)
    for back, dst, (a, _) in zip(got, dests, parts):
        assert back is dst and np.array_equal(dst, a)


def test_pack_refuses_values_wider_than_their_booked_width():
    with pytest.raises(ValueError, match="does not fit in 6 bits"):
        pack([(np.array([64], np.uint8), 6)])
    with pytest.raises(ValueError, match="bits per element"):
        pack([(np.array([1], np.uint8), 0)])
    with pytest.raises(ValueError, match="payload of 3 bytes"):
        unpack(b"abc", [((2,), np.uint64, 32)])


def test_a_receive_waits_only_for_its_own_peers_deferred_messages():
    """``Wire.recv(peer)`` settles the deferred receives (``expect``) from that peer only:
    a message from P2 is read while the one deferred from P1 has not been sent yet."""
    from ppnn.wire.transport import Wire

    a1, b1 = socket.socketpair()
    a2, b2 = socket.socketpair()
    g = np.random.default_rng(0)
    p0 = Wire("P0", {"P1": a1, "P2": a2}, 2.0, g)
    p1, p2 = Wire("P1", {"P0": b1}, 2.0, g), Wire("P2", {"P0": b2}, 2.0, g)
    try:
        layout = [((3,), np.dtype(np.uint64), 32)]
        later = p0.expect("P1", layout, "from P1")[0]
        p2.send("P0", [(np.arange(3, dtype=np.uint64), 32)], "from P2")
        assert p0.recv("P2", layout, "from P2")[0].tolist() == [0, 1, 2]
        p1.send("P0", [(np.arange(3, 6, dtype=np.uint64), 32)], "from P1")
        p0.settle()
        assert later.tolist() == [3, 4, 5]
    finally:
        for w in (p1, p2, p0):
            w.close()


# -- a stated length is checked before anything is allocated -------------------------------
def _peak_bytes(fn) -> int:
    """The peak of Python's allocations while ``fn()`` runs."""
    import tracemalloc

    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_an_oversized_header_is_a_clear_wire_error_and_allocates_nothing_large():
    """A frame that states more than the receiver's limit is refused before its payload is
    read; one that states less than the limit but more than its sender sends is read in
    chunks and grows only with what arrived (then the closed connection is named)."""
    from ppnn.wire.framing import HEADER, MAX_PAYLOAD
    from ppnn.wire.transport import Wire

    g = np.random.default_rng(0)
    for stated, limit, pattern in [
            ((1 << 32) - 1, 1 << 20, r"at most 1048576 bytes.*stating 4294967295 bytes"),
            (MAX_PAYLOAD, MAX_PAYLOAD, r"P0 closed the connection before message #0 'key'")]:
        a, b = socket.socketpair()
        w = Wire("P1", {"P0": a}, 5.0, g)
        try:
            b.sendall(HEADER.pack(0, 0, stated) + os.urandom(17))
            b.close()

            def receive(w=w, limit=limit, pattern=pattern):
                with pytest.raises(WireError, match=pattern):
                    w.recv_bytes("P0", "key", "unbooked keys", limit)

            assert _peak_bytes(receive) < 4 << 20
        finally:
            a.close()
    a, b = socket.socketpair()
    w = Wire("P1", {"P0": a}, 5.0, g)
    try:
        with pytest.raises(ValueError, match="limit must be an int in"):
            w.recv_bytes("P0", "key", "unbooked keys", MAX_PAYLOAD + 1)
        b.sendall(HEADER.pack(0, 0, (1 << 32) - 1))

        def receive_layout():
            with pytest.raises(WireError, match="got frame #0 of 4294967295 bytes"):
                w.recv("P0", [((4,), np.dtype(np.uint64), 32)], "share")

        assert _peak_bytes(receive_layout) < 1 << 20
    finally:
        a.close()
        b.close()


def test_a_sender_refuses_a_frame_larger_than_a_frame_may_carry(monkeypatch):
    from ppnn.wire import framing, transport

    a, b = socket.socketpair()
    w = transport.Wire("P0", {"P1": a}, 5.0, np.random.default_rng(0))
    monkeypatch.setattr(transport, "MAX_PAYLOAD", 16)
    try:
        with pytest.raises(WireError, match="would carry 24 bytes, more than a frame may"):
            w.send("P1", [(np.zeros(3, np.uint64), 64)], "big")
        assert framing.MAX_PAYLOAD == 1 << 30
    finally:
        a.close()
        b.close()


# -- the garbage test on Falcon's ReLU -----------------------------------------------------
@pytest.fixture(scope="module", params=[False, True], ids=["semi-honest", "malicious"])
def relu_run(request):
    mal = request.param
    inputs = _relu_input()
    fal = Falcon(np.random.default_rng(SEED), malicious=mal)
    ref = relu_program(fal, inputs)
    before = _children()
    out = run_program(relu_program, inputs, SEED, malicious=mal, timeout=20)
    return mal, ref, fal.ledger, out, before


def test_garbage_test_every_party_outputs_the_in_process_relu(relu_run):
    mal, ref, _, out, _ = relu_run
    assert np.array_equal(ref, np.maximum(ppnn.core.Ring(32).to_signed(_relu_input()["a"]),
                                          0) % (1 << 32))
    for party, value in out["outputs"].items():
        assert np.array_equal(value, ref), party


def test_wire_ledger_equals_in_process_ledger(relu_run):
    _, _, led, out, _ = relu_run
    assert out["ledger"].messages == led.messages


def test_every_message_is_its_booked_bits_plus_the_header(relu_run):
    _, _, led, out, _ = relu_run
    w = out["wire"]["classes"]
    online = [m for m in led.messages if m.phase == "online"]
    dealer = [m for m in led.messages if m.sender == "dealer"]
    setup = [m for m in led.messages if m.phase == "offline" and m.sender != "dealer"]
    for name, msgs in (("online", online), ("offline dealer", dealer),
                       ("offline setup", setup)):
        assert w[name]["frames"] == len(msgs)
        assert w[name]["bits"] == sum(m.bits for m in msgs)
        assert w[name]["wire bytes"] == sum(-(-m.bits // 8) + HEADER_BYTES for m in msgs)
    # the inputs (not booked): two 32-bit components of 300 elements to each party
    assert w["inputs"]["payload bytes"] == 3 * 2 * 300 * 4


def test_measured_rounds_equal_ledger_rounds(relu_run):
    _, _, led, out, _ = relu_run
    assert out["wire"]["measured rounds"] == led.rounds("online") > 5


NO_EXTRA = dict.fromkeys(("P0", "P1", "P2", "dealer"), 0)


def test_every_party_sends_all_of_a_round_before_it_waits_for_the_round(relu_run):
    """No party waits twice in one ledger round (a second wait costs a second latency on a
    shaped link): the malicious multiplication check opens rho and sigma (and, where the
    protocol says so, the pending checks) with one wait."""
    mal, _, led, out, _ = relu_run
    assert out["wire"]["extra waits"] == NO_EXTRA, out["wire"]["extra wait steps"]
    assert 0 < max(out["wire"]["waits"].values()) <= led.rounds(None)


def two_openings_one_after_the_other(fal, inputs):
    """Two values opened in one round, the second sent only after the first arrived: each
    party waits twice in the round."""
    a = fal.share(inputs["a"])
    with fal.protocol("output"), fal.ledger.round():
        x = fal.open(a, "first", "masked")
        y = fal.open(a, "second", "masked")
    return np.concatenate([x, y])


def two_openings_together(fal, inputs):
    """The same two openings with :meth:`Falcon.open_many`: one wait."""
    a = fal.share(inputs["a"])
    with fal.protocol("output"):
        return np.concatenate(fal.open_many([(a, "first", "masked"), (a, "second", "masked")]))


def test_extra_waits_count_a_second_wait_in_one_round():
    inputs = _relu_input(16)
    late = run_program(two_openings_one_after_the_other, inputs, SEED, timeout=20)
    together = run_program(two_openings_together, inputs, SEED, timeout=20)
    assert late["ledger"].messages == together["ledger"].messages  # the same protocol
    assert all(np.array_equal(late["outputs"][p], together["outputs"][p])
               for p in ("P0", "P1", "P2"))
    assert late["wire"]["extra waits"] == {**NO_EXTRA, "P0": 1, "P1": 1, "P2": 1}
    assert all(s == ["output::second"] for s in late["wire"]["extra wait steps"].values())
    assert together["wire"]["extra waits"] == NO_EXTRA


def test_no_process_or_port_outlives_the_run(relu_run):
    *_, out, before = relu_run
    assert _children() <= before
    assert all(_closed(p) for p in out["wire"]["ports"].values())


@pytest.mark.parametrize("mal", [False, True], ids=["semi-honest", "malicious"])
def test_offline_first_reads_all_material_before_the_online_phase_and_changes_nothing(mal):
    """With ``offline_first`` each party prefetches the dealer's whole stream after the setup
    round: the outputs, the ledger and every class's bytes are those of the streaming run,
    and the summary splits the time into an offline and an online phase."""
    inputs = _relu_input(200)
    fal = Falcon(np.random.default_rng(SEED), malicious=mal)
    ref = relu_program(fal, inputs)
    out = run_program(relu_program, inputs, SEED, malicious=mal, timeout=20,
                      offline_first=True)
    for party, value in out["outputs"].items():
        assert np.array_equal(value, ref), party
    assert out["ledger"].messages == fal.ledger.messages
    w = out["wire"]
    assert w["measured rounds"] == fal.ledger.rounds("online")
    assert 0 < w["online seconds"] <= w["seconds"] and w["offline seconds"] >= 0
    assert set(w["party online cpu s"]) == set(w["party online page faults"]) == {
        "P0", "P1", "P2"}
    for p in ("P0", "P1", "P2"):
        assert 0 <= w["party online cpu s"][p] <= w["party cpu s"][p]
        assert w["party online page faults"][p] >= 0
    dealer = [m for m in fal.ledger.messages if m.sender == "dealer"]
    assert w["classes"]["offline dealer"]["wire bytes"] == sum(
        -(-m.bits // 8) + HEADER_BYTES for m in dealer)
    # the parties meet at a barrier before the online mark: an empty frame each way
    sync = w["classes"]["unbooked sync"]
    assert sync["frames"] == 6 and sync["bits"] == 0 and sync["payload bytes"] == 0
    assert sync["wire bytes"] == 6 * HEADER_BYTES and sync["ledger bytes"] is None
    assert "party online wire path cpu s" not in w  # counted only with PPNN_WIRE_SPLIT


def test_the_wire_path_split_counts_part_of_each_party_s_online_cpu(monkeypatch):
    """``PPNN_WIRE_SPLIT``: every party reports the CPU its wire path took in the online
    phase, a part of its online CPU; the outputs and the ledger are unchanged."""
    from ppnn.wire import split

    monkeypatch.setenv(split.ENV, "1")
    inputs = _relu_input(200)
    fal = Falcon(np.random.default_rng(SEED))
    ref = relu_program(fal, inputs)
    out = run_program(relu_program, inputs, SEED, timeout=20, offline_first=True)
    for party, value in out["outputs"].items():
        assert np.array_equal(value, ref), party
    assert out["ledger"].messages == fal.ledger.messages
    w = out["wire"]
    for p in ("P0", "P1", "P2"):
        assert 0 < w["party online wire path cpu s"][p] <= w["party online cpu s"][p]


def test_the_wire_path_split_counts_the_outermost_call_once_and_survives_errors(monkeypatch):
    from ppnn.wire import split

    calls = []

    def inner(x):
        calls.append(split._state["depth"])
        if x < 0:
            raise ValueError("bad")
        return x

    inner = split._wrap(inner)

    def outer(x):
        return inner(x) + 1

    outer = split._wrap(outer)
    assert outer(1) == 2 and calls == [2] and split._state["depth"] == 0
    with pytest.raises(ValueError):
        outer(-1)
    assert split._state["depth"] == 0 and inner(3) == 3 and calls[-1] == 1
    monkeypatch.delenv(split.ENV, raising=False)
    split.install()  # without the variable: nothing is counted
    assert not split.enabled() and split.seconds() is None


def test_prefetch_keeps_frames_in_order_and_names_a_stream_that_ended():
    from ppnn.wire.transport import Wire

    a, b = socket.socketpair()
    g = np.random.default_rng(0)
    dealer = Wire("dealer", {"P0": a}, 5.0, g)
    p0 = Wire("P0", {"dealer": b}, 5.0, g)
    layout = [((4,), np.uint8, 6)]
    for k in range(3):
        dealer.send("P0", [(np.full(4, k, np.uint8), 6)], f"material {k}", "offline dealer")
    dealer.close()
    assert p0.prefetch("dealer") == 3 * (HEADER_BYTES + payload_bytes(24))
    for k in range(3):
        got = p0.recv("dealer", layout, f"material {k}", "offline dealer")[0]
        assert got.tolist() == [k] * 4
    assert p0.received["offline dealer"].frames == 3
    with pytest.raises(WireError, match="stream ended"):
        p0.recv("dealer", layout, "one too many", "offline dealer")
    p0.close()


def relu_then_truncation(fal: Falcon, inputs: dict) -> np.ndarray:
    """Falcon's ReLU, then a truncation by 4 bits (whose one-ulp rounding depends on the
    dealer's mask r), opened."""
    from ppnn.protocols.falcon.comparison import relu

    r, _ = relu(fal, fal.share(inputs["a"]))
    t = fal.truncate(r, 4)
    with fal.protocol("output"):
        return fal.open(t, "output", "plain")


def test_no_seed_reaches_a_party_and_only_the_dealers_truncation_stream_follows_it(
        monkeypatch):
    """Two wire runs with the same seed: every PRF key, input share and piece of dealer
    material a party's process received differs between them, but for the truncation pairs
    (the dealer's truncation stream follows the seed in its process, as the provenance
    says), so both runs open the in-process run's output. No received PRF key is one the
    in-process run with the seed draws."""
    from ppnn.protocols.falcon.runtime import PARTIES, key_bytes
    from ppnn.wire import falcon as wf
    from wirecheck import received_in, same

    inputs = _relu_input(64)
    ref_fal = Falcon(np.random.default_rng(SEED))
    ref = relu_then_truncation(ref_fal, inputs)
    seeded_keys = [key_bytes(int(k.bit_generator.seed_seq.entropy)) for k in ref_fal._keys]
    outs = []
    got = [received_in(monkeypatch, wf, lambda: outs.append(
        run_program(relu_then_truncation, inputs, SEED))) for _ in range(2)]
    for out in outs:
        assert all(np.array_equal(out["outputs"][p], ref) for p in PARTIES)
    assert got[0]["dealer"] == got[1]["dealer"] == []
    for p in PARTIES:
        first, second = ([r[:2] + r[3:] for r in g[p] if r[2] != "online"] for g in got)
        assert [w for _, w, _ in first] == [w for _, w, _ in second]
        kinds = {w.split("::")[-1] for _, w, _ in first}
        assert {"input share", "truncation pair (r, msb(r), (r mod 2^(k-1)) >> d)"} <= kinds
        assert any(w.startswith("setup::PRF key") for _, w, _ in first)
        for (_, what, a), (_, _, b) in zip(first, second):
            if "truncation pair" in what:
                assert same(a, b), what  # the seeded stream
            else:
                assert not same(a, b), what  # OS entropy in the process that drew it
            if "PRF key" in what:
                assert not any(np.array_equal(a[0], k) for k in seeded_keys)


def test_a_step_reading_a_component_it_does_not_hold_fails_the_garbage_test():
    inputs = _relu_input(64)
    ref = relu_program(Falcon(np.random.default_rng(SEED)), inputs)
    # the simulation cannot tell the broken opening from the real one ...
    assert np.array_equal(relu_reading_all_components(Falcon(np.random.default_rng(SEED)),
                                                      inputs), ref)
    # ... the garbage test can
    out = run_program(relu_reading_all_components, inputs, SEED, timeout=20)
    assert not any(np.array_equal(v, ref) for v in out["outputs"].values())


# -- ppnn.run(..., transport="tcp") --------------------------------------------------------
@pytest.fixture(scope="module")
def tiny():
    net = Network("tiny_wire", (1, 6, 6), [Conv2d(2, 3, 1, 0), ReLU(), MaxPool(2), Flatten(),
                                           Dense(4)])
    g = np.random.default_rng(1)
    return net, init_params(net, np.random.default_rng(0)), g.uniform(0, 1, (16, 1, 6, 6)), \
        g.uniform(0, 1, (2, 1, 6, 6))


@pytest.mark.parametrize("key", ["falcon_sh", "falcon_mal"])
def test_run_over_tcp_equals_the_in_process_run(tiny, key):
    net, params, calib, x = tiny
    plan = ppnn.compile(key, net, params, calib=calib)
    ref = ppnn.run(plan, x, 3)
    res = ppnn.run(plan, x, 3, transport="tcp")
    assert np.array_equal(res.logits, ref.logits)
    assert np.array_equal(res.predictions, ref.predictions)
    assert res.ledger.messages == ref.ledger.messages
    w = res.extra["wire"]
    assert w["measured rounds"] == ref.ledger.rounds("online")
    online = [m for m in ref.ledger.messages if m.phase == "online"]
    assert w["classes"]["online"]["wire bytes"] == sum(frame_bytes(m.bits) for m in online)
    table = summary_frame(w)
    assert list(table["quantity"])[-1] == "online rounds"
    assert w["classes"]["unbooked sync"]["frames"] == 0  # a barrier only with offline_first
    assert "truncation stream" in res.provenance["randomness"]
    assert "follows the run seed" in res.provenance["randomness"]


def test_an_inference_offline_first_starts_its_online_phase_once_the_model_is_shared(
        tiny, monkeypatch):
    """The model is the server's before any query: an inference calls ``query_begins`` after
    the model's shares are in and before the image is shared (a wire party marks its online
    phase there), and offline first changes no output and no message."""
    import ppnn.wire

    net, params, calib, x = tiny
    plan = ppnn.compile("falcon_sh", net, params, calib=calib)
    order = []
    real_share_fixed = Falcon.share_fixed

    def share_fixed(self, *args, **kwargs):
        order.append("share")
        return real_share_fixed(self, *args, **kwargs)

    monkeypatch.setattr(Falcon, "query_begins", lambda self: order.append("query"))
    monkeypatch.setattr(Falcon, "share_fixed", share_fixed)
    ref = ppnn.run(plan, x, 3)
    assert "query" in order and order.count("query") == 1
    i = order.index("query")
    assert 0 < i < len(order) - 1  # after the model's shares, before the image's
    monkeypatch.undo()
    res = ppnn.wire.run(plan, x, 3, offline_first=True)
    assert np.array_equal(res.logits, ref.logits)
    assert res.ledger.messages == ref.ledger.messages
    w = res.extra["wire"]
    assert 0 < w["online seconds"] <= w["seconds"]
    assert set(w["party online cpu s"]) == {"P0", "P1", "P2"}
    # a barrier after the dealer's material and one once the model is shared (the online
    # phase starts on the three parties at once)
    assert w["classes"]["unbooked sync"]["frames"] == 12


def test_other_families_say_where_tcp_is_implemented(tiny):
    net, params, calib, x = tiny
    plan = ppnn.compile("falcon_sh", net, params, calib=calib)
    with pytest.raises(ValueError, match="transport must be"):
        ppnn.run(plan, x, transport="udp")
    plan.family = "my_family"  # a family without a wire mode (every registered one has one)
    with pytest.raises(ValueError, match="transport='tcp' is implemented for falcon_sh"):
        ppnn.run(plan, x, transport="tcp")


# -- failures ------------------------------------------------------------------------------
def dies(fal, inputs):
    """P1's process dies before its first message."""
    if fal.wire.party == 1:
        os._exit(7)
    return relu_program(fal, inputs)


def hangs(fal, inputs):
    """P1's process hangs before its first message."""
    if fal.wire.party == 1:
        time.sleep(120)
    return relu_program(fal, inputs)


@pytest.mark.parametrize("program, pattern", [
    (dies, r"P1 closed the connection|P1: died"),
    (hangs, r"waited more than 2 s for message #\d+ '.*' from P1"),
])
def test_a_party_that_dies_or_hangs_is_named_within_the_timeout(program, pattern):
    before = _children()
    t0 = time.perf_counter()
    with pytest.raises(WireError, match=pattern):
        run_program(program, _relu_input(16), SEED, timeout=2)
    assert time.perf_counter() - t0 < 30
    assert _children() <= before


def peers(wire, task):
    """A job that reports the processes its process is connected to."""
    return sorted(wire.socks)


def test_launch_starts_only_the_roles_a_family_declares():
    before = _children()
    got = launch(peers, {"P0": None, "P1": None, "dealer": None}, timeout=10)
    assert set(got) == {"P0", "P1", "dealer"}  # no idle P2
    assert got["P0"][0] == ["P1", "dealer"] and got["dealer"][0] == ["P0", "P1"]
    assert all(_closed(p) for p in got.ports.values())
    assert _children() <= before


def _strangers(port: int) -> list[socket.socket]:
    """What any local process can do to a port: 17 random bytes, a hello of the right form
    with a wrong token, a few bytes and then silence, three silent connections."""
    out = []
    for payload in (os.urandom(17), os.urandom(16) + bytes([1]), b"\x00" * 5, b"", b"", b""):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(payload)
        out.append(s)
    return out


def test_a_strangers_connections_do_not_abort_a_run(monkeypatch):
    """Strangers connect to the launcher's control port before the processes do, and to
    every party's listening port before its peers do (between the processes' start-up and
    their mesh). The run still forms its mesh, and every stranger's connection is dropped."""
    from ppnn.wire import launch as launcher

    strangers: list[socket.socket] = []
    accept, gather = launcher._accept, launcher._gather

    def accept_after_strangers(server, *args):
        strangers.extend(_strangers(server.getsockname()[1]))
        return accept(server, *args)

    def gather_then_strangers(kind, *args):
        got = gather(kind, *args)
        if kind == "port":  # the processes' listening ports, before they connect
            for port in got.values():
                strangers.extend(_strangers(port))
        return got

    monkeypatch.setattr(launcher, "_accept", accept_after_strangers)
    monkeypatch.setattr(launcher, "_gather", gather_then_strangers)
    got = launch(peers, dict.fromkeys(("P0", "P1", "P2", "dealer")), timeout=30)
    assert got["P0"][0] == ["P1", "P2", "dealer"] and got["dealer"][0] == ["P0", "P1", "P2"]
    assert len(strangers) == 6 * 5
    for s in strangers:  # dropped: the run closed its end
        s.settimeout(5.0)
        try:
            assert s.recv(1) == b""
        except ConnectionResetError:
            pass
        s.close()


def test_silent_strangers_do_not_delay_the_peers_hello():
    """``accept_hellos`` reads every pending hello at once: with strangers queued ahead (three
    silent, random bytes, a wrong token for the right role) the peer is accepted at once --
    within a second, where reading them in turn would cost HELLO_S for each silent one -- a
    hello split over two sends still counts, and the deadline names the missing role."""
    import secrets

    from ppnn.wire.transport import HELLO_S, WireTimeout, accept_hellos

    token = secrets.token_bytes(16)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        queued = _strangers(port)
        wrong = socket.create_connection(("127.0.0.1", port))
        wrong.sendall(secrets.token_bytes(16) + bytes([1]))
        peer = socket.create_connection(("127.0.0.1", port))
        peer.sendall(token[:5])
        t0 = time.perf_counter()
        peer.sendall(token[5:] + bytes([1]))
        got = accept_hellos(listener, token, ["P1"], time.monotonic() + 30)
        seconds = time.perf_counter() - t0
        assert list(got) == ["P1"] and seconds < min(1.0, HELLO_S / 2), seconds
        got["P1"].sendall(b"ok")
        assert peer.recv(2) == b"ok"
        for s in (*queued, wrong, peer, got["P1"]):
            s.close()
        with pytest.raises(WireTimeout, match="no connection from P2"):
            accept_hellos(listener, token, ["P2"], time.monotonic() + 0.2)


def test_a_hello_that_arrived_counts_even_past_its_time(monkeypatch):
    """A loaded machine may not run the accepting process for longer than HELLO_S: a hello
    that arrived meanwhile is read before its connection would be dropped (HELLO_S = 0 here:
    every connection is past its time when first looked at)."""
    import secrets

    from ppnn.wire import transport

    monkeypatch.setattr(transport, "HELLO_S", 0.0)
    token = secrets.token_bytes(16)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        silent = socket.create_connection(listener.getsockname())
        peer = socket.create_connection(listener.getsockname())
        peer.sendall(token + bytes([2]))
        time.sleep(0.2)
        got = transport.accept_hellos(listener, token, ["P2"], time.monotonic() + 30)
        assert list(got) == ["P2"]
        silent.settimeout(5.0)
        assert silent.recv(1) == b""  # dropped
        for s in (silent, peer, got["P2"]):
            s.close()


@pytest.mark.parametrize("raw", [False, True], ids=["through the encoder", "raw pickle"])
def test_nothing_a_party_returns_is_unpickled_in_the_launcher(tmp_path, monkeypatch, raw):
    """A party returns an object whose pickle would run code where it is loaded. Through its
    process's encoder the object is refused there (a TypeError naming it); sent as a raw
    pickle, past the encoder, the launcher refuses the message. Either way the run fails
    with a WireError naming P1 and the code never runs: the launcher reads JSON and array
    buffers only (it never calls a Connection's unpickling ``recv``)."""
    from multiprocessing.connection import Connection

    from wirecheck import returns_payload_job

    def no_unpickling(self):
        raise AssertionError("the launcher unpickled a message of a process")

    monkeypatch.setattr(Connection, "recv", no_unpickling)
    marker = tmp_path / "ran"
    tasks = {"P0": None, "P1": {"path": str(marker), "raw": raw}}
    pattern = (r"P1: TypeError: message\[1\]\[0\]\['output'\]: a value of type "
               r"wirecheck.Payload cannot be sent" if not raw else
               r"P1: sent a message that is not arrays and plain data during the protocol: "
               r"not a message of ppnn.wire.codec")
    with pytest.raises(WireError, match=pattern):
        launch(returns_payload_job, tasks, timeout=10)
    assert not marker.exists()


@pytest.mark.parametrize("stated, pattern", [
    ((1 << 31) - 1, r"P1: sent a message the launcher cannot read during the protocol \(a "
                    r"message stated as 2147483647 bytes \(at most 1073741824\)"),
    (1 << 29, r"P1: died \(exit code 0\) during the protocol")])
def test_a_party_stating_an_oversized_result_costs_the_launcher_no_memory(stated, pattern):
    """A party writes on its control connection a header stating more than a message may
    carry (refused at once, naming the party), or 512 MiB of which it sends 17 bytes before
    it exits (read as it arrives): either way the launcher allocates nothing large."""
    import tracemalloc

    from wirecheck import oversized_report_job

    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        with pytest.raises(WireError, match=pattern):
            launch(oversized_report_job, {"P0": None, "P1": stated}, timeout=10)
        assert tracemalloc.get_traced_memory()[1] < 16 << 20
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - t0 < 25


def test_the_codec_round_trips_results_and_refuses_what_it_did_not_make():
    import pickle

    import gmpy2

    from ppnn.core import Ledger
    from ppnn.wire import codec

    led = Ledger(["client", "server"])
    with led.label("conv1"), led.round():
        led.send("client", "server", 64, "x - r")
        led.count("Perm", 3, "server")
        led.depth("depth", 2)
    with led.offline():
        led.send(Ledger.DEALER, "client", 8, "triple")
    value = {"output": np.arange(6, dtype=np.uint64).reshape(2, 3), "ledger": led,
             "logits": np.array([gmpy2.mpz(2) ** 100, -3], dtype=object), "s": np.float32(0.5),
             "times": [("online", "all", 1.5)], "keys": {("a", 1): None}, "raw": b"\x00\x01"}
    back = codec.decode(codec.encode(("done", (value, {"split cpu s": None}))))
    got = back[1][0]
    assert back[0] == "done" and back[1][1] == {"split cpu s": None}
    assert got["output"].dtype == np.uint64 and np.array_equal(got["output"], value["output"])
    assert got["logits"].tolist() == [2 ** 100, -3] and type(got["s"]) is np.float32
    assert got["times"] == value["times"] and got["keys"] == value["keys"]
    assert got["raw"] == value["raw"]
    rebuilt = got["ledger"]
    assert type(rebuilt) is Ledger and rebuilt.messages == led.messages
    assert (rebuilt.ops, rebuilt.op_at, rebuilt.depths) == (led.ops, led.op_at, led.depths)
    assert rebuilt.rounds("online") == 1 and rebuilt.rounds("offline") == 1
    with pytest.raises(TypeError, match=r"message\['x'\]: a value of type builtins.object"):
        codec.encode({"x": object()})
    with pytest.raises(TypeError, match="object array's elements"):
        codec.encode(np.array([None, [1]], dtype=object))
    with pytest.raises(ValueError, match="not a message of ppnn.wire.codec"):
        codec.decode(pickle.dumps(("done", None)))
    good = codec.encode(np.zeros(4, np.uint32))
    forged = good.replace(b'"<u4"', b'"|O8"')
    with pytest.raises(ValueError, match="dtype '|O8' is not accepted"):
        codec.decode(forged)
    with pytest.raises(ValueError, match="buffers take"):
        codec.decode(good[:-1])
    shape = good.replace(b"[4]", b"[5]")
    with pytest.raises(ValueError, match="needs 20 bytes, its buffer has 16"):
        codec.decode(shape)


def test_launch_checks_its_arguments():
    with pytest.raises(ValueError, match="timeout must be"):
        launch(print, {}, timeout=0)
    with pytest.raises(ValueError, match="one task per role"):
        launch(print, {"P0": None})
    with pytest.raises(ValueError, match="one task per role"):
        launch(print, {"P0": None, "client": None})
    assert issubclass(WireTimeout, WireError)


def test_cli_wire_refuses_other_families_and_unknown_models(capsys):
    from ppnn.__main__ import main

    assert main(["wire", "my_family", "minionn_mnist"]) == 2
    assert "implemented for falcon_sh, falcon_mal" in capsys.readouterr().err
    assert main(["wire", "falcon_sh", "no_such_net"]) == 2
    assert "neither an .onnx file nor a zoo network" in capsys.readouterr().err
    assert main(["wire", "falcon_sh", "minionn_mnist", "--images", "0"]) == 2
    assert "error: --images: must be an int in [1, 10,000]" in capsys.readouterr().err
    assert main(["wire", "falcon_sh", "minionn_mnist", "--backend", "real"]) == 2
    assert "error: --backend real: crosses processes for" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["wire", "falcon_sh", "minionn_mnist", "--backend", "seal"])
