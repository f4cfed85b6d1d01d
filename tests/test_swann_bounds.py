"""SwaNN refuses what does not fit (issue 28, item 6): activation widths and packing slots.

* worst-case bounds (:mod:`ppnn.protocols.swann.bounds`) are upper bounds, attained where they
  can be;
* an input the client's contract accepts but whose activations would need ``ℓ + 1`` bits is
  refused before anything is encrypted or sent, on real and simulated Paillier (without the
  check real Paillier returns wrong logits in the hybrid setting, silently);
* packing an actual oversize value raises instead of carrying into its neighbour;
* the paper's networks still run with their default inputs.
"""

from __future__ import annotations

import numpy as np
import pytest

from ppnn import nn
from ppnn.core.ledger import Ledger
from ppnn.he.paillier import (
    CipherArray,
    PackingLayout,
    Paillier,
    SimulatedPaillier,
    keygen,
    split_private_key,
)
from ppnn.nn.forward import init_params
from ppnn.protocols.swann.bounds import propagate, signed_bits
from ppnn.protocols.swann.inference import SwannKeys, run_inference
from ppnn.protocols.swann.model import FixedPointPlan, SwannModel

BACKENDS = pytest.mark.parametrize("simulated", [False, True], ids=["real-paillier", "simulated"])


@pytest.fixture(scope="module")
def keys():
    pk, sk = keygen(1024)
    return SwannKeys(pk, sk, split_private_key(sk))


def _square_model(setting: str, seed: int, plan: FixedPointPlan | None = None) -> SwannModel:
    """The small square-activation network of tests/test_swann_network.py."""
    rng = np.random.default_rng(seed)
    net = nn.Network("tiny_square", (1, 6, 6), [
        nn.Conv2d(2, 3, 1, 1), nn.Square(), nn.MeanPool(2, scaled=True), nn.Flatten(),
        nn.Dense(5), nn.Square(), nn.Dense(3)])
    params = init_params(net, rng)
    return SwannModel(net, params, setting, plan or FixedPointPlan(),
                      calibration=rng.random((20, 1, 6, 6)))


def _needs(model: SwannModel, x_int) -> dict[str, tuple[int, int]]:
    """Signed bits each activation input of ``x_int`` needs, and its ℓ (the oracle)."""
    outs = model.forward_int(x_int, check=False, return_steps=True)
    prev, out = x_int, {}
    for step, y in zip(model.steps, outs):
        if step.kind == "act":
            mx = int(np.max(np.abs(np.asarray(prev, dtype=object))))
            out[step.label] = (mx.bit_length() + 1, step.ell_in)
        prev = y
    return out


# the audit's case (PHE only, seed 4: Act 2 needs 46 bits, ℓ = 45) and a hybrid one (Act 2:
# 33 bits, ℓ = 32), each for an input with every pixel at the bound the client accepts
AUDIT = {"phe": ("phe", 4, FixedPointPlan()),
         "hybrid": ("hybrid", 2, FixedPointPlan(f_in=16, f_w=16, f_act=12))}


def _at_the_bound(model: SwannModel) -> np.ndarray:
    return np.full((1, *model.net.input_shape), model.input_bound / 2.0 ** model.plan.f_in)


# ----------------------------------------------------------------------------------------
# worst-case bounds
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("setting,kind", [("phe", "square"), ("hybrid", "square"),
                                          ("hybrid", "relu")])
def test_worst_case_bounds_are_never_exceeded(setting, kind):
    rng = np.random.default_rng(5)
    if kind == "square":
        model = _square_model(setting, seed=3)
    else:
        net = nn.Network("tiny_relu", (1, 6, 6), [
            nn.Conv2d(3, 3, 1, 0), nn.ReLU(), nn.MaxPool(2), nn.Flatten(), nn.Dense(6),
            nn.ReLU(), nn.Dense(3)])
        model = SwannModel(net, init_params(net, rng), setting,
                           calibration=rng.random((20, 1, 6, 6)))
    B = model.input_bound
    into, out = propagate(model.steps, 36, B)
    # random inputs, and the corners of the box: every pixel at ±B
    xs = np.concatenate([rng.integers(-B, B + 1, size=(50, 1, 6, 6)),
                         B * rng.choice([-1, 1], size=(50, 1, 6, 6))])
    outs = model.forward_int(xs, check=False, return_steps=True)
    prev = xs.reshape(len(xs), -1)
    for step, y, bound in zip(model.steps, outs, into):
        assert np.abs(np.asarray(prev, dtype=object)).max() <= bound
        if step.kind == "act":
            assert step.worst_bits == signed_bits(bound)
        prev = np.asarray(y).reshape(len(xs), -1)
    assert np.abs(np.asarray(prev, dtype=object)).max() <= out


