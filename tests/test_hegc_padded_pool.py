"""A padded max-pool (torchvision's 3x3 stride-2 pad-1 stem pool) on gazelle_gc and gala_gc.

The pool runs in the garbled circuit with the ReLU before it. Padding is -inf in the float
network, so it never wins the max; the oracle takes the max over a window's real inputs only
(padding at the int64 minimum), the protocol feeds the circuit shares of 0 where the window
hangs over the edge: after a ReLU, ``ReLU(max(S + {0})) = ReLU(max S)``. Every circuit keeps
the full window's ``k*k`` inputs, in the run and in ``count``."""

from __future__ import annotations

import numpy as np
import pytest

import ppnn
from ppnn import nn
from ppnn.experiments.compare import resnet
from ppnn.nn import BatchNorm, Conv2d, Dense, Flatten, MaxPool, Network, ReLU, Residual
from ppnn.protocols import gc_act

FAMILIES = ("gazelle_gc", "gala_gc")
STEM = MaxPool(3, 2, 1)


def _plain() -> Network:
    """conv (padded) -> ReLU -> padded max-pool -> FC: the sequential plan's path."""
    return Network("padded_pool_chain", (3, 12, 12),
                   (Conv2d(4, 3, 1, 1), ReLU(), STEM, Flatten(), Dense(10)))


def _stem_block() -> Network:
    """A reduced ImageNet ResNet: 5x5/2 stem + BN + ReLU, the padded stem pool, one basic
    block with a projection shortcut (the residual plan's path)."""
    body = (Conv2d(6, 3, 1, 1, bias=False), BatchNorm(), ReLU(),
            Conv2d(6, 3, 1, 1, bias=False), BatchNorm())
    short = (Conv2d(6, 1, 1, 0, bias=False), BatchNorm())
    return Network("padded_pool_resnet", (3, 16, 16),
                   (Conv2d(4, 5, 2, 2, bias=False), BatchNorm(), ReLU(), STEM,
                    Residual(body, short), ReLU(), Flatten(), Dense(10)))


def _params(net, seed: int):
    return resnet.random_params(net, np.random.default_rng(seed))


def _ledger_key(led):
    return sorted((m.sender, m.receiver, m.bits, m.round, m.phase, m.label)
                  for m in led.messages), led.op_counts()


def _logit_bits(plan) -> int:
    """Fraction bits of the logits: the last linear step's input is a garbled activation's
    output (``f_x`` bits), its weights add ``f_w``."""
    hp = plan.impl["plan"]
    return hp.f_x + [st for st in hp.leaf_steps() if st.kind == "linear"][-1].q.f_w


@pytest.mark.parametrize("make", [_plain, _stem_block], ids=["chain", "resnet_stem"])
@pytest.mark.parametrize("key", FAMILIES)
def test_padded_max_pool_run_equals_oracle_and_float_and_count_equals_run(key, make):
    net = make()
    params = _params(net, 0)
    rng = np.random.default_rng(1)
    calib, x = rng.random((32, *net.input_shape)), rng.random((2, *net.input_shape))
    plan = ppnn.compile(key, net, params, calib=calib, n=256)
    res = ppnn.run(plan, x, seed=3)
    ref = plan.oracle(x)
    assert np.array_equal(np.asarray(res.logits), np.asarray(ref))
    assert np.array_equal(res.predictions, plan.predict(x))
    # the float network (padding -inf) at the logits' fixed-point scale: GALA's plan rounds
    # inputs to 2^-6 and weights to 2^-f_w and clips at the 99.99th percentile
    flt = nn.forward(net, params, x)
    err = np.abs(np.asarray(ref, float) / 2.0 ** _logit_bits(plan) - flt).max()
    assert err <= 0.05 * np.abs(flt).max(), err
    assert _ledger_key(ppnn.count(plan, batch=len(x))) == _ledger_key(res.ledger)


@pytest.mark.parametrize("key", FAMILIES)
def test_padded_windows_book_the_full_window_circuit(key):
    """The stem pool's garbled layer books one 9-input circuit per output: all 144 outputs
    of the 4 x 6 x 6 pool on 12 x 12, the 44 whose windows hang over the edge too."""
    net = _plain()
    plan = ppnn.compile(key, net, _params(net, 0), calib=np.zeros((1, *net.input_shape)),
                        n=256)
    act = [st for st in plan.impl["plan"].steps if st.kind == "act"][0]
    assert act.spec.m == 9 and act.pool.padding == 1
    outs = 4 * 6 * 6
    led = ppnn.count(plan)
    assert led.op_count("and_gate", label=act.name) == outs * gc_act.act_and_gates(act.spec)
    hang = (nn.ops.pool_index((4, 12, 12), 3, 2, 1) < 0).any(axis=1).sum()
    assert hang == 4 * (6 * 6 - 5 * 5)


@pytest.mark.parametrize("key", FAMILIES)
def test_wire_mode_pads_the_windows_as_in_process(key):
    """One OS process per party: the same logits and ledger as the in-process run."""
    net = _plain()
    rng = np.random.default_rng(1)
    plan = ppnn.compile(key, net, _params(net, 0), calib=rng.random((8, 3, 12, 12)), n=256)
    x = rng.random((1, 3, 12, 12))
    here, wire = ppnn.run(plan, x, seed=3), ppnn.run(plan, x, seed=3, transport="tcp")
    assert np.array_equal(np.asarray(wire.logits), np.asarray(here.logits))
    assert np.array_equal(np.asarray(here.logits), np.asarray(plan.oracle(x)))
    assert _ledger_key(wire.ledger) == _ledger_key(here.ledger)
