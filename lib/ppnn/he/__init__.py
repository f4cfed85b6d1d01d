"""Cryptographic backends: BFV (TenSEAL), Paillier (phe), TFHE (tfhe-rs), garbled circuits."""