def test_the_linear_bound_is_attained_by_the_sign_matched_input():
    """|Σ w x + b| <= Σ|w|·B + |b| is tight: x_j = sign(b)·sign(w_j)·B attains it."""
    net = nn.Network("one_fc", (1, 3, 3), [nn.Flatten(), nn.Dense(1), nn.Square(),
                                           nn.Dense(2)])
    params = init_params(net, np.random.default_rng(1))
    params[1]["b"] = np.array([0.3])
    model = SwannModel(net, params, "phe")
    fc = model.steps[1]
    B = 1 << 8
    into, _ = propagate(model.steps, 9, B)
    want = int(np.abs(fc.W).sum()) * B + abs(int(fc.b[0]))
    x = (np.sign(fc.W[0]) * B).reshape(1, 3, 3).astype(np.int64)
    got = int(model.forward_int(x, check=False, return_steps=True)[1][0])
    assert got == want
    assert want <= into[2] <= want * (1 + 2.0 ** -29)


def test_signed_bits():
    assert [signed_bits(b) for b in (0, 1, 1.5, 2**44 - 1, 2**44)] == [1, 2, 3, 45, 46]
    assert signed_bits(float("inf")) == 1025


# ----------------------------------------------------------------------------------------
# the audit's first case: refused before encryption, on both backends
# ----------------------------------------------------------------------------------------
@BACKENDS
@pytest.mark.parametrize("scenario", ["client-server", "two-server"])
@pytest.mark.parametrize("case", sorted(AUDIT))
def test_an_accepted_input_needing_ell_plus_1_bits_is_refused_before_encryption(
        keys, case, scenario, simulated, monkeypatch):
    setting, seed, plan = AUDIT[case]
    model = _square_model(setting, seed, plan)
    x = _at_the_bound(model)
    x_int = model.encode(x[0])
    assert int(np.abs(x_int).max()) == model.input_bound   # inside the input contract
    assert not model.certified
    need, ell = _needs(model, x_int)["Act 2"]
    assert need == ell + 1
    if case == "phe":
        assert (need, ell) == (46, 45)                      # the audit's numbers
    made, booked = [], []
    real_encrypt, real_send, real_count = Paillier.encrypt, Ledger.send, Ledger.count
    monkeypatch.setattr(Paillier, "encrypt",
                        lambda self, *a, **k: made.append(a) or real_encrypt(self, *a, **k))
    monkeypatch.setattr(Ledger, "send",
                        lambda self, *a, **k: booked.append(a) or real_send(self, *a, **k))
    monkeypatch.setattr(Ledger, "count",
                        lambda self, *a, **k: booked.append(a) or real_count(self, *a, **k))
    images = np.concatenate([x, x]) if scenario == "two-server" else x
    with pytest.raises(ValueError, match=rf"before encryption: Act 2: activation input needs "
                                         rf"{ell + 1} signed bits .* does not fit ℓ = {ell}"):
        run_inference(model, images, scenario, True, keys, np.random.default_rng(0),
                      simulated=simulated)
    assert made == [] and booked == []                      # no ciphertext, no message


def test_without_the_check_real_paillier_returns_wrong_logits_silently(keys, monkeypatch):
    """Why the check runs before encryption: in the hybrid setting an activation one bit too
    wide wraps in its 2PC share; on a real key nobody sees it and the logits are wrong. (The
    simulator, which holds the plaintexts, refuses at the switch instead.)"""
    model = _square_model(*AUDIT["hybrid"])
    x = _at_the_bound(model)
    monkeypatch.setattr(model, "check_input", lambda x_int: None)
    res = run_inference(model, x, "client-server", True, keys, np.random.default_rng(0))
    want = model.forward_int(model.encode(x[0]), check=False)
    assert not (res.logits[0] == want).all()
    with pytest.raises(ValueError, match="outside ℓ = 32 signed bits"):
        run_inference(model, x, "client-server", True, keys, np.random.default_rng(0),
                      simulated=True)


