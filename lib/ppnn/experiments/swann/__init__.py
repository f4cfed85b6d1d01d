"""SwaNN's experiments: the runs behind the paper's tables.

paper   the integer models of Experiments 1-3, accuracy, bandwidth, and Tables 1-7 as
        records in the paper's layout
runs    end-to-end runs with real Paillier (timed, checked against the integer model), and
        per-layer times measured where a configuration ran and projected where it did not
lesson  Protocols 1-3 played with every value recorded (both settings) and the key holder's
        view of Protocol 2 as a KS experiment (03_swann's lesson)

The protocol (2PC, switching, the integer network, inference, closed-form counts) is
:mod:`ppnn.protocols.swann`.
"""
