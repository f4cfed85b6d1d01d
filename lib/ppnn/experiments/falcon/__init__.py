"""Falcon's experiments: the runs behind notebook 05 and the benchmarks.

runs   private inference on MNIST (Table 6), private training (Fig. 2), per-network costs with
       LAN/WAN projections (Tables 2-5 shape, Fig. 1), the ledger-vs-closed-form check of every
       protocol (Table 9 shape) and the ring-size comparison
lesson a tampered message played in the protocol player (malicious: the check that fires;
       semi-honest: the wrong output) and P2's view of private compare under a KS test
tables the paper's tables compared with ours
ladders the headline claims (published abstract, §1, §7) against SecureNN's closed forms, and
       a ladder of counterfactuals for each one short of its magnitude

The protocols (replicated sharing, private compare, pooling, numeric layers, networks,
closed-form costs, tampering harness) are :mod:`ppnn.protocols.falcon`.
"""
