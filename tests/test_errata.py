"""The errata added for issue 27 item 10, recomputed from the paper's own numbers
(data/paper/*.csv) or from our network definitions: each row of data/errata.csv says what the
evidence is, and these tests are that evidence."""

from __future__ import annotations

import pytest

from ppnn import report
from ppnn.nn import zoo


def _paper(name: str, row: str, metric: str) -> float:
    df = report.load_paper(*name.split("_", 1))
    hit = df[(df["row"] == row) & (df["metric"] == metric)]
    assert len(hit) == 1, (name, row, metric)
    return float(hit["value"].iloc[0])


def test_tabula_fig8_4bit_vs_8bit_gc_is_34x():
    gc32, gc8 = (_paper("tabula_fig8", "GC storage per ReLU (Sec 4.2)", m)
                 for m in ("gc32_storage", "gc8_storage"))
    vs32 = _paper("tabula_fig8", "Tabula 4-bit activations", "storage_savings_vs_gc32")
    printed = _paper("tabula_fig8", "Tabula 4-bit activations", "storage_savings_vs_gc8")
    assert vs32 * gc8 / gc32 == pytest.approx(34)
    assert gc8 * 1000 / (2**4 * 64 / 8) == pytest.approx(33.2, abs=1)  # 4.25 KB / 128 B
    assert printed == 17


def test_tabula_table5_vgg_8bit_reduction():
    tab = _paper("tabula_table5", "VGG-16", "tabula_comm")
    assert _paper("tabula_table5", "VGG-16", "gc8_comm") / tab == pytest.approx(5.95, abs=0.01)
    assert _paper("tabula_table5", "VGG-16", "comm_reduction_vs_gc8") == 5.6
    assert _paper("tabula_table5", "VGG-16", "gc32_comm") / tab == pytest.approx(23.6, abs=0.05)


def test_tabula_table5_lenet_gc_per_relu():
    def kib_per_relu(row):
        return (_paper("tabula_table5", row, "gc32_comm") * 2**20
                / (_paper("tabula_table5", row, "relu_count") * 1e3) / 1024)

    assert kib_per_relu("LeNet") == pytest.approx(2.19, abs=0.02)
    for row in ("ResNet-32", "ResNet-34", "VGG-16"):
        assert kib_per_relu(row) == pytest.approx(1.05, abs=0.02)


def test_falcon_network_c_parameter_count():
    assert zoo.get("minionn_mnist").totals()["params"] == 33_542


def test_the_new_errata_are_in_the_csv():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "data" / "errata.csv").read_text()
    for name in ("test_tabula_fig8_4bit_vs_8bit_gc_is_34x",
                 "test_tabula_table5_vgg_8bit_reduction", "test_tabula_table5_lenet_gc_per_relu",
                 "test_falcon_network_c_parameter_count"):
        assert f"tests/test_errata.py::{name}" in text
