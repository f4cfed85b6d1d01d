"""The real Paillier backend (gmpy2 arithmetic on ``phe`` keys), with the DJN obfuscator and
the combination of two partial decryptions."""

from __future__ import annotations

import contextlib
import secrets

import numpy as np
from gmpy2 import invert, mpz, powmod

from ...core.ledger import Ledger
from ...core.timing import Timings
from .ciphertexts import CipherArray, PackingLayout, PartialDecryption, _check_partials
from .encoding import _as_int_objects, decode_int, encode_int
from .keys import KeyShare, PrivateKey, PublicKey
from .multiexp import MultiExpPlan, multiexp_plan


class DJNObfuscator:
    """Randomizers ``h_s^α mod N²`` of the Damgård–Jurik–Nielsen variant (as in ABY).

    ``h = −x² mod N`` for a random ``x`` and ``h_s = h^N mod N²`` are fixed once per public key;
    an encryption then needs ``h_s^α`` with a short ``α`` (``⌈n/2⌉`` bits), computed from a
    fixed-base table of ``h_s^{d·2^{wj}}`` (``⌈|α|/w⌉`` multiplications instead of a full
    ``r^N``). The ciphertexts are ordinary Paillier ciphertexts ``(1+N)^m · (h^α)^N``.
    """

    _cache: dict[int, DJNObfuscator] = {}

    def __init__(self, public_key: PublicKey, window: int = 8):
        n = mpz(public_key.n)
        self.n2 = n * n
        self.alpha_bits = (int(n).bit_length() + 1) // 2
        self.window = window
        x = mpz(secrets.randbelow(int(n) - 2) + 2)
        h_s = powmod((-x * x) % n, n, self.n2)
        self.tables = []
        base = h_s
        for _ in range(-(-self.alpha_bits // window)):
            row = [mpz(1), base]
            for _ in range(2, 1 << window):
                row.append(row[-1] * base % self.n2)
            self.tables.append(row)
            base = row[-1] * base % self.n2          # h_s^{2^{w(j+1)}}

    @classmethod
    def for_key(cls, public_key: PublicKey) -> DJNObfuscator:
        key = int(public_key.n)
        if key not in cls._cache:
            cls._cache[key] = cls(public_key)
        return cls._cache[key]

    def __call__(self):
        alpha = secrets.randbits(self.alpha_bits)
        mask, w = (1 << self.window) - 1, self.window
        acc = None
        for j, row in enumerate(self.tables):
            d = (alpha >> (w * j)) & mask
            if d:
                acc = row[d] if acc is None else acc * row[d] % self.n2
        return acc if acc is not None else mpz(1)


class Paillier:
    """Paillier operations on :class:`CipherArray` s, booked on a ledger and timed per party.

    Parameters
    ----------
    public_key : phe PaillierPublicKey
    ledger : Ledger, optional
        Operation counts are booked here with the acting ``party``.
    timings : Timings, optional
        Wall-clock seconds per party and operation.
    obfuscation : "djn" or "standard"
        How encryptions randomize: ``"standard"`` raises a fresh ``r`` to the power N (as
        ``phe`` does, one 2048-bit exponentiation mod N²); ``"djn"`` uses
        :class:`DJNObfuscator` (short exponent, fixed-base table), the Paillier variant of ABY
        that SwaNN's implementation used. Both give valid Paillier ciphertexts.
    """

    simulated = False
    #: the simulator's checks of plaintexts no party holds (a wire-mode party's process turns
    #: them off: :mod:`ppnn.wire.swann`)
    lab_checks = True

    def __init__(self, public_key: PublicKey, ledger: Ledger | None = None,
                 timings: Timings | None = None, obfuscation: str = "djn"):
        if not isinstance(public_key, PublicKey):
            raise TypeError("public_key must be a phe PaillierPublicKey")
        if obfuscation not in ("djn", "standard"):
            raise ValueError(f"obfuscation must be 'djn' or 'standard', got {obfuscation!r}")
        self.pk = public_key
        self.n = mpz(public_key.n)
        self.n2 = mpz(public_key.nsquare)
        self.ledger, self.timings = ledger, timings
        self.obfuscation = obfuscation
        self._djn = DJNObfuscator.for_key(public_key) \
            if obfuscation == "djn" and not self.simulated else None
        self.last_multiexp_mults = 0  # multiplications actually performed (real backend)

    # -- sizes --------------------------------------------------------------------------
    @property
    def n_bits(self) -> int:
        return int(self.n).bit_length()

    @property
    def ct_bits(self) -> int:
        """Bits of one ciphertext (an element of Z_{N²})."""
        return 2 * self.n_bits

    def layout(self, slot_bits: int) -> PackingLayout:
        return PackingLayout(slot_bits, self.n_bits)

    # -- bookkeeping ----------------------------------------------------------------------
    def _book(self, op: str, count: int, party: str) -> None:
        if self.ledger is not None and count:
            self.ledger.count(op, int(count), party)

    def _timed(self, party: str, op: str):
        return self.timings.measure(party, op) if self.timings is not None \
            else contextlib.nullcontext()

    def _wrap(self, data, shadow=None) -> CipherArray:
        return CipherArray(np.asarray(data, dtype=object), self.pk, self.simulated, shadow)

    def _follow(self, fn, *operands: CipherArray):
        """The lab's copy of a result's plaintexts (:attr:`CipherArray.shadow`): ``fn`` of the
        operands' copies, mod N; ``None`` on the simulator (its entries are the plaintexts)
        or when an operand's copy is unknown. Not timed and not booked: no party computes
        it."""
        if self.simulated or any(c.shadow is None for c in operands):
            return None
        return np.asarray(fn(*(c.shadow for c in operands)), dtype=object) % int(self.n)

    def _own(self, c, what: str) -> CipherArray:
        if not isinstance(c, CipherArray):
            raise TypeError(f"{what}: expected CipherArray, got {type(c).__name__}")
        if c.public_key != self.pk:
            raise ValueError(f"{what}: ciphertext was made under a different public key "
                             "(mismatched public keys)")
        if c.simulated != self.simulated:
            raise ValueError(f"{what}: {'simulated' if c.simulated else 'real'} ciphertext "
                             f"given to a {'simulated' if self.simulated else 'real'} backend")
        return c

    def _check_sk(self, private_key) -> None:
        if not isinstance(private_key, PrivateKey):
            raise TypeError("private_key must be a phe PaillierPrivateKey")
        if private_key.public_key != self.pk:
            raise ValueError("private key does not belong to this public key")

    # -- group primitives (overridden by the simulator) ---------------------------------
    ONE = mpz(1)

    def _obfuscator(self):
        if self._djn is not None:
            return self._djn()
        r = mpz(secrets.randbelow(int(self.n) - 1) + 1)
        return powmod(r, self.n, self.n2)

    def _enc(self, m):
        return (1 + m * self.n) * self._obfuscator() % self.n2

    def _trivial(self, m):
        """``(1 + N)^m = 1 + mN``: an encryption of a public value without randomness."""
        return (1 + m * self.n) % self.n2

    def _mul(self, a, b):
        return a * b % self.n2

    def _pow(self, a, e):
        return powmod(a, e, self.n2)

    def _inv(self, a):
        return invert(a, self.n2)

    def _dec(self, private_key, c):
        return mpz(private_key.raw_decrypt(int(c)))

    def _partial(self, c, d: int):
        if d < 0:
            return powmod(invert(c, self.n2), -d, self.n2)
        return powmod(c, d, self.n2)

    def _combine_one(self, u):
        if (u - 1) % self.n:
            raise ValueError("partial decryptions do not combine to a plaintext: both servers' "
                             "key shares are needed")
        return (u - 1) // self.n

    # -- encryption / decryption ---------------------------------------------------------
    def encrypt(self, m, party: str) -> CipherArray:
        """Encrypt signed integers (fresh randomness ``r^N`` for every value)."""
        res = encode_int(m, self.pk)
        with self._timed(party, "Enc"):
            out = [self._enc(v) for v in res.ravel()]
        self._book("Enc", res.size, party)
        return self._wrap(np.array(out, dtype=object).reshape(res.shape),
                          None if self.simulated else res)

    def encrypt_trivial(self, m) -> CipherArray:
        """``1 + mN`` for public values (no randomness; never sent without rerandomizing)."""
        res = encode_int(m, self.pk)
        return self._wrap(np.array([self._trivial(v) for v in res.ravel()],
                                   dtype=object).reshape(res.shape),
                          None if self.simulated else res)

    def decrypt(self, private_key: PrivateKey, c: CipherArray, party: str) -> np.ndarray:
        """Decrypt to signed Python ints (CRT decryption by the key holder)."""
        self._check_sk(private_key)
        c = self._own(c, "decrypt")
        with self._timed(party, "Dec"):
            res = [self._dec(private_key, v) for v in c.data.ravel()]
        self._book("Dec", c.size, party)
        return decode_int(np.array(res, dtype=object).reshape(c.shape), self.pk)

    def decrypt_raw(self, private_key: PrivateKey, c: CipherArray, party: str) -> np.ndarray:
        """Decrypt to residues in ``[0, N)`` (packed plaintexts are not signed)."""
        self._check_sk(private_key)
        c = self._own(c, "decrypt")
        with self._timed(party, "Dec"):
            res = [int(self._dec(private_key, v)) for v in c.data.ravel()]
        self._book("Dec", c.size, party)
        return np.array(res, dtype=object).reshape(c.shape)

    def rerandomize(self, c: CipherArray, party: str) -> CipherArray:
        """Multiply by a fresh ``r^N`` (an encryption of 0) before a ciphertext leaves."""
        c = self._own(c, "rerandomize")
        with self._timed(party, "Enc"):
            out = [self._mul(v, self._obfuscator()) for v in c.data.ravel()]
        self._book("Enc", c.size, party)
        return self._wrap(np.array(out, dtype=object).reshape(c.shape), c.shadow)

    # -- threshold decryption (two-server setting) ---------------------------------------
    def partial_decrypt(self, share: KeyShare, c: CipherArray, party: str) -> PartialDecryption:
        if not isinstance(share, KeyShare):
            raise TypeError("share must be a KeyShare from split_private_key()")
        if share.public_key != self.pk:
            raise ValueError("key share belongs to a different public key")
        c = self._own(c, "partial_decrypt")
        with self._timed(party, "PartialDec"):
            out = [self._partial(v, share.d) for v in c.data.ravel()]
        self._book("PartialDec", c.size, party)
        return PartialDecryption(np.array(out, dtype=object).reshape(c.shape), self.pk,
                                 self.simulated, share.index)

    def combine(self, p1: PartialDecryption, p2: PartialDecryption, party: str,
                signed: bool = True) -> np.ndarray:
        """Combine both servers' partial decryptions into the plaintexts."""
        _check_partials(self, p1, p2)
        with self._timed(party, "Dec"):
            res = [int(self._combine_one(self._mul(a, b)))
                   for a, b in zip(p1.data.ravel(), p2.data.ravel())]
        self._book("paillier_mul", p1.size, party)
        arr = np.array(res, dtype=object).reshape(p1.shape)
        return decode_int(arr, self.pk) if signed else arr

    # -- homomorphic operations ----------------------------------------------------------
    def add(self, a: CipherArray, b: CipherArray, party: str) -> CipherArray:
        """``[a]·[b] = [a + b]`` elementwise."""
        a, b = self._own(a, "add"), self._own(b, "add")
        if a.shape != b.shape:
            raise ValueError(f"add: shapes differ {a.shape} vs {b.shape}")
        with self._timed(party, "add"):
            out = [self._mul(x, y) for x, y in zip(a.data.ravel(), b.data.ravel())]
        self._book("paillier_mul", a.size, party)
        return self._wrap(np.array(out, dtype=object).reshape(a.shape),
                          self._follow(np.add, a, b))

    def add_plain(self, c: CipherArray, m, party: str) -> CipherArray:
        """``[x]·(1 + mN) = [x + m]`` for public (or own) integers ``m``."""
        c = self._own(c, "add_plain")
        res = encode_int(np.broadcast_to(np.asarray(m, dtype=object), c.shape), self.pk)
        with self._timed(party, "add"):
            out = [self._mul(x, self._trivial(v)) for x, v in zip(c.data.ravel(), res.ravel())]
        self._book("paillier_mul", c.size, party)
        return self._wrap(np.array(out, dtype=object).reshape(c.shape),
                          self._follow(lambda x: x + res, c))

    def neg(self, c: CipherArray, party: str) -> CipherArray:
        """``[x]⁻¹ = [−x]``."""
        c = self._own(c, "neg")
        with self._timed(party, "inv"):
            out = [self._inv(x) for x in c.data.ravel()]
        self._book("paillier_inv", c.size, party)
        return self._wrap(np.array(out, dtype=object).reshape(c.shape),
                          self._follow(np.negative, c))

    def sub(self, a: CipherArray, b: CipherArray, party: str) -> CipherArray:
        """``[a]·[b]⁻¹ = [a − b]``."""
        return self.add(a, self.neg(b, party), party)

    def mul_plain(self, c: CipherArray, k, party: str) -> CipherArray:
        """``[x]^k = [k·x]`` elementwise (one exponentiation per element, inverse if k < 0)."""
        c = self._own(c, "mul_plain")
        ks = _as_int_objects(np.broadcast_to(np.asarray(k), c.shape), "scalar").ravel()
        with self._timed(party, "exp"):
            out = []
            for x, kk in zip(c.data.ravel(), ks):
                kk = int(kk)
                out.append(self._pow(self._inv(x), -kk) if kk < 0 else self._pow(x, kk))
        self._book("paillier_exp", len(ks), party)
        self._book("paillier_exp_bits", sum(abs(int(v)).bit_length() for v in ks), party)
        self._book("paillier_inv", sum(int(v) < 0 for v in ks), party)
        return self._wrap(np.array(out, dtype=object).reshape(c.shape),
                          self._follow(lambda x: x * ks.reshape(c.shape), c))

    def sum(self, c: CipherArray, party: str) -> CipherArray:
        """``∏ [x_i] = [Σ x_i]`` over the whole array (a 1-element array)."""
        c = self._own(c, "sum")
        with self._timed(party, "add"):
            vals = list(c.data.ravel())
            acc = vals[0]
            for v in vals[1:]:
                acc = self._mul(acc, v)
        self._book("paillier_mul", c.size - 1, party)
        return self._wrap(np.array([acc], dtype=object),
                          self._follow(lambda x: np.array([x.sum()], dtype=object), c))

    def sum_windows(self, c: CipherArray, index, party: str) -> CipherArray:
        """Sum pooling: output ``p`` is ``∏_j c[index[p, j]]`` (entries −1 are padding)."""
        c = self._own(c, "sum_windows")
        index = np.asarray(index)
        flat = c.data.ravel()
        out = []
        n_mul = 0
        with self._timed(party, "add"):
            for row in index:
                sel = row[row >= 0]
                if sel.size == 0:
                    out.append(self._trivial(mpz(0)))
                    continue
                acc = flat[sel[0]]
                for j in sel[1:]:
                    acc = self._mul(acc, flat[j])
                n_mul += sel.size - 1
                out.append(acc)
        self._book("paillier_mul", n_mul, party)
        return self._wrap(np.array(out, dtype=object), self._follow(
            lambda x: np.append(x.ravel(), 0)[index].sum(axis=1), c))

    # -- dot products (Conv, FC) ---------------------------------------------------------
    def dot(self, c: CipherArray, W, party: str, method: str = "multiexp",
            h: int | None = None) -> CipherArray:
        """Encrypted matrix-vector product ``[W @ x]`` from ``[x]`` (eq. (1) of the paper).

        ``method="multiexp"`` uses one Lim–Lee plan whose tables are shared by all rows;
        ``"naive"`` raises each ``[x_i]`` to ``W[r, i]`` and multiplies (the unoptimised
        baseline of Table 1).
        """
        c = self._own(c, "dot").ravel()
        W = np.asarray(W)
        if W.ndim != 2 or W.shape[1] != c.size:
            raise ValueError(f"dot: weights {W.shape} do not match {c.size} ciphertexts")
        index = np.arange(c.size)[None, :]
        return self.gather_dot(c, index, W, party, method, h).reshape(-1)

    def gather_dot(self, c: CipherArray, index, W, party: str, method: str = "multiexp",
                   h: int | None = None) -> CipherArray:
        """Convolution as gathered dot products: output ``[r, p] = ∏_j c[index[p,j]]^{W[r,j]}``.

        ``index`` (patches × taps) holds positions in ``c.ravel()``; −1 marks zero padding
        (skipped, as ``[0]^w = 1``). Tables of one patch are shared by all ``W`` rows.
        Returns a (rows, patches) CipherArray.
        """
        if method not in ("multiexp", "naive"):
            raise ValueError(f"method must be 'multiexp' or 'naive', got {method!r}")
        c = self._own(c, "gather_dot")
        flat = c.data.ravel()
        index = np.asarray(index)
        W = np.asarray(W)
        if W.dtype.kind not in "iu":
            raise TypeError(f"weights must be integers (encode them first), got {W.dtype}")
        if index.ndim != 2 or W.ndim != 2 or W.shape[1] != index.shape[1]:
            raise ValueError(f"gather_dot: index {index.shape} and weights {W.shape} disagree")
        if index.size and (index.max() >= flat.size or index.min() < -1):
            raise ValueError("gather_dot: index out of range")
        W = W.astype(np.int64)
        out = np.empty((W.shape[0], index.shape[0]), dtype=object)
        with self._timed(party, "dot"):
            if method == "naive":
                self._gather_naive(flat, index, W, out, party)
            else:
                self._gather_multiexp(flat, index, W, out, party, h)
        return self._wrap(out, self._follow(
            lambda x: W.astype(object) @ np.append(x.ravel(), 0)[index].T, c))

    def _gather_naive(self, flat, index, W, out, party) -> None:
        n_exp = n_bits = n_inv = n_mul = 0
        absW = np.abs(W)
        bitlen = np.zeros_like(absW)
        nz = absW > 0
        bitlen[nz] = np.floor(np.log2(absW[nz])).astype(np.int64) + 1
        for p, row in enumerate(index):
            valid = row >= 0
            cols = np.nonzero(valid)[0]
            bases = [flat[j] for j in row[valid]]
            for r in range(W.shape[0]):
                acc = None
                for k, col in enumerate(cols):
                    w = int(W[r, col])
                    if w == 0:
                        continue
                    if w < 0:  # as phe does: invert the ciphertext, raise it to |w|
                        term = self._pow(self._inv(bases[k]), -w)
                        n_inv += 1
                    else:
                        term = self._pow(bases[k], w)
                    if acc is None:
                        acc = term
                    else:
                        acc = self._mul(acc, term)
                        n_mul += 1
                out[r, p] = acc if acc is not None else self._trivial(mpz(0))
            wv = W[:, cols]
            n_exp += int((wv != 0).sum())
            n_bits += int(bitlen[:, cols].sum())
        self._book("paillier_exp", n_exp, party)
        self._book("paillier_exp_bits", n_bits, party)
        self._book("paillier_inv", n_inv, party)
        self._book("paillier_mul", n_mul, party)

    def _gather_multiexp(self, flat, index, W, out, party, h) -> None:
        full = multiexp_plan(W, h)
        h = full.h
        n_mul = n_inv = n_exp = n_bits = 0
        performed = 0
        plans: dict[bytes, MultiExpPlan] = {}
        for p, row in enumerate(index):
            valid = row >= 0
            if valid.all():
                plan, cols = full, None
            else:
                key = valid.tobytes()
                if key not in plans:
                    plans[key] = multiexp_plan(W[:, valid], h)
                plan, cols = plans[key], valid
            bases = [flat[j] for j in row[valid]]
            res, done = self._multiexp(bases, plan)
            performed += done
            out[:, p] = res
            n_mul += plan.total_mults()
            if plan.offset:
                n_exp += 1
                n_bits += plan.offset.bit_length()
                n_inv += 1
            del cols
        self.last_multiexp_mults = performed
        self._book("paillier_mul", n_mul, party)
        self._book("paillier_exp", n_exp, party)
        self._book("paillier_exp_bits", n_bits, party)
        self._book("paillier_inv", n_inv, party)

    def _multiexp(self, bases, plan: MultiExpPlan):
        """Lim–Lee multi-exponentiation of ``bases`` for every row of ``plan``.

        Returns the results and the number of modular multiplications performed (which the
        tests compare with :meth:`MultiExpPlan.total_mults`).
        """
        n2 = self.n2
        done = 0
        tables = []
        for g, size in enumerate(plan.group_sizes):
            grp = bases[g * plan.h: g * plan.h + size]
            T = [self.ONE] * (1 << size)
            for s in range(1, 1 << size):
                low = s & -s
                rest = s ^ low
                b = grp[low.bit_length() - 1]
                if rest:
                    T[s] = T[rest] * b % n2
                    done += 1
                else:
                    T[s] = b
            tables.append(T)
        results = []
        idx = plan.idx.tolist()          # plain lists: numpy scalar indexing is slow here
        maxbits = plan.idx.shape[1]
        for r, t in enumerate(plan.t.tolist()):
            acc = None
            for cols in idx[r][maxbits - t:]:
                if acc is not None:
                    acc = acc * acc % n2
                    done += 1
                for s, T in zip(cols, tables):
                    if s:
                        if acc is None:
                            acc = T[s]
                        else:
                            acc = acc * T[s] % n2
                            done += 1
            results.append(acc if acc is not None else self.ONE)
        if plan.offset:
            prod = tables[0][-1]
            for T in tables[1:]:
                prod = prod * T[-1] % n2
                done += 1
            corr = self._inv(self._pow(prod, plan.offset))
            results = [v * corr % n2 for v in results]
            done += len(results)
        return results, done

    # -- packing (§5.1, eq. (2)) ---------------------------------------------------------
    def pack(self, c: CipherArray, layout: PackingLayout, value_bits: int,
             party: str) -> CipherArray:
        """``[x̂] = ∏_m [x_m]^{(2^s)^m}`` for groups of ``ρ`` ciphertexts (Horner's rule).

        ``value_bits`` is what the packing party knows about the plaintexts: every one is in
        ``[0, 2^value_bits)``. It must fit the slot, otherwise a carry would spill into the
        next slot: that raises ``ValueError``. So does any actual value outside
        ``[0, 2^slot_bits)`` (naming its index, slot, bits and the slot width), on both
        backends: the simulator holds the plaintexts, and real ciphertexts made by this
        backend carry the lab's copy of theirs (:attr:`CipherArray.shadow`). No party could
        see such a value under encryption; without the check the decrypted slots would come
        back wrong (``[2^100 + 5, 7]`` in 100-bit slots unpacks as ``[5, 8]``). A real
        ciphertext built by hand (no shadow) is checked against ``value_bits`` only.
        """
        c = self._own(c, "pack").ravel()
        if not isinstance(layout, PackingLayout):
            raise TypeError("layout must be a PackingLayout")
        if layout.n_bits != self.n_bits:
            raise ValueError(f"layout is for a {layout.n_bits}-bit modulus, key has "
                             f"{self.n_bits} bits")
        if value_bits > layout.slot_bits:
            raise ValueError(f"packing overflow: {value_bits}-bit values do not fit slots of "
                             f"{layout.slot_bits} bits")
        plain = c.known_plaintexts
        if plain is not None:  # the values themselves, as the lab knows them (not booked)
            n = int(self.n)
            layout.check_values(np.where(plain > n // 2, plain - n, plain))
        s = layout.slot_bits
        shift = mpz(1) << s
        out = []
        n_mul = 0
        with self._timed(party, "pack"):
            for g in layout.groups(c.size):
                acc = c.data[g[-1]]
                for m in reversed(g[:-1]):
                    acc = self._mul(self._pow(acc, shift), c.data[m])
                n_mul += (len(g) - 1) * (s + 1)
                out.append(acc)
        self._book("paillier_mul", n_mul, party)  # s squarings + 1 multiplication per slot
        return self._wrap(np.array(out, dtype=object), self._follow(
            lambda x: (np.append(x, [0] * (-x.size % layout.rho)).reshape(-1, layout.rho)
                       * np.array([1 << (s * m) for m in range(layout.rho)], dtype=object)
                       ).sum(axis=1), c))
