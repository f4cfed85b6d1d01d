"""SwaNN's interactive protocols (§4.1.2): secure square and the two switching protocols.

* :func:`secure_square` -- **Protocol 1** (PHE only): the server masks ``[x]`` with
  ``r ∈ {0,1}^{ℓ+κ}``, the key holder decrypts ``x_r = x + r``, squares it and returns
  ``[x_r²]``; the server removes the mask homomorphically,
  ``[x²] = [x_r²] · ([r²] · [x]^{2r})⁻¹``.
* :func:`phe_to_2pc` -- **Protocol 2** (PHE → 2PC): the key holder decrypts ``x + r`` and
  shares it, the server shares ``r``; both subtract locally: ``⟨x⟩ = ⟨x + r⟩ − ⟨r⟩``.
* :func:`bool_to_phe` -- **Protocol 3** (2PC → PHE): the server shares a mask ``r'``, the
  masked value ``x + r'`` is opened to the key holder, who encrypts it; the server removes
  ``r'`` homomorphically.

Who is who (:class:`Roles`). In the **client-server** setting the *evaluator* is the server and
the *helper* is the client, who holds the secret key (:class:`KeyHolderDecryption`). In the
**two-server** setting (§4.2) the evaluator is the server that owns the image and the helper
the other server; decryption takes both servers' partial decryptions
(:class:`SplitKeyDecryption`).

Where the paper is silent (:class:`Masking`): the public offset ``2^{ℓ−1}`` added before
masking, the rerandomization of every ciphertext that leaves the server, and Protocol 3's
addition done inside the Boolean circuit over the integers. The masks ``r`` and ``r'`` come
from :func:`ppnn.core.randomness.mask_source` (the OS CSPRNG on real Paillier). A ledger that
records values keeps shares and masked values whole and Paillier ciphertexts as size and
digest; in the names ``_c`` is the helper's share and ``_s`` the evaluator's.

See also
--------
docs/protocols.md : Paillier and SwaNN's switching, with why each convention is needed.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from ...core import Ring
from ...core.randomness import mask_source
from ...core.sharing import AdditiveShares, XorShares, share_additive
from ...he.paillier import CipherArray, KeyShare, Paillier, PrivateKey, decode_int
from .twopc import TwoPC, bits_to_ints

__all__ = ["Masking", "Roles", "KeyHolderDecryption", "SplitKeyDecryption", "random_ints",
           "secure_square", "phe_to_2pc", "bool_to_phe"]


@dataclass(frozen=True)
class Masking:
    """Statistical masking of ``ℓ``-bit signed values with ``r ∈ {0,1}^{ℓ+κ}``.

    ``slot_bits = ℓ + κ + 1`` is the packing slot (the paper's ``t + κ`` with ``t = ℓ + 1``:
    the masked, offset value needs one carry bit). With ``ℓ = 32``, ``κ = 80`` and a 2048-bit
    modulus, ``ρ = 18`` values share a ciphertext.
    """

    ell: int
    kappa: int = 80

    def __post_init__(self) -> None:
        if not isinstance(self.ell, int) or not 2 <= self.ell <= 1024:
            raise ValueError(f"ell (bits of the masked values) must be in [2, 1024], "
                             f"got {self.ell}")
        if not isinstance(self.kappa, int) or not 1 <= self.kappa <= 512:
            raise ValueError(f"kappa (statistical masking parameter) must be in [1, 512], "
                             f"got {self.kappa}")

    @property
    def mask_bits(self) -> int:
        return self.ell + self.kappa

    @property
    def slot_bits(self) -> int:
        return self.ell + self.kappa + 1

    @property
    def offset(self) -> int:
        return 1 << (self.ell - 1)

    def check(self, values) -> None:
        """Raise if plaintext values do not fit ``ℓ`` signed bits (oracle side)."""
        arr = np.asarray(values, dtype=object)
        if arr.size == 0:
            return
        lim = 1 << (self.ell - 1)
        lo, hi = int(arr.min()), int(arr.max())
        if hi >= lim or lo < -lim:
            raise ValueError(f"values outside ℓ = {self.ell} signed bits: allowed "
                             f"[-2^{self.ell - 1}, 2^{self.ell - 1}), got [{lo}, {hi}]")


def random_ints(rng, shape, bits: int) -> np.ndarray:
    """Uniform integers in ``[0, 2^bits)`` (Python ints in an object array) from ``rng`` (a
    numpy Generator or a :class:`~ppnn.core.randomness.SecureRandom`)."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return bits_to_ints(rng.integers(0, 2, size=(bits, *shape), dtype=np.uint64))


