"""Raw coefficient access to SEAL ciphertexts through ``tenseal.sealapi``.

``tenseal.sealapi`` exposes no pointer to a ciphertext's coefficient buffer (``Ciphertext.data(i)``
returns one coefficient, not an address) and ``Ciphertext.save`` always compresses with zstd.
Two accessors remain, and this module wraps them:

* **write** -- a ciphertext is *built* from a numpy array: we write SEAL's own uncompressed
  serialization (a ``SEALHeader`` with compression ``none`` followed by the members of
  ``seal::Ciphertext``: parms_id, NTT flag, size, N, #primes, scale, correction factor and the
  ``DynArray`` of ``size x #primes x N`` residues) and ``Ciphertext.load`` it, which validates
  every field and every residue against the context. One write per ciphertext, no loop per
  coefficient. The binding loads only from a path, and what is written can be secret (the
  server's flooding noise): it goes to an anonymous in-memory file (``memfd_create``, read
  back through ``/proc/self/fd``), which never reaches a disk. Where the OS has no memfd, the
  bytes go to a file in a private (0700) temporary directory that is unlinked as soon as SEAL
  has read it.
* **read** -- ``Ciphertext.dyn_array()`` is the ciphertext's own coefficient array; numpy reads
  it in one ``np.fromiter`` call (a C loop over the binding's element accessor). Only the
  client's secret-key diagnostics read coefficients; the server's flooding only writes.

Layouts are SEAL 4.x's (``Ciphertext::save_members``); :func:`ciphertext_from_coeffs` checks
its result against the requested array, so a layout change fails loudly, never silently.
"""

from __future__ import annotations

import contextlib
import os
import struct
import tempfile
from collections.abc import Iterator

import numpy as np
import tenseal.sealapi as sealapi

__all__ = ["read_coeffs", "ciphertext_from_coeffs", "secret_key_ntt", "crt_combine",
           "reduce_mod_primes"]

_HEADER: bytes | None = None


@contextlib.contextmanager
def _memory_path(blob: bytes) -> Iterator[str]:
    """A path that reads back ``blob`` for the duration of the block, held in memory only.

    Linux: an anonymous ``memfd`` (RAM, no name in any file system). Elsewhere: a file in a
    fresh 0700 directory, removed with the directory when the block ends."""
    memfd = getattr(os, "memfd_create", None)
    fd = -1
    if memfd is not None and os.path.isdir("/proc/self/fd"):
        try:
            fd = memfd("ppnn-seal", getattr(os, "MFD_CLOEXEC", 0))
        except OSError:
            fd = -1
    if fd >= 0:
        try:
            view = memoryview(blob)
            while view:
                view = view[os.write(fd, view):]
            yield f"/proc/self/fd/{fd}"
        finally:
            os.close(fd)
        return
    with tempfile.TemporaryDirectory(prefix="ppnn-seal-") as private:  # mode 0700
        path = os.path.join(private, "object.seal")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        yield path


def _header(total_bytes: int) -> bytes:
    """A SEALHeader (16 bytes) for an uncompressed object of ``total_bytes`` (header incl.)."""
    global _HEADER
    if _HEADER is None:  # magic, header size and SEAL version, taken from a real save
        with _memory_path(b"") as path:  # an empty public plaintext: nothing secret
            sealapi.Plaintext().save(path)
            with open(path, "rb") as f:
                _HEADER = f.read(16)
    return _HEADER[:5] + b"\x00" + _HEADER[6:8] + struct.pack("<Q", int(total_bytes))


def read_coeffs(obj, shape) -> np.ndarray:
    """The coefficient array of a SEAL ``Ciphertext`` or ``Plaintext`` as uint64 ``shape``."""
    da = obj.dyn_array()
    count = int(np.prod(shape))
    if da.size() < count:
        raise ValueError(f"SEAL object holds {da.size()} coefficients, asked for {shape}")
    return np.fromiter(da, dtype=np.uint64, count=count).reshape(shape)


def ciphertext_from_coeffs(context, parms_id, data: np.ndarray, ntt: bool = False):
    """A ``sealapi.Ciphertext`` whose polynomials are ``data`` (uint64, ``(size, L, N)``:
    residues mod each of the ``L`` primes of ``parms_id``'s level), in NTT form if ``ntt``."""
    data = np.ascontiguousarray(data, dtype=np.uint64)
    if data.ndim != 3:
        raise ValueError(f"data must have shape (size, primes, N), got {data.shape}")
    size, L, N = data.shape
    inner = struct.pack("<Q", data.size) + data.tobytes()
    inner = _header(16 + len(inner)) + inner
    members = (struct.pack("<4Q", *parms_id) + bytes([1 if ntt else 0])
               + struct.pack("<3Q", size, N, L) + struct.pack("<d", 1.0)
               + struct.pack("<Q", 1) + inner)
    blob = _header(16 + len(members)) + members
    ct = sealapi.Ciphertext()
    with _memory_path(blob) as path:
        ct.load(context, path)  # SEAL validates metadata and every residue (< its prime)
    if (ct.size(), ct.coeff_modulus_size(), ct.poly_modulus_degree(), ct.is_ntt_form()) != \
            (size, L, N, bool(ntt)) or ct.dyn_array()[data.size - 1] != int(data.flat[-1]):
        raise RuntimeError("SEAL ciphertext layout differs from the one this module writes")
    return ct


def secret_key_ntt(secret_key, primes: int, N: int) -> np.ndarray:
    """The secret key ``s`` in NTT form, ``(primes, N)``: residues for the first ``primes``
    primes (the data level; SEAL keeps the key at the key level, special prime last)."""
    return read_coeffs(secret_key.data(), (primes, N))


def reduce_mod_primes(values: np.ndarray, primes) -> np.ndarray:
    """Integers (Python ints or int64, any size, signed) -> uint64 residues ``(L, N)``."""
    v = np.asarray(values, dtype=object)
    return np.stack([np.mod(v, int(q)).astype(np.uint64) for q in primes])


def crt_combine(residues: np.ndarray, primes) -> np.ndarray:
    """Residues ``(L, N)`` mod the primes -> Python ints in ``[0, q)`` (object array)."""
    primes = [int(q) for q in primes]
    q = 1
    for p in primes:
        q *= p
    acc = np.zeros(residues.shape[1], dtype=object)
    for i, p in enumerate(primes):
        qi = q // p
        coef = qi * pow(qi, -1, p)
        acc = acc + residues[i].astype(object) * coef
    return np.mod(acc, q)
