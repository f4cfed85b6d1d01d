"""Tabula's experiments: the runs behind the paper's tables and figures.

paper     per-call and per-network costs, Tables 1-10 and Figs. 4-9 in the paper's layout,
          accuracy sweeps over table bit widths
measure   wall-clock measurements (seconds per activation, table, MAC) for the runtime columns

The protocol itself (lookup tables, preprocessing, online phase, cost formulas, the network
runner) is :mod:`ppnn.protocols.tabula`.
"""