# ----------------------------------------------------------------------------------------
# roles and decryption
# ----------------------------------------------------------------------------------------
@dataclass
class KeyHolderDecryption:
    """Client-server: the helper (client) holds the secret key and decrypts alone."""

    private_key: PrivateKey

    def decrypt(self, be: Paillier, c: CipherArray, roles: Roles) -> np.ndarray:
        return be.decrypt_raw(self.private_key, c, roles.helper)


@dataclass
class SplitKeyDecryption:
    """Two-server: ``d = d1 + d2``; the evaluator sends its partial decryption along with the
    ciphertext, the helper adds its own and combines (§4.2, [Damgård and Jurik 2001])."""

    evaluator_share: KeyShare
    helper_share: KeyShare

    def decrypt(self, be: Paillier, c: CipherArray, roles: Roles) -> np.ndarray:
        p_ev = be.partial_decrypt(self.evaluator_share, c, roles.evaluator)
        if be.ledger is not None:
            p_ev = be.ledger.transmit(roles.evaluator, roles.helper, p_ev.bits(),
                                      "partial decryption c^{d_i}", p_ev, p_ev.wire())
        p_hp = be.partial_decrypt(self.helper_share, c, roles.helper)
        return be.combine(p_ev, p_hp, roles.helper, signed=False)


@dataclass
class Roles:
    """Who evaluates (owns the encrypted data and the model) and who helps (can decrypt)."""

    evaluator: str
    helper: str
    decryption: KeyHolderDecryption | SplitKeyDecryption

    def __post_init__(self) -> None:
        if self.evaluator == self.helper:
            raise ValueError("evaluator and helper must be different parties")


def _preview(value, k: int = 3) -> str:
    """First ``k`` entries, ciphertexts shortened to their leading hex digits."""
    if isinstance(value, CipherArray):
        items = [f"{int(v):x}"[:10] + "…" for v in value.data.ravel()[:k]]
        return f"{value.size} ciphertexts [" + ", ".join(items) + (", …]" if value.size > k
                                                                   else "]")
    if isinstance(value, AdditiveShares | XorShares):
        return f"shares {value.shape}"
    arr = np.asarray(value, dtype=object).ravel()
    items = [str(int(v)) for v in arr[:k]]
    return "[" + ", ".join(items) + (", …]" if arr.size > k else "]")


def _see(views: list | None, party: str, what: str, value) -> None:
    """Record what ``party`` holds at this step (for the notebook's step-through)."""
    if views is not None:
        views.append({"step": len(views) + 1, "party": party, "sees": what,
                      "value": _preview(value)})


def _timed(be: Paillier, party: str, op: str):
    return be.timings.measure(party, op) if be.timings is not None \
        else contextlib.nullcontext()


def _mask_and_send(be: Paillier, x: CipherArray, r_off, roles: Roles, masking: Masking,
                   pack: bool):
    """Server side of Protocols 1 and 2: ``[x + 2^{ℓ−1} + r]``, packed or not, sent.

    The masks hide ``x`` statistically, the packed slots do not overflow and (hybrid) the
    shares do not wrap only while ``x`` fits ``ℓ`` signed bits. No party can check that under
    encryption, so an input whose activations could leave ``ℓ`` bits is refused before
    anything is encrypted (:meth:`SwannModel.check_input`: the input contract, the worst case
    it implies, or else the input's actual activations). As a second line of defence the
    simulated backend, which holds the plaintexts, checks every activation here
    (``Masking.check`` raises, naming the range), and :meth:`Paillier.pack` checks every
    packed value against its slot on both backends. The packed value
    ``x + 2^{ℓ-1} + r < 2^ℓ + 2^{ℓ+κ}`` has ``ℓ + κ + 1`` bits, the slot's width."""
    ev = roles.evaluator
    if be.simulated and be.lab_checks:
        masking.check(decode_int(x.data, be.pk))
    if pack:
        layout = be.layout(masking.slot_bits)
        masked = be.add_plain(x, r_off, ev)
        value_bits = max(masking.ell, masking.mask_bits) + 1  # bits of x + offset + r
        sent = be.rerandomize(be.pack(masked, layout, value_bits, ev), ev)
    else:
        layout = None
        sent = be.add(x, be.encrypt(r_off, ev), ev)  # [x]·[r] with a fresh encryption of r
    return sent, layout


