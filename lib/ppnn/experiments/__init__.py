"""Experiments: the runs, sweeps, paper-table builders and figures behind the notebooks.

Protocol code lives in :mod:`ppnn.protocols` (one interface, :mod:`ppnn.protocols.api`) and
never imports from here (``tests/test_layout.py``); what is run on it, and how the results
become the papers' tables, lives here.

compare   the cross-paper comparison: one network through every protocol family
tabula    Tables 1-10, Figs. 4-9: per-call and per-network costs, timings, accuracy sweeps
gala      Tables I-XIII: kernel counts, SEAL timings, noise, network projections, figures
swann     Tables 1-7: the integer models, real-Paillier runs, measured or projected times
she       Tables 2, 4-7: fine-tuned models, simulator runs, counted costs, schematics
falcon    Tables 2-9 (shape), Fig. 1-2: private inference and training, cost projections
records   the one record builder (units read from the paper CSVs)

Errata found while reproducing are data: ``data/errata.csv`` (:func:`ppnn.report.load_errata`).
"""
