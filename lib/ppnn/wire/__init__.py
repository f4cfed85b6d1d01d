"""Wire mode: the parties as separate OS processes exchanging real bytes over loopback TCP.

``ppnn.run(plan, x, seed, transport="tcp")`` runs a plan of one of :data:`WIRE_FAMILIES`
with its parties as processes connected by TCP on 127.0.0.1, each holding only what its
party holds (SPMD with garbage, the honesty proof); the launcher starts only the roles the
family declares (:mod:`.launch`):

* Falcon (``falcon_sh``, ``falcon_mal``): P0, P1, P2 and the dealer (which also plays the
  data holder and the model owner), :mod:`.falcon`;
* Delphi + Tabula (``delphi_tabula``): the client (holding the image), the server (holding
  the model) and the dealer of the tables and Delphi's masks, :mod:`.delphi`;
* Delphi + garbled ReLU (``delphi_gc``): the client, the server and the dealer of Delphi's
  masks, :mod:`.delphi_gc`. The linear layers run as in :mod:`.delphi` (Delphi's HE
  preprocessing is counted: its ciphertexts cross as zero filler of their booked size and
  the dealer delivers its result, the masks); the garbled circuits are real: the server's
  process garbles with its own fresh labels and mask and sends the garbled material Delphi
  books in preprocessing (the IKNP OT of the labels of the client's input wires -- its
  receiver columns, then the answers --, the tables, the labels of its mask ``r``, the
  decoding bits; class ``offline setup``) and online the labels of its share, each message
  a frame of its booked size; the client evaluates only from those frames. The OT is real
  (:mod:`.ot`: IKNP, its 128 base OTs once per run in the unbooked class ``unbooked base
  OT``): the client gets one label per wire;
* SwaNN (``swann_cs``: client, server, dealer; ``swann_2s``: client, server1, server2,
  dealer), the dealer supplying the 2PC's triples, :mod:`.swann`. On the Paillier simulator
  (``backend="sim"``) the ciphertexts are their plaintexts mod N, so the secret key cannot be
  separated (said precisely there); the honesty proof covers the image, the model, every
  mask, share and ciphertext. With ``backend="real"`` (real Paillier, phe + gmpy2) the
  launcher hands the plan's secret key to the client's process only; the servers' processes
  hold the public key and a stand-in that raises if read, the ciphertexts (and partial
  decryptions) cross as their integers mod N^2 at the booked 2 log2 N bits, and two-server
  the client's process splits the key and sends each server its share in the booked setup
  message;
* GAZELLE or GALA + garbled ReLU (``gazelle_gc``, ``gala_gc``): the client and the server,
  :mod:`.hegc`. The slot simulator's ciphertexts cross as their slot values inside frames
  of the booked size (so the proof shows which values each party used, not
  confidentiality); the garbled circuits are real (the server garbles, the client
  evaluates only from the frame it received); the OT is real (IKNP, as for Delphi + GC).
  With ``backend="real"`` BFV is SEAL's and the keys are separated (:mod:`.hegc_seal`): the
  client's process makes the keys and keeps the secret key, sends the encryption
  parameters and the public key (class ``unbooked keys``), the Galois keys as SEAL's seeded
  serialization in the booked key messages' place (frames of their measured size, about
  0.61 of the booked) and its ciphertexts as their residues at their primes' widths
  (exactly the booked ``2 N log2 q`` bits); the server's process evaluates with the public
  and Galois keys only (:class:`~ppnn.he.bfv.seal.SealPublicBFV`: decrypting raises) and
  returns the serialized ``[y - r]_C``, which only the client decrypts;
* SHE (``she``, TFHE gate-level inference): the client (the image, the keys) and the server
  (the model), :mod:`.she`. On the bit simulator (``backend="sim"``, the default) the
  ciphertexts cross as their plaintext bits inside frames of the booked size (data flow,
  not confidentiality, as for the slot simulator). With ``backend="real"`` (tfhe-rs, small
  networks: several ms per bootstrapped gate) it is **the first true key separation across
  processes in the project**: the client's process generates the keys and keeps the secret
  key, sends the server key (its serialized ~130 MB, in the unbooked class
  ``unbooked keys``: the in-process ledger does not book it) and its ciphertexts as their
  serialized bytes (sizes measured, checked equal to the ledger's booked tfhe-rs size); the
  server's process evaluates every gate with the server key only
  (:class:`~ppnn.he.tfhe.TfheServerBackend`, no encrypt or decrypt) and returns the
  serialized encrypted logits, which only the client can decrypt. The gates are the
  server's: the run's ledger is booked by the server's process, its messages also by the
  client's (which books the logits from the model's public output format).

**Randomness.** Each process draws its own secret randomness, and a party's process gets no
run seed, except where a simulated family keeps one for reproducibility (its result's
``provenance["randomness"]`` says exactly which draws follow it, in which process):
Falcon's dealer draws its truncation stream from it (:mod:`.falcon`), Delphi + Tabula's
dealer its masks and table secrets (:mod:`.delphi`), both because their logits depend on these
draws, and on the slot simulator GAZELLE's and GALA's server its share masks (:mod:`.hegc`).
``seed=None`` draws those from OS entropy too. With ``backend="real"`` no seed reaches any
process: keys come from the crypto library, and masks, shares, triples and labels from the
OS CSPRNG (:class:`~ppnn.core.randomness.SecureRandom`); SwaNN's and Delphi + GC's dealers
draw their material from it on every backend.

Logits, predictions and the ledger equal the in-process run with the same seed;
``result.extra["wire"]`` gives the ledger's bytes and rounds beside the bytes, frames and
causal depth measured on the wire. Every family of :func:`ppnn.families` has a wire mode;
a family without one would refuse ``transport="tcp"`` with a ValueError, and every family but
SHE, SwaNN, GAZELLE and GALA (:data:`REAL_WIRE_FAMILIES`) runs the simulated backend only
(``backend="sim"``).

Modules: :mod:`.framing` (the bytes of one message and their stated framing),
:mod:`.transport` (one process's sockets, timeouts, counters), :mod:`.launch` (starting,
joining and cleaning up the processes), :mod:`.falcon` (Falcon's parties on the wire, and
the ledger-vs-wire summary), :mod:`.delphi` (Delphi + Tabula), :mod:`.delphi_gc` (Delphi +
GC), :mod:`.swann` (SwaNN), :mod:`.hegc` (GAZELLE's and GALA's client and server, and the
garbled circuit split between garbler and evaluator that Delphi + GC uses too),
:mod:`.hegc_seal` (GAZELLE and GALA on real SEAL), :mod:`.she` (SHE's client and server).

Real here: processes, sockets, bytes, rounds, wall time on loopback; shaped links
(:mod:`.links`: namespaces, veth, tbf; latency by netem or held by the receiving
transport); SHE on real tfhe-rs, SwaNN on real Paillier and GAZELLE / GALA on real SEAL
(TenSEAL's ``sealapi``), the secret key in the client's process only.
:mod:`.timing`: measured vs projected time, the table of 00_overview and REPORT.md
(:mod:`ppnn.experiments.wire`; SHE on minionn_mnist only: it cannot compile falcon_lenet).
The OT of the garbled-circuit families (GAZELLE, GALA, Delphi + GC) is real: IKNP with 128
base OTs, :mod:`.ot`. Falcon's parties are lean where it costs: a multiplication and
private compare compute only the process's own share and two components, the dealer's
process computes no party's values (:mod:`.falcon`); the other families and Falcon's
remaining local steps compute every party's values, on garbage where the process holds
nothing. Falcon can also run its offline phase first (``offline_first``: every party reads
the dealer's whole stream, the three parties meet at a barrier, then its online phase is
timed), as the C++ reference's wall time measures it: its parties synchronize, then start
the clock (``benchmarks/README.md``).

**A round costs one latency.** Every wire party sends every message of a round before it
waits for the round's receives, and does not wait for a message nothing reads: Falcon's
parties defer their receives to the round's end (``Wire.expect`` / ``Wire.settle``; the
malicious multiplication check opens ``rho``, ``sigma`` and the pending checks together,
:meth:`~ppnn.protocols.falcon.Falcon.open_many`); the parties of Delphi + Tabula and
Delphi + GC defer the receives of an online round that they read to its end (Delphi + GC:
with the garbled circuit's preprocessing frames, read after the labels of the server's
share); SwaNN's and Delphi's parties defer the filler of the booked offline messages (OT
extension, counted HE), which is taken off the socket before the next message from the same
peer (``Wire.recv`` settles only that peer's deferred receives).
``result.extra["wire"]["extra waits"]`` counts, per process, the waits that began in a
round that already had one (each can cost a second latency, :mod:`.transport`); the tests
assert none for every family.

**Real SEAL across processes** (GAZELLE / GALA, ``backend="real"``, :mod:`.hegc_seal`): a
true key separation the simulators cannot give, as :mod:`.she` does for tfhe-rs. The sizes
that cross are measured and stated beside the booked ones in ``result.extra["seal"]``:
ciphertexts at exactly the booked 356,352 bytes (N = 8192, 174-bit q; SEAL's own zstd
serialization would be about 432 KB); Galois keys about 1.08 MB per rotation serialized
(seeded) against 1.79 MB booked; parameters and public key (about 0.54 MB) unbooked.
"""