def _receive_masked(be: Paillier, sent: CipherArray, layout, n: int, roles: Roles):
    """Helper side: decrypt (alone or with the other server) and unpack."""
    z = roles.decryption.decrypt(be, sent, roles)
    if layout is not None:
        with _timed(be, roles.helper, "unpack"):
            z = layout.unpack_plain(z, n)
    return np.asarray(z, dtype=object).ravel()


# ----------------------------------------------------------------------------------------
# Protocol 1: secure square (PHE only)
# ----------------------------------------------------------------------------------------
def secure_square(be: Paillier, x: CipherArray, roles: Roles, rng: np.random.Generator,
                  masking: Masking, pack: bool = True, views: list | None = None
                  ) -> CipherArray:
    """Protocol 1 of SwaNN: ``[x] → [x²]`` with one round trip to the key holder.

    Parameters
    ----------
    be : Paillier backend (books operations; its ledger books the messages)
    x : encrypted values, each in ``[−2^{ℓ−1}, 2^{ℓ−1})``
    roles : who evaluates and who decrypts (client-server or two-server)
    masking : ``ℓ`` and ``κ``; masks ``r ∈ {0,1}^{ℓ+κ}``
    pack : pack the masked values ``ρ`` per ciphertext (the optimised variant)
    views : optional list; each step appends what the acting party holds
    """
    ledger, ev, hp = be.ledger, roles.evaluator, roles.helper
    shape, n = x.shape, x.size
    # server: r ∈_R {0,1}^{ℓ+κ};  [x_r] ← [x] · [r]
    _see(views, ev, "[x] (encrypted input)", x)
    r = random_ints(mask_source(rng, not be.simulated), n, masking.mask_bits)
    _see(views, ev, "r ∈ {0,1}^(ℓ+κ)", r)
    ledger.hold(ev, "Protocol 1: r (its mask)", r)
    sent, layout = _mask_and_send(be, x.ravel(), r + masking.offset, roles, masking, pack)
    _see(views, ev, "[x_r] sent (packed)" if pack else "[x_r] sent", sent)
    with ledger.round():
        sent = ledger.transmit(ev, hp, sent.bits(), "Protocol 1: [x_r]", sent, sent.wire())
        # client: x_r ← decr([x_r])
        z = _receive_masked(be, sent, layout, n, roles)
    x_r = z - masking.offset                       # x + r (the public offset removed)
    _see(views, hp, "x_r = x + r (decrypted)", x_r)
    ledger.hold(hp, "Protocol 1: x_r = x + r (decrypted)", x_r)
    # client: x_r² ← x_r · x_r ; [x_r²] ← enc(x_r²)
    with _timed(be, hp, "square"):
        x_r2 = np.array([int(v) * int(v) for v in x_r], dtype=object)
    c_sq = be.encrypt(x_r2, hp)
    _see(views, hp, "[x_r²] sent", c_sq)
    c_sq = ledger.transmit(hp, ev, c_sq.bits(), "Protocol 1: [x_r^2]", c_sq, c_sq.wire())
    # server: [x²] ← [x_r²] · ([r²] · [x]^{2r})⁻¹
    x_2r_inv = be.mul_plain(x.ravel(), -2 * r, ev)         # [x]^{−2r}
    out = be.add_plain(be.add(c_sq, x_2r_inv, ev), -(r * r), ev)
    _see(views, ev, "[x²] = [x_r²]·([r²]·[x]^(2r))⁻¹", out)
    return out.reshape(*shape)


