"""Splitting work into blocks: contiguous ranges of a batch, and the workers to give them to.

:func:`block_bounds` cuts ``range(n)`` into contiguous blocks of whole runs (the images of a
distributed ``ppnn.run``, the ciphertexts of one level of gates on Dask); :func:`n_workers`
asks a Dask client how many workers it has. Both are plain functions of their arguments, so
a backend below the transports (:class:`ppnn.he.tfhe.DaskTfheBackend`) and the Dask transport
(:mod:`ppnn.distributed`, which re-exports them) share one copy.
"""

from __future__ import annotations

import numpy as np

__all__ = ["block_bounds", "n_workers"]


def n_workers(client) -> int:
    """Workers currently connected to ``client``'s scheduler."""
    return len(client.scheduler_info().get("workers", {}))


def block_bounds(n: int, blocks: int, unit: int = 1) -> list[tuple[int, int]]:
    """``blocks`` contiguous ranges covering ``range(n)``, each a multiple of ``unit`` images,
    as equal as possible (earlier blocks take the remainder)."""
    if isinstance(blocks, bool) or not isinstance(blocks, int | np.integer) or blocks < 1:
        raise ValueError(f"chunks must be a positive int, got {blocks!r}")
    if n % unit:
        raise ValueError(f"{n} images do not split into runs of {unit}")
    units = n // unit
    if blocks > units:
        raise ValueError(f"cannot split {n} images into {blocks} blocks of whole runs of "
                         f"{unit} image(s)")
    sizes = [units // blocks + (i < units % blocks) for i in range(blocks)]
    out, lo = [], 0
    for s in sizes:
        out.append((lo, lo + s * unit))
        lo += s * unit
    return out
