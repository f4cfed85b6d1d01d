"""SHE table builders: unit conversion to the paper's cells, C/B/A/P depth split, rows of
schemes we do not implement, errata format."""

import numpy as np
import pandas as pd
import pytest

from ppnn import report
from ppnn.experiments.she import paper as T


def test_unit_scale():
    assert T.unit_scale("count (x1e3)") == 1e3
    assert T.unit_scale("s (x1e6)") == 1e6
    assert T.unit_scale("MB") == 2**20 and T.unit_scale("GB") == 2**30
    assert T.unit_scale("%") == 1.0


def test_frame_converts_to_paper_units_and_keeps_extras():
    df = T.frame("table4", {("SHE", "hgops"): (856_000, "counted", "n"),
                            ("SHE", "msize"): (784 * 5 * 32 * 1024, "counted", ""),
                            ("SHE", "lil"): (None, "measured", "no leveled mode"),
                            ("SHE extra", "hgops"): (5, "counted", "")})
    v = df.set_index(["row", "metric"])["value"]
    assert v[("SHE", "hgops")] == pytest.approx(856.0)
    assert v[("SHE", "msize")] == pytest.approx(122.5)  # the paper's 784 x 5 x 32KB
    assert pd.isna(v[("SHE", "lil")]) and v[("SHE extra", "hgops")] == 5
    cmp = report.compare("she", "table4", df)
    st = cmp.set_index(["row", "metric"])["status"]
    assert st[("SHE", "hgops")] == "exact" and st[("SHE", "msize")] == "within tolerance"
    assert st[("SHE", "lil")] == "not reproducible here"
    assert st[("SHE extra", "hgops")] == "ours only"


def _layers(rows):
    cols = ["layer", "kind", "cc_com", "md_linear", "md_out"]
    return pd.DataFrame(rows, columns=cols)


def test_per_layer_md_split():
    layers = _layers([("c1", "conv", 10, 12, 15), ("p1", "maxpool", 9, 15, 40),
                      ("c2", "conv", 0, 55, 60), ("f1", "dense", 5, 90, 93),
                      ("f2", "dense", 0, 100, 100)])
    assert T.per_layer_md(layers) == [("C", 12), ("B", 0), ("A", 3), ("P", 25), ("C", 20),
                                      ("F", 30), ("B", 0), ("A", 3), ("F", 7)]
    vals = T.table2_values("SHE", layers, 99.0, list("CBAPCPFBAF"), "test")
    assert vals[("SHE", "md_layer04_P")][0] == 25 and vals[("SHE", "md_layer06_P")][0] is None
    assert vals[("SHE", "md_total")][0] == 100


def test_table7_not_reproducible():
    df = T.table7_values()
    assert df["value"].isna().all() and len(df) == len(report.load_paper("she", "table7"))


def test_cryptonets_counts_from_the_network():
    c = T._cryptonets_counts()
    assert c["cc_mult"] == 945 and c["pc_mult"] == 303_375
    assert c["hops"] == c["pc_mult"] + c["cc_add"] + c["cc_mult"]
    assert np.isclose(c["pc_mult"] / 296e3, 1, atol=0.05)
