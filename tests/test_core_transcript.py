"""Transcripts with values (ppnn.core.transcript, Ledger(record_values=...)) and views."""

import numpy as np
import pytest

import ppnn
from ppnn.core import Dealer, Ledger, Ring, beaver_mul, share_additive, share_replicated
from ppnn.core.ledger import recording
from ppnn.core.transcript import Recorded, ValueBook, ValueBudget
from ppnn.core.views import EVERYONE, ks_test, timeline, view_values


def _beaver(record, seed=0, n=4):
    ring = Ring(32)
    rng = np.random.default_rng(seed)
    led = Ledger(["client", "server"], record_values=record)
    dealer = Dealer(rng, led, ["client", "server"])
    x = share_additive(ring.random(rng, n), ring, rng)
    y = share_additive(ring.random(rng, n), ring, rng)
    led.hold("client", "x0", x.shares[0])
    z = beaver_mul(x, y, dealer, led)
    return led, x, y, z, ring


def test_values_off_by_default_and_the_ledger_is_unchanged():
    off, *_ = _beaver(False)
    on, *_ = _beaver(True)
    assert not off.records_values and off.values == {} and off.holds == [] and off.value_bytes == 0
    assert on.records_values and len(on.values) == len(on.messages)
    assert off.messages == on.messages and off.ops == on.ops  # same costs either way


def test_each_party_view_holds_exactly_its_messages_and_rebuilds_the_product():
    led, x, y, z, ring = _beaver(True)
    for p in led.parties:
        v = ppnn.views(led, p)
        received = v[v["kind"] == "received"]
        assert set(received["peer"]) <= {"dealer", *led.parties} - {p}
        want = [j for j, m in enumerate(led.messages) if m.receiver == p]
        assert sorted(j for j in received["message"]) == want
        assert all(r["party"] == p for _, r in v.iterrows())
        held = v[v["kind"] == "held"]
        assert all(h.party == p for h in led.holds if h.name in set(held["what"]))
    # e = x - a and f = y - b from the recorded messages; z from the triple and the openings
    e_f = {m.sender: led.values[j].array() for j, m in enumerate(led.messages)
           if m.what.startswith("beaver:")}
    triple = {m.receiver: led.values[j].array().reshape(3, -1) for j, m in enumerate(led.messages)
              if m.sender == "dealer"}
    e, f = ring.add(e_f["client"], e_f["server"])
    a, b, c = ring.add(triple["client"], triple["server"])
    assert np.array_equal(e, ring.sub(x.reveal(), a)) and np.array_equal(f, ring.sub(y.reveal(), b))
    zz = ring.add(ring.add(c, ring.mul(e, b)), ring.add(ring.mul(f, a), ring.mul(e, f)))
    assert np.array_equal(zz, z.reveal())


def test_recorded_values_are_copies_not_references():
    ring = Ring(16)
    led = Ledger(["a", "b"], record_values=True)
    v = np.arange(4, dtype=np.uint64)
    led.send("a", "b", 64, "v", value=v)
    v[:] = 9
    assert led.values[0].array().tolist() == [0, 1, 2, 3]
    assert ring.k == 16


def test_budget_keeps_a_head_per_message_and_stops_at_max_bytes():
    led = Ledger(["a", "b"], record_values=ValueBudget(max_elements=5, max_bytes=2000))
    for _ in range(10):
        led.send("a", "b", 64 * 100, "big", value=np.arange(100, dtype=np.uint64))
    kept = [v for v in led.values.values() if v.head is not None]
    assert kept and all(v.head.size == 5 and v.size == 100 and not v.complete for v in kept)
    assert len(kept) < 10 and led.value_bytes <= 2000
    dropped = [v for v in led.values.values() if v.head is None]
    assert all(v.shape == (100,) and v.dtype == "uint64" for v in dropped)
    with pytest.raises(ValueError, match="max_elements"):
        kept[0].array()


def test_ciphertexts_are_kept_as_size_and_digest():
    book = ValueBook(ValueBudget())
    r = book.record(b"\x01" * 40)
    assert r.kind == "ciphertext" and r.size == 40 and len(r.digest) == 12 and r.head is None

    class Ct:
        def serialize(self):
            return b"abc"

    rs = book.record([Ct(), Ct()])
    assert rs.kind == "ciphertext" and rs.size == 6 and rs.shape == (2,)
    assert "ciphertext 6 B" in rs.text()


def test_bad_budget_and_bad_record_values_are_refused():
    with pytest.raises(ValueError, match="max_elements"):
        ValueBudget(max_elements=0)
    with pytest.raises(ValueError, match="max_bytes"):
        ValueBudget(max_bytes=-1)
    with pytest.raises(TypeError, match="record_values"):
        Ledger(["a", "b"], record_values="yes")
    with pytest.raises(ValueError, match="party"):
        Ledger(["a", "b"], record_values=True).hold("c", "x", 1)


def test_recording_block_reaches_ledgers_made_inside_and_merge_keeps_values():
    with recording():
        inner = Ledger(["a", "b"])
        inner.send("a", "b", 8, "m", value=np.array([7]))
    assert inner.records_values and not Ledger(["a", "b"]).records_values
    outer = Ledger(["a", "b"], record_values=True)
    outer.send("b", "a", 8, "first", value=np.array([1]))
    outer.merge(inner, prefix="sub")
    assert outer.values[1].array().tolist() == [7] and outer.messages[1].label.startswith("sub")


