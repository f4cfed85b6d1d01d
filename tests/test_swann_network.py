"""SwaNN end to end on small networks: real Paillier runs equal the integer oracle."""

from __future__ import annotations

import numpy as np
import pytest

from ppnn import nn
from ppnn.he.paillier import keygen, split_private_key
from ppnn.nn.forward import forward, init_params
from ppnn.protocols.swann.inference import SwannKeys, run_inference
from ppnn.protocols.swann.model import FixedPointPlan, SwannModel


@pytest.fixture(scope="module")
def keys():
    pk, sk = keygen(1024)
    return SwannKeys(pk, sk, split_private_key(sk))


def _net(kind: str) -> nn.Network:
    if kind == "square":
        layers = [nn.Conv2d(2, 3, 1, 1), nn.Square(), nn.MeanPool(2, scaled=True), nn.Flatten(),
                  nn.Dense(5), nn.Square(), nn.Dense(3)]
    else:
        layers = [nn.Conv2d(3, 3, 1, 0), nn.ReLU(), nn.MaxPool(2), nn.Flatten(), nn.Dense(6),
                  nn.ReLU(), nn.Dense(3)]
    return nn.Network(f"tiny_{kind}", (1, 6, 6), layers)


def _model(kind, setting, seed=0, plan=None):
    rng = np.random.default_rng(seed)
    net = _net(kind)
    params = init_params(net, rng)
    calib = rng.random((20, 1, 6, 6))
    return SwannModel(net, params, setting, plan or FixedPointPlan(), calibration=calib), rng


CASES = [("square", "phe"), ("square", "hybrid"), ("relu", "hybrid")]


@pytest.mark.parametrize("kind,setting", CASES)
@pytest.mark.parametrize("optimized", [True, False])
def test_client_server_equals_integer_oracle(keys, kind, setting, optimized):
    model, rng = _model(kind, setting)
    x = rng.random((1, 1, 6, 6))
    res = run_inference(model, x, "client-server", optimized, keys, np.random.default_rng(1))
    want = model.forward_int(model.encode(x[0]))
    assert (res.logits[0] == want).all()
    assert res.predictions[0] == int(np.argmax(np.asarray(want, dtype=float)))


@pytest.mark.parametrize("kind,setting", CASES)
def test_two_server_classifies_two_images(keys, kind, setting):
    model, rng = _model(kind, setting, seed=2)
    x = rng.random((2, 1, 6, 6))
    res = run_inference(model, x, "two-server", True, keys, np.random.default_rng(3))
    for i in range(2):
        assert (res.logits[i] == model.forward_int(model.encode(x[i]))).all()
    led = res.ledger
    # no decryption with the whole key during the layers: only partial decryptions
    assert sum(led.op_count("Dec", label=lab) for lab in res.labels) == 0
    assert led.op_count("PartialDec", party="server1") == led.op_count("PartialDec",
                                                                        party="server2")
    assert led.op_count("Enc", party="client") == 2 * 36  # only the two images


def test_pre_truncation_path_for_wide_squares(keys):
    plan = FixedPointPlan(f_in=18, f_w=18, f_act=8)
    model, rng = _model("square", "hybrid", seed=4, plan=plan)
    assert any(s.pre_trunc for s in model.steps if s.kind == "act")
    x = rng.random((1, 1, 6, 6))
    res = run_inference(model, x, "client-server", True, keys, np.random.default_rng(5))
    assert (res.logits[0] == model.forward_int(model.encode(x[0]))).all()


@pytest.mark.parametrize("kind,setting", CASES)
@pytest.mark.parametrize("scenario", ["client-server", "two-server"])
def test_simulated_run_has_the_same_counts(keys, kind, setting, scenario, monkeypatch):
    # the same masks on both backends (the real one draws them from the OS CSPRNG otherwise):
    # paillier_exp_bits counts the bits of Protocol 1's exponent -2r, so it depends on r
    import ppnn.protocols.swann.switching as sw
    monkeypatch.setattr(sw, "mask_source", lambda rng, real: rng)
    model, rng = _model(kind, setting, seed=6)
    n = 1 if scenario == "client-server" else 2
    x = rng.random((n, 1, 6, 6))
    runs = [run_inference(model, x, scenario, True, keys, np.random.default_rng(7), simulated=s)
            for s in (False, True)]
    assert runs[0].logits[0].tolist() == runs[1].logits[0].tolist()
    assert runs[0].ledger.op_counts() == runs[1].ledger.op_counts()
    assert runs[0].ledger.total_bits() == runs[1].ledger.total_bits()
    assert runs[0].ledger.rounds() == runs[1].ledger.rounds()


