"""Experiments: the runs, sweeps, paper-table builders and figures behind the notebooks.

Protocol code lives in :mod:`ppnn.protocols` (one interface, :mod:`ppnn.protocols.api`);
what is run on it, and how the results become the papers' tables, lives here.

compare   the cross-paper comparison: one network through every protocol family
"""
