"""Wire mode: the parties as separate OS processes exchanging real bytes over TCP.

:func:`run` (``ppnn.run(plan, x, seed, transport="tcp")``) runs a plan of one of
:data:`WIRE_FAMILIES` with one process per role the family declares, on 127.0.0.1 (or on
shaped links), each holding only what its party holds and garbage in place of the rest
(SPMD with garbage). Logits, predictions and the ledger equal the in-process run with the
same seed; ``result.extra["wire"]`` gives the bytes, frames and causal depth measured on the
wire beside the ledger's. :data:`REAL_WIRE_FAMILIES` (SHE on tfhe-rs, SwaNN on Paillier,
GAZELLE / GALA on SEAL) also run with ``backend="real"``, the secret key in the client's
process only; the others run the simulated backend.

Modules
-------
:mod:`.framing`, :mod:`.transport`   one message's bytes; a process's sockets and counters
:mod:`.launch`, :mod:`.codec`        starting and joining the processes; what they return
:mod:`.links`, :mod:`.timing`        shaped links; measured vs projected time
:mod:`.dispatch`, :mod:`.summary`   which module runs a family; the ledger-vs-wire summary
:mod:`.falcon`                       Falcon's P0, P1, P2 and dealer
:mod:`.delphi`, :mod:`.delphi_gc`    Delphi + Tabula; Delphi + garbled ReLU
:mod:`.swann`                        SwaNN client-server and two-server
:mod:`.hegc`, :mod:`.hegc_seal`      GAZELLE / GALA on the slot simulator; on real SEAL
:mod:`.she`                          SHE's client and server
:mod:`.ot`, :mod:`.split`            the garbled circuits' OT; the wire path's CPU

See also
--------
docs/wire.md : processes and roles, what crosses, the honesty argument, what is real, and
    what each family's processes hold.
docs/time-model.md : shaped links and the calibrated time model.
"""

from .dispatch import REAL_WIRE_FAMILIES, WIRE_FAMILIES
from .framing import HEADER_BYTES, frame_bytes, pack, payload_bytes, unpack
from .transport import WireError, WireTimeout

__all__ = ["HEADER_BYTES", "frame_bytes", "pack", "payload_bytes", "unpack", "WireError",
           "WireTimeout", "run", "WIRE_FAMILIES", "REAL_WIRE_FAMILIES"]


def run(plan, x, seed=0, *, backend: str = "sim", timeout: float | None = None,
        deadline: float | None = 600.0, link=None, offline_first: bool = False):
    """A plan run in wire mode (see :func:`ppnn.wire.dispatch.run_plan`). ``backend``: "sim",
    or "real" for :data:`REAL_WIRE_FAMILIES` (SHE on tfhe-rs, SwaNN on real Paillier,
    GAZELLE / GALA on SEAL); ``timeout``: seconds a process waits for a message (None: 30 s,
    and 600 s on "real", where a party waits while another computes on ciphertexts, e.g.
    SHE's client while the server evaluates the whole network); ``link``: None (loopback),
    ``'lan'``, ``'wan'`` or ``'LATENCY_MS,MBPS'`` -- shaped links (:mod:`.links`; plain
    loopback without root, said in ``result.extra["link"]``); ``offline_first`` (Falcon):
    the dealer's material all arrives before the parties' online phase (``online
    seconds`` in the summary)."""
    from ppnn.protocols.api import with_security

    from .dispatch import run_plan
    from .links import shaped

    if plan.family in ("gazelle_gc", "gala_gc") and plan.impl["plan"].residual:
        raise ValueError(f"wire mode runs {plan.family} on chains of layers; "
                         f"{plan.net.name} has residual blocks or mean pools: run it in "
                         "process (transport='inproc')")
    with shaped(link) as shaping:
        res = run_plan(plan, x, seed, backend=backend, timeout=timeout, deadline=deadline,
                       offline_first=offline_first)
    res.extra["link"] = shaping.describe()
    res.provenance = with_security(plan, res.provenance)
    return res