# ----------------------------------------------------------------------------------------
# Protocol 2: PHE → 2PC
# ----------------------------------------------------------------------------------------
def phe_to_2pc(be: Paillier, x: CipherArray, roles: Roles, tpc: TwoPC,
               rng: np.random.Generator, masking: Masking, ring: Ring,
               pack: bool = True, views: list | None = None) -> AdditiveShares:
    """Protocol 2 of SwaNN: ``[x] → ⟨x⟩`` (additive shares over ``ring``).

    Returns shares in ``tpc.parties`` order ``(helper, evaluator)``. ``ring.k`` must hold
    the ``ℓ``-bit values (``k ≥ ℓ``); the masked sum is reduced modulo ``2^k`` exactly
    because it is a non-negative integer.
    """
    if tpc.parties != (roles.helper, roles.evaluator):
        raise ValueError(f"2PC parties {tpc.parties} must be (helper, evaluator) = "
                         f"({roles.helper}, {roles.evaluator})")
    if ring.k < masking.ell:
        raise ValueError(f"ring Z_2^{ring.k} cannot hold ℓ = {masking.ell}-bit values")
    ledger, ev, hp = be.ledger, roles.evaluator, roles.helper
    shape, n = x.shape, x.size
    modk = 1 << ring.k
    # server: r ∈_R {0,1}^{ℓ+κ};  [x + r] ← [x] · [r]
    _see(views, ev, "[x] (encrypted input)", x)
    r = random_ints(mask_source(rng, not be.simulated), n, masking.mask_bits)
    r_off = r + masking.offset
    _see(views, ev, "r ∈ {0,1}^(ℓ+κ)", r)
    ledger.hold(ev, "Protocol 2: r + 2^(ℓ-1) (its mask)", r_off)
    sent, layout = _mask_and_send(be, x.ravel(), r_off, roles, masking, pack)
    _see(views, ev, "[x + r] sent (packed)" if pack else "[x + r] sent", sent)
    # server: r → ⟨r⟩_c + ⟨r⟩_s
    r_ring = np.array([int(v) % modk for v in r_off], dtype=np.uint64)
    r_sh = share_additive(r_ring, ring, rng)
    _see(views, hp, "<r>_c (from the server)", r_sh.shares[0])
    ledger.hold(ev, "Protocol 2: <r>_s", r_sh.shares[1])
    with ledger.round():
        sent = ledger.transmit(ev, hp, sent.bits(), "Protocol 2: [x + r]", sent, sent.wire())
        r_c = ledger.transmit(ev, hp, n * ring.k, "Protocol 2: <r>_c", r_sh.shares[0])
        r_sh = AdditiveShares(np.stack([r_c, r_sh.shares[1]]), ring)
        # client: x + r ← decr([x + r])
        z = _receive_masked(be, sent, layout, n, roles)
    _see(views, hp, "x + 2^(ℓ-1) + r (decrypted)", z)
    ledger.hold(hp, "Protocol 2: x + 2^(ℓ-1) + r (decrypted)", z)
    # client: x + r → ⟨x + r⟩_c + ⟨x + r⟩_s
    z_ring = np.array([int(v) % modk for v in z], dtype=np.uint64)
    z_sh = share_additive(z_ring, ring, rng)
    _see(views, ev, "<x + r>_s (from the client)", z_sh.shares[1])
    ledger.hold(hp, "Protocol 2: <x + r>_c", z_sh.shares[0])
    z_s = ledger.transmit(hp, ev, n * ring.k, "Protocol 2: <x + r>_s", z_sh.shares[1])
    z_sh = AdditiveShares(np.stack([z_sh.shares[0], z_s]), ring)
    # both: ⟨x⟩ ← ⟨x + r⟩ − ⟨r⟩
    out = (z_sh - r_sh).reshape(*shape)
    _see(views, hp, "<x>_c = <x + r>_c − <r>_c", out.shares[0])
    _see(views, ev, "<x>_s = <x + r>_s − <r>_s", out.shares[1])
    ledger.hold(hp, "Protocol 2: <x>_c = <x + r>_c - <r>_c", out.shares[0])
    ledger.hold(ev, "Protocol 2: <x>_s = <x + r>_s - <r>_s", out.shares[1])
    return out


