"""One linear layer of the HE-GC framework, told through its two parties (GALA §II, Fig. 5).

1. **client** packs its input ``x`` into slot vectors, encrypts them with its key and sends
   ``[x]_C`` (it has sent, once and offline, the Galois keys for the rotations the server needs).
   Between layers of a network nobody holds ``x``: the client and server hold additive shares
   ``x_C + x_S = x mod p`` (the garbled activation's output); the client encrypts and sends its
   share ``[x_C]_C`` and the server adds its own homomorphically, ``[x]_C = [x_C]_C + x_S``
   (one AddPlain per input ciphertext; GAZELLE §3, GALA §II);
2. **server** computes ``[W x]`` (or a convolution) homomorphically -- the kernel;
3. **server** draws a random ``r``, sends ``[y - r]_C`` back (share generation: its own share is
   ``r``, the client's is ``y - r``; the two shares feed the garbled-circuit ReLU); when the
   backend floods (``he.flood_bits``), the ciphertext is first sanitized (fresh ``Enc(0)`` plus
   uniform noise, :meth:`~ppnn.he.bfv.base.PackedBackend.flood`): otherwise its noise and its
   ``c1`` are functions of the weights the client, who holds the key, can read;
4. **client** decrypts. Both parties then apply the kernel's plaintext read-out to their share
   (for GALA this is the share-RaS: the rotate-and-sum moved out of HE into plaintext).

Randomness: the share mask ``r`` hides ``y`` from the key-holding client. On real BFV
(``he.real``, SEAL) it comes from the OS CSPRNG (:func:`ppnn.core.randomness.mask_source`); on
the slot simulator, which hides nothing, from the simulation seed ``rng`` (reproducible runs).

Every cross-party value goes through the ledger (ciphertexts at their wire size); every HE
operation is counted by the backend on the same ledger. A ledger that records values keeps, on
real BFV (``he.real``), each ciphertext's and each new Galois key's coefficient bytes (size and
SHA-256 digest, :mod:`ppnn.core.transcript`); the slot simulator builds no ciphertext -- its
"ciphertexts" are the plaintext slots, which the receiver could not read -- so there they are
recorded ``SIZE_ONLY``. The server also holds its mask ``r`` (the slots it subtracts). The
kernels (:mod:`.matvec`, :mod:`.conv`, :mod:`ppnn.protocols.gazelle`) implement
:class:`LinearKernel`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ppnn.core import Ledger
from ppnn.core.randomness import mask_source
from ppnn.core.transcript import SIZE_ONLY
from ppnn.he.bfv.base import Ct, PackedBackend

__all__ = ["LinearKernel", "LinearResult", "run_linear", "centered"]


def centered(v: np.ndarray, p: int) -> np.ndarray:
    """Residues mod p -> signed integers in (-p/2, p/2]."""
    v = np.mod(np.asarray(v, dtype=np.int64), p)
    return np.where(v > p // 2, v - p, v)


class LinearKernel:
    """A packed-HE linear kernel: client packing, server evaluation, plaintext read-out."""

    name = "kernel"
    reference = ""

    def rotation_steps(self) -> list[int]:
        raise NotImplementedError

    def pack_input(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def evaluate(self, he: PackedBackend, ct_x: Ct, weights) -> Ct:
        raise NotImplementedError

    def read_out(self, slots: np.ndarray, p: int, ledger: Ledger | None, party: str) -> np.ndarray:
        raise NotImplementedError

    def output_bound(self, weights, x_bound: int) -> int:
        """Largest possible ``|output|`` for inputs with ``|x| <= x_bound``."""
        raise NotImplementedError

    def plaintext(self, weights, x) -> np.ndarray:
        """The plaintext oracle (exact integers)."""
        raise NotImplementedError


@dataclass
class LinearResult:
    """Additive shares mod p of the layer output held by the two parties."""

    client_share: np.ndarray
    server_share: np.ndarray
    p: int
    ledger: Ledger
    out: Ct | None = field(default=None, repr=False)
    returned: Ct | None = field(default=None, repr=False)  # [y - r]_C as the client got it

    def reveal(self) -> np.ndarray:
        """Reconstruct (simulator only, no booking) as signed integers."""
        return centered(self.client_share + self.server_share, self.p)


def _coeff_bytes(obj) -> bytes:
    """The coefficient words of one SEAL ciphertext (``tenseal.sealapi``), as bytes."""
    from ppnn.he.bfv.seal_coeffs import read_coeffs

    return read_coeffs(obj, (obj.dyn_array().size(),)).tobytes()


def _wire_value(he: PackedBackend, ct: Ct):
    """What a ciphertext message carries, for a recorded transcript: on real BFV the
    ciphertexts' coefficient bytes (one entry per ciphertext: size + digest); on the slot
    simulator ``SIZE_ONLY`` (it builds no ciphertext; its slots are plaintext)."""
    if not he.real:
        return SIZE_ONLY
    objs = np.broadcast_to(np.asarray(ct.data, dtype=object), ct.shape).ravel()
    return [_coeff_bytes(c) for c in objs]


def _galois_key_value(he: PackedBackend, steps: list[int]):
    """The Galois keys for ``steps``, for a recorded transcript: their coefficient bytes on a
    backend that built real keys (SEAL), else ``SIZE_ONLY``."""
    keys, elt = he._key_state(), getattr(he, "galois_elt", None)
    if not he.real or keys is None or elt is None:
        return SIZE_ONLY
    return [_coeff_bytes(pk.data()) for s in steps for pk in keys.key(elt(s))]


def check_plain_modulus(kernel: LinearKernel, weights, x_bound: int, p: int) -> None:
    bound = int(kernel.output_bound(weights, int(x_bound)))
    if 2 * bound >= p:
        raise ValueError(
            f"plaintext modulus p={p} is too small for the values: |output| can reach {bound} "
            f"(|x| <= {x_bound}), which needs p > {2 * bound}; use a wider plain modulus or "
            "smaller fixed-point scales")


def run_linear(kernel: LinearKernel, he: PackedBackend, weights, x: np.ndarray,
               rng: np.random.Generator, ledger: Ledger | None = None, label: str | None = None,
               x_bound: int | None = None, x_server: np.ndarray | None = None) -> LinearResult:
    """Run one linear layer between ``client`` and ``server`` on backend ``he``.

    ``x_bound`` is the public bound on ``|x|`` the client announces (the fixed-point range);
    it defaults to ``max|x|``. A plaintext modulus too small for ``|W x|`` raises ``ValueError``.

    ``x_server`` (residues mod ``p``, the shape of ``x``): the layer input is secret-shared,
    ``x`` is the client's share and ``x_server`` the server's. The client encrypts its share;
    the server adds ``x_server`` under encryption (AddPlain) before the kernel. The bound is
    then checked by the simulator on the reconstructed input (neither party can: the previous
    layer's public clip guarantees it).
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator (seed it explicitly)")
    x = np.asarray(x)
    if x.dtype.kind not in "iu":
        raise TypeError(f"x must hold integers (fixed-point encoded), got {x.dtype}")
    if x_server is not None:
        x_server = np.asarray(x_server)
        if x_server.dtype.kind not in "iu" or x_server.shape != x.shape:
            raise ValueError(f"x_server must be integer shares of shape {x.shape}, got "
                             f"{x_server.dtype} {x_server.shape}")
        for name, s in (("x", x), ("x_server", x_server)):
            if s.size and (int(s.min()) < 0 or int(s.max()) >= he.p):
                raise ValueError(f"{name} must be a share: residues in [0, p = {he.p})")
        x, x_server = x.astype(np.int64), x_server.astype(np.int64)
    x_val = x if x_server is None else centered(x + x_server, he.p)  # simulator's view
    xb = int(np.abs(x_val).max()) if x_bound is None else int(x_bound)
    if x_val.size and int(np.abs(x_val).max()) > xb:
        raise ValueError(f"x exceeds its announced bound x_bound={xb}")
    check_plain_modulus(kernel, weights, xb, he.p)
    ledger = ledger if ledger is not None else Ledger([he.client, he.server])
    with he.recording(ledger), ledger.label(label or kernel.name):
        with ledger.offline(), ledger.label("keys"):
            new = he.keygen(kernel.rotation_steps())
            if new:
                ledger.send(he.client, he.server, len(new) * he.galois_key_bits,
                            f"Galois keys for {len(new)} rotations",
                            value=_galois_key_value(he, new) if ledger.records_values else None)
        # 1. client: pack, encrypt, send [x]_C -- or, between layers, its share [x_C]_C
        slots = kernel.pack_input(x)
        ct_x = he.encrypt(slots)
        ledger.send(he.client, he.server, ct_x.size * he.ciphertext_bits,
                    "[x]_C" if x_server is None else "[x_C]_C (client's share)",
                    value=_wire_value(he, ct_x) if ledger.records_values else None)
        if x_server is not None:  # server: [x]_C = [x_C]_C + x_S (packing is linear)
            ct_x = he.add_plain(ct_x, he.encode(kernel.pack_input(x_server)))
        # 2. server: the HE kernel
        with ledger.label("eval"):
            out = kernel.evaluate(he, ct_x, weights)
        # 3. server: share generation, send [y - r]_C (on real BFV r hides y from the
        #    key-holding client: drawn from the OS CSPRNG, not from the simulation seed)
        r = mask_source(rng, he.real).integers(0, he.p, size=out.shape + (he.n,),
                                               dtype=np.int64)
        ledger.hold(he.server, "r (its mask, slots)", r)
        masked = he.sub_plain(out, he.encode(r))
        if he.flood_bits:  # circuit privacy: the noise must not depend on the weights
            with ledger.label("flood"):
                masked = he.flood(masked)
        ledger.send(he.server, he.client, masked.size * he.ciphertext_bits, "[y - r]_C",
                    value=_wire_value(he, masked) if ledger.records_values else None)
        # 4. client: decrypt; both parties read their share out of the slots
        client_slots = he.decrypt(masked)
        client_share = kernel.read_out(client_slots, he.p, ledger, he.client)
        server_share = kernel.read_out(r, he.p, ledger, he.server)
    return LinearResult(client_share, server_share, he.p, ledger, out, masked)
