"""Delphi's ReLU split, booked once (:func:`ppnn.he.gc.book_delphi_split`): Tabula's GC
baseline (``gc_relu(split="delphi")``), the ``delphi_gc`` family and Tabula's counter book
the same messages; online only the labels of the server's share, ``b x 16 B`` per ReLU."""

from __future__ import annotations

import numpy as np
import pytest

import ppnn
from ppnn import nn
from ppnn.core import Ledger, Ring, share_additive
from ppnn.he import gc as gcmod
from ppnn.protocols import gc_act

PARTIES = ("client", "server")


@pytest.fixture(scope="module")
def minionn():
    net = nn.zoo.get("minionn_mnist")
    plan = ppnn.compile("delphi_gc", net, nn.init_params(net, np.random.default_rng(0)))
    return plan, ppnn.count(plan, 1)


def test_delphi_gc_sends_online_only_b_times_16_bytes_per_relu(minionn):
    plan, led = minionn
    df = led.messages_frame()
    relus = 0
    for st in plan.impl.steps:
        if st.kind != "act":
            continue
        c = gc_act.act_circuit(st.spec)
        n = led.op_count("garble", label=st.name) // c.n_and  # circuit instances
        relus_here = n * st.spec.m  # one ReLU per pre-pool element (ReLU and max-pool fused)
        relus += relus_here
        on = df[(df.label == st.name) & (df.phase == "online")]
        # exactly the labels of the server's share: k labels of 16 B per ReLU input
        assert list(on["what"]) == ["labels of x_s"] and list(on["sender"]) == ["server"]
        assert on["bits"].sum() == relus_here * st.spec.k * gcmod.KAPPA
        # the labels of r, tables, OT and decoding bits offline: nothing lost, nothing twice
        assert df[df.label == st.name]["bits"].sum() == n * gcmod.gc_cost(c).total
    assert relus == 24 * 24 * 16 + 8 * 8 * 16 + 100  # MiniONN's MNIST network


def test_delphi_gc_moves_the_labels_of_r_offline_and_keeps_the_total(minionn):
    """Before this booking the labels of r (k x 16 B per circuit instance) went online:
    6.669816 MB online, 50.247696 MB offline for one MiniONN image."""
    plan, led = minionn
    instances = 12 * 12 * 16 + 4 * 4 * 16 + 100
    r_labels_bytes = instances * 32 * gcmod.KAPPA // 8
    assert led.total_bits("online") // 8 == 6_669_816 - r_labels_bytes == 5_307_896
    assert led.total_bits("offline") // 8 == 50_247_696 + r_labels_bytes
    assert led.total_bits() // 8 == 6_669_816 + 50_247_696
    assert led.rounds("online") == 8


@pytest.mark.parametrize("b", [8, 16])
def test_gc_relu_and_the_family_booking_book_the_same_messages(b):
    ring, n = Ring(b), 40
    rng = np.random.default_rng(b)
    real = Ledger(PARTIES)
    gcmod.gc_relu(share_additive(ring.random(rng, (n,)), ring, rng), real, rng, split="delphi")
    counted = Ledger(PARTIES)
    gc_act.book_gc(counted, n, gcmod.relu_circuit(b), "delphi")
    assert real.messages_frame().equals(counted.messages_frame())
    assert real.ops_frame().equals(counted.ops_frame())
    assert real.total_bits("online") == n * b * gcmod.KAPPA


def test_recorded_delphi_split_carries_the_share_and_mask_labels_apart():
    b, n = 8, 300
    c = gcmod.relu_circuit(b)
    rng = np.random.default_rng(0)
    gb = rng.integers(0, 2, (2 * b, n), dtype=np.uint8)
    ev = rng.integers(0, 2, (b, n), dtype=np.uint8)
    _, info = gcmod.garble_and_evaluate(c, gb, ev, rng, chunk=128, keep=True)
    wire = gcmod.GCWire(**info["sent"])
    led = Ledger(PARTIES, record_values=True)
    gcmod.book_delphi_split(led, n, c, PARTIES, wire)
    size = {m.what: led.values[j].size for j, m in enumerate(led.messages)
            if led.values[j].kind == "ciphertext"}
    assert size["labels of x_s"] == size["labels of r"] == n * b * gcmod.KAPPA // 8
    assert size["garbled tables (2 per AND)"] == n * c.n_and * 2 * gcmod.KAPPA // 8
    # the two label sets are the garbler's labels, split at the mask r
    assert [s + m for s, m in zip(wire.share_labels, wire.mask_labels)] == wire.garbler_labels
    assert sum(map(len, wire.share_labels)) == n * b * 16


def test_book_delphi_split_rejects_a_negative_count():
    with pytest.raises(ValueError, match="n must be >= 0"):
        gcmod.book_delphi_split(Ledger(PARTIES), -1, gcmod.relu_circuit(8))
