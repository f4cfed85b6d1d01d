"""What a corrupt party can change, message class by message class (for the tamper harness).

A :class:`Tamper` describes one corrupt party's deviation. The runtime asks it at every event
a party could influence (:class:`~ppnn.protocols.falcon.runtime.Falcon` calls
:meth:`Tamper.hit` and :meth:`Tamper.perturb`). Its ``kind`` (:data:`TAMPER_KINDS`):

``reshare``
    the 3-out-of-3 share ``z_i`` a party sends when a product is reshared (online);
``open`` / ``open_copy`` / ``open_both``
    an opening: the party's first copy (``x_i`` to ``P_{i+1}``), the malicious redundant copy
    (``x_{i+1}`` to ``P_{i-1}``), or both, the multiplication checks' openings included;
``dealer_local``
    the party's wrong copy of one component of dealer material (:data:`DEALER_LOCAL`), applied
    as an offset on the opening that material masks: the other holder keeps the right value;
``dealer``
    *outside the threat model*: the trusted dealer hands out wrong material consistently
    (:data:`DEALER_CORRUPT`), to show what the dealer's honesty buys;
``key``
    offline key setup: the party hands ``P_{i-1}`` a wrong copy of its PRF key ``k_i``.

Selection: ``step`` (exact ``"label::what"``, or None for every step of the kind),
``occurrence`` (0 = first matching event, None = every one), ``elements`` (None = all
elements of the message, a fraction in (0, 1] chosen with ``seed``, or flat indices taken
modulo the message size) and ``offset`` (an additive offset, reduced into the message's
algebra and replaced by 1 if it vanishes; None = a random nonzero offset per element).

See also
--------
docs/protocols.md : the tamper harness (why ``dealer_local`` adds no attack surface).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Tamper", "TAMPER_KINDS", "DEALER_LOCAL", "DEALER_CORRUPT", "modulus"]

TAMPER_KINDS = ("reshare", "open", "open_copy", "open_both", "dealer_local", "dealer", "key")
# masks of openings a party can use a wrong copy of (the opening is tagged with its mask)
DEALER_LOCAL = ("triple a", "triple b", "triple c", "truncation r", "wrap3 r", "bit c")
# material a corrupt *dealer* could hand out wrongly (outside the threat model)
DEALER_CORRUPT = ("triple c", "truncation r >> d", "bit c (Z_L)", "wrap3 alpha")
_PARTIES = ("P0", "P1", "P2")


def modulus(alg) -> int:
    """Size of a message's algebra: ``p`` for Z_p, ``2^k`` for Z_2^k (2 for Z_2)."""
    return int(alg.p) if hasattr(alg, "p") else int(alg.modulus)


@dataclass
class Tamper:
    """One corrupt party's deviation of one message class (see the module docstring).

    ``seen`` counts the matching events met, ``fired`` those selected for a change and
    ``changed`` the values that actually changed.
    """

    party: str
    kind: str
    step: str | None = None
    occurrence: int | None = 0
    elements: float | Sequence[int] | None = None
    offset: int | None = None
    material: str | None = None
    component: int = 0
    seed: int = 0
    seen: int = field(default=0, init=False)
    fired: int = field(default=0, init=False)
    #: values actually changed (a message, a piece of material, a zero sharing)
    changed: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if self.party not in _PARTIES:
            raise ValueError(f"tampering party must be one of {_PARTIES}, got {self.party!r}")
        if self.kind not in TAMPER_KINDS:
            raise ValueError(f"tamper kind must be one of {TAMPER_KINDS}, got {self.kind!r}")
        if self.occurrence is not None and (isinstance(self.occurrence, bool) or not isinstance(
                self.occurrence, int) or self.occurrence < 0):
            raise ValueError(f"occurrence must be an int >= 0 or None, got {self.occurrence!r}")
        if self.kind == "dealer_local" and self.material not in DEALER_LOCAL:
            raise ValueError(f"a party can use a wrong copy of one of {DEALER_LOCAL}, "
                             f"got {self.material!r}")
        if self.kind == "dealer" and self.material not in DEALER_CORRUPT:
            raise ValueError(f"dealer material must be one of {DEALER_CORRUPT}, "
                             f"got {self.material!r}")
        if self.component not in (0, 1):
            raise ValueError(f"component must be 0 (the party's first) or 1, got "
                             f"{self.component!r}")
        if isinstance(self.elements, float) and not 0 < self.elements <= 1:
            raise ValueError(f"a fraction of elements must be in (0, 1], got {self.elements}")

    @property
    def index(self) -> int:
        return _PARTIES.index(self.party)

    def hit(self, kind: str, step: str | None = None, material: str | None = None) -> bool:
        """Count a matching event of ``kind`` (at ``step``, masked by ``material``); True if
        this occurrence is the one to change."""
        if kind != self.kind and not (kind == "open" and self.kind in ("open_copy",
                                                                       "open_both")):
            return False
        if self.step is not None and step != self.step:
            return False
        if self.material is not None and material != self.material:
            return False
        self.seen += 1
        if self.occurrence is None or self.seen - 1 == self.occurrence:
            self.fired += 1
            return True
        return False

    def sends(self) -> tuple[bool, bool]:
        """For an opening that was hit: (change the first copy, change the redundant copy)."""
        if self.kind == "dealer_local":
            return self.component == 0, self.component == 1
        return self.kind in ("open", "open_both"), self.kind in ("open_copy", "open_both")

    def perturb(self, value: np.ndarray, alg) -> np.ndarray:
        """A copy of ``value`` (elements of ``alg``) with the selected elements offset."""
        out = np.array(value, copy=True)
        flat = out.reshape(-1)
        if flat.size == 0:
            return out
        g = np.random.default_rng([self.seed, self.fired])
        if self.elements is None:
            idx = np.arange(flat.size)
        elif isinstance(self.elements, float):
            cnt = max(1, int(round(self.elements * flat.size)))
            idx = np.sort(g.choice(flat.size, size=cnt, replace=False))
        else:
            idx = np.unique(np.asarray(self.elements, dtype=np.int64) % flat.size)
        mod = modulus(alg)
        if self.offset is None:
            off = g.integers(1, mod, size=idx.size, dtype=np.uint64)
        else:
            off = np.full(idx.size, int(self.offset) % mod or 1, dtype=np.uint64)
        flat[idx] = alg.add(flat[idx], alg.reduce(off).astype(flat.dtype))
        self.changed += int(idx.size > 0)
        return out
