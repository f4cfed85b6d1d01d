"""GALA's experiments: the runs behind the paper's tables and figures.

runs      kernel operation counts, SEAL timings, noise runs, network projections, the TenSEAL
          peer comparison
paper     Tables I-XIII in the paper's layout (records for :func:`ppnn.report.compare`)
figures   rotation traces of the matrix-vector kernels and the Fig. 9 breakdown
ladders   the headline claims, and the ladders from our numbers to the paper's

The protocol (slot layouts, GALA and GAZELLE kernels, the linear-layer flow, the fixed-point
network) is :mod:`ppnn.protocols.gala`.
"""
