"""Which module runs a plan in wire mode: the wire families and one entry for all of them.

:data:`WIRE_FAMILIES` run with ``transport="tcp"``, :data:`REAL_WIRE_FAMILIES` also with
``backend="real"`` across processes. :func:`run_plan` checks a plan and its options against
them and hands it to its family's wire module (:mod:`.falcon`, :mod:`.delphi`,
:mod:`.delphi_gc`, :mod:`.swann`, :mod:`.hegc`, :mod:`.she`); those modules share
:mod:`.launch`, :mod:`.transport` and :mod:`.summary` and never import each other's runs.
(:mod:`.hegc_seal` for GAZELLE / GALA on real SEAL). :func:`ppnn.wire.run` adds the shaped
links around it.
"""

from __future__ import annotations

__all__ = ["WIRE_FAMILIES", "REAL_WIRE_FAMILIES", "run_plan"]

#: the families that run with ``transport="tcp"`` (Delphi + Tabula: :mod:`.delphi`; Delphi +
#: GC: :mod:`.delphi_gc`; SwaNN: :mod:`.swann`; GAZELLE / GALA + GC: :mod:`.hegc`; SHE:
#: :mod:`.she`)
WIRE_FAMILIES = ("falcon_sh", "falcon_mal", "delphi_tabula", "delphi_gc", "swann_cs",
                 "swann_2s", "gazelle_gc", "gala_gc", "she")
#: the wire families that also run ``backend="real"`` across processes, the secret key in the
#: client's process only (SHE on tfhe-rs; SwaNN on Paillier; GAZELLE / GALA on SEAL); the
#: others run the simulated backend only
REAL_WIRE_FAMILIES = ("she", "swann_cs", "swann_2s", "gazelle_gc", "gala_gc")

def run_plan(plan, x, seed=0, *, backend: str = "sim", timeout: float | None = 30.0,
             deadline: float | None = 600.0, offline_first: bool = False):
    """``ppnn.run(plan, x, seed, transport="tcp")`` for every wire family: returns a
    :class:`~ppnn.protocols.api.Result` whose ``extra["wire"]`` is
    :func:`~ppnn.wire.summary.wire_summary`.
    ``backend``: "sim", or "real" for :data:`REAL_WIRE_FAMILIES`; ``timeout``: seconds a
    process waits for a message (None: the family's default, 30 s; "real": 600 s);
    ``offline_first`` (Falcon only): the dealer's material all arrives before the parties'
    online phase, whose time the summary gives as ``online seconds``."""
    from ppnn.protocols.api import Plan

    if not isinstance(plan, Plan):
        raise TypeError(f"plan must be a Plan from ppnn.compile, got {type(plan).__name__}")
    if plan.family not in WIRE_FAMILIES:
        raise ValueError(f"transport='tcp' is implemented for {', '.join(WIRE_FAMILIES)}; "
                         f"got a plan of {plan.family!r}")
    if backend != "sim" and plan.family not in REAL_WIRE_FAMILIES:
        raise ValueError(f"wire mode runs {plan.family} on the simulated backend only "
                         f"(backend='sim'); backend={backend!r} crosses processes for "
                         f"{', '.join(REAL_WIRE_FAMILIES)} only")
    if offline_first and plan.family not in ("falcon_sh", "falcon_mal"):
        raise ValueError(f"offline_first is implemented for falcon_sh and falcon_mal; got a "
                         f"plan of {plan.family!r}")
    from . import delphi, delphi_gc, falcon, hegc, hegc_seal, she, swann

    if plan.family in she.SHE_FAMILIES:
        return she.run_plan(plan, x, seed, backend=backend, timeout=timeout, deadline=deadline)
    if plan.family in swann.SWANN_FAMILIES:
        return swann.run_plan(plan, x, seed, backend=backend, timeout=timeout,
                              deadline=deadline)
    if plan.family in hegc.HEGC_FAMILIES:
        if backend == "real":
            return hegc_seal.run_plan(plan, x, seed, timeout=timeout, deadline=deadline)
        return hegc.run_plan(plan, x, seed, backend=backend, timeout=timeout, deadline=deadline)
    if timeout is None:
        timeout = 30.0
    for runner, families in ((delphi.run_plan, delphi.DELPHI_FAMILIES),
                             (delphi_gc.run_plan, delphi_gc.DELPHI_GC_FAMILIES)):
        if plan.family in families:
            return runner(plan, x, seed, timeout=timeout, deadline=deadline)
    return falcon.run_plan(plan, x, seed, timeout=timeout, deadline=deadline,
                           offline_first=offline_first)
