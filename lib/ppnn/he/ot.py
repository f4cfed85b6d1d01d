"""Oblivious transfer: 128 base OTs in a 3072-bit MODP group and IKNP OT extension.

What the garbled-circuit families need to give the evaluator (the client) the labels of its
own input bits without the garbler (the server) learning the bits, and without the client
learning the other label of any wire: ``m`` 1-out-of-2 OTs of 128-bit strings, semi-honest,
with ``m`` in the millions.

* :class:`BaseOTReceiver`, :class:`BaseOTSender` -- ``kappa = 128`` base OTs, Bellare-Micali
  in the form of Naor and Pinkas (SODA 2001), in RFC 3526's 3072-bit MODP group (:data:`P`,
  :data:`G`; exponents of :data:`EXPONENT_BITS` bits): two messages,
  :data:`BASE_REQUEST_BYTES` and :data:`BASE_REPLY_BYTES`;
* :class:`IKNPReceiver`, :class:`IKNPSender` -- IKNP OT extension (Ishai, Kilian, Nissim and
  Petrank, CRYPTO 2003), roles reversed with respect to the base OTs: the columns go
  receiver to sender, two masked strings per OT come back; AES-128 in counter mode as the
  PRG and the garbled circuits' fixed-key hash (:mod:`ppnn.he.gc`) as ``H``, vectorized in
  chunks of :data:`CHUNK` OTs;
* :func:`columns_bits`, :func:`columns_bytes`, :func:`answers_bits` -- exactly what
  :func:`ppnn.he.gc.gc_cost` books per evaluator input bit (``kappa`` bits, ``2 kappa`` back);
  the base OTs run once per session and the ledger does not book them.

Every secret (the exponents, ``s``, ``r`` where the caller draws it) comes from the OS CSPRNG
and stays in memory.

See also
--------
docs/protocols.md : oblivious transfer (the messages, the strings, the wire format).
ppnn.wire.ot : the same OT between two processes.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

import gmpy2
import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from .gc import _FixedKeyAES

__all__ = ["KAPPA", "CHUNK", "P", "G", "ELEMENT_BYTES", "EXPONENT_BITS",
           "BASE_REQUEST_BYTES", "BASE_REPLY_BYTES", "BaseOTReceiver", "BaseOTSender",
           "IKNPReceiver", "IKNPSender", "ReceiverBatch", "columns_bits", "answers_bits",
           "columns_bytes"]

KAPPA = 128
#: OTs per chunk of the extension (PRG stream, transpose and hash); part of the wire format
CHUNK = 1 << 16

#: RFC 3526, 3072-bit MODP group (group 15): p = 2^3072 - 2^3008 - 1 + 2^64 ([2^2942 pi] +
#: 1690314), a safe prime
_RFC3526_3072 = (
    "FFFFFFFF FFFFFFFF C90FDAA2 2168C234 C4C6628B 80DC1CD1 29024E08 8A67CC74"
    "020BBEA6 3B139B22 514A0879 8E3404DD EF9519B3 CD3A431B 302B0A6D F25F1437"
    "4FE1356D 6D51C245 E485B576 625E7EC6 F44C42E9 A637ED6B 0BFF5CB6 F406B7ED"
    "EE386BFB 5A899FA5 AE9F2411 7C4B1FE6 49286651 ECE45B3D C2007CB8 A163BF05"
    "98DA4836 1C55D39A 69163FA8 FD24CF5F 83655D23 DCA3AD96 1C62F356 208552BB"
    "9ED52907 7096966D 670C354E 4ABC9804 F1746C08 CA18217C 32905E46 2E36CE3B"
    "E39E772C 180E8603 9B2783A2 EC07A28F B5C55DF0 6F4C52C9 DE2BCBF6 95581718"
    "3995497C EA956AE5 15D22618 98FA0510 15728E5A 8AAAC42D AD33170D 04507A33"
    "A85521AB DF1CBA64 ECFB8504 58DBEF0A 8AEA7157 5D060C7D B3970F85 A6E1E4C7"
    "ABF5AE8C DB0933D7 1E8C94E0 4A25619D CEE3D226 1AD2EE6B F12FFA06 D98A0864"
    "D8760273 3EC86A64 521F2B18 177B200C BBE11757 7A615D6C 770988C0 BAD946E2"
    "08E24FA0 74E5AB31 43DB5BFC E0FD108E 4B82D120 A93AD2CA FFFFFFFF FFFFFFFF")
P = gmpy2.mpz(_RFC3526_3072.replace(" ", ""), 16)
G = gmpy2.mpz(2)  # a quadratic residue mod p (p = 7 mod 8): generates the order-q subgroup
ELEMENT_BYTES = 384
EXPONENT_BITS = 256
BASE_REQUEST_BYTES = KAPPA * ELEMENT_BYTES
BASE_REPLY_BYTES = ELEMENT_BYTES


def _expand(tag: bytes, n: int) -> bytes:
    out, i = b"", 0
    while len(out) < n:
        out += hashlib.sha256(tag + i.to_bytes(4, "big")).digest()
        i += 1
    return out[:n]


#: the public element of unknown logarithm: a hash of a fixed string, squared into the subgroup
C = gmpy2.powmod(gmpy2.mpz(int.from_bytes(_expand(b"ppnn-lab base OT: C", 400), "big")) % P,
                 2, P)
#: the IKNP hash's tweak high word (the garbled circuits' nonces are other words)
_OT_NONCE = np.uint64(int.from_bytes(hashlib.sha256(b"ppnn-lab IKNP tweak").digest()[:8],
                                     "little"))


def columns_bits(m: int) -> int:
    """Bits of the receiver's columns for ``m`` OTs: ``kappa m``."""
    return KAPPA * int(m)