def test_integer_model_tracks_float_forward():
    model, rng = _model("relu", "hybrid", plan=FixedPointPlan(f_in=12, f_w=12, f_act=12))
    x = rng.random((5, 1, 6, 6))
    y = np.asarray(model.forward_int(model.encode(x)), dtype=float) / 2.0 ** model.out_scale
    ref = forward(model.net, model.params, x)
    assert np.abs(y - ref).max() < 5e-3 * max(1.0, np.abs(ref).max())


def test_model_errors_and_range_check():
    net = _net("relu")
    params = init_params(net, np.random.default_rng(0))
    with pytest.raises(ValueError, match="ReLU needs the hybrid"):
        SwannModel(net, params, "phe")
    with pytest.raises(ValueError, match="setting"):
        SwannModel(net, params, "fhe")
    with pytest.raises(TypeError):
        SwannModel("net", params, "hybrid")
    with pytest.raises(ValueError, match="f_w"):
        FixedPointPlan(f_w=-1)
    with pytest.raises(ValueError, match="ell"):
        FixedPointPlan(ell=4)
    bad = nn.Network("pool_first", (1, 6, 6), [nn.MaxPool(2), nn.Flatten(), nn.Dense(2)])
    with pytest.raises(ValueError, match="max-pool"):
        SwannModel(bad, init_params(bad, np.random.default_rng(0)), "hybrid")
    model, rng = _model("relu", "hybrid")
    with pytest.raises(ValueError, match="shape"):
        model.encode(np.zeros((1, 5, 5)))
    # an input far outside the calibration range does not fit ℓ: the oracle refuses
    with pytest.raises(ValueError, match="does not fit"):
        model.forward_int(model.encode(np.full((1, 6, 6), 1e9)))


def test_run_argument_errors(keys):
    model, rng = _model("relu", "hybrid")
    x = rng.random((1, 1, 6, 6))
    with pytest.raises(ValueError, match="scenario"):
        run_inference(model, x, "three-server", rng=rng, keys=keys)
    with pytest.raises(ValueError, match="2 image"):
        run_inference(model, x, "two-server", rng=rng, keys=keys)
    with pytest.raises(TypeError, match="rng"):
        run_inference(model, x, keys=keys)
    with pytest.raises(ValueError, match="shares"):
        run_inference(model, np.concatenate([x, x]), "two-server", rng=rng,
                      keys=SwannKeys(keys.public_key, keys.private_key))


@pytest.mark.parametrize("kind,setting", CASES)
def test_int64_and_float_evaluation_modes(kind, setting):
    model, rng = _model(kind, setting, seed=8)
    x = model.encode(rng.random((6, 1, 6, 6)))
    exact = np.asarray(model.forward_int(x), dtype=object)
    if setting == "hybrid":
        assert (model.forward_int(x, exact="int64").astype(object) == exact).all()
    approx = np.asarray(model.forward_int(x, exact=False), dtype=float)
    assert np.allclose(approx, exact.astype(float), rtol=1e-9)


@pytest.mark.parametrize("simulated", [False, True], ids=["real-paillier", "simulated"])
@pytest.mark.parametrize("setting", ["phe", "hybrid"])
def test_an_input_outside_the_calibrated_range_raises_instead_of_overflowing(keys, setting,
                                                                           simulated):
    """Calibrated on images in [0, 1); an image 10^6 x brighter would make the first
    activation exceed ℓ bits. On a real key nobody can see that under encryption, so the
    client refuses such an input before it encrypts it (on either backend); nothing is sent."""
    kind = "square" if setting == "phe" else "relu"
    model, rng = _model(kind, setting, seed=4)
    x = rng.random((1, 1, 6, 6))
    ok = run_inference(model, x, "client-server", True, keys, np.random.default_rng(1),
                       simulated=simulated)
    assert (ok.logits[0] == model.forward_int(model.encode(x[0]))).all()
    with pytest.raises(ValueError, match="input outside the calibrated range"):
        run_inference(model, 1e6 * x, "client-server", True, keys,
                      np.random.default_rng(1), simulated=simulated)
    # within the margin (2^margin_bits x the calibration maximum) is accepted
    model.check_input(model.encode(1.5 * x[0]))


@pytest.mark.parametrize("setting", ["phe", "hybrid"])
def test_the_simulator_also_checks_every_activation_against_its_width(keys, setting,
                                                                      monkeypatch):
    """With the client's check before encryption switched off, the simulated backend --
    which holds the plaintexts -- still refuses to mask an activation that does not fit ℓ
    rather than let a packed slot overflow into its neighbour (a second line of defence)."""
    kind = "square" if setting == "phe" else "relu"
    model, rng = _model(kind, setting, seed=4)
    x = rng.random((1, 1, 6, 6))
    monkeypatch.setattr(model, "check_input", lambda x_int: None)
    with pytest.raises(ValueError, match="outside ℓ = .* signed bits"):
        run_inference(model, 1e6 * x, "client-server", True, keys,
                      np.random.default_rng(1), simulated=True)
