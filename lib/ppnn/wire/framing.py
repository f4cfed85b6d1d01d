"""Framing: how one booked message crosses the wire as bytes.

Every message of a wire-mode run is one **frame** on the TCP connection between its sender
and its receiver::

    +----------------+----------------+----------------+---------------------------+
    | seq (uint32)   | depth (uint32) | length (uint32)| payload (length bytes)    |
    +----------------+----------------+----------------+---------------------------+
      12-byte header, little-endian                     ceil(booked bits / 8) bytes

* ``seq`` -- the frame's number on its one-way channel; the receiver checks it, so a lost,
  duplicated or reordered message is an error.
* ``depth`` -- the causal depth of an online message (:mod:`ppnn.wire.transport`); 0 for
  offline material and inputs.
* ``length`` -- the payload's bytes; the receiver checks it against what its own copy of the
  protocol expects (or the limit its call site states) before reading the payload, and no
  frame carries more than :data:`MAX_PAYLOAD` bytes.

The payload packs every element to the bit width the ledger books for it (a ``Z_2^32``
element 4 bytes, a bit one bit, a ``Z_37`` element 6 bits): a message's byte-aligned parts
first, as little-endian integers, then every other part as one bit string, least significant
bit first, padded to a whole byte. So for every message::

    wire bytes = ceil(ledger bits / 8) + HEADER_BYTES

(:func:`frame_bytes`); the kernel's TCP/IP headers are not counted.

Main names: :func:`pack`, :func:`unpack`, :func:`payload_bytes`, :func:`frame_bytes`,
:data:`HEADER`, :data:`HEADER_BYTES`, :data:`MAX_PAYLOAD`.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence

import numpy as np

__all__ = ["HEADER", "HEADER_BYTES", "MAX_PAYLOAD", "payload_bytes", "frame_bytes", "pack",
           "unpack"]

#: seq, depth, length (all uint32, little-endian)
HEADER = struct.Struct("<III")
HEADER_BYTES = HEADER.size
#: the largest payload of one frame (1 GiB; the largest message of a run here is SHE's
#: serialized tfhe-rs server key, about 130 MB)
MAX_PAYLOAD = 1 << 30
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


def _group(bits: int) -> tuple[int, int]:
    """The smallest whole group of ``bits``-wide elements: ``(elements, bytes)`` -- 4 and 3
    for 6 bits, 8 and ``bits`` for an odd width."""
    g = 8 // math.gcd(bits, 8)
    return g, g * bits // 8


def _pack_narrow(a: np.ndarray, bits: int) -> np.ndarray:
    """The bit string of ``a`` (``bits`` < 8 per element, LSB first) as bytes, the last one
    padded with zeros: a group of :func:`_group` elements fills whole bytes. Byte ``j`` of a
    group gathers the (at most two) elements whose bits fall in it, one column at a time, in
    bytes: an element's low part is shifted left into byte ``j`` (what passes the byte's top
    falls off), its high part shifted right into byte ``j + 1``. No wider lanes."""
    n = a.size
    g, nb = _group(bits)
    groups = -(-n // g)
    if n % g == 0 and a.dtype == np.uint8 and a.flags.c_contiguous:
        v = a.reshape(groups, g)
    else:
        v = np.zeros((groups, g), dtype=np.uint8)
        v.reshape(-1)[:n] = a
    out = np.zeros((groups, nb), dtype=np.uint8)
    for e in range(g):
        j, s = divmod(e * bits, 8)
        out[:, j] |= v[:, e] << np.uint8(s)
        if s + bits > 8:
            out[:, j + 1] |= v[:, e] >> np.uint8(8 - s)
    return out.reshape(-1)[:-(-n * bits // 8)]


def _unpack_narrow(raw: np.ndarray, n: int, bits: int, out: np.ndarray | None = None
                   ) -> np.ndarray:
    """Inverse of :func:`_pack_narrow`: ``n`` elements (uint8) from the bytes ``raw``,
    written straight into ``out`` when it is a C-contiguous uint8 array of ``n`` elements
    and ``n`` is a whole number of groups (else into a new array)."""
    g, nb = _group(bits)
    groups = -(-n // g)
    direct = (out is not None and out.dtype == np.uint8 and out.size == n and n % g == 0
              and out.flags.c_contiguous)
    if raw.size == groups * nb:
        flat = raw
    else:
        flat = np.zeros(groups * nb, dtype=np.uint8)
        flat[:raw.size] = raw
    w = flat.reshape(groups, nb)
    vals = out.reshape(groups, g) if direct else np.empty((groups, g), dtype=np.uint8)
    mask = np.uint8((1 << bits) - 1)
    for e in range(g):
        j, s = divmod(e * bits, 8)
        x = w[:, j] >> np.uint8(s)
        if s + bits > 8:
            x |= w[:, j + 1] << np.uint8(8 - s)
        x &= mask
        vals[:, e] = x
    return vals.reshape(-1)[:n]


def _runs(parts):
    """Consecutive parts of equal width, joined: ``[(width, [arrays...])]``."""
    out: list[tuple[int, list]] = []
    for a, bits in parts:
        if out and out[-1][0] == bits:
            out[-1][1].append(a)
        else:
            out.append((bits, [a]))
    return out


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
            loose.append((a, bits))
    # the loose parts as one bit string: a run of equal narrow widths starting on a byte
    # boundary is packed 8 elements per uint64; anything else bit by bit
    carry = np.zeros(0, dtype=np.uint8)  # bits (0/1) not yet in a whole byte
    for bits, arrays in _runs(loose):
        a = arrays[0] if len(arrays) == 1 else np.concatenate(arrays)
        if not carry.size and bits <= 8:
            raw = (np.packbits(a.astype(np.uint8), bitorder="little") if bits == 1
                   else _pack_narrow(a, bits))
            tail = (a.size * bits) % 8
            if tail:
                carry = np.unpackbits(raw[-1:], bitorder="little")[:tail]
                raw = raw[:-1]
            aligned.append(raw.tobytes())
            continue
        stream = np.concatenate([carry, _bit_string(a, bits)])
        whole = stream.size - stream.size % 8
        aligned.append(np.packbits(stream[:whole], bitorder="little").tobytes())
        carry = stream[whole:]
    if carry.size:
        aligned.append(np.packbits(carry, bitorder="little").tobytes())
    return b"".join(aligned)


def unpack(payload: bytes, layout: Sequence[tuple[tuple[int, ...], np.dtype, int]],
           out: Sequence[np.ndarray] | None = None) -> list[np.ndarray]:
    """The arrays of a payload made by :func:`pack`; ``layout`` gives each part's
    ``(shape, dtype, bits per element)`` in the order they were packed. ``out``: an array
    per part (of its shape) to fill instead of new ones, returned in their place -- one
    pass less, and no new memory, for a receiver that already has the destination."""
    if out is not None and len(out) != len(layout):
        raise ValueError(f"out has {len(out)} arrays for {len(layout)} parts")
    sizes = [math.prod(shape) for shape, _, _ in layout]
    total = sum(n * _check_bits(bits) for n, (_, _, bits) in zip(sizes, layout))
    if len(payload) != payload_bytes(total):
        raise ValueError(f"payload of {len(payload)} bytes, expected {payload_bytes(total)} "
                         f"for {total} bits")
    dst = out  # the caller's arrays (``out`` is this function's result, ``res``, below)
    res: list[np.ndarray | None] = [None] * len(layout)
    off = 0
    loose = []
    for k, ((shape, dtype, bits), n) in enumerate(zip(layout, sizes)):
        if bits in _ALIGNED:
            a = np.frombuffer(payload, dtype=f"<u{bits // 8}", count=n, offset=off)
            if dst is None:
                res[k] = a.astype(dtype).reshape(shape)
            else:
                dst[k][...] = a.reshape(shape)
                res[k] = dst[k]
            off += n * bits // 8
        elif n:
            loose.append((k, bits))
        elif dst is None:
            res[k] = np.zeros(shape, dtype)
        else:
            res[k] = dst[k]
    data = np.frombuffer(payload, dtype=np.uint8)
    pos = 8 * off  # bit position in the payload
    for bits, ks in _runs(loose):
        count = sum(sizes[k] for k in ks)
        end = pos + count * bits
        if (pos % 8 == 0 and 1 < bits <= 8 and dst is not None
                and all(sizes[k] * bits % 8 == 0 for k in ks[:-1])):
            # every part starts on a byte: each unpacked straight into its destination
            # (in place where _unpack_narrow can, else copied there)
            for k in ks:
                stop = pos + sizes[k] * bits
                vals = _unpack_narrow(data[pos // 8:-(-stop // 8)], sizes[k], bits,
                                      out=dst[k])
                if not np.may_share_memory(vals, dst[k]):
                    dst[k][...] = vals.reshape(dst[k].shape)
                res[k] = dst[k]
                pos = stop
            continue
        if pos % 8 == 0 and 1 < bits <= 8:
            vals = _unpack_narrow(data[pos // 8:-(-end // 8)], count, bits)
        else:
            chunk = np.unpackbits(data[pos // 8:-(-end // 8)], bitorder="little")
            chunk = chunk[pos % 8:pos % 8 + count * bits]
            if bits == 1:
                vals = chunk
            else:
                w = _container(bits)
                full = np.zeros((count, 8 * w), dtype=np.uint8)
                full[:, :bits] = chunk.reshape(count, bits)
                vals = np.packbits(full, axis=1, bitorder="little").reshape(-1).view(f"<u{w}")
        at = 0
        for k in ks:
            shape, dtype, _ = layout[k]
            part = vals[at:at + sizes[k]]
            if dst is None:
                res[k] = part.astype(dtype, copy=False).reshape(shape)
            else:
                dst[k][...] = part.reshape(shape)
                res[k] = dst[k]
            at += sizes[k]
        pos = end
    return res  # type: ignore[return-value]
