"""SwaNN's experiments: the runs behind the paper's tables.

paper   the integer models of Experiments 1-3, accuracy, bandwidth, and Tables 1-7 as
        records in the paper's layout
runs    end-to-end runs with real Paillier (timed, checked against the integer model), and
        per-layer times measured where a configuration ran and projected where it did not

The protocol (2PC, switching, the integer network, inference, closed-form counts) is
:mod:`ppnn.protocols.swann`.
"""
