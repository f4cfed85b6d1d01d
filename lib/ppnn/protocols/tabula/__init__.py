"""Tabula (secure lookup-table activations): preprocessing (§3.3), online phase (§3.2),
cost formulas, and end-to-end inference with Delphi-style linear layers.

Modules: :mod:`.tables` (function tables, shared single-use tables), :mod:`.preprocessing`
(Fig. 3 as published and our O(p^2) / O(p)-communication variant), :mod:`.online` (Fig. 2),
:mod:`.costs` (closed forms and the baselines' formulas).
"""

from .online import online_bits, scale_shift, tabula_online, truncation_error_rates
from .preprocessing import (
    OURS,
    PUBLISHED,
    preprocess,
    preprocess_fast,
    preprocess_published,
    tables_antidiagonal,
    tables_cubic,
)
from .tables import (
    MAX_TABLE_BITS,
    LazyTables,
    TableReuseError,
    TabulaTables,
    dealer_tables,
    function_table,
    gelu,
    relu,
    sigmoid,
    signed_inputs,
)

__all__ = [
    "LazyTables", "MAX_TABLE_BITS", "OURS", "PUBLISHED", "TableReuseError", "TabulaTables",
    "dealer_tables",
    "function_table", "gelu", "online_bits", "preprocess", "preprocess_fast",
    "preprocess_published", "relu", "scale_shift", "sigmoid", "signed_inputs",
    "tables_antidiagonal", "tables_cubic", "tabula_online", "truncation_error_rates",
]
