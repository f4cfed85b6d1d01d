"""GAZELLE / GALA + garbled ReLU in wire mode on real SEAL: the secret key in the client's
process only (``ppnn.run(plan, x, seed, backend="real", transport="tcp")``).

The processes run the same steps as on the slot simulator (:mod:`.hegc`) with SEAL
(TenSEAL's ``sealapi``, :class:`~ppnn.he.bfv.seal.SealBFV`) in its place:

* the client's process builds the context at the plan's parameters, makes the keys from
  SEAL's CSPRNG in memory and keeps the secret key; it sends the encryption parameters and
  the public key (class ``unbooked keys``), and in each booked Galois-key message's place
  SEAL's seeded serialization of fresh Galois keys for exactly those rotations;
* the server's process rebuilds the context from those bytes
  (:class:`~ppnn.he.bfv.seal.SealPublicBFV`: no secret key, decrypting raises) and
  evaluates every kernel, mask and flooding with the public and Galois keys only;
* ciphertexts cross as the residues of their polynomials at their primes' widths
  (:func:`residue_parts`, :func:`from_residues`): exactly the booked ``2 N log2 q`` bits.

``result.extra["seal"]`` lists the booked and the serialized sizes. The client's logits
equal the in-process run's with the same seed: the server computed on the client's
ciphertexts and the client decrypted the server's. Both processes run every HE operation
(SPMD), so only small networks are practical.

Main names: :func:`run_plan`, :func:`hegc_seal_job`, :func:`residue_layout`.

See also
--------
docs/wire.md : GAZELLE and GALA on real SEAL in "Family by family"; docs/security.md : the
    BFV parameters.
"""

from __future__ import annotations

import time

import numpy as np

from ppnn.core import Ledger
from ppnn.he.bfv.base import Ct
from ppnn.he.bfv.seal import SealBFV, SealPublicBFV, seal_bytes
from ppnn.he.bfv.seal_coeffs import ciphertext_from_coeffs, read_coeffs
from ppnn.protocols import hegc as hg

from . import hegc
from .launch import checked_images
from .ot import WireOT
from .transport import Wire, WireError

__all__ = ["run_plan", "hegc_seal_job", "KEY_LIMIT", "residue_layout", "residue_parts",
           "from_residues"]

#: the largest serialized parameters or public key the server's process accepts (they are
#: about 0.54 MB together at N = 8192); a Galois key message is accepted up to its booked size
KEY_LIMIT = 1 << 24


