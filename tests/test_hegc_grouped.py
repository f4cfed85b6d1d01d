"""Grouped convolutions (AlexNet's two-group conv2, conv4, conv5) in GAZELLE, GALA, Delphi.

A grouped convolution runs as ``g`` independent convolutions on channel slices
(:class:`~ppnn.protocols.gala.conv.GroupedConv`): one batch of ciphertexts up, one down, ``g``
times one group's HE operations -- what the kernel counter
(:func:`ppnn.protocols.gala.costs.network_counts`) counts for GALA's Table IX."""

from __future__ import annotations

import numpy as np
import pytest

import ppnn
from ppnn import nn
from ppnn.experiments.compare import resnet
from ppnn.nn import BatchNorm, Conv2d, Dense, Flatten, MaxPool, Network, ReLU, Residual
from ppnn.protocols.gala import costs

FAMILIES = ("gazelle_gc", "gala_gc")
METHOD = {"gazelle_gc": "GAZELLE", "gala_gc": "GALA"}


def _chain() -> Network:
    """AlexNet's pattern, reduced: conv, ReLU, pool, a two-group conv, ReLU, FC."""
    return Network("grouped_chain", (3, 12, 12),
                   (Conv2d(8, 3, 1, 1), ReLU(), MaxPool(2), Conv2d(12, 3, 1, 1, groups=2),
                    ReLU(), Flatten(), Dense(10)))


def _block() -> Network:
    """A residual block whose body has a four-group convolution (ResNeXt's pattern)."""
    body = (Conv2d(8, 3, 1, 1, groups=4, bias=False), BatchNorm(), ReLU(),
            Conv2d(8, 1, 1, 0, bias=False), BatchNorm())
    return Network("grouped_block", (4, 8, 8),
                   (Conv2d(8, 3, 1, 1), ReLU(), Residual(body, ()), ReLU(), Flatten(),
                    Dense(10)))


def _ledger_key(led):
    return sorted((m.sender, m.receiver, m.bits, m.round, m.phase, m.label)
                  for m in led.messages), led.op_counts()


@pytest.mark.parametrize("make", [_chain, _block], ids=["chain", "residual"])
@pytest.mark.parametrize("key", FAMILIES)
def test_grouped_conv_runs_equal_to_the_oracle_and_count_equals_run(key, make):
    net = make()
    params = resnet.random_params(net, np.random.default_rng(0))
    rng = np.random.default_rng(1)
    calib, x = rng.random((16, *net.input_shape)), rng.random((2, *net.input_shape))
    plan = ppnn.compile(key, net, params, calib=calib, n=256)
    res = ppnn.run(plan, x, seed=3)
    assert np.array_equal(np.asarray(res.logits), np.asarray(plan.oracle(x)))
    assert _ledger_key(ppnn.count(plan, batch=len(x))) == _ledger_key(res.ledger)
    # the integer oracle follows the float network (grouped, batch-norm folded)
    flt = nn.forward(net, params, x)
    assert (np.asarray(plan.oracle(x)).argmax(1) == flt.argmax(1)).mean() >= 0.5


@pytest.mark.parametrize("key", FAMILIES)
def test_grouped_conv_books_g_groups_in_one_round_each_way(key):
    """conv2 (two groups of 4 -> 6 channels) books twice one group's HE operations, what the
    kernel counter counts, in one message up and one down."""
    net = _chain()
    plan = ppnn.compile(key, net, resnet.random_params(net, np.random.default_rng(0)),
                        calib=np.zeros((1, *net.input_shape)), n=256)
    led = ppnn.count(plan)
    ops = led.ops_frame()
    ops = ops[ops["label"] == "conv2/eval"].groupby("op")["n"].sum()
    kc = costs.network_counts(net, n_slots=256, methods=(METHOD[key],))
    want = kc[kc["layer"] == "conv2"].iloc[0]
    for op in costs.HE_OPS:
        assert int(ops.get(op, 0)) == int(want[op]), op
    online = [m for m in led.messages if m.phase == "online" and m.label.startswith("conv2")]
    assert sorted((m.sender, m.receiver) for m in online) == [("client", "server"),
                                                              ("server", "client")]


def test_delphi_gc_runs_a_grouped_conv_equal_to_its_oracle():
    """Delphi's linear layers are plaintext arithmetic on shares: a grouped convolution is
    the grouped im2col on each share (:func:`ppnn.protocols.delphi.conv2d`)."""
    net = _chain()
    rng = np.random.default_rng(1)
    calib, x = rng.random((8, *net.input_shape)), rng.random((2, *net.input_shape))
    plan = ppnn.compile("delphi_gc", net, resnet.random_params(net, np.random.default_rng(0)),
                        calib=calib)
    res = ppnn.run(plan, x, seed=2)
    assert np.array_equal(np.asarray(res.logits), np.asarray(plan.oracle(x)))
    assert _ledger_key(ppnn.count(plan, batch=len(x))) == _ledger_key(res.ledger)


@pytest.mark.parametrize("key", (*FAMILIES, "delphi_gc"))
def test_grouped_conv_on_the_wire_equals_in_process(key):
    net = _chain()
    rng = np.random.default_rng(0)
    opts = {"n": 256} if key in FAMILIES else {}
    plan = ppnn.compile(key, net, resnet.random_params(net, rng),
                        calib=rng.random((8, *net.input_shape)), **opts)
    x = rng.random((1, *net.input_shape))
    ref, got = ppnn.run(plan, x, 3), ppnn.run(plan, x, 3, transport="tcp")
    assert np.array_equal(got.logits, ref.logits)
    assert got.ledger.total_bits() == ref.ledger.total_bits()
