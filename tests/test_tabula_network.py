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


# -- the GC baseline: the same plan with each table garbled (nonlinear="gc") --------------
@pytest.mark.parametrize(("b", "t"), [(4, 0), (4, 2), (5, -1), (5, -2), (5, -4), (6, -3)])
def test_garbled_quantized_relu_equals_the_table_it_replaces(b, t):
    """quant_relu_circuit on every pair of b-bit shares gives rint(ReLU(q) 2^t) - r mod 2^64,
    the value of the ReLU table Tabula would look up (ties rounded to even), with the AND
    gates of its closed form."""
    from ppnn.core import Z2_64
    from ppnn.he.gc_circuits import quant_relu_circuit
    from ppnn.protocols.tabula.tables import relu

    c, s = np.meshgrid(np.arange(2**b, dtype=np.uint64), np.arange(2**b, dtype=np.uint64))
    c, s = c.reshape(-1), s.reshape(-1)
    r = np.random.default_rng(b).integers(0, 2**63, c.size, dtype=np.uint64) * np.uint64(2)
    circ = quant_relu_circuit(b, 64, t)
    out, _ = gc.garble_and_evaluate(circ, np.concatenate([gc.bits_of(s, b), gc.bits_of(r, 64)]),
                                    gc.bits_of(c, b))
    table = tn.encode_table(relu, b, 2.0**t, 1.0, Z2_64)  # in_step / out_step = 2^t
    np.testing.assert_array_equal(gc.from_bits(out) + r, table[(c + s) % 2**b])
    assert circ.n_and == 2 * (b - 1) + 63 + (0 if t >= 0 else b - 1 - (t == -(b - 1)))


@pytest.mark.parametrize("pool", ["max", "mean"])
def test_garbled_plan_is_exact_without_truncation_and_counts_its_run(pool):
    """With every shift d = 0 the garbled plan equals the oracle bit for bit; its count (a dry
    run booking without garbling) equals the run's ledger in both phases, and online it books
    what count_network's GC scheme books."""
    from ppnn.protocols import api
    from ppnn.runner import run

    net, params, x = _tiny(pool)
    opts = dict(bits=16, act_frac_bits=3, weight_frac_bits=3, nonlinear="gc")
    plan = api.compile("delphi_tabula", net, params, calib=x, **opts)
    assert all(s.d == 0 for s in plan.impl.table_layers())
    res = run(plan, x[:3], seed=1)
    np.testing.assert_array_equal(res.logits, plan.oracle(x[:3]))
    led = api.count(plan, batch=3)
    for phase in ("online", "offline"):
        assert led.total_bits(phase) == res.ledger.total_bits(phase)
        assert led.rounds(phase) == res.ledger.rounds(phase)
    assert led.op_count("garble") == res.ledger.op_count("garble") > 0
    closed = tn.count_network(net, "gc", 16)
    assert api.count(plan).total_bits("online") == closed.total_bits("online")
    # the tables' plan on the same calibration: the same oracle
    tab = api.compile("delphi_tabula", net, params, calib=x, **{**opts, "nonlinear": "table"})
    np.testing.assert_array_equal(tab.oracle(x), plan.oracle(x))


def test_garbled_plan_with_truncation_predicts_like_the_oracle():
    net, params, x = _tiny()
    plan = tn.build_plan(net, params, x, tn.TabulaConfig(bits=8, nonlinear="gc"))
    assert any(s.d > 0 for s in plan.table_layers())
    got = tn.secure_inference(plan, x, np.random.default_rng(2), tables="gc")
    want = tn.plain_inference(plan, x)
    assert (got.argmax(1) == want.argmax(1)).mean() >= 0.9
    assert np.abs(got - want).max() < 0.5 * np.abs(want).max()


def test_garbled_plan_refuses_what_it_cannot_do():
    from ppnn.nn import Square

    net, params, x = _tiny()
    with pytest.raises(ValueError, match="nonlinear must be one of"):
        tn.TabulaConfig(nonlinear="fss")
    with pytest.raises(ValueError, match=r"bits must be an int in 2\.\.32"):
        tn.TabulaConfig(bits=33, nonlinear="gc")
    sq = Network("sq", (1, 4, 4), [Conv2d(2, 3, 1, 1), Square(), Flatten(), Dense(2)])
    with pytest.raises(ValueError, match="garbles ReLU only"):
        tn.build_plan(sq, init_params(sq, np.random.default_rng(0)),
                      np.random.default_rng(1).random((2, 1, 4, 4)),
                      tn.TabulaConfig(nonlinear="gc"))
    plan = tn.build_plan(net, params, x, tn.TabulaConfig(bits=8, nonlinear="gc"))
    with pytest.raises(ValueError, match="nonlinear='gc'"):
        tn.secure_inference(plan, x[:1], np.random.default_rng(0), tables="lazy")
    tab = tn.build_plan(net, params, x, tn.TabulaConfig(bits=8))
    with pytest.raises(ValueError, match="nonlinear='table'"):
        tn.secure_inference(tab, x[:1], np.random.default_rng(0), tables="gc")