class _SealParty(hegc._Party):
    """:class:`ppnn.wire.hegc._Party` on real SEAL: ciphertexts cross as their residues,
    Galois keys as SEAL's serialization of real keys (one booked message each)."""

    def __init__(self, wire: Wire, me: str, broken: str | None):
        super().__init__(wire, me, broken)
        self.keys: list[dict] = []  # per Galois key message: rotations, booked, serialized

    def galois_keys(self, he, steps, led: Ledger) -> None:
        client, server = hg.PARTIES
        new = sorted({int(s) % he.n for s in steps} - {0} - set(he.rotation_steps))
        if not new:
            return
        msg = led.send(client, server, len(new) * he.galois_key_bits,
                       f"Galois keys for {len(new)} rotations")
        step = f"{msg.label}::{msg.what}"
        if self.me == client:
            made = he.keygen(new)  # the client's own keys (rotating its garbage)
            if made != new:  # pragma: no cover - keygen's rule is the one above
                raise WireError(f"'{step}': keygen made {made}, expected {new}")
            blob = he.galois_key_bytes(new)  # fresh keys for the server, serialized
            self.wire.send(hegc.ROLE_OF[server], [(np.frombuffer(blob, np.uint8), 8)], step,
                           "offline setup")
        else:
            blob = self.wire.recv_bytes(hegc.ROLE_OF[client], step, "offline setup",
                                        msg.bits // 8)  # seeded: below the booked size
            he.install_galois_keys(new, blob)
        self.keys.append({"rotations": len(new), "booked bytes": msg.bits // 8,
                          "serialized bytes": len(blob)})

    def decrypt(self, he, ct) -> np.ndarray:
        """The client decrypts; the server's process cannot (no secret key): its copy of the
        client's share is garbage, the decryption booked as the in-process run books it."""
        if self.me == "client":
            return he.decrypt(ct)
        he._count("Dec", ct.size, he.client)
        return self.wire.garbage.integers(0, he.p, ct.shape + (he.n,), dtype=np.int64)

    def ciphertexts(self, msg, ct, he):
        """``ct`` as the receiver has it: the residues of each ciphertext's two polynomials,
        prime by prime at the prime's bit width (exactly the booked ``2 N log2 q`` bits)."""
        layout = residue_layout(he, ct.size)
        if self.me == msg.sender:
            self.cross(msg, residue_parts(he, ct), layout)
            return ct
        return from_residues(he, self.cross(msg, None, layout), ct.shape, ct.noise)


def residue_layout(he, count: int) -> list[tuple[tuple[int, ...], np.dtype, int]]:
    """The frame of ``count`` SEAL ciphertexts (two polynomials each): per prime of ``q`` one
    part ``(count, 2, N)`` at the prime's bit width -- ``count x 2 N log2 q`` bits."""
    L, N = len(he._primes), he.poly_degree
    return [((count, 2, N), np.dtype(np.uint64), b) for b in he.coeff_bits[:L]]


def residue_parts(he, ct: Ct) -> list[tuple[np.ndarray, int]]:
    """The sender's parts of :func:`residue_layout`: every ciphertext of ``ct`` (coefficient
    form) read as its residues ``(2, L, N)``."""
    L, N = len(he._primes), he.poly_degree
    data = np.broadcast_to(he._coeff_data(ct), ct.shape).reshape(-1)
    if any(c.size() != 2 for c in data):  # pragma: no cover - the protocols never relinearize
        raise WireError("only ciphertexts of two polynomials cross")
    res = np.stack([read_coeffs(c, (2, L, N)) for c in data])  # (cts, 2, L, N)
    return [(res[:, :, i], b) for i, b in enumerate(he.coeff_bits[:L])]


def from_residues(he, parts: list[np.ndarray], shape, noise) -> Ct:
    """The receiver's ciphertexts of ``shape`` rebuilt from the parts it received (SEAL's
    ``load`` validates every residue against its prime); ``noise``: the receiver's model."""
    got = np.stack(parts, axis=2)  # (cts, 2, L, N)
    data = np.empty(got.shape[0], dtype=object)
    for i in range(got.shape[0]):
        data[i] = ciphertext_from_coeffs(he.context, he._parms_id, got[i])
    return Ct(he, shape, data.reshape(shape), noise, ntt=False)


def _client_backend(wire: Wire, plan, info: dict) -> SealBFV:
    """The client's SEAL context and keys (SEAL's CSPRNG); sends the public parts."""
    he_args, bits = plan.impl["he"], plan.impl["session"]["flood_bits"]
    t0 = time.perf_counter()
    he = SealBFV(poly_degree=he_args["poly_degree"], n=he_args["n"], flood_bits=bits)
    info["keygen_s"] = time.perf_counter() - t0
    parms, pk = he.public_parameters(), he.public_key_bytes()
    for what, blob in (("encryption parameters", parms), ("public key", pk)):
        wire.send(hegc.ROLE_OF["server"], [(np.frombuffer(blob, np.uint8), 8)], what,
                  "unbooked keys")
    info["parameters_bytes"], info["public_key_bytes"] = len(parms), len(pk)
    fresh = he.encrypt(np.zeros(he.n, np.int64))  # not booked (no ledger), never sent
    info["seal_ciphertext_bytes"] = len(seal_bytes(fresh.data[()]))
    info["client_holds_secret_key"] = bool(he.holds_secret_key)
    return he


def _server_backend(wire: Wire, plan, info: dict) -> SealPublicBFV:
    """The server's backend from the client's public parameters and public key."""
    he_args, bits = plan.impl["he"], plan.impl["session"]["flood_bits"]
    peer = hegc.ROLE_OF["client"]
    parms = wire.recv_bytes(peer, "encryption parameters", "unbooked keys", KEY_LIMIT)
    pk = wire.recv_bytes(peer, "public key", "unbooked keys", KEY_LIMIT)
    t0 = time.perf_counter()
    he = SealPublicBFV(parms, pk, n=he_args["n"], flood_bits=bits)
    info["server_setup_s"] = time.perf_counter() - t0
    info["server_backend"] = type(he).__name__
    info["server_holds_secret_key"] = bool(he.holds_secret_key)
    return he


def hegc_seal_job(wire: Wire, task: dict) -> dict:
    """What each process of a GAZELLE / GALA run on real SEAL does (module-level for
    pickling)."""
    from ppnn.protocols.api import family

    if wire.role not in hegc._PARTY_OF:
        return {"output": None, "ledger": None}
    me, g = hegc._PARTY_OF[wire.role], wire.garbage
    plan = task["plan"]
    fam = family(plan.family)
    info: dict = {}
    if me == "server":
        he = _server_backend(wire, plan, info)
        x = g.uniform(0.0, 1.0, task["x_shape"])
        rng = hegc._fresh(g)  # unused on SEAL: the masks come from the OS CSPRNG (no seed)
    else:
        he = _client_backend(wire, plan, info)
        x, rng = task["x"], hegc._fresh(g)  # the server's masks: garbage in the client's
    if he.p != plan.impl["plan"].p or he.ciphertext_bits != fam.he_backend(plan).ciphertext_bits:
        raise WireError("SEAL's parameters differ from the plan's (plaintext prime or "
                        "ciphertext size)")
    party = _SealParty(wire, me, task.get("broken"))
    party.ot = WireOT(wire, me)
    party.ot.start()  # the server's base-OT message leaves first
    ledger, logits = Ledger(hg.PARTIES), []
    secs = {"garble_s": 0.0, "evaluate_s": 0.0, "ot_s": 0.0}
    t0 = time.perf_counter()
    for i in range(len(x)):
        led = Ledger(hg.PARTIES)
        z, t = hegc._inference(party, plan.impl["plan"], x[i], he, fam.method, rng, led)
        ledger.merge(led)
        logits.append(z[0])
        secs = {k: secs[k] + t[k] for k in secs}
    info[f"{me}_inference_s"] = time.perf_counter() - t0
    if me == "server":  # the server's backend cannot decrypt: try it on its own ciphertext
        try:
            he.decrypt(he.encrypt(np.zeros(he.n, np.int64)))
            info["server_decrypt"] = "decrypted"
        except PermissionError as e:
            info["server_decrypt"] = f"refused: {e}"
    return {"output": np.stack(logits) if me == "client" else None, "ledger": ledger,
            "gc": secs, "info": info, "keys": party.keys}


def run_plan(plan, x, seed=0, *, timeout: float | None = None,
             deadline: float | None = 600.0, broken: str | None = None):
    """``ppnn.run(plan, x, seed, backend="real", transport="tcp")`` for ``gazelle_gc`` /
    ``gala_gc`` (:func:`ppnn.wire.dispatch.run_plan` with ``backend="real"``): a
    :class:`~ppnn.protocols.api.Result` whose ``extra["wire"]`` is
    :func:`~ppnn.wire.summary.wire_summary` and ``extra["seal"]`` the key separation's facts
    (measured serialized sizes beside the booked ones, the server's backend, its refused
    decryption). ``timeout``: seconds a process waits for a message (None: 600 s: the client
    waits while the server evaluates a layer); ``broken``: one of
    :data:`ppnn.wire.hegc.BROKEN`."""
    import pandas as pd

    from ppnn.protocols.api import Result

    from .summary import wire_summary

    x = checked_images(plan, x, hegc.HEGC_FAMILIES)
    if broken is not None and broken not in hegc.BROKEN:
        raise ValueError(f"broken must be None or one of {hegc.BROKEN}, got {broken!r}")
    if not plan.impl["session"]["flood_bits"]:  # pragma: no cover - wire families flood
        raise ValueError(f"{plan.family}: real SEAL across processes runs the flooded "
                         "families only")
    timeout = 600.0 if timeout is None else timeout
    # no seed crosses: the server's masks come from the OS CSPRNG in its process
    launched, client, server, led = hegc.launch_pair(hegc_seal_job, plan, x, None, broken,
                                                     timeout, deadline)
    if server["keys"] != client["keys"]:
        raise WireError("the processes saw different Galois key messages")
    summary = wire_summary(led, launched)
    seconds = max(summary["party seconds"][r] for r in ("P0", "P1"))
    timings = pd.DataFrame([("online", "garbling", server["gc"]["garble_s"]),
                            ("online", "evaluation", client["gc"]["evaluate_s"]),
                            ("online", "oblivious transfer (both parties)",
                             server["gc"]["ot_s"] + client["gc"]["ot_s"]),
                            ("online", "input, all layers, output", seconds)],
                           columns=["phase", "layer", "seconds"])
    he = hg.HE_PARAMS["secure"]
    info = {**client["info"], **server["info"], "galois keys": client["keys"],
            "ciphertext_bytes": 2 * he["poly_degree"] * he["q_bits"] // 8,
            "galois_key_bytes_booked": sum(k["booked bytes"] for k in client["keys"]),
            "galois_key_bytes_serialized": sum(k["serialized bytes"] for k in client["keys"])}
    prov = {"communication": "measured on a wire: client and server as processes over "
            "loopback TCP (two processes); ledger booked by both processes (equal); real "
            "SEAL ciphertexts: their residues packed at their primes' widths (exactly the "
            "booked size); Galois keys: SEAL's seeded serialization, frames of their measured "
            "size in place of the booked ones; encryption parameters and public key: "
            "serialized, in the unbooked class 'unbooked keys' (no secret key leaves the "
            "client's process); garbled circuits and their OT (IKNP, 128 base OTs once per "
            "run in class 'unbooked base OT') as with backend='sim' (ppnn.wire.hegc)",
            "compute": "measured on SEAL: the server's process evaluates with the public and "
            "Galois keys only (SealPublicBFV: no secret key, decryption refused); the "
            "client's encrypts, decrypts and runs the same HE steps on garbage weights "
            "(SPMD); the slower process's time",
            "randomness": "keys and encryptions: SEAL's own CSPRNG in the client's process; "
            "the server's share masks r, flooding noise, garbled-circuit labels and output "
            "masks: the OS CSPRNG in the server's process; the run seed is unused and reaches "
            "no process"}
    return Result(plan.family, "real", np.asarray(client["output"]), led, timings, prov,
                  {"wall_s": launched.seconds, "wire": summary, "transport": "tcp",
                   "seal": info})
