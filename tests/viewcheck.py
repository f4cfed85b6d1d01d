"""Checks shared by the per-family view tests (``tests/test_views_*.py``): a run recorded with
every value (``ValueBudget(max_elements=None)``) must give each party a view that holds exactly
the messages addressed to it, every message must carry a recorded value (an array, a
ciphertext digest, or an explicit ``SIZE_ONLY`` for material the simulation never builds), and
what a party held must be its own."""

from __future__ import annotations

import functools

import numpy as np

import ppnn
from ppnn.core import Ledger
from ppnn.core.transcript import ValueBudget

#: record every element: the reconstruction checks need whole arrays
FULL = ValueBudget(max_elements=None, max_bytes=1 << 30)


def check_views_complete(led: Ledger) -> None:
    """Every message recorded; each party's view = exactly the messages addressed to it, and
    only its own holdings."""
    missing = sorted({led.messages[j].what for j in range(len(led.messages))
                      if j not in led.values})
    assert not missing, f"messages booked without a value: {missing}"
    seats = list(led.parties) + [Ledger.DEALER]
    for p in seats:
        v = ppnn.views(led, p)
        received = v[v["kind"] == "received"]
        want = [j for j, m in enumerate(led.messages) if m.receiver == p]
        assert sorted(received["message"].tolist()) == want, p
        assert set(received["peer"]) <= set(seats) - {p}, p
        held = v[v["kind"] == "held"]
        assert len(held) == sum(h.party == p for h in led.holds), p
        assert (v["party"] == p).all(), p
    assert sum(len(ppnn.views(led, p)) for p in seats) == len(led.messages) + len(led.holds)


def received(led: Ledger, party: str, what: str) -> list[np.ndarray]:
    """The whole arrays ``party`` received in messages whose ``what`` contains ``what``."""
    return [led.values[j].array() for j, m in enumerate(led.messages)
            if m.receiver == party and what in m.what]


def held(led: Ledger, party: str, name: str) -> list[np.ndarray]:
    """The whole arrays ``party`` held under names containing ``name``."""
    return [h.value.array() for h in led.holds if h.party == party and name in h.name]


@functools.cache
def minionn():
    """MiniONN (MNIST, quick pretrained weights), 300 calibration images and 4 test images."""
    from ppnn import data, nn

    x, _, xt, _ = data.load_mnist()
    return (nn.zoo.get("minionn_mnist"), nn.pretrained("minionn_mnist", quick=True, seed=0),
            np.asarray(x[:300]), np.asarray(xt[:4]))


@functools.cache
def recorded_run(key: str):
    """``(plan, images, recorded result, result without recording)`` of family ``key`` on
    MiniONN: the first ``images_per_run`` test images, seed 3, every value recorded."""
    net, params, calib, xt = minionn()
    plan = ppnn.compile(key, net, params, calib=calib)
    xs = xt[:ppnn.families()[key].images_per_run]
    return (plan, xs, ppnn.run(plan, xs, seed=3, record_values=FULL),
            ppnn.run(plan, xs, seed=3))


def check_recording_changes_nothing(on, off) -> None:
    """A run with values recorded (``on``) and the same run without (``off``): the same
    messages, operations (and where they fall), depths and logits; ``off`` kept no value."""
    assert not off.ledger.records_values
    assert off.ledger.values == {} and off.ledger.holds == []
    assert on.ledger.messages == off.ledger.messages
    assert on.ledger.ops == off.ledger.ops and on.ledger.op_at == off.ledger.op_at
    assert on.ledger.depths == off.ledger.depths
    assert np.array_equal(np.asarray(on.logits, object), np.asarray(off.logits, object))
