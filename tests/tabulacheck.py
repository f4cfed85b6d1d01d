"""Shared inputs of the Tabula table and ladder tests."""

from __future__ import annotations

from ppnn.experiments.tabula import paper as ex


def per_call():
    """Per-call costs at the bit widths the tests use (Tabula 2-10 bits, GC 8-32 bits)."""
    return ex.per_call_costs(bits=(2, 4, 8, 10), gc_bits=(8, 16, 32), n=16)


def synthetic_units() -> dict:
    """Made-up unit costs of the same shape as the measured ones."""
    return {"tabula_online_s": {b: 1e-7 for b in (2, 4, 8, 10)}, "gather_s": {8: 5e-8},
            "gc_s": {b: {"garble_s": b * 1e-6, "evaluate_s": b * 5e-7, "total_s": b * 1.5e-6}
                     for b in (8, 16, 32)},
            "pre_published_s": {8: 0.1}, "pre_ours_s": {8: 0.001}, "mac_s": 1e-9}