from .falcon import REAL_WIRE_FAMILIES, WIRE_FAMILIES
from .framing import HEADER_BYTES, frame_bytes, pack, payload_bytes, unpack
from .transport import WireError, WireTimeout

__all__ = ["HEADER_BYTES", "frame_bytes", "pack", "payload_bytes", "unpack", "WireError",
           "WireTimeout", "run", "WIRE_FAMILIES", "REAL_WIRE_FAMILIES"]


def run(plan, x, seed=0, *, backend: str = "sim", timeout: float | None = None,
        deadline: float | None = 600.0, link=None, offline_first: bool = False):
    """A plan run in wire mode (see :func:`ppnn.wire.falcon.run_plan`). ``backend``: "sim",
    or "real" for :data:`REAL_WIRE_FAMILIES` (SHE on tfhe-rs, SwaNN on real Paillier,
    GAZELLE / GALA on SEAL); ``timeout``: seconds a process waits for a message (None: 30 s,
    and 600 s on "real", where a party waits while another computes on ciphertexts, e.g.
    SHE's client while the server evaluates the whole network); ``link``: None (loopback),
    ``'lan'``, ``'wan'`` or ``'LATENCY_MS,MBPS'`` -- shaped links (:mod:`.links`; plain
    loopback without root, said in ``result.extra["link"]``); ``offline_first`` (Falcon):
    the dealer's material all arrives before the parties' online phase (``online
    seconds`` in the summary)."""
    from ppnn.protocols.api import with_security

    from .falcon import run_plan
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
