"""The one record builder: units read from the paper CSVs, records in one layout."""

import pandas as pd
import pytest

from ppnn import report
from ppnn.experiments import records


def test_unit_scale_reads_multipliers_and_byte_units():
    assert records.unit_scale("count (x1e6)") == 1e6
    assert records.unit_scale("KB") == 1024 and records.unit_scale("bits") == 1 / 8
    assert records.unit_scale("MB", decimal_bytes=True) == 1e6
    assert records.unit_scale("ms") == 1.0 and records.unit_scale("%") == 1.0
    assert records.in_units("KB", 2048) == 2.0


def test_in_paper_units_converts_with_the_unit_of_each_cell():
    ref = report.load_paper("tabula", "table1").set_index(["row", "metric"])
    key = next(k for k, u in ref["unit"].items() if u == "KB")
    df = records.in_paper_units("tabula", "table1", {
        key: (4096, "counted", "n"), ("Tabula", "not_in_paper"): (7, "counted", "extra"),
        ("Tabula", "missing"): (None, "", "why")})
    assert list(df.columns) == records.COLUMNS
    got = df.set_index(["row", "metric"])["value"]
    assert got[key] == 4.0 and got[("Tabula", "not_in_paper")] == 7
    assert pd.isna(got[("Tabula", "missing")])  # no value: "not reproducible here"


def test_frame_takes_dicts_or_tuples_in_one_layout():
    a = records.frame([records.record("r", "m", 1.0, "counted", "n")])
    b = records.frame([("r", "m", 1.0, "n", "counted")])
    pd.testing.assert_frame_equal(a, b)
    with pytest.raises(ValueError):
        records.frame([("r", "m", 1.0)])  # a tuple that is not a whole record