@BACKENDS
def test_worst_case_widths_certify_the_model_and_run_the_same_input(keys, simulated):
    """FixedPointPlan(widths="worst-case"): every ℓ covers the worst case of the input
    contract, so the contract alone is a guarantee and the input at the bound runs."""
    setting, seed, plan = AUDIT["hybrid"]
    wide = FixedPointPlan(f_in=plan.f_in, f_w=plan.f_w, f_act=plan.f_act, widths="worst-case")
    model = _square_model(setting, seed, wide)
    assert model.certified
    assert all(s.worst_bits <= s.ell_in for s in model.steps if s.kind == "act")
    x = _at_the_bound(model)
    res = run_inference(model, x, "client-server", True, keys, np.random.default_rng(0),
                        simulated=simulated)
    assert (res.logits[0] == model.forward_int(model.encode(x[0]))).all()
    with pytest.raises(ValueError, match="widths"):
        FixedPointPlan(widths="guess")


@BACKENDS
def test_an_uncalibrated_model_checks_the_input_it_is_given(keys, simulated):
    """No input contract: the worst case from this input's own largest pixel, then its
    actual activations."""
    model = _square_model("phe", 4)
    model.input_bound = None
    assert not model.certified
    x = _at_the_bound(_square_model("phe", 4))
    with pytest.raises(ValueError, match="before encryption: Act 2"):
        run_inference(model, x, "client-server", True, keys, np.random.default_rng(0),
                      simulated=simulated)
    small = np.full((1, 1, 6, 6), 0.5)
    res = run_inference(model, small, "client-server", True, keys, np.random.default_rng(0),
                        simulated=simulated)
    assert (res.logits[0] == model.forward_int(model.encode(small[0]))).all()


# ----------------------------------------------------------------------------------------
# the audit's second case: packing an actual oversize value
# ----------------------------------------------------------------------------------------
def test_an_oversize_value_would_carry_into_its_neighbour():
    """What the check prevents: [2^100 + 5, 7] packed in 100-bit slots unpacks as [5, 8]."""
    lay = PackingLayout(100, 1024)
    packed = (2**100 + 5) + (7 << 100)
    assert lay.unpack_plain([packed], 2).tolist() == [5, 8]


@BACKENDS
def test_packing_an_oversize_value_raises_instead_of_corrupting_its_neighbour(keys, simulated):
    be = (SimulatedPaillier if simulated else Paillier)(keys.public_key, Ledger(["c", "s"]))
    lay = be.layout(100)
    c = be.encrypt(np.array([2**100 + 5, 7], dtype=object), "c")
    with pytest.raises(ValueError, match=r"value 0 \(slot 0 of packed plaintext 0\) has 101 "
                                         r"bits: it does not fit a slot of 100 bits"):
        be.pack(c, lay, 100, "s")          # the declared width fits: the value does not
    # the first offending value is named by index and slot, also past the first ciphertext
    vals = np.arange(lay.rho + 3, dtype=object)
    vals[lay.rho + 1] = 2**100
    with pytest.raises(ValueError, match=rf"value {lay.rho + 1} \(slot 1 of packed plaintext "
                                         r"1\) has 101 bits"):
        be.pack(be.encrypt(vals, "c"), lay, 100, "s")
    with pytest.raises(ValueError, match=r"value 1 \(slot 1 .*\) is negative \(-1\)"):
        be.pack(be.encrypt(np.array([3, -1]), "c"), lay, 100, "s")
    # values that fit pack and unpack exactly
    ok = be.pack(be.add_plain(c, np.array([-2**100, 0], dtype=object), "s"), lay, 100, "s")
    assert lay.unpack_plain(be.decrypt_raw(keys.private_key, ok, "c"), 2).tolist() == [5, 7]


def test_a_hand_built_real_ciphertext_is_checked_against_its_declared_width_only(keys):
    """No party can see inside a real ciphertext: without the lab's copy of its plaintexts
    (a CipherArray built by hand) only the declared width is checked."""
    be = Paillier(keys.public_key, Ledger(["c", "s"]))
    c = be.encrypt(np.array([2**100 + 5, 7], dtype=object), "c")
    bare = CipherArray(c.data, keys.public_key)
    assert bare.shadow is None
    be.pack(bare, be.layout(100), 100, "s")
    with pytest.raises(ValueError, match="101-bit values do not fit slots of 100 bits"):
        be.pack(bare, be.layout(100), 101, "s")


