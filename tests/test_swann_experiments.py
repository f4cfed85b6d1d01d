"""SwaNN's experiment runs (moved out of notebook 03): real runs checked against the integer
model, per-layer times measured or projected, and the projection check."""

from __future__ import annotations

import numpy as np
import pytest

from ppnn import nn
from ppnn.experiments.swann import runs
from ppnn.he.paillier import keygen, split_private_key
from ppnn.nn.forward import init_params
from ppnn.protocols.swann.costs import UnitCosts
from ppnn.protocols.swann.inference import SwannKeys
from ppnn.protocols.swann.model import FixedPointPlan, SwannModel

UNITS = UnitCosts(enc=1e-3, dec=1e-3, partial_dec=1e-3, mul=1e-6, sqr=1e-6, inv=1e-5,
                  and_gate=1e-6, n_bits=1024)


@pytest.fixture(scope="module")
def keys():
    pk, sk = keygen(1024)
    return SwannKeys(pk, sk, split_private_key(sk))


@pytest.fixture(scope="module")
def models():
    rng = np.random.default_rng(0)
    sq = nn.Network("tiny_square", (1, 6, 6), [nn.Conv2d(2, 3, 1, 1), nn.Square(),
                    nn.Flatten(), nn.Dense(3)])
    re = nn.Network("tiny_relu", (1, 6, 6), [nn.Conv2d(2, 3, 1, 0), nn.ReLU(), nn.MaxPool(2),
                    nn.Flatten(), nn.Dense(3)])
    calib = rng.random((10, 1, 6, 6))
    p_sq, p_re = init_params(sq, rng), init_params(re, rng)
    return {"exp1_phe": SwannModel(sq, p_sq, "phe", FixedPointPlan(), calib),
            "exp1_hybrid": SwannModel(sq, p_sq, "hybrid", FixedPointPlan(), calib),
            "exp2_hybrid": SwannModel(re, p_re, "hybrid", FixedPointPlan(), calib)}


@pytest.fixture(scope="module")
def images():
    return np.random.default_rng(5).random((3, 1, 6, 6))


def test_real_runs_take_the_papers_image_counts_and_equal_the_integer_model(models, keys,
                                                                            images):
    plan = [("exp1", "opt_hybrid", "client-server"), ("exp2", "opt_hybrid", "two-server")]
    done = runs.real_runs(models, plan, images, keys, seed=0)
    assert list(done) == plan
    cs, ts = done[plan[0]], done[plan[1]]
    assert len(cs.result.predictions) == 1 and len(ts.result.predictions) == 2
    assert cs.scenario == "client-server" and cs.wall_seconds > 0
    for i in range(2):
        want = models["exp2_hybrid"].forward_int(models["exp2_hybrid"].encode(images[i]))
        assert np.array_equal(ts.result.logits[i], want)


def test_layer_times_are_measured_where_a_configuration_ran_else_projected(models, keys,
                                                                           images):
    done = runs.real_runs(models, [("exp1", "opt_hybrid", "client-server")], images, keys)
    meas, kind = runs.layer_times(models, done, UNITS, "exp1", "opt_hybrid", "client-server")
    assert kind == "measured" and list(meas.columns) == ["client", "server"]
    proj, kind = runs.layer_times(models, done, UNITS, "exp1", "opt_phe", "two-server")
    assert kind == "projected" and list(proj.columns) == ["server1", "server2"]
    assert list(meas.index) == list(proj.index)  # the same layers, in the paper's order
    check = runs.projection_check(models, done, UNITS)
    assert list(check["party"]) == ["client", "server"]
    np.testing.assert_allclose(check["ratio"], check["measured_ms"] / check["projected_ms"])
    assert (check["measured_ms"] > 0).all()
    frame = runs.timings_frame({("exp1", "opt_hybrid", "client-server"): (meas, "measured"),
                                ("exp1", "opt_phe", "two-server"): (proj, "projected")})
    assert frame.index.name == "step" and set(frame["kind"]) == {"measured", "projected"}
    assert len(frame) == len(meas) + len(proj)


def test_a_run_that_disagrees_with_the_integer_model_raises(models, keys, images):
    bad = dict(models)
    m = models["exp1_hybrid"]
    wrong = SwannModel(m.net, m.params, "hybrid", FixedPointPlan(), np.ones((2, 1, 6, 6)))
    wrong.forward_int = lambda x: np.full(3, 10**9, dtype=object)  # an oracle that is off
    bad["exp1_hybrid"] = wrong
    with pytest.raises(AssertionError, match="differ from the integer model"):
        runs.real_run(bad, "exp1", "opt_hybrid", "client-server", images[:1], keys)


def test_bad_configurations_are_named(models, keys, images):
    with pytest.raises(ValueError, match="unknown SwaNN configuration 'fast'"):
        runs.model_key("exp1", "fast")
    with pytest.raises(ValueError, match="scenario must be one of"):
        runs.real_run(models, "exp1", "opt_hybrid", "three-server", images[:1], keys)
