"""End-to-end Tabula + Delphi inference: executed protocol vs plaintext oracle vs counter."""

import numpy as np
import pytest

from ppnn.core import Ledger, Ring, share_additive
from ppnn.he import gc
from ppnn.nn import (
    BatchNorm,
    Conv2d,
    Dense,
    Flatten,
    MaxPool,
    MeanPool,
    Network,
    ReLU,
    init_params,
    zoo,
)
from ppnn.protocols.tabula import network as tn

PARTIES = ("client", "server")


def _tiny(pool="max"):
    P = MaxPool(2) if pool == "max" else MeanPool(2)
    net = Network("tiny", (1, 8, 8), [Conv2d(4, 3, 1, 1), BatchNorm(), ReLU(), P, Flatten(),
                                      Dense(6), ReLU(), Dense(3)])
    rng = np.random.default_rng(0)
    params = [{"W": rng.normal(0, .5, (4, 1, 3, 3)), "b": rng.normal(0, .1, 4)},
              {"gamma": rng.uniform(.5, 1.5, 4), "beta": rng.normal(0, .1, 4),
               "mean": rng.normal(0, .1, 4), "var": rng.uniform(.5, 1.5, 4)},
              {}, {}, {}, {"W": rng.normal(0, .3, (6, 64)), "b": rng.normal(0, .1, 6)}, {},
              {"W": rng.normal(0, .3, (3, 6)), "b": rng.normal(0, .1, 3)}]
    return net, params, rng.uniform(0, 1, (40, 1, 8, 8))


@pytest.mark.parametrize("pool", ["max", "mean"])
def test_no_truncation_means_exact_agreement_with_the_oracle(pool):
    """With 16-bit tables and coarse fixed point every shift d is 0: the protocol is exact."""
    net, params, x = _tiny(pool)
    plan = tn.build_plan(net, params, x, tn.TabulaConfig(bits=16, act_frac_bits=3,
                                                         weight_frac_bits=3))
    assert all(s.d == 0 for s in plan.table_layers())
    got = tn.secure_inference(plan, x, np.random.default_rng(1))
    np.testing.assert_array_equal(got, tn.plain_inference(plan, x))


@pytest.mark.parametrize("bits", [6, 8])
def test_with_truncation_predictions_agree_with_the_oracle(bits):
    net, params, x = _tiny()
    plan = tn.build_plan(net, params, x, tn.TabulaConfig(bits=bits))
    assert any(s.d > 0 for s in plan.table_layers())
    got = tn.secure_inference(plan, x, np.random.default_rng(2), linear="ideal")
    want = tn.plain_inference(plan, x)
    assert (got.argmax(1) == want.argmax(1)).mean() >= 0.9
    float_scale = np.abs(want).max()
    assert np.abs(got - want).max() < 0.5 * float_scale


@pytest.mark.parametrize("tables", ["lazy", "dealer", "protocol"])
def test_table_sources_and_linear_modes_book_the_same(tables):
    net, params, x = _tiny()
    plan = tn.build_plan(net, params, x, tn.TabulaConfig(bits=5))
    a, b = Ledger(PARTIES), Ledger(PARTIES)
    tn.secure_inference(plan, x[:2], np.random.default_rng(3), a, linear="delphi", tables=tables)
    tn.secure_inference(plan, x[:2], np.random.default_rng(3), b, linear="ideal", tables=tables)
    assert a.total_bits("online") == b.total_bits("online")
    assert a.rounds("online") == b.rounds("online")


@pytest.mark.parametrize("bits", [4, 8, 12])
def test_counter_books_what_the_protocol_sends(bits):
    net, params, x = _tiny()
    plan = tn.build_plan(net, params, x, tn.TabulaConfig(bits=bits))
    run = Ledger(PARTIES)
    tn.secure_inference(plan, x[:1], np.random.default_rng(0), run)
    counted = tn.count_network(net, "tabula", bits)
    assert run.total_bits("online") == counted.total_bits("online")
    assert run.rounds("online") == counted.rounds("online")
    c = tn.network_counts(net)
    calls = c["relus"] + c["comparisons"]
    assert counted.total_bits("online") == 64 * (c["linear_inputs"] + c["outputs"]) \
        + 2 * bits * calls


@pytest.mark.parametrize("name", ["resnet32_cifar10", "tabula_lenet", "minionn_cifar10"])
def test_counting_zoo_networks_matches_the_closed_form(name):
    net = zoo.get(name)
    c = tn.network_counts(net)
    calls = c["relus"] + c["comparisons"]
    tab = tn.count_network(net, "tabula", 8)
    assert tab.total_bits("online") == 64 * (c["linear_inputs"] + c["outputs"]) + 16 * calls
    g = tn.count_network(net, "gc", 8)
    cost = gc.gc_cost(gc.relu_circuit(8))
    # Delphi's split: online the labels of the server's share (8 x 128 bits) per call ...
    assert g.total_bits("online") == 64 * (c["linear_inputs"] + c["outputs"]) \
        + calls * 8 * gc.KAPPA == tab.total_bits("online") + calls * (8 * gc.KAPPA - 16)
    # ... the rest offline, and nothing twice: both phases add up to the all-online circuit
    assert g.total_bits("offline") == calls * cost.offline_delphi_relu
    assert g.total_bits() == 64 * (c["linear_inputs"] + c["outputs"]) + calls * cost.total


@pytest.mark.parametrize("bits", [8, 16])
def test_gc_counter_books_what_gc_relu_sends_in_each_phase(bits):
    """count_network's GC calls and a real gc_relu run (Delphi's split) book the same bits
    per phase and the same online rounds per layer."""
    net = zoo.get("tabula_lenet")
    c = tn.network_counts(net)
    calls = c["relus"] + c["comparisons"]
    g = tn.count_network(net, "gc", bits)
    ring, n = Ring(bits), 64
    rng = np.random.default_rng(bits)
    run = Ledger(PARTIES)
    gc.gc_relu(share_additive(ring.random(rng, (n,)), ring, rng), run, rng, split="delphi")
    linear = 64 * (c["linear_inputs"] + c["outputs"])
    for phase in ("online", "offline"):
        per_call = run.total_bits(phase) / n
        assert g.total_bits(phase) == (linear if phase == "online" else 0) + calls * per_call
    assert run.rounds("online") == 1


def test_bad_networks_and_modes_raise():
    bad = Network("bn_after_relu", (1, 4, 4), [Conv2d(2, 3, 1, 1), ReLU(), BatchNorm(),
                                                Flatten(), Dense(2)])
    with pytest.raises(ValueError, match="must follow a Conv2d or Dense"):
        tn.build_plan(bad, init_params(bad, np.random.default_rng(0)), np.zeros((1, 1, 4, 4)),
                      tn.TabulaConfig())
    net, params, x = _tiny()
    with pytest.raises(ValueError, match="x_calib"):
        tn.build_plan(net, params, x[:, 0], tn.TabulaConfig())
    plan = tn.build_plan(net, params, x, tn.TabulaConfig(bits=6))
    with pytest.raises(ValueError, match="linear"):
        tn.secure_inference(plan, x[:1], np.random.default_rng(0), linear="fast")
    with pytest.raises(ValueError, match="tables"):
        tn.secure_inference(plan, x[:1], np.random.default_rng(0), tables="free")
    with pytest.raises(ValueError, match="1..16"):
        tn.TabulaConfig(bits=17)
    with pytest.raises(ValueError, match="scheme"):
        tn.count_network(net, "fss", 8)
