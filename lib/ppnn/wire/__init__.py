"""Wire mode: the parties as separate OS processes exchanging real bytes over loopback TCP.

``ppnn.run(plan, x, seed, transport="tcp")`` runs a plan of one of :data:`WIRE_FAMILIES`
with its parties as processes connected by TCP on 127.0.0.1, each holding only what its
party holds (SPMD with garbage, the honesty proof): a Falcon plan (``falcon_sh``,
``falcon_mal``) as P0, P1, P2 and the dealer (which also plays the data holder and the model
owner, :mod:`.falcon`); a Delphi + Tabula plan (``delphi_tabula``) as the client (holding the
image), the server (holding the model) and the dealer of the tables and Delphi's masks
(:mod:`.delphi`; the launcher's fourth process runs no job); a GAZELLE or GALA + garbled
ReLU plan (``gazelle_gc``, ``gala_gc``) as the client and the server (:mod:`.hegc`: the
slot simulator's ciphertexts cross as their slot values inside frames of the booked size,
the garbled circuits are real; P2 and the dealer run no job). Logits, predictions and the
ledger equal the in-process run with the same seed; ``result.extra["wire"]`` gives the
ledger's bytes and rounds beside the bytes, frames and causal depth measured on the wire.
Every other family refuses ``transport="tcp"`` with a ValueError.

Modules: :mod:`.framing` (the bytes of one message and their stated framing),
:mod:`.transport` (one process's sockets, timeouts, counters), :mod:`.launch` (starting,
joining and cleaning up the processes), :mod:`.falcon` (Falcon's parties on the wire, and
the ledger-vs-wire summary), :mod:`.delphi` (Delphi + Tabula's parties on the wire),
:mod:`.hegc` (GAZELLE's and GALA's client and server on the wire).

Real here: processes, sockets, bytes, rounds, wall time on loopback; shaped links
(:mod:`.links`: namespaces, veth, tbf; latency by netem or held by the receiving
transport). :mod:`.timing`: measured vs projected time. Not yet: families other than
Falcon, Delphi + Tabula, GAZELLE and GALA; HE-GC on real SEAL (TenSEAL) across
processes; the table in 00_overview and REPORT.md.
"""

from .falcon import WIRE_FAMILIES
from .framing import HEADER_BYTES, frame_bytes, pack, payload_bytes, unpack
from .transport import WireError, WireTimeout

__all__ = ["HEADER_BYTES", "frame_bytes", "pack", "payload_bytes", "unpack", "WireError",
           "WireTimeout", "run", "WIRE_FAMILIES"]



def run(plan, x, seed=0, *, timeout: float = 30.0, deadline: float | None = 600.0,
        link=None):
    """A plan run in wire mode (see :func:`ppnn.wire.falcon.run_plan`). ``link``: None
    (loopback), ``'lan'``, ``'wan'`` or ``'LATENCY_MS,MBPS'`` -- shaped links
    (:mod:`.links`; plain loopback without root, said in ``result.extra["link"]``)."""
    from .falcon import run_plan
    from .links import shaped

    with shaped(link) as shaping:
        res = run_plan(plan, x, seed, timeout=timeout, deadline=deadline)
    res.extra["link"] = shaping.describe()
    return res
