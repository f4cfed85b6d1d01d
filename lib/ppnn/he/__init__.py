"""Cryptographic backends: BFV (TenSEAL), Paillier (phe), TFHE (tfhe-rs), garbled circuits,
oblivious transfer (base OTs and IKNP extension)."""