def test_the_lab_copy_of_real_plaintexts_follows_every_operation(keys):
    pk, sk = keys.public_key, keys.private_key
    rng = np.random.default_rng(0)
    x = rng.integers(-1000, 1000, size=12)
    k = rng.integers(-9, 9, size=12)
    W = rng.integers(-50, 50, size=(3, 4))
    index = np.array([[0, 1, 2, -1], [3, 4, 5, 6], [-1, 7, 8, 9]])

    def every_operation(be):
        c = be.encrypt(x, "c")
        return c, [
            be.add(c, c, "s"), be.sub(c, be.encrypt(x[::-1].copy(), "c"), "s"),
            be.add_plain(c, 7, "s"), be.neg(c, "s"), be.mul_plain(c, k, "s"), be.sum(c, "s"),
            be.sum_windows(c, index, "s"), be.dot(c[:4], W, "s"),
            be.gather_dot(c, index, W, "s"), be.gather_dot(c, index, W, "s", method="naive"),
            be.rerandomize(c, "s"), CipherArray.concatenate([c[:3], c[5:]]),
            c.reshape(3, 4)[1], be.encrypt_trivial(np.array([5, -5])),
            be.pack(be.add_plain(c, 2000, "s"), be.layout(20), 20, "s")]

    led, sled = Ledger(["c", "s"]), Ledger(["c", "s"])
    be = Paillier(pk, led)
    _, results = every_operation(be)
    sc, _ = every_operation(SimulatedPaillier(pk, sled))
    # the copy is the lab's: it books nothing (the same counts as the simulator's)
    assert led.op_counts() == sled.op_counts()
    assert sc.shadow is None
    for r in results:
        assert r.shadow is not None
        assert (be.decrypt_raw(sk, r, "c") == r.shadow).all()


# ----------------------------------------------------------------------------------------
# the paper's networks still run with their default inputs
# ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def paper_models():
    from ppnn.data import load_mnist
    from ppnn.experiments.swann import paper as ex

    return ex.build_models(quick=True, seed=0), load_mnist()[2]


def test_the_paper_networks_accept_their_test_images(paper_models):
    models, x_te = paper_models
    for model in models.values():
        acts = [s for s in model.steps if s.kind == "act"]
        assert all(s.worst_bits > 0 for s in acts)
        assert "worst_bits" in model.summary()
        n = 20 if model.setting == "phe" else 200   # exact Python integers for PHE only
        for img in x_te[:n]:
            model.check_input(model.encode(img))


@pytest.mark.parametrize("scenario", ["client-server", "two-server"])
def test_the_paper_networks_run_their_default_images(paper_models, keys, scenario):
    """The notebook's runs (its first one or two test images), here on the simulator: they
    are accepted and decrypt to the integer model."""
    models, x_te = paper_models
    x = x_te[:1 if scenario == "client-server" else 2]
    for key, model in models.items():
        res = run_inference(model, x, scenario, True, keys, np.random.default_rng(0),
                            simulated=True)
        for got, img in zip(res.logits, x):
            assert (got == model.forward_int(model.encode(img))).all(), key


def test_the_notebooks_real_run_still_runs(paper_models, keys):
    """Quick mode's one real run: Experiment 1, hybrid, client-server, first test image."""
    models, x_te = paper_models
    model = models["exp1_hybrid"]
    res = run_inference(model, x_te[:1], "client-server", True, keys, np.random.default_rng(0))
    assert (res.logits[0] == model.forward_int(model.encode(x_te[0]))).all()


def test_the_family_compiles_worst_case_widths_on_request():
    import ppnn
    from ppnn.protocols import api

    setting, seed, plan = AUDIT["phe"]
    ref = _square_model(setting, seed, plan)
    rng = np.random.default_rng(seed)
    params = init_params(ref.net, rng)
    calib = rng.random((20, 1, 6, 6))
    x = _at_the_bound(ref)
    default = api.compile("swann_cs", ref.net, params, calib, setting="phe")
    with pytest.raises(ValueError, match="before encryption: Act 2"):
        ppnn.run(default, x)
    wide = api.compile("swann_cs", ref.net, params, calib, setting="phe", widths="worst-case")
    assert wide.impl["model"].certified
    res = ppnn.run(wide, x)
    assert (np.asarray(res.logits[0], dtype=object) == wide.oracle(x)[0]).all()
