"""Cryptographic backends: BFV (TenSEAL), Paillier (phe), TFHE (tfhe-rs binding), garbled circuits."""