def columns_bytes(m: int) -> int:
    """Bytes of the receiver's columns for ``m`` OTs: ``kappa m / 8`` (16 per OT)."""
    return columns_bits(m) // 8


def answers_bits(m: int) -> int:
    """Bits of the sender's answers for ``m`` OTs of 128-bit strings: ``2 kappa m``."""
    return 2 * KAPPA * int(m)


def _element_to_bytes(x) -> np.ndarray:
    return np.frombuffer(int(x).to_bytes(ELEMENT_BYTES, "big"), dtype=np.uint8)


def _element(b: np.ndarray):
    x = gmpy2.mpz(int.from_bytes(np.asarray(b, dtype=np.uint8).tobytes(), "big"))
    if not 1 < x < P - 1:
        raise ValueError("not a group element of the base OT (outside 2..p-2)")
    return x


def _exponent():
    return gmpy2.mpz(1 + secrets.randbelow((1 << EXPONENT_BITS) - 1))


def _seed(i: int, b: int, reply: bytes, point) -> np.ndarray:
    h = hashlib.sha256(b"ppnn-lab base OT seed" + i.to_bytes(2, "big") + bytes([b]) + reply
                       + int(point).to_bytes(ELEMENT_BYTES, "big")).digest()
    return np.frombuffer(h[:16], dtype=np.uint8)


def _choice_bits(choices, n: int, name: str) -> np.ndarray:
    c = np.asarray(choices)
    if c.shape != (n,) or not np.isin(c, (0, 1)).all():
        raise ValueError(f"{name} must be {n} bits 0/1, got shape {c.shape}")
    return c.astype(np.uint8)


class BaseOTReceiver:
    """The receiver's side of the ``kappa`` base OTs (IKNP's *sender*): choice bits ``s``.

    Parameters
    ----------
    choices : ``(kappa,)`` 0/1, or None to draw them with :mod:`secrets` (real runs).
    """

    def __init__(self, choices=None):
        if choices is None:
            choices = np.frombuffer(secrets.token_bytes(KAPPA), dtype=np.uint8) & 1
        self.choices = _choice_bits(choices, KAPPA, "choices")
        self._k = [_exponent() for _ in range(KAPPA)]

    def request(self) -> np.ndarray:
        """The first message, ``(kappa, 384)`` bytes: ``PK_i0`` of each OT (``g^k_i`` if
        ``s_i = 0``, else ``C / g^k_i``)."""
        out = np.empty((KAPPA, ELEMENT_BYTES), dtype=np.uint8)
        for i, (s, k) in enumerate(zip(self.choices, self._k)):
            pk = gmpy2.powmod(G, k, P)
            out[i] = _element_to_bytes(pk if s == 0 else C * gmpy2.invert(pk, P) % P)
        return out

    def seeds(self, reply: np.ndarray) -> np.ndarray:
        """The receiver's strings ``k_i^{s_i}``, ``(kappa, 16)`` bytes, from the sender's
        answer ``g^r`` (384 bytes)."""
        raw = np.asarray(reply, dtype=np.uint8).tobytes()
        gr = _element(reply)
        return np.stack([_seed(i, int(s), raw, gmpy2.powmod(gr, k, P))
                         for i, (s, k) in enumerate(zip(self.choices, self._k))])


