"""Residual networks through every family: a ResNet-20 (He et al. 2016, 3 stages x 3 basic
blocks, 16/32/64 channels) and reduced copies of the same graph, compiled, run on random
CIFAR-shaped images and counted. Each run equals the family's integer oracle, ``count``
books exactly the run's ledger, and where a family adds the two branches locally the
residual Add books nothing.

The quick tests run a reduced-width, reduced-size copy of the same graph (a few seconds per
family); the ``slow`` ones run ResNet-20 itself end to end on every family's simulator."""

from __future__ import annotations

import numpy as np
import pytest

import ppnn
from ppnn import nn
from ppnn.experiments.compare import resnet
from ppnn.protocols import api

KEYS = list(api._REGISTRY)
#: families whose residual Add is a local sum of shares (no message, no operation booked);
#: SwaNN's is the evaluator's Paillier product, SHE's an adder circuit (no message either)
LOCAL_ADD = ("delphi_gc", "delphi_tabula", "gazelle_gc", "gala_gc", "falcon_sh", "falcon_mal")


def _ledger_key(led):
    msgs = sorted((m.sender, m.receiver, m.bits, m.round, m.phase, m.label)
                  for m in led.messages)
    return msgs, led.op_counts()


def resnet_params(net, seed: int):
    """He-normal weights and non-trivial batch-norm statistics (folded by every family)."""
    return resnet.random_params(net, np.random.default_rng(seed))


def _images(net, n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).random((n, *net.input_shape))


def check_resnet(key, net, params, n_calib=32, **options):
    """Compile, run (the family's images per run), count; the run equals the oracle."""
    fam = api.family(key)
    per = fam.spec.images_per_run
    plan = ppnn.compile(key, net, params, calib=_images(net, n_calib, 1), **options)
    x = _images(net, per, 2)
    res = ppnn.run(plan, x, seed=3)
    ref = plan.oracle(x)
    exact = fam.exact or (key == "delphi_tabula" and  # no table shifts: no local truncation
                          all(s.d == 0 for s in plan.impl.table_layers()))
    if exact:
        assert np.array_equal(np.asarray(res.logits, object), np.asarray(ref, object)), key
    else:  # probabilistic truncation: a few ulps per layer, predictions equal
        err = np.abs(np.asarray(res.logits, float) - np.asarray(ref, float)).max()
        assert err <= 0.15 * np.abs(np.asarray(ref, float)).max(), (key, err)
    assert np.array_equal(res.predictions, plan.predict(x)), key
    counted = ppnn.count(plan, batch=per)
    assert _ledger_key(counted) == _ledger_key(res.ledger), key
    return plan, res


def assert_add_books_nothing(net, ledger):
    """No message and no operation under a residual Add's label: every message is booked
    under a leaf layer of ``net`` or the input / output / setup steps."""
    adds = {n.name for n in net.nodes() if n.kind == "Add"}
    assert adds
    heads = {m.label.split("/")[0] for m in ledger.messages}
    assert not heads & adds
    assert not {o.label.split("/")[0] for o in ledger.ops} & adds
    leaves = {n.name for n in net.leaves()}
    assert heads <= leaves | {"input", "output", "setup"}, heads - leaves


# -- quick: a reduced copy of the ResNet-20 graph ------------------------------------------
#: the same graph (3 stages x 3 basic blocks, projection shortcuts) at widths 2/4/8 on 16x16
#: images; 8x8 for the families whose simulators cost most per element (Paillier's
#: per-ciphertext loops, the bit simulator's gates, the HE slot simulator with 256 slots)
REDUCED = dict(n=3, widths=(2, 4, 8))
QUICK = {"swann_cs": (8, {}), "swann_2s": (8, {}), "she": (8, {}),
         "gazelle_gc": (8, {"n": 256}), "gala_gc": (8, {"n": 256})}


@pytest.fixture(scope="module")
def swann_keys():
    from ppnn.protocols.swann.inference import SwannKeys

    return SwannKeys.generate(1024, two_server=True)


def _she_adder(plan, res, net):
    """SHE: the Add is a ripple-carry adder on the gate level (gates, no message)."""
    from ppnn.protocols.she.quant import QResidual

    for n in net.nodes():
        if n.kind == "Add":
            assert res.ledger.op_count("bootstrap", label=n.name) > 0
            assert res.ledger.op_count("CC_ADD", label=n.name) == int(np.prod(n.out_shape))
    for op in plan.impl.ops:
        if isinstance(op, QResidual):  # the coarser branch shifted left to the finer's scale
            assert min(op.lift) == 0
            if not op.shortcut:  # identity: the block input is coarser than the body's sum
                assert op.lift[1] > 0


def _swann_add(plan, res, net):
    """SwaNN: batch norm folded before anything is switched; the Add is the evaluator's
    Paillier product ``[body]^(2^lb) [shortcut]^(2^ls)`` (operations, no message)."""
    model = plan.impl["model"]
    assert "BatchNorm" not in {n.kind for n in model.net.nodes()}
    adds = [s for s in model.steps if s.kind == "add"]
    assert len(adds) == sum(n.kind == "Add" for n in net.nodes())
    per = plan.spec.images_per_run
    for s in adds:
        assert res.ledger.total_bits(None, s.label) == 0
        assert res.ledger.op_count("paillier_mul", label=s.label) == per * int(
            np.prod(s.in_shape))


