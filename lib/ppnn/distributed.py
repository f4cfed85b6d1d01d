"""Past one machine: protocol runs and sweeps on a Dask cluster (``dask.distributed``).

    >>> import ppnn
    >>> from ppnn import distributed
    >>> with distributed.cluster(workers=2) as client:     # a LocalCluster on this machine
    ...     res = ppnn.run(plan, x, seed=0, client=client)
    >>> client = distributed.connect("tcp://HOST:8786")     # a cluster someone started

Dask is the engine; nothing here schedules, retries or moves data by itself.

``ppnn.run(plan, x, seed, chunks=k)`` splits the images into ``k`` contiguous blocks
(:func:`block_bounds`, whole multiples of the family's ``images_per_run``) and runs each with
its own randomness (:func:`block_seeds`: ``SeedSequence(seed).spawn(k)[i]``), as Dask tasks
with ``client=`` (:func:`run_blocks`, :func:`map_blocks`) or one after the other in this
process without. Both paths merge the blocks the same way (:func:`merge_results`,
:func:`merge_ledgers`: concurrent sessions), so a distributed run gives exactly the
in-process run's logits and ledger for the same ``k``, and a worker that dies mid-run is
replaced with an identical result.

:func:`cluster` starts a LocalCluster of single-threaded workers (:data:`WORKER_ENV`) bound
to 127.0.0.1, over mutual TLS with a temporary certificate; :func:`connect` joins a running
one; :func:`n_workers` and :func:`dashboard_link` describe it.

See also
--------
docs/dask.md : how blocks are seeded and their ledgers merged, and the cluster's security.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Iterator

import numpy as np
import pandas as pd

from .core.blocks import block_bounds, n_workers
from .core.ledger import PHASES, Ledger, Message, OpRecord

__all__ = ["WORKER_ENV", "cluster", "connect", "n_workers", "dashboard_link", "block_bounds",
           "block_seeds", "run_blocks", "merge_ledgers", "merge_results", "map_blocks"]

#: environment of every worker process: one thread each for BLAS, OpenMP and tfhe-rs (rayon)
WORKER_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "RAYON_NUM_THREADS": "1", "MPLBACKEND": "Agg"}

ONE_TIME = ("setup", "keys")  # label components of one-time key material (as in protocols.api)


def _client_type():
    try:
        from dask.distributed import Client
    except ImportError as e:  # pragma: no cover - dask is a dependency
        raise ImportError("distributed runs need dask.distributed (pip install "
                          "'dask[distributed]')") from e
    return Client


@contextlib.contextmanager
def cluster(workers: int = 2, threads_per_worker: int = 1, dashboard: bool = True,
            **kwargs) -> Iterator:
    """A ``LocalCluster`` of ``workers`` single-threaded worker processes and its ``Client``
    (closed on exit), on 127.0.0.1 over TLS with a temporary certificate (module docstring).
    ``dashboard=False`` starts no dashboard (no port is opened); ``kwargs`` go to
    ``LocalCluster`` (e.g. ``security=``, ``dashboard_address=``)."""
    import dask
    from dask.distributed import Client, LocalCluster, Security

    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive int, got {workers!r}")
    env = {**WORKER_ENV, **{k: str(v) for k, v in kwargs.pop("env", {}).items()}}
    kwargs.setdefault("host", "127.0.0.1")
    kwargs.setdefault("security", Security.temporary())
    kwargs.setdefault("dashboard_address", "127.0.0.1:0" if dashboard else None)
    kwargs.setdefault("silence_logs", logging.ERROR)
    # distributed's nannies set MALLOC_TRIM_THRESHOLD_=65536 in every worker, which turns off
    # glibc's adaptive mmap threshold: every large numpy temporary is then mapped and unmapped
    # again (page faults made the Falcon simulator 2.4x slower on a worker than in-process)
    spawn = {k: v for k, v in dask.config.get("distributed.nanny.pre-spawn-environ").items()
             if k != "MALLOC_TRIM_THRESHOLD_"}
    with dask.config.set({"distributed.nanny.pre-spawn-environ": spawn}), \
            LocalCluster(n_workers=workers, threads_per_worker=threads_per_worker,
                         processes=True, env=env, **kwargs) as lc, Client(lc) as client:
        yield client


def connect(scheduler: str, security=None):
    """A ``Client`` of the cluster whose scheduler listens at ``scheduler``
    (``tcp://HOST:PORT``, or ``tls://HOST:PORT`` with the cluster's ``security``, a
    ``distributed.Security``)."""
    if not isinstance(scheduler, str) or "://" not in scheduler:
        raise ValueError(f"scheduler must be an address like tcp://HOST:8786, got "
                         f"{scheduler!r}")
    return _client_type()(scheduler, security=security)


def dashboard_link(client) -> str | None:
    """The address of the cluster's Dask dashboard (task stream, progress), if it has one."""
    return getattr(client, "dashboard_link", None)