class BaseOTSender:
    """The sender's side of the ``kappa`` base OTs (IKNP's *receiver*): :meth:`reply` gives
    its one message and both strings of every OT."""

    def __init__(self):
        self._r = _exponent()

    def reply(self, request: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(g^r as 384 bytes, seeds (kappa, 2, 16) bytes)`` for the receiver's
        ``request`` (``(kappa, 384)`` bytes)."""
        request = np.asarray(request, dtype=np.uint8)
        if request.shape != (KAPPA, ELEMENT_BYTES):
            raise ValueError(f"a base OT request is ({KAPPA}, {ELEMENT_BYTES}) bytes, got "
                             f"{request.shape}")
        gr = _element_to_bytes(gmpy2.powmod(G, self._r, P))
        raw = gr.tobytes()
        cr = gmpy2.powmod(C, self._r, P)
        seeds = np.empty((KAPPA, 2, 16), dtype=np.uint8)
        for i in range(KAPPA):
            p0 = gmpy2.powmod(_element(request[i]), self._r, P)
            seeds[i, 0] = _seed(i, 0, raw, p0)
            seeds[i, 1] = _seed(i, 1, raw, cr * gmpy2.invert(p0, P) % P)  # PK_i1^r
        return gr, seeds


# -- IKNP extension -------------------------------------------------------------------------
def _prgs(seeds: np.ndarray) -> list:
    """One AES-128-CTR stream per 16-byte seed (counter from 0), kept for the session."""
    return [Cipher(algorithms.AES(bytes(k)), modes.CTR(bytes(16))).encryptor()
            for k in np.asarray(seeds, dtype=np.uint8)]


def _bits(prgs: list, c: int) -> np.ndarray:
    """The next ``ceil(c / 8)`` bytes of every stream as a ``(len(prgs), c)`` 0/1 matrix."""
    nb = -(-c // 8)
    zeros = bytes(nb)
    raw = np.frombuffer(b"".join(p.update(zeros) for p in prgs), dtype=np.uint8)
    return np.unpackbits(raw.reshape(len(prgs), nb), axis=1, bitorder="little")[:, :c]


def _rows(bits: np.ndarray) -> np.ndarray:
    """The transpose of a ``(kappa, c)`` bit matrix as ``c`` 128-bit blocks ``(c, 2)``."""
    return np.ascontiguousarray(np.packbits(bits.T, axis=1, bitorder="little")).view("<u8")


def _chunks(m: int):
    for j0 in range(0, m, CHUNK):
        yield j0, min(CHUNK, m - j0)


class _Hash:
    def __init__(self):
        self._aes = _FixedKeyAES()

    def __call__(self, blocks: np.ndarray, start: int) -> np.ndarray:
        j = np.arange(start, start + blocks.shape[0], dtype=np.uint64)
        return self._aes.hash(blocks, j, _OT_NONCE)


@dataclass
class ReceiverBatch:
    """``m`` extended OTs on the receiver's side: ``columns`` (to send, ``16 m`` bytes),
    its ``choices`` and, private, the rows ``t_j`` and the OTs' first index."""

    columns: np.ndarray
    choices: np.ndarray
    _t: np.ndarray
    _start: int
    _hash: _Hash

    def unmask(self, answers: np.ndarray) -> np.ndarray:
        """Both answers of each OT with the receiver's pad ``H(j, t_j)`` removed, same shape
        as ``answers`` (``(..., 2, 2)`` words, ``m`` OTs in C order): entry ``r_j`` is the
        chosen string, the other is ``x_j^{1-r_j} ^ H(j, t_j ^ s) ^ H(j, t_j)``,
        pseudorandom to the receiver."""
        y = np.asarray(answers, dtype=np.uint64)
        m = self.choices.size
        if y.shape[-2:] != (2, 2) or y.size != 4 * m:
            raise ValueError(f"answers must hold {m} pairs of 128-bit strings, got {y.shape}")
        pad = self._hash(self._t, self._start)
        return (y.reshape(m, 2, 2) ^ pad[:, None, :]).reshape(y.shape)

    def open(self, answers: np.ndarray) -> np.ndarray:
        """The chosen strings ``x_j^{r_j}``, ``(m, 2)`` words."""
        both = self.unmask(answers).reshape(-1, 2, 2)
        return both[np.arange(both.shape[0]), self.choices.astype(np.intp)]


class IKNPReceiver:
    """IKNP's receiver (the base OTs' sender) for a session: both strings of each base OT
    (``seeds``: ``(kappa, 2, 16)`` bytes). Each :meth:`extend` continues the PRG streams
    and the OT index; the sender's :meth:`IKNPSender.answer` must see the same batches in
    the same order."""

    def __init__(self, seeds: np.ndarray):
        seeds = np.asarray(seeds, dtype=np.uint8)
        if seeds.shape != (KAPPA, 2, 16):
            raise ValueError(f"seeds must be ({KAPPA}, 2, 16) bytes, got {seeds.shape}")
        self._g0, self._g1 = _prgs(seeds[:, 0]), _prgs(seeds[:, 1])
        self._hash = _Hash()
        self.count = 0  # OTs extended so far (the next OT's index j)

    def extend(self, choices) -> ReceiverBatch:
        """``m`` OTs with choice bits ``choices`` (any shape, C order; 0/1)."""
        r = np.asarray(choices).reshape(-1)
        r = _choice_bits(r, r.size, "choices")
        m = r.size
        cols = np.empty(columns_bytes(m), dtype=np.uint8)
        t = np.empty((m, 2), dtype=np.uint64)
        for j0, c in _chunks(m):
            T = _bits(self._g0, c)
            U = T ^ _bits(self._g1, c) ^ r[None, j0:j0 + c]
            cols[16 * j0:16 * (j0 + c)] = np.packbits(U, bitorder="little")
            t[j0:j0 + c] = _rows(T)
        batch = ReceiverBatch(cols, r, t, self.count, self._hash)
        self.count += m
        return batch


class IKNPSender:
    """IKNP's sender (the base OTs' receiver) for a session: its base-OT choice bits ``s``
    (``(kappa,)``) and strings ``k_i^{s_i}`` (``seeds``: ``(kappa, 16)`` bytes)."""

    def __init__(self, s, seeds: np.ndarray):
        self._s = _choice_bits(s, KAPPA, "s")
        seeds = np.asarray(seeds, dtype=np.uint8)
        if seeds.shape != (KAPPA, 16):
            raise ValueError(f"seeds must be ({KAPPA}, 16) bytes, got {seeds.shape}")
        self._g = _prgs(seeds)
        self._s_block = np.packbits(self._s, bitorder="little").view("<u8")
        self._hash = _Hash()
        self.count = 0

    def answer(self, columns: np.ndarray, messages: np.ndarray) -> np.ndarray:
        """The answers ``y_j^b = x_j^b ^ H(j, q_j ^ b s)`` to the receiver's ``columns``
        (``16 m`` bytes) for the string pairs ``messages`` (``(..., 2, 2)`` words: ``m``
        pairs ``(x_j^0, x_j^1)`` of 128-bit strings in C order); same shape."""
        x = np.asarray(messages, dtype=np.uint64)
        if x.shape[-2:] != (2, 2):
            raise ValueError(f"messages must be (..., 2, 2) words, got {x.shape}")
        m = x.size // 4
        u = np.asarray(columns, dtype=np.uint8).reshape(-1)
        if u.size != columns_bytes(m):
            raise ValueError(f"{m} OTs take {columns_bytes(m)} bytes of columns, got {u.size}")
        q = np.empty((m, 2), dtype=np.uint64)
        for j0, c in _chunks(m):
            U = np.unpackbits(u[16 * j0:16 * (j0 + c)], bitorder="little").reshape(KAPPA, c)
            q[j0:j0 + c] = _rows(_bits(self._g, c) ^ (U & self._s[:, None]))
        y = x.reshape(m, 2, 2).copy()
        y[:, 0] ^= self._hash(q, self.count)
        y[:, 1] ^= self._hash(q ^ self._s_block, self.count)
        self.count += m
        return y.reshape(x.shape)
