"""The front door's ``run``: one call that picks the transport a plan runs on.

    >>> import ppnn
    >>> res = ppnn.run(plan, x, seed=0)                          # every party in this process
    >>> res = ppnn.run(plan, x, seed=0, chunks=4, client=client)  # blocks on Dask
    >>> res = ppnn.run(plan, x, seed=0, transport="tcp")          # one OS process per party

:func:`run` checks its arguments, then hands the plan to a transport: the family's own
in-process run (:meth:`ppnn.protocols.api.Family.run`, optionally recording the values that
crossed), blocks in this process or on a Dask cluster (:func:`ppnn.distributed.run_blocks`),
or wire mode (:func:`ppnn.wire.run`). The transports run any family through the interface of
:mod:`ppnn.protocols.api`; none of them imports this module, and no family imports a
transport. ``ppnn.compile`` and ``ppnn.count`` need no transport: they are
:func:`ppnn.protocols.api.compile` and :func:`ppnn.protocols.api.count`.

See also
--------
docs/wire.md : wire mode. docs/dask.md : blocks, their seeds and merged ledgers.
"""

from __future__ import annotations

from ppnn.core.ledger import recording
from ppnn.core.transcript import ValueBudget
from ppnn.errors import InvalidArgument, InvalidType
from ppnn.protocols import checks
from ppnn.protocols.api import BACKENDS, Plan, Result, _check_images, family

__all__ = ["run"]


def run(plan: Plan, x, seed=0, backend: str = "sim", client=None,
        chunks: int | None = None, progress: bool = False,
        record_values=False, transport: str = "inproc") -> Result:
    """Run the family's protocol on images ``x`` (N, *input_shape) or one image.

    ``seed``: an int or a ``numpy.random.Generator`` (the simulation's randomness; with
    ``transport="tcp"`` also None: every stream from OS entropy, see :mod:`ppnn.wire`);
    ``backend``: "sim" or "real" (see the family's ``spec.backends``).
    ``chunks``: split the images into that many blocks, each run with its own seed and merged
    as one batched run books them (see :mod:`ppnn.distributed`); ``client``: a Dask client
    that runs the blocks as tasks (default: one block per worker). The same ``chunks`` give
    the same logits and ledger with or without a client (``progress``: a bar over the
    blocks). A family whose one image is a huge
    circuit (SHE on real tfhe-rs) splits each level of gates across the workers instead
    when ``backend="real"`` and no ``chunks`` are given.
    ``record_values``: True or a :class:`~ppnn.core.transcript.ValueBudget` keeps the values
    that crossed and that parties held in the result's ledger (for ``ppnn.views`` and the
    protocol player; in-process runs only).
    ``transport``: "inproc" (the parties in this process) or "tcp" (wire mode: one OS
    process per party and the dealer over loopback TCP, see :mod:`ppnn.wire`; its result's
    ``extra["wire"]`` compares ledger and wire; ``backend="real"`` for SHE (tfhe-rs), SwaNN
    (Paillier) and GAZELLE / GALA (SEAL), whose client process alone keeps the secret key:
    :data:`ppnn.wire.REAL_WIRE_FAMILIES`)."""
    if not isinstance(plan, Plan):
        raise InvalidType(f"plan must be a Plan from ppnn.compile, got {type(plan).__name__}")
    if transport not in ("inproc", "tcp"):
        raise InvalidArgument(f"transport must be 'inproc' or 'tcp', got {transport!r}")
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise InvalidArgument(f"backend must be one of {BACKENDS}, got {backend!r}")
    if not (transport == "tcp" and seed is None):  # wire mode: None = OS entropy everywhere
        checks.check_seed(seed)
    if not (record_values is True or record_values is False
            or isinstance(record_values, ValueBudget)):
        raise InvalidType(f"record_values must be True, False or a ValueBudget, got "
                          f"{record_values!r}")
    if not isinstance(progress, bool):
        raise InvalidType(f"progress must be True or False, got {progress!r}")
    if client is not None and not (hasattr(client, "submit") and hasattr(client, "gather")):
        raise InvalidType(f"client must be a dask.distributed Client or None, got "
                          f"{type(client).__name__}")
    if chunks is not None:
        checks.check_int(chunks, "chunks", 1)
    if transport == "tcp":
        from ppnn import wire

        if plan.family not in wire.WIRE_FAMILIES:
            raise InvalidArgument(f"transport='tcp' is implemented for "
                                  f"{', '.join(wire.WIRE_FAMILIES)}; {plan.family} runs in "
                                  "process only (transport='inproc')")
        if client is not None or chunks is not None or record_values is not False:
            raise InvalidArgument("transport='tcp' runs one block: pass client=None, "
                                  "chunks=None, record_values=False")
        # a real backend is checked by the wire run (ppnn.wire.REAL_WIRE_FAMILIES)
        return wire.run(plan, x, seed, backend=backend, timeout=None)
    fam = family(plan.family)
    if record_values is not False:
        if client is not None or chunks is not None:
            raise InvalidArgument("record_values works for in-process runs only: "
                                  "pass client=None and chunks=None")
        with recording(record_values):
            return fam.run(plan, x, seed, backend)
    if client is not None and chunks is None and backend == "real" and fam.distributes_gates:
        return fam.run(plan, x, seed, backend, client=client)  # one image's gates split
    if client is not None or chunks is not None:
        from ppnn.distributed import run_blocks

        if backend not in fam.spec.backends:
            raise InvalidArgument(f"backend must be one of {fam.spec.backends} for "
                                  f"{fam.spec.name}, got {backend!r}: {fam.spec.simulated}")
        x = _check_images(plan, x)
        runs = len(x) // fam.spec.images_per_run
        if len(x) % fam.spec.images_per_run or (chunks is not None and chunks > runs):
            raise InvalidArgument(f"chunks: cannot split {len(x)} images into {chunks} blocks "
                                  f"of whole runs ({fam.spec.images_per_run} image(s) per "
                                  f"run): chunks must be at most {runs}")
        return run_blocks(plan, x, seed, backend, chunks, client, progress=progress)
    return family(plan.family).run(plan, x, seed, backend)
