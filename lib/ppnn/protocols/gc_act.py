"""Garbled-circuit activation layers for the HE-GC families (Delphi, GAZELLE, GALA).

The circuit is the toolkit's one activation circuit (:func:`ppnn.he.gc_circuits.act_circuit`,
re-exported here with :class:`ActSpec` and :func:`act_and_gates`); garbling and evaluation
are :func:`ppnn.he.gc.garble_and_evaluate`. This module runs the layer between the two
parties and books it. One circuit instance per activation output does, on k-bit additive
shares (client = evaluator, server = garbler):

1. ``x_j = c_j + s_j mod 2^k`` for the ``m`` inputs of a max-pool window (``m = 1``: no pool);
2. ``v = max_j x_j`` (signed; ``m - 1`` comparators);
3. ``y = ReLU(v) >> d`` -- ReLU and the fixed-point truncation together, exact;
4. ``z = y - r mod 2^k`` with the server's fresh mask ``r``: the client learns ``z``, the
   server keeps ``r`` -- shares of the output.

:func:`garbled_activation` computes the layer; :func:`book_gc` books it, sizes from
:func:`ppnn.he.gc.gc_cost`, in one of two splits: ``"delphi"`` (Delphi's ReLU protocol,
:func:`ppnn.he.gc.book_delphi_split`: OT, tables, the labels of ``r`` and the decoding bits
offline, only the labels of the server's share online) or ``"online"`` (everything online in
two rounds, GAZELLE-style). With ``keep=True`` (a ledger that records values) it also returns
the bytes the garbler sent (:class:`~ppnn.he.gc.GCWire`), recorded by size and digest; the
OT is not run in process, so its messages are recorded ``SIZE_ONLY``.

See also
--------
docs/protocols.md : garbled circuits (the activation circuit, the splits).
"""

from __future__ import annotations

import numpy as np

from ppnn.core import Ledger
from ppnn.core.randomness import mask_source
from ppnn.core.transcript import SIZE_ONLY
from ppnn.he import gc as gcmod
from ppnn.he.gc import GCWire
from ppnn.he.gc_circuits import ActSpec, act_and_gates, act_circuit, plain_act

__all__ = ["ActSpec", "act_circuit", "act_and_gates", "garbled_activation", "book_gc",
           "plain_act", "SPLITS", "GCWire"]

SPLITS = ("delphi", "online")


def _random_mod(rng, modulus: int, n: int) -> np.ndarray:
    if modulus == 1 << 64:
        return rng.integers(0, np.iinfo(np.uint64).max, size=n, dtype=np.uint64, endpoint=True)
    return rng.integers(0, modulus, size=n, dtype=np.uint64)


def garbled_activation(client: np.ndarray, server: np.ndarray, spec: ActSpec,
                       rng: np.random.Generator, label_rng: np.random.Generator | None = None,
                       chunk: int = 1024, keep: bool = False
                       ) -> tuple[np.ndarray, np.ndarray, dict]:
    """Run the circuit for real: the server garbles, the client evaluates.

    ``client`` / ``server``: ``(n, m)`` shares mod ``spec.modulus`` (uint64). Returns the
    client's output share ``z``, the server's mask ``r`` (both ``(n,)``, ``z + r = y`` mod the
    modulus) and measured seconds ``{"garble_s", "evaluate_s"}``. Labels come from
    ``os.urandom`` unless ``label_rng``; the mask ``r`` hides ``y`` from the client in a real
    garbled circuit, so it comes from the OS CSPRNG (:mod:`ppnn.core.randomness`), never from
    the simulation seed ``rng``: ``z + r`` is deterministic, the split is not.

    ``keep=True`` (pass ``ledger.records_values``) also returns, under ``"wire"``, the
    :class:`GCWire` bytes the garbler sent, for :func:`book_gc` to record.
    """
    client = np.asarray(client, dtype=np.uint64)
    server = np.asarray(server, dtype=np.uint64)
    if client.ndim != 2 or client.shape != server.shape or client.shape[1] != spec.m:
        raise ValueError(f"client and server shares must both be (n, {spec.m}), got "
                         f"{client.shape} and {server.shape}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator (seed it explicitly)")
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    if spec.p is not None and (client.max(initial=0) >= spec.p or
                               server.max(initial=0) >= spec.p):
        raise ValueError(f"shares must be residues mod p = {spec.p}")
    n, m, k = client.shape[0], spec.m, spec.k
    c = act_circuit(spec)
    r = _random_mod(mask_source(rng, real=True), spec.modulus, n)  # the GC is real
    ev_bits = np.concatenate([gcmod.bits_of(client[:, j], k) for j in range(m)])
    gb_bits = np.concatenate([gcmod.bits_of(server[:, j], k) for j in range(m)]
                             + [gcmod.bits_of(r, k)])
    out, t = gcmod.garble_and_evaluate(c, gb_bits, ev_bits, label_rng, chunk, keep=keep)
    z = gcmod.from_bits(out)
    info = {"garble_s": t["garble_s"], "evaluate_s": t["evaluate_s"]}
    if keep:
        info["wire"] = GCWire(**t["sent"])
    return z, r, info


def book_gc(ledger: Ledger, n: int, circuit: gcmod.Circuit, split: str,
            parties=("client", "server"), wire: GCWire | None = None) -> None:
    """Book ``n`` instances of ``circuit`` (see the module docstring for the two splits).

    On a ledger that records values, ``wire`` (from ``garbled_activation(..., keep=True)``)
    gives the garbler's messages their bytes; without it, and for the OT columns, the messages
    are recorded ``SIZE_ONLY``."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    n = int(n)
    if n < 0:
        raise ValueError(f"number of instances n must be >= 0, got {n}")
    if split == "delphi":
        gcmod.book_delphi_split(ledger, n, circuit, parties, wire)
        return
    client, server = parties
    cost = gcmod.gc_cost(circuit)
    # values (recorded transcripts only): real bytes where the garbler built them
    everything = SIZE_ONLY
    if wire is not None and ledger.records_values:
        everything = wire.tables + wire.garbler_labels + wire.decoding
    with ledger.round():
        ledger.send(client, server, n * cost.ot_receiver, "IKNP OT: receiver columns",
                    value=SIZE_ONLY)
    with ledger.round():
        ledger.send(server, client, n * (cost.ot_sender + cost.tables + cost.garbler_labels
                                         + cost.decoding), "OT answers, tables, labels",
                    value=everything)
    ledger.count("garble", n * circuit.n_and, server)
    ledger.count("and_gate", n * circuit.n_and, server)
    ledger.count("ot", n * circuit.evaluator_inputs.size, client)
