"""04_she's protocol lesson: SHE's ReLU unit and max unit (Fig. 2) on a handful of encrypted
integers, played gate level by gate level.

:func:`relu_play` runs the real circuits of :mod:`ppnn.protocols.she.circuits` on a gate
backend (tfhe-rs, or the bit simulator that books the same gates) whose every gate call --
one vectorized batch of gates at one depth -- is a step of the player on the server's lane.
The client encrypts its integers bit by bit and sends the ciphertexts; the server evaluates
``ReLU`` on each and ``max`` of neighbouring pairs (a 2-wide max-pool); the client decrypts.

The server sees ciphertexts only. So that a *student* can follow the bits, the lesson also
decrypts the output of every gate batch **with the client's secret key** -- something no party
does during the protocol -- and shows it beside the diagram (:meth:`ReluPlay.panel`), saying
so. On tfhe-rs the messages are the serialized ciphertexts (size and digest); on the bit
simulator, which builds none, they are listed by size only.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

import numpy as np

from ...core import Ledger
from ...core.transcript import EVERY_ELEMENT, SIZE_ONLY
from ...he.bitsim import BitSimulator, GateBackend
from ...protocols.she import circuits as C
from ...sequence import steps

__all__ = ["ReluPlay", "relu_play", "traced"]

PARTIES = ("client", "server")


@dataclass
class _Level:
    gate: str
    n: int            # gates in the batch (bootstrapped: both inputs encrypted)
    depth: int        # largest multiplicative depth of the batch's outputs
    bits: np.ndarray  # its outputs, decrypted with the client's key (for the lesson only)


def traced(backend: GateBackend, ledger: Ledger, party: str = "server"):
    """A copy of ``backend`` (same keys) that books every gate call as one operation on
    ``ledger`` -- ``AND at depth 1 x4`` -- and keeps its outputs decrypted for the lesson
    (``.levels``). NOT gates are free in TFHE and booked as such."""
    base = type(backend)
    if base.__name__.startswith("Traced"):
        raise ValueError("backend is already traced")

    class Traced(base):  # noqa: D401 - a one-off subclass
        levels: list[_Level]

        def _trace(self, gate: str, out, n: int):
            bits = self.decrypt(out).ravel()
            depth = int(out.md.max(initial=0))
            self.levels.append(_Level(gate, n, depth, bits))
            what = "NOT (free: no bootstrap)" if gate == "NOT" else f"{gate} at depth {depth}"
            ledger.count(what, n, party)

        def _gate2(self, gate, a, b):
            out = super()._gate2(gate, a, b)
            self._trace(gate.upper(), out, int((~a.trivial & ~b.trivial).sum()))
            return out

        def not_(self, a):
            out = super().not_(a)
            self._trace("NOT", out, int(a.size))
            return out

        def mux(self, c, a, b):
            out = super().mux(c, a, b)
            self._trace("MUX", out, int(c.size))
            return out

    Traced.__name__ = f"Traced{base.__name__}"
    tb = Traced.__new__(Traced)
    tb.__dict__.update(backend.__dict__)
    tb.levels = []
    tb.reset_counts()
    return tb


@dataclass
class ReluPlay:
    """A recorded run of ReLU then a 2-wide max on encrypted integers."""

    ledger: Ledger
    values: np.ndarray
    bits: int
    relu: np.ndarray
    pooled: np.ndarray
    levels: list = field(repr=False)
    real: bool = False

    @property
    def correct(self) -> bool:
        want_relu = np.maximum(self.values, 0)
        return bool(np.array_equal(self.relu, want_relu) and np.array_equal(
            self.pooled, want_relu.reshape(-1, 2).max(axis=1)))

    def level_at(self, step: int) -> int:
        """Index into :attr:`levels` of the last gate batch done by player ``step``
        (-1 before the first)."""
        rows = steps(self.ledger, None, split_ops=True)
        gate_rows = rows[(rows["kind"] == "op") & rows["what"].str.contains("depth|NOT")]
        return int((gate_rows["step"] <= int(step)).sum()) - 1

    def panel(self, step: int) -> str:
        """HTML beside the diagram: the gate batch of ``step`` and its output bits,
        decrypted with the client's key for the student's eyes only."""
        k = self.level_at(step)
        head = ("<p style='font-size:12px'><b>Decrypted with the client's secret key, for "
                "your eyes only</b> &mdash; the server holds only ciphertexts and learns none "
                "of these bits.</p>")
        if k < 0:
            x = C._to_bits(self.values, self.bits, True, "values")
            return head + _bit_table(self.values, x, "the client's input bits (LSB first)")
        lv = self.levels[k]
        text = "".join(str(int(b)) for b in lv.bits[:64]) + (" ..." if lv.bits.size > 64 else "")
        return (head + f"<p style='font-family:monospace;font-size:12px'>gate batch {k + 1}/"
                f"{len(self.levels)}: {html.escape(lv.gate)} on {lv.bits.size} ciphertexts, "
                f"outputs at multiplicative depth {lv.depth}<br>output bits: {text}</p>")


def _bit_table(values, bits, caption: str) -> str:
    rows = "".join(f"<tr><td>{v}</td>" + "".join(f"<td>{int(b)}</td>" for b in bits[:, j])
                   + "</tr>" for j, v in enumerate(values))
    head = "".join(f"<th>b{i}</th>" for i in range(bits.shape[0]))
    return (f"<table style='font-family:monospace;font-size:12px'><caption>{caption}</caption>"
            f"<tr><th>x</th>{head}</tr>{rows}</table>")


def relu_play(backend: GateBackend | None = None, values=(-5, 3, 6, -1), bits: int = 4
              ) -> ReluPlay:
    """ReLU of each of ``values`` then the max of neighbouring pairs, on encrypted ``bits``-bit
    integers, every message and every gate batch recorded. ``backend``: a
    :class:`~ppnn.he.tfhe.TfheBackend` (its keys are reused) or the bit simulator (default)."""
    values = np.asarray(values, dtype=np.int64)
    if values.ndim != 1 or values.size < 2 or values.size % 2:
        raise ValueError(f"values must be a 1-d array of an even length >= 2, got shape "
                         f"{values.shape}")
    lo, hi = C.word_range(bits, True)
    if values.min() < lo or values.max() > hi:
        raise ValueError(f"values must fit {bits}-bit two's complement: [{lo}, {hi}]")
    led = Ledger(PARTIES, record_values=EVERY_ELEMENT)
    be = traced(backend if backend is not None else BitSimulator(), led)
    real = not isinstance(be, BitSimulator) and hasattr(be, "wire")
    led.hold("client", "x (its integers)", values)
    x = C.encrypt_word(be, values, bits, signed=True)
    sent = be.concat(list(x.planes))
    led.count("encrypt", sent.size, "client")
    led.send("client", "server", sent.size * be.ciphertext_bytes * 8, "encrypted bits of x",
             value=be.wire([sent]) if real else SIZE_ONLY)
    with led.label("ReLU unit"):
        r = C.relu_unit(x)
    with led.label("max unit"):
        z = C.max_unit(C.gather(r, np.arange(0, values.size, 2)),
                       C.gather(r, np.arange(1, values.size, 2)))
    out = be.concat(list(z.planes))
    led.send("server", "client", out.size * be.ciphertext_bytes * 8,
             "encrypted max(ReLU(x))", value=be.wire([out]) if real else SIZE_ONLY)
    relu = C.decrypt_word(be, r)
    pooled = C.decrypt_word(be, z)
    led.hold("client", "decrypts max(ReLU(x))", pooled)
    levels = be.levels[:]
    # the lesson's own decryptions (relu, pooled) are not gates: nothing more was booked
    return ReluPlay(led, values, bits, relu, pooled, levels, real)