def _lifts(steps):
    for st in steps:
        if st.kind == "residual":
            yield st
            yield from _lifts(st.body)


def _shared_add(plan, res, net):
    """Delphi + GC, GAZELLE, GALA: the identity shortcut lifted by the body's weight bits to
    its accumulator scale (a local shift of both shares); projection shortcuts at the body's
    scale already; the Add and its lift listed in the plan's table."""
    hp = plan.impl["plan"] if isinstance(plan.impl, dict) else plan.impl
    blocks = list(_lifts(hp.steps))
    assert blocks and all(min(st.lift) == 0 for st in blocks)
    assert {bool(st.shortcut) for st in blocks} == {True, False}
    assert all(st.lift[1] > 0 for st in blocks if not st.shortcut)
    assert (plan.table()["kind"] == "add").sum() == len(blocks)


CHECKS = {"she": _she_adder, "swann_cs": _swann_add, "swann_2s": _swann_add,
          "delphi_gc": _shared_add, "gazelle_gc": _shared_add, "gala_gc": _shared_add}


@pytest.mark.parametrize("key", KEYS)
def test_reduced_resnet_runs_equal_to_the_oracle_and_count_equals_run(key, swann_keys):
    image, options = QUICK.get(key, (16, {}))
    net = nn.zoo.resnet_cifar(**REDUCED, image=image)
    if key.startswith("swann"):
        options = {"keys": swann_keys, "insecure": True}  # 1024-bit test keys: fast, insecure
    plan, res = check_resnet(key, net, resnet_params(net, 0), **options)
    if key in LOCAL_ADD:
        assert_add_books_nothing(net, res.ledger)
    else:  # not local, and no message either: the evaluator's own operations / gates
        assert not [m for m in res.ledger.messages if ".add" in m.label or "Add " in m.label]
    CHECKS.get(key, lambda *a: None)(plan, res, net)


#: Delphi + Tabula without local truncation: 16-bit tables at coarse fixed point
TABULA_EXACT = {"bits": 16, "act_frac_bits": 4, "weight_frac_bits": 4}


def test_tabula_without_truncation_equals_its_oracle_bit_for_bit():
    """16-bit tables at coarse fixed point: every table's shift is 0, so the protocol (exact
    up to its local truncation otherwise) computes the oracle exactly, residual Adds too."""
    net = nn.zoo.resnet_cifar(**REDUCED, image=16)
    plan = ppnn.compile("delphi_tabula", net, resnet_params(net, 0), calib=_images(net, 32, 1),
                        **TABULA_EXACT)
    assert all(s.d == 0 for s in plan.impl.table_layers())
    x = _images(net, 2, 2)
    np.testing.assert_array_equal(ppnn.run(plan, x, seed=1).logits, plan.oracle(x))


@pytest.mark.parametrize("key", ["delphi_tabula", "falcon_sh"])
def test_wire_mode_runs_a_residual_network_as_in_process(key):
    """The parties as processes (the client's / servers' copies hold garbage weights inside
    the blocks too): the same logits and ledger as the in-process run."""
    net = nn.zoo.resnet_cifar(**REDUCED, image=8)
    plan = ppnn.compile(key, net, resnet_params(net, 0), calib=_images(net, 16, 1))
    x = _images(net, 1, 2)
    ref = ppnn.run(plan, x, seed=1)
    res = ppnn.run(plan, x, seed=1, transport="tcp")
    np.testing.assert_array_equal(res.logits, ref.logits)
    assert res.ledger.messages == ref.ledger.messages


def test_wire_mode_refuses_residual_he_plans_by_name():
    net = nn.zoo.resnet_cifar(**REDUCED, image=8)
    plan = ppnn.compile("gala_gc", net, resnet_params(net, 0), calib=_images(net, 16, 1),
                        n=256)
    with pytest.raises(ValueError, match="residual blocks or mean pools: run it in process"):
        ppnn.run(plan, _images(net, 1, 2), transport="tcp")


# -- slow: ResNet-20 itself -----------------------------------------------------------------
@pytest.fixture(scope="module")
def resnet20():
    net = nn.zoo.get("resnet20_cifar10")
    return net, resnet_params(net, 0)


@pytest.mark.slow
@pytest.mark.parametrize("key", KEYS)
def test_resnet20_runs_end_to_end_equal_to_the_oracle(key, resnet20):
    """All nine fit on their simulators in minutes on 2 cores (SHE: about 1.6e9 bootstrapped
    gates, a minute of bit-simulator CPU per image; GAZELLE / GALA: 10-12 s of slot-simulator
    CPU); on real tfhe-rs or SEAL this depth would take hours."""
    net, params = resnet20
    # Tabula at its default 8-bit tables truncates locally before every table (+-1 ulp of 19
    # layers' inputs, as much as the quantization itself here); with 16-bit tables at coarse
    # fixed point no table shifts and the protocol computes its oracle exactly
    options = TABULA_EXACT if key == "delphi_tabula" else {}
    plan, res = check_resnet(key, net, params, **options)
    if key == "delphi_tabula":
        assert all(s.d == 0 for s in plan.impl.table_layers())
    if key in LOCAL_ADD:
        assert_add_books_nothing(net, res.ledger)
