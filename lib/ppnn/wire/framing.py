"""Framing: how one booked message crosses the wire as bytes.

Every message of a wire-mode run is one **frame** on the TCP connection between its sender
and its receiver::

    +----------------+----------------+----------------+---------------------------+
    | seq (uint32)   | depth (uint32) | length (uint32)| payload (length bytes)    |
    +----------------+----------------+----------------+---------------------------+
      12-byte header, little-endian                     ceil(booked bits / 8) bytes

* ``seq`` -- the frame's number on its one-way channel (0, 1, 2, ...); the receiver checks
  it, so a lost, duplicated or reordered message is an error, never a silent mix-up.
* ``depth`` -- the causal depth of an online message (see :mod:`ppnn.wire.transport`): the
  sender's depth plus one; 0 for offline material and inputs. The largest depth of a run is
  its *measured* number of rounds.
* ``length`` -- the payload length in bytes; the receiver checks it against the length its
  own copy of the protocol expects.

The payload packs every element to the bit width the ledger books for it, and nothing else:
a ``Z_2^32`` element is 4 bytes, a ``Z_2`` bit one bit (``np.packbits``), a ``Z_37``
element 6 bits. A message made of several parts (a dealer message carries both components of
several sharings) puts its byte-aligned parts (8, 16, 32 or 64 bits per element) first, in
order, as little-endian integers, then every other part as one bit string (least
significant bit first), padded with zeros to a whole byte. So for every message::

    wire bytes = ceil(ledger bits / 8) + HEADER_BYTES

(:func:`frame_bytes`). Wire bytes are the bytes written to the TCP socket; the TCP/IP headers
of the segments that carry them are the kernel's and are not counted.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np

__all__ = ["HEADER", "HEADER_BYTES", "payload_bytes", "frame_bytes", "pack", "unpack"]

#: seq, depth, length (all uint32, little-endian)
HEADER = struct.Struct("<III")
HEADER_BYTES = HEADER.size
_ALIGNED = (8, 16, 32, 64)


def payload_bytes(bits: int) -> int:
    """Payload of a message of ``bits`` booked bits: ``ceil(bits / 8)`` bytes."""
    if isinstance(bits, bool) or not isinstance(bits, int | np.integer) or bits < 0:
        raise ValueError(f"bits must be an int >= 0, got {bits!r}")
    return -(-int(bits) // 8)


def frame_bytes(bits: int) -> int:
    """Bytes one message of ``bits`` booked bits puts on the wire (payload and header)."""
    return payload_bytes(bits) + HEADER_BYTES


def _check_bits(bits) -> int:
    if isinstance(bits, bool) or not isinstance(bits, int | np.integer) or not 1 <= bits <= 64:
        raise ValueError(f"bits per element must be an int in 1..64, got {bits!r}")
    return int(bits)


def _container(bits: int) -> int:
    """Bytes of the smallest unsigned integer type holding ``bits`` bits."""
    return next(w for w in (1, 2, 4, 8) if 8 * w >= bits)


def _bit_string(a: np.ndarray, bits: int) -> np.ndarray:
    """The low ``bits`` bits of every element of ``a`` (flat), LSB first, as 0/1 bytes."""
    if bits == 1:
        return a.astype(np.uint8, copy=False)
    w = _container(bits)
    raw = a.astype(f"<u{w}").view(np.uint8).reshape(-1, w)
    return np.unpackbits(raw, axis=1, bitorder="little")[:, :bits].reshape(-1)


def pack(parts: Sequence[tuple[np.ndarray, int]]) -> bytes:
    """The payload of one message: ``parts`` is a sequence of ``(integer array, bits per
    element)``; every element must fit its bit width (a ValueError names the part if not)."""
    aligned, loose = [], []
    for n, (arr, bits) in enumerate(parts):
        bits = _check_bits(bits)
        a = np.asarray(arr).reshape(-1)
        if a.dtype.kind not in "ub":
            raise ValueError(f"part {n}: expected unsigned integers, got dtype {a.dtype}")
        if a.size and bits < 64 and int(a.max()) >> bits:
            raise ValueError(f"part {n}: value {int(a.max())} does not fit in {bits} bits")
        if bits in _ALIGNED:
            aligned.append(a.astype(f"<u{bits // 8}", copy=False).tobytes())
        elif a.size:
            loose.append(_bit_string(a, bits))
    if loose:
        aligned.append(np.packbits(np.concatenate(loose), bitorder="little").tobytes())
    return b"".join(aligned)


def unpack(payload: bytes, layout: Sequence[tuple[tuple[int, ...], np.dtype, int]]
           ) -> list[np.ndarray]:
    """The arrays of a payload made by :func:`pack`; ``layout`` gives each part's
    ``(shape, dtype, bits per element)`` in the order they were packed."""
    sizes = [int(np.prod(shape, dtype=np.int64)) for shape, _, _ in layout]
    total = sum(n * _check_bits(bits) for n, (_, _, bits) in zip(sizes, layout))
    if len(payload) != payload_bytes(total):
        raise ValueError(f"payload of {len(payload)} bytes, expected {payload_bytes(total)} "
                         f"for {total} bits")
    out: list[np.ndarray | None] = [None] * len(layout)
    off = 0
    for k, ((shape, dtype, bits), n) in enumerate(zip(layout, sizes)):
        if bits in _ALIGNED:
            a = np.frombuffer(payload, dtype=f"<u{bits // 8}", count=n, offset=off)
            out[k] = a.astype(dtype).reshape(shape)
            off += n * bits // 8
    stream = np.unpackbits(np.frombuffer(payload, dtype=np.uint8, offset=off),
                           bitorder="little")
    pos = 0
    for k, ((shape, dtype, bits), n) in enumerate(zip(layout, sizes)):
        if bits in _ALIGNED:
            continue
        chunk = stream[pos:pos + n * bits]
        pos += n * bits
        if bits == 1:
            out[k] = chunk.astype(dtype).reshape(shape)
            continue
        w = _container(bits)
        full = np.zeros((n, 8 * w), dtype=np.uint8)
        full[:, :bits] = chunk.reshape(n, bits)
        vals = np.packbits(full, axis=1, bitorder="little").reshape(-1).view(f"<u{w}")
        out[k] = vals.astype(dtype).reshape(shape)
    return out  # type: ignore[return-value]
