"""SwaNN closed-form costs equal the ledger of (simulated and real) runs; projections."""

from __future__ import annotations

import numpy as np
import pytest

from ppnn import nn
from ppnn.he.paillier import keygen, split_private_key
from ppnn.nn.forward import init_params
from ppnn.protocols.swann.costs import (
    COUNTED_OPS,
    FORMULA_ONLY,
    TWO_PC,
    UnitCosts,
    count_model,
    io_bits,
    project_ms,
)
from ppnn.protocols.swann.inference import SwannKeys, run_inference
from ppnn.protocols.swann.model import FixedPointPlan, SwannModel


@pytest.fixture(scope="module")
def keys():
    pk, sk = keygen(1024)
    return SwannKeys(pk, sk, split_private_key(sk))


def _tiny(kind):
    if kind == "square":
        layers = [nn.Conv2d(2, 3, 1, 1), nn.Square(), nn.MeanPool(2, scaled=True), nn.Flatten(),
                  nn.Dense(5), nn.Square(), nn.Dense(3)]
    else:
        layers = [nn.Conv2d(3, 3, 1, 0), nn.ReLU(), nn.MaxPool(2), nn.Flatten(), nn.Dense(6),
                  nn.ReLU(), nn.Dense(3)]
    return nn.Network(f"tiny_{kind}", (1, 6, 6), layers)


def _check(run, counts):
    led = run.ledger
    for lab in run.labels:
        sub = counts[counts.step == lab]
        for op in COUNTED_OPS:
            if op not in FORMULA_ONLY:
                assert led.op_count(op, label=lab) == int(sub[op].sum()), (lab, op)
        for ph in ("online", "offline"):
            assert led.total_bits(ph, lab) == int(sub[f"{ph}_bits"].sum()), (lab, ph)
        if not lab.startswith("Act"):  # exponent bits are deterministic outside the masks
            assert led.op_count("paillier_exp_bits", label=lab) == int(sub["exp_bits"].sum())
        for party in led.parties:
            mine = sub[sub.party == party]
            for op in ("Enc", "Dec", "PartialDec", "paillier_mul", "paillier_exp"):
                assert led.op_count(op, label=lab, party=party) == int(mine[op].sum())


CASES = [("square", "phe", None), ("square", "hybrid", None), ("relu", "hybrid", None),
         ("square", "hybrid", FixedPointPlan(f_in=18, f_w=18))]


@pytest.mark.parametrize("kind,setting,plan", CASES)
@pytest.mark.parametrize("scenario", ["client-server", "two-server"])
@pytest.mark.parametrize("optimized", [True, False])
def test_formulas_equal_simulated_ledger(keys, kind, setting, plan, scenario, optimized):
    rng = np.random.default_rng(0)
    net = _tiny(kind)
    model = SwannModel(net, init_params(net, rng), setting, plan or FixedPointPlan(),
                       calibration=rng.random((20, 1, 6, 6)))
    n = 1 if scenario == "client-server" else 2
    run = run_inference(model, rng.random((n, 1, 6, 6)), scenario, optimized, keys,
                        np.random.default_rng(1), simulated=True)
    _check(run, count_model(model, scenario, optimized, n_bits=1024))
    for label, bits in io_bits(model, scenario, n_bits=1024).items():
        assert run.ledger.total_bits(None, label) == bits, label


def test_formulas_equal_real_ledger(keys):
    rng = np.random.default_rng(3)
    net = _tiny("relu")
    model = SwannModel(net, init_params(net, rng), "hybrid", calibration=rng.random((9, 1, 6, 6)))
    run = run_inference(model, rng.random((2, 1, 6, 6)), "two-server", True, keys,
                        np.random.default_rng(4))
    _check(run, count_model(model, "two-server", True, n_bits=1024))


@pytest.mark.parametrize("name,setting", [("cryptonets_mnist", "phe"),
                                          ("cryptonets_mnist", "hybrid"),
                                          ("minionn_mnist", "hybrid")])
