"""SecureNN's published round and communication complexities (ppnn.protocols.securenn): its
whitepaper prints the formulas (Tables 1-2) and what its code sent (Tables 7-8), and the
formulas evaluated give the printed megabytes -- the known case the Falcon ladders rest on."""

from __future__ import annotations

import pandas as pd

from ppnn import paths
from ppnn.experiments.falcon import ladders as FL
from ppnn.nn import Conv2d, zoo
from ppnn.protocols import securenn as S


def _printed(value: float, printed: str) -> bool:
    """Within one unit of the printed number's last digit."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return abs(value - float(printed)) <= 10.0 ** -decimals + 1e-12


MICRO = {  # Table 8's dimensions -> the closed form of Table 2 / Table 1
    "Conv2d 8, 5, 16, 50": S.layer_cost(Conv2d(50, 5), (16, 8, 8)),
    "Conv2d 28, 3, 1, 20": S.layer_cost(Conv2d(20, 3), (1, 28, 28)),
    "Conv2d 28, 5, 1, 20": S.layer_cost(Conv2d(20, 5), (1, 28, 28)),
    "MatMul 1, 100, 1": S.linear_cost(1, 100, 1),
    "MatMul 1, 500, 100": S.linear_cost(1, 500, 100),
    "MatMul 784, 128, 10": S.linear_cost(784, 128, 10),
    "Maxpool 8x8x50, 4x4": S.maxpool_cost(2 * 2 * 50, 16),
    "Maxpool 24x24x16, 2x2": S.maxpool_cost(12 * 12 * 16, 4),
    "Maxpool 24x24x20, 2x2": S.maxpool_cost(12 * 12 * 20, 4),
    "DReLU 64x16": S.drelu_cost(64 * 16),
    "DReLU 128x128": S.drelu_cost(128 * 128),
    "DReLU 576x20": S.drelu_cost(576 * 20),
    "ReLU 64x16": S.select_cost(64 * 16),
    "ReLU 128x128": S.select_cost(128 * 128),
    "ReLU 576x20": S.select_cost(576 * 20),
}


def test_securenn_closed_forms_give_its_printed_microbenchmark_communication():
    """SecureNN's whitepaper prints its formulas (Tables 1-2) and, for given dimensions, the
    megabytes its code sent (Table 8): each formula evaluated gives the printed number (with
    a byte per Z_67 element, as its code sends them; with 7 bits the DReLU rows fall short)."""
    rep = FL.reported()
    micro = rep[rep["quantity"] == "microbenchmark_comm"]
    assert set(micro["network"]) == set(MICRO)
    raw = pd.read_csv(paths.root() / FL.REPORTED_CSV, dtype=str, keep_default_na=False)
    printed = dict(zip(raw["network"], raw["value"]))
    for label, cost in MICRO.items():
        assert _printed(cost.bits / 8e6, printed[label]), (label, cost.bits / 8e6)
    assert not _printed(S.drelu_cost(64 * 16, bp=7).bits / 8e6, printed["DReLU 64x16"])


def test_securenn_closed_forms_give_its_printed_network_communication():
    """Its Table 7 megabytes of one inference, from the formulas on the zoo networks: Network A
    (SecureML's), B (MiniONN's = Falcon's Network-C) and C (LeNet) reproduce; D (Chameleon's =
    Falcon's Network-B; SecureNN's has a 5x5 convolution, falcon-public's a 2x2 one) does not."""
    rep = FL.reported()
    comm = rep[(rep["system"] == "SecureNN") & (rep["quantity"] == "inference_comm")]
    raw = pd.read_csv(paths.root() / FL.REPORTED_CSV, dtype=str, keep_default_na=False)
    raw = raw[(raw["system"] == "SecureNN") & (raw["quantity"] == "inference_comm")]
    printed = dict(zip(raw["zoo"], raw["value"]))
    assert len(comm) == len(printed) == 4
    for name in comm["zoo"]:
        mb = S.network_cost(zoo.get(name)).bits / 8e6
        ok = _printed(mb, printed[name])
        assert ok == (name != "falcon_network_b"), (name, mb)


def test_training_follows_algorithm_12_forward_asm_and_backward():
    """One training iteration = the forward pass at the batch, ASM (a DIV(lD) per output; the
    network ends with a ReLU, so no extra ReLU) and back-propagation to the first layer."""
    net = zoo.get("falcon_network_a")
    b = 128
    fwd = S.network_cost(net, b)
    train = S.network_cost(net, b, train=True)
    div = S.division_cost(b * 10)
    back = (S.linear_cost(10, b, 128) + S.select_cost(b * 128) + S.linear_cost(128, b, 128)
            + S.select_cost(b * 128) + S.linear_cost(128, b, 784))
    err = S.linear_cost(b, 10, 128).bits + S.linear_cost(b, 128, 128).bits  # dx, same rounds
    last_relu = S.select_cost(b * 10)
    assert train.bits == fwd.bits + div.bits + back.bits + err + last_relu.bits
    assert train.rounds == fwd.rounds + div.rounds + back.rounds + last_relu.rounds