# ----------------------------------------------------------------------------------------
# Protocol 3: 2PC → PHE
# ----------------------------------------------------------------------------------------
def bool_to_phe(be: Paillier, xb: XorShares, roles: Roles, tpc: TwoPC,
                rng: np.random.Generator, kappa: int = 80, views: list | None = None
                ) -> CipherArray:
    """Protocol 3 of SwaNN: Boolean-shared ``m``-bit signed values ``x`` → ``[x]``.

    Steps: the server picks ``r' ∈ {0,1}^{m+κ}`` and shares it (message ``⟨r'⟩_c``); the
    circuit adds ``x + 2^{m−1}`` (the msb flipped) and ``r'`` on ``m + κ + 1`` bits
    (``m + κ`` AND gates); the server sends its share of the sum (``⟨x + r'⟩_s``); the
    client reconstructs ``x + 2^{m−1} + r'``, encrypts it and sends it; the server removes
    ``r' + 2^{m−1}`` with a plaintext subtraction.
    """
    if tpc.parties != (roles.helper, roles.evaluator):
        raise ValueError(f"2PC parties {tpc.parties} must be (helper, evaluator)")
    if not isinstance(kappa, int) or kappa < 1:
        raise ValueError(f"kappa must be a positive int, got {kappa}")
    ledger, ev, hp = be.ledger, roles.evaluator, roles.helper
    m = xb.shape[0]
    shape = xb.shape[1:]
    n = int(np.prod(shape, dtype=np.int64))
    width = m + kappa
    # server: r' ∈_R {0,1}^{m+κ};  r' → ⟨r'⟩_c + ⟨r'⟩_s
    r_bits = mask_source(rng, not be.simulated).integers(0, 2, size=(width, n),
                                                          dtype=np.uint64)
    r_int = bits_to_ints(r_bits)
    _see(views, ev, "r' ∈ {0,1}^(m+κ)", r_int)
    ledger.hold(hp, "Protocol 3: <x>_c (Boolean, m bits)", xb.shares[0])
    ledger.hold(ev, "Protocol 3: <x>_s (Boolean, m bits)", xb.shares[1])
    ledger.hold(ev, "Protocol 3: r' (its mask)", r_int)
    with tpc.timed():
        r_sh = tpc.input_bits(ev, r_bits, "Protocol 3: <r'>_c")
        # x + 2^{m−1}: flip the sign bit; extend by κ public zero bits
        flat = xb.shares.reshape(2, m, n)
        sign = flat[:, m - 1:].copy()
        sign[0] ^= np.uint64(1)                     # party 0 XORs the public 1 into the msb
        xu = np.concatenate([flat[:, : m - 1], sign, np.zeros((2, kappa, n), np.uint64)],
                            axis=1)
    # both: ⟨x + r'⟩ ← ⟨x⟩ + ⟨r'⟩  (inside the circuit, on m + κ + 1 bits)
    z = tpc.add(XorShares(xu, 1), r_sh, carry_out=True)
    ledger.hold(hp, "Protocol 3: <x + r'>_c", z.shares[0])
    z_s = ledger.transmit(ev, hp, (width + 1) * n, "Protocol 3: <x + r'>_s", z.shares[1])
    z = XorShares(np.stack([z.shares[0], z_s]), 1)
    # client: x + r' ← ⟨x + r'⟩_c + ⟨x + r'⟩_s ; [x + r'] ← enc(x + r')
    z_int = bits_to_ints(z.reveal())
    _see(views, hp, "x + 2^(m-1) + r' (opened)", z_int)
    ledger.hold(hp, "Protocol 3: x + 2^(m-1) + r' (opened)", z_int)
    c = be.encrypt(z_int, hp)
    _see(views, hp, "[x + r'] sent", c)
    c = ledger.transmit(hp, ev, c.bits(), "Protocol 3: [x + r']", c, c.wire())
    # server: [x] ← [x + r'] · [r']⁻¹
    out = be.add_plain(c, -(r_int + (1 << (m - 1))), ev)
    _see(views, ev, "[x] = [x + r']·[r' + 2^(m-1)]⁻¹", out)
    return out.reshape(*shape) if shape else out

