"""One record builder for every paper's reproduced tables.

A reproduced table is a frame of records ``row, metric, value, note, kind`` keyed like the
transcribed ``data/paper/<paper>_<table>.csv``, ready for :func:`ppnn.report.compare`.
Values are computed in base units (counts, seconds, bytes, percent); :func:`in_paper_units`
converts each to the unit the paper's cell is printed in, read from that CSV's ``unit``
column, so no builder hard-codes a paper's units.
"""

from __future__ import annotations

import math
import re

import pandas as pd

from ppnn import report

COLUMNS = report.REPRODUCED_COLUMNS

#: bytes per unit; papers print binary kilo/mega/giga bytes unless stated (SwaNN: decimal)
BYTE_UNITS = {"b": 1 / 8, "bits": 1 / 8, "B": 1, "KB": 2**10, "MB": 2**20, "GB": 2**30}
DECIMAL_BYTE_UNITS = {**BYTE_UNITS, "KB": 1e3, "MB": 1e6, "GB": 1e9}


def record(row: str, metric: str, value, kind: str, note: str = "",
           definition: str = "", unspecified: str = "") -> dict:
    """One reproduced cell (``kind``: measured, counted, projected, formula or quoted;
    :func:`ppnn.report.compare` rejects anything else). ``definition``: how our quantity is
    defined where the paper defines it otherwise (the row becomes "definition differs").
    ``unspecified``: what the paper leaves out of the network its value depends on (the row
    becomes "not reproducible: network unspecified"; ours is shown, not judged)."""
    rec = {"row": row, "metric": metric, "value": value, "note": note, "kind": kind}
    if definition:
        rec["definition"] = definition
    if unspecified:
        rec["unspecified"] = unspecified
    return rec


#: the one frame builder lives in the report layer (its notebooks' tuples use it too)
frame = report.records_frame


def unit_scale(unit: str, decimal_bytes: bool = False) -> float:
    """Divide a base-unit value by this factor to print it in ``unit``: ``(x1eN)`` suffixes
    (counts, depths, seconds in thousands or millions), byte units (``b``/``bits``, ``B``,
    ``KB``, ``MB``, ``GB``; binary unless ``decimal_bytes``); everything else is 1."""
    m = re.search(r"\(x1e(\d+)\)", unit)
    if m:
        return 10.0 ** int(m.group(1))
    table = DECIMAL_BYTE_UNITS if decimal_bytes else BYTE_UNITS
    return float(table.get(unit.strip(), 1.0))


def in_units(unit: str, base_value: float, decimal_bytes: bool = False) -> float:
    """``base_value`` (bytes, counts ...) expressed in ``unit``."""
    return base_value / unit_scale(unit, decimal_bytes)


def in_paper_units(paper: str, table: str, values: dict,
                   decimal_bytes: bool = False) -> pd.DataFrame:
    """``values``: ``{(row, metric): (value_in_base_units | None, kind, note[, definition[,
    unspecified]])}``
    -> a frame whose values are in the units of the paper's cells (a
    :func:`~ppnn.report.paper_choice` row in those of its paper row); cells the paper does
    not have keep their base value (they become "ours only" rows)."""
    ref = report.load_paper(paper, table).set_index(["row", "metric"])
    recs = []
    for (row, metric), (v, kind, note, *extra) in values.items():
        key = (report.paper_row_of(row) or row, metric)
        if key in ref.index and v is not None and not (
                isinstance(v, float) and math.isnan(v)):
            v = float(v) / unit_scale(ref.loc[key, "unit"], decimal_bytes)
        recs.append(record(row, metric, v, kind, note, *extra))
    return frame(recs)
