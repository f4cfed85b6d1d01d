"""Malicious security that detects: every deviation scenario aborts; semi-honest does not."""

import numpy as np
import pytest

from ppnn.protocols.falcon import Deviation, Falcon, MaliciousAbort, relu
from ppnn.protocols.falcon.catalog import PROTOCOLS, protocol_instances
from ppnn.protocols.falcon.tamper import run_all, run_scenario, scenarios

SMALL = ["reconstruct", "mult (fixed point)", "matmul (fixed point)", "truncation",
         "bit injection", "select share"]


def test_every_scenario_of_the_basic_protocols_aborts():
    P = protocol_instances(2)
    df = run_all({k: P[k] for k in SMALL})
    assert len(df) > 100
    assert df["fired"].all(), df[~df["fired"]]
    assert df["detected"].all(), df[~df["detected"]]
    assert set(df["action"]) == {"flip_share", "inconsistent_send", "bad_triple"}


@pytest.mark.parametrize("name", [k for k in PROTOCOLS if k not in SMALL])
def test_sampled_scenarios_of_every_nonlinear_protocol_abort(name):
    P = protocol_instances(2)
    df = run_all({name: P[name]}, limit=12, rng=np.random.default_rng(hash(name) % 2**32))
    assert len(df) == 12
    assert df["fired"].all() and df["detected"].all(), df[~df["detected"]]


@pytest.mark.slow
def test_all_relu_scenarios_abort():
    df = run_all({"relu": protocol_instances(2)["relu"]})
    assert df["detected"].all()


def test_each_party_and_action_on_relu():
    proto = protocol_instances(2)["relu"]
    sc = scenarios(proto)
    for party in ("P0", "P1", "P2"):
        for action in ("flip_share", "inconsistent_send", "bad_triple"):
            cands = [s for s in sc if s[0] == party and s[2] == action]
            assert cands
            rec = run_scenario(proto, *cands[len(cands) // 2])
            assert rec["fired"] and rec["detected"], rec
            assert rec["detected_by"] != party  # an honest party aborts


def test_semi_honest_run_accepts_the_same_deviation_silently_with_a_wrong_result():
    x = np.linspace(-2, 2, 9)
    step = "relu::relu: a * DReLU(a)"
    for mal in (False, True):
        fal = Falcon(np.random.default_rng(0), malicious=mal,
                     deviation=Deviation("P1", step, "inconsistent_send"))
        if mal:
            with pytest.raises(MaliciousAbort, match="multiplication check"):
                relu(fal, fal.share_fixed(x))
        else:
            y, _ = relu(fal, fal.share_fixed(x))
            assert fal.deviation.fired
            assert not np.allclose(fal.reveal_fixed(y), np.maximum(x, 0))


def test_deviation_validation():
    with pytest.raises(ValueError, match="deviating party"):
        Deviation("P3", "x::y")
    with pytest.raises(ValueError, match="action"):
        Deviation("P0", "x::y", "nothing")
    with pytest.raises(ValueError, match="bad triple"):
        Deviation("P0", "relu::open", "bad_triple")
    with pytest.raises(TypeError, match="Deviation"):
        Falcon(np.random.default_rng(0), deviation="P0")


@pytest.mark.slow
def test_every_scenario_of_every_protocol_aborts():
    df = run_all(protocol_instances(2))
    assert len(df) > 3000
    assert df["fired"].all() and df["detected"].all()