def test_subset_reindexes_values_holds_and_operations():
    led = Ledger(["a", "b"], record_values=True)
    with led.label("setup"):
        led.send("a", "b", 8, "key", value=np.array([1]))
    led.hold("b", "h", np.array([2]))
    led.count("Perm", 3, "b")
    led.send("b", "a", 8, "ct", value=np.array([3]))
    sub = led.subset(lambda m: m.label != "setup")
    assert len(sub.messages) == 1 and sub.values[0].array().tolist() == [3]
    assert sub.holds[0].at == 0 and sub.op_at == [0]


def test_everyone_sees_the_whole_timeline_and_views_need_values():
    led, *_ = _beaver(True)
    assert len(ppnn.views(led, EVERYONE)) == len(led.messages) + len(led.holds)
    assert len(timeline(led)) == len(led.messages) + len(led.holds)
    with pytest.raises(ValueError, match="record_values"):
        ppnn.views(_beaver(False)[0], "client")
    with pytest.raises(ValueError, match="party must be one of"):
        ppnn.views(led, "P7")


def test_view_values_and_ks_test():
    led, x, *_ = _beaver(True)
    got = view_values(led, "server", what="x-a")
    assert got.size == 8  # the client's shares of e and f, 4 elements each
    rng = np.random.default_rng(0)
    same = ks_test(rng.random(3000), rng.random(3000))
    diff = ks_test(rng.random(3000), rng.random(3000) ** 2)
    assert not same.distinguishes and diff.distinguishes
    with pytest.raises(ValueError, match="alpha"):
        ks_test([1, 2], [3, 4], alpha=2)


def test_replicated_open_records_the_missing_component():
    ring = Ring(32)
    rng = np.random.default_rng(3)
    led = Ledger(["P0", "P1", "P2"], record_values=True)
    x = share_replicated(np.arange(3, dtype=np.uint64), ring, rng)
    x.open(led)
    for j, m in enumerate(led.messages):  # Pi sends x_{i+1} to P_{i-1}
        i = int(m.sender[1])
        assert np.array_equal(led.values[j].array(), x.components[(i + 1) % 3])


def test_recorded_text_is_short():
    r = Recorded("array", (8,), "uint64", 8, np.arange(8, dtype=np.uint64))
    assert r.text() == "[0 1 2 3 4 5 ...] (8 elements)"


def test_size_only_material_is_listed_and_says_why_it_has_no_value():
    from ppnn.core.transcript import SIZE_ONLY

    led = Ledger(["a", "b"], record_values=True)
    led.send("a", "b", 4096, "OT columns", value=SIZE_ONLY)
    r = led.values[0]
    assert r.kind == "size only" and not r.complete and "not materialized" in r.text()
    v = ppnn.views(led, "b")
    assert v["shown"].iloc[0] == r.text()


def test_holdings_and_operations_keep_their_booking_order_between_messages():
    led = Ledger(["a", "b"], record_values=True)
    led.send("a", "b", 8, "m", value=np.array([1]))
    led.count("Dec", 1, "b")
    led.hold("b", "decrypted", np.array([2]))
    led.count("RaS", 2, "b")
    assert led.events() == [("message", 0), ("op", 0), ("held", 0), ("op", 1)]
    other = Ledger(["a", "b"], record_values=True)
    other.hold("a", "h", np.array([3]))
    other.count("Perm", 1, "a")
    led.merge(other)
    assert led.events()[-2:] == [("held", 1), ("op", 2)]
    assert led.subset(lambda m: True).events() == led.events()


def test_parts_are_recorded_as_their_concatenation_without_building_it():
    from ppnn.core.transcript import Parts

    a, b = np.arange(5, dtype=np.uint64), np.arange(100, 110, dtype=np.uint8)
    p = Parts([a, b], np.uint64)
    assert p.size == 15 and p.array().tolist() == list(range(5)) + list(range(100, 110))
    book = ValueBook(ValueBudget(max_elements=7))
    r = book.record(p)
    assert r.shape == (15,) and r.size == 15 and r.head.tolist() == [0, 1, 2, 3, 4, 100, 101]
    whole = ValueBook(ValueBudget(max_elements=None)).record(p)
    assert whole.complete and np.array_equal(whole.array(), p.array())


def test_named_parts_say_what_a_concatenated_value_holds():
    from ppnn.core.transcript import Parts

    book = ValueBook(ValueBudget(max_elements=None))
    triple = book.record(Parts([np.arange(3)] * 3, np.uint64, ("a", "b", "c")))
    assert triple.text().endswith("] a, b, c (3 each)")
    table = book.record(Parts([np.arange(5), np.zeros((5, 256))], np.uint64, ("s_0", "[T]_0")))
    assert table.text().endswith("] s_0 (5), [T]_0 (5 x 256)")
    assert Recorded("array", (32, 2), "uint64", 64, np.arange(64)).text().endswith("(32 x 2)")
    with pytest.raises(ValueError, match="names must be 2 non-empty strings"):
        Parts([np.arange(2), np.arange(2)], names=("a",))
    # the dealer's material names its parts: a Beaver triple, Tabula's table share
    led, *_ = _beaver(True)
    shown = [led.values[i].text() for i, m in enumerate(led.messages)
             if m.what == "beaver triple"]
    assert shown and all(t.endswith("a, b, c (4 each)") for t in shown), shown