def test_formulas_on_the_mnist_networks(keys, name, setting):
    rng = np.random.default_rng(0)
    net = nn.zoo.get(name)
    params = init_params(net, rng)
    model = SwannModel(net, params, setting, calibration=rng.random((4, 1, 28, 28)) * 0.3)
    run = run_inference(model, rng.random((1, 1, 28, 28)) * 0.3, "client-server", True, keys,
                        np.random.default_rng(1), simulated=True)
    _check(run, count_model(model, "client-server", True, n_bits=1024))


def test_projection_is_counts_times_units():
    rng = np.random.default_rng(0)
    net = _tiny("relu")
    model = SwannModel(net, init_params(net, rng), "hybrid", calibration=rng.random((4, 1, 6, 6)))
    counts = count_model(model)
    units = UnitCosts(enc=1.0, dec=0.0, partial_dec=0.0, mul=0.0, sqr=0.0, inv=0.0,
                      and_gate=2.0, n_bits=2048)
    ms = project_ms(counts, units)
    assert TWO_PC not in ms.columns
    for lab in ("Act+Pool 1", "Act 1"):
        sub = counts[counts.step == lab]
        enc = sub.set_index("party")["Enc"]
        gates = int(sub[sub.party == TWO_PC]["and_gate"].iloc[0])
        assert ms.loc[lab, "client"] == pytest.approx(1e3 * (enc["client"] + gates))
        assert ms.loc[lab, "server"] == pytest.approx(1e3 * (enc["server"] + gates))
    assert ms.loc["Conv 1", "client"] == 0


def _tiny_residual():
    """An identity block and a stride-2 projection block, a mean pool folded into the FC."""
    layers = [nn.Conv2d(3, 3, 1, 1), nn.ReLU(),
              nn.Residual((nn.Conv2d(3, 3, 1, 1), nn.ReLU(), nn.Conv2d(3, 3, 1, 1))), nn.ReLU(),
              nn.Residual((nn.Conv2d(4, 3, 2, 1),), (nn.Conv2d(4, 1, 2, 0),)), nn.ReLU(),
              nn.MeanPool(3), nn.Flatten(), nn.Dense(3)]
    return nn.Network("tiny_residual", (1, 6, 6), layers)


@pytest.mark.parametrize("scenario", ["client-server", "two-server"])
@pytest.mark.parametrize("optimized", [True, False])
def test_residual_formulas_equal_simulated_ledger_and_the_add_sends_nothing(keys, scenario,
                                                                           optimized):
    rng = np.random.default_rng(5)
    net = _tiny_residual()
    model = SwannModel(net, init_params(net, rng), "hybrid", calibration=rng.random((20, 1, 6, 6)))
    adds = [s for s in model.steps if s.kind == "add"]
    assert [s.lift for s in adds] == [(0, 8), (0, 0)]  # identity shortcut lifted by 2^f_w
    n = 1 if scenario == "client-server" else 2
    x = rng.random((n, 1, 6, 6))
    run = run_inference(model, x, scenario, optimized, keys, np.random.default_rng(1),
                        simulated=True)
    _check(run, count_model(model, scenario, optimized, n_bits=1024))
    for z, img in zip(run.logits, x):
        assert np.array_equal(np.asarray(z, object), model.forward_int(model.encode(img)))
    for s in adds:  # the evaluator's own Paillier operations: no message
        assert run.ledger.total_bits(None, s.label) == 0
        per = int(np.prod(s.in_shape))
        assert run.ledger.op_count("paillier_mul", label=s.label) == n * per
        assert run.ledger.op_count("paillier_exp", label=s.label) == n * per * sum(
            lift > 0 for lift in s.lift)


def test_residual_add_on_real_paillier_equals_the_integer_model(keys):
    rng = np.random.default_rng(6)
    net = _tiny_residual()
    model = SwannModel(net, init_params(net, rng), "hybrid", calibration=rng.random((9, 1, 6, 6)))
    x = rng.random((1, 1, 6, 6))
    run = run_inference(model, x, "client-server", True, keys, np.random.default_rng(4))
    assert np.array_equal(np.asarray(run.logits[0], object),
                          model.forward_int(model.encode(x[0])))
    _check(run, count_model(model, "client-server", True, n_bits=1024))