def block_seeds(seed, blocks: int) -> list[np.random.SeedSequence]:
    """Independent seeds of the blocks: the children of ``seed`` (an int, a SeedSequence or
    a Generator, whose own seed sequence spawns them)."""
    if isinstance(seed, np.random.Generator):
        ss = seed.bit_generator.seed_seq
    elif isinstance(seed, np.random.SeedSequence):
        ss = seed
    else:
        ss = np.random.SeedSequence(seed)
    return ss.spawn(blocks)


def _run_block(plan, x, seed_seq, backend: str):
    """One block on whatever process runs it (a worker, or this one)."""
    from .protocols.api import family

    rng = np.random.default_rng(seed_seq)
    return family(plan.family).run(plan, x, rng, backend)


def _one_time(label: str) -> bool:
    return bool(set(label.split("/")) & set(ONE_TIME))


def merge_ledgers(ledgers: list[Ledger]) -> Ledger:
    """The ledger of the blocks run side by side as one batched run (see the module
    docstring): rounds aligned, bits and operations added, one-time key material once."""
    if not ledgers:
        raise ValueError("nothing to merge")
    parties = ledgers[0].parties
    for led in ledgers[1:]:
        if tuple(led.parties) != tuple(parties):
            raise ValueError(f"cannot merge ledgers of parties {led.parties} and {parties}")
    out = Ledger(parties)
    for i, led in enumerate(ledgers):
        out.messages.extend(m if isinstance(m, Message) else Message(*m) for m in led.messages
                            if i == 0 or not _one_time(m.label))
        out.ops.extend(o if isinstance(o, OpRecord) else OpRecord(*o) for o in led.ops
                       if i == 0 or not _one_time(o.label))
        for key, d in led.depths.items():
            out.depths[key] = max(out.depths.get(key, 0), d)
        for ph in PHASES:
            out._round_counter[ph] = max(out._round_counter[ph], led._round_counter[ph])
    return out


def merge_results(results: list, wall_s: float | None = None):
    """One :class:`~ppnn.protocols.api.Result` of blocks run side by side."""
    from .protocols.api import Result

    if not results:
        raise ValueError("nothing to merge")
    first = results[0]
    logits = np.concatenate([np.asarray(r.logits) for r in results])
    timings = pd.concat([r.timings.assign(block=i) for i, r in enumerate(results)],
                        ignore_index=True)
    extra = {"blocks": len(results), "block_wall_s": [r.extra.get("wall_s") for r in results],
             "wall_s": wall_s if wall_s is not None else
             sum(r.extra.get("wall_s", 0.0) for r in results)}
    return Result(first.family, first.backend, logits,
                  merge_ledgers([r.ledger for r in results]), timings, dict(first.provenance),
                  extra)


def run_blocks(plan, x, seed=0, backend: str = "sim", chunks: int | None = None,
               client=None, progress: bool = False):
    """``ppnn.run`` split into ``chunks`` blocks, in this process or as Dask tasks of
    ``client`` (default ``chunks``: one block per worker, or 1 without a client);
    ``progress``: a progress bar over the blocks (tqdm)."""
    from .protocols.api import _check_images, family

    fam = family(plan.family)
    x = _check_images(plan, x)
    if chunks is None:
        chunks = n_workers(client) if client is not None else 1
        chunks = max(1, min(chunks, len(x) // fam.spec.images_per_run))
    bounds = block_bounds(len(x), chunks, fam.spec.images_per_run)
    seeds = block_seeds(seed, len(bounds))
    t0 = time.perf_counter()
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(bounds), desc=f"{plan.family} blocks", unit="block")
    if client is None:
        results = []
        for (lo, hi), s in zip(bounds, seeds):
            results.append(_run_block(plan, x[lo:hi], s, backend))
            if bar is not None:
                bar.update(1)
    else:
        [plan_f] = client.scatter([plan], broadcast=True, hash=False)
        futures = [client.submit(_run_block, plan_f, x[lo:hi], s, backend, pure=False,
                                 key=f"ppnn-run-{plan.family}-block{i}-{os.urandom(4).hex()}")
                   for i, ((lo, hi), s) in enumerate(zip(bounds, seeds))]
        if bar is not None:
            from dask.distributed import as_completed

            for _ in as_completed(futures):
                bar.update(1)
        results = client.gather(futures)
    if bar is not None:
        bar.close()
    return merge_results(results, wall_s=time.perf_counter() - t0)


def map_blocks(fn, items: list, client=None, progress: bool = False) -> list:
    """``[fn(item) for item in items]``, as Dask tasks when ``client`` is given (results in
    order; a sweep's points are independent). ``fn`` must be a module-level function."""
    if client is None:
        return [fn(item) for item in items]
    futures = client.map(fn, items, pure=False)
    if progress:
        from dask.distributed import progress as show

        show(futures, notebook=False)
    return client.gather(futures)
