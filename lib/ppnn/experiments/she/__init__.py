"""SHE's experiments: the runs behind the paper's tables and figures.

models    MNIST models fine-tuned with the power-of-two (SHE) or uniform (TCN) quantizer in
          the loop (cached under data/cache/models)
runs      the model suite, weight-bit sweeps, chunked runs on the bit simulator (checked
          against the integer model), the ReLU-unit demo on a gate backend
paper     Tables 2 and 4-7 in the paper's units, with provenance
figures   schematics of the ReLU and max units (Fig. 2)

The protocol (gate circuits, quantizers, the compiled integer network, encrypted inference,
counted costs, gate latency) is :mod:`ppnn.protocols.she`.
"""
