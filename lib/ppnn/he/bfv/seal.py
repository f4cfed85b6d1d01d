"""Real BFV on Microsoft SEAL through TenSEAL's ``tenseal.sealapi`` bindings.

Parameters (128-bit security, SEAL's defaults): ring dimension ``N = 4096`` with
``CoeffModulus.BFVDefault(4096)`` = 36 + 36 (+ a 37-bit special prime for key switching), and a
batching plaintext modulus ``p = 1 mod 2N`` of ``plain_bits`` bits (GALA: 20 bits). SEAL's
smallest ring ``N = 2048`` has a single 54-bit prime and therefore no key switching (no
rotations), so GAZELLE/GALA's "n = 2048 slots" is realised as one *row* of ``N = 4096``.

Slot layout (how SEAL's batching is mapped to GALA's slot vector)
-----------------------------------------------------------------
SEAL's ``N`` BFV slots form a ``2 x N/2`` matrix and ``rotate_rows(k)`` rotates both rows
cyclically by ``k``. A logical GALA vector of ``n`` slots (``n`` divides ``N/2``) is written
*periodically*: slot ``t`` of row ``r`` holds ``v[t mod n]`` in both rows. A row rotation by
``k`` then is exactly the cyclic rotation of ``v`` by ``k`` (periodicity is preserved by every
operation), so kernels see a plain ``n``-slot vector and the simulator needs no special case.
With ``n = N/2 = 2048`` each row holds the vector once (row 1 mirrors row 0).

ScMult uses NTT-form plaintexts: the server's encoded weights are transformed once
(``Evaluator.transform_to_ntt``), a ciphertext is moved to NTT form once before being
multiplied by many plaintexts, and moved back only when it must be rotated (BFV rotations need
coefficient form). SEAL has no hoisting API, so a "HstPerm" here is an ordinary
``rotate_rows``; the counts still follow GAZELLE's accounting (see :mod:`.base`).

Noise flooding (``flood_bits``, see :meth:`.base.PackedBackend.flood`) writes the flooding
polynomial ``E`` through :mod:`.seal_coeffs` (SEAL's uncompressed serialization, vectorized);
it needs room in ``q``: ``N = 4096`` (at most 109 bits of modulus at 128-bit security) cannot
flood with 40 bits, ``N = 8192`` with SEAL's default 174-bit ``q`` can (the constructor checks).
:meth:`SealBFV.phase_noise` is the client's secret-key view of a ciphertext's noise.
"""

from __future__ import annotations

import contextlib
import math
import secrets

import numpy as np
import tenseal.sealapi as sealapi

from ppnn.core import Ledger

from .base import Ct, NoiseModel, PackedBackend
from .seal_coeffs import (
    _memory_path,
    ciphertext_from_coeffs,
    crt_combine,
    read_coeffs,
    reduce_mod_primes,
    secret_key_ntt,
)

__all__ = ["SealBFV", "SealPublicBFV", "calibrate_noise_model", "seal_bytes", "seal_load"]


def _obj(shape) -> np.ndarray:
    return np.empty(tuple(shape), dtype=object)


def _flat(data: np.ndarray, shape) -> list:
    """The SEAL objects of ``data`` broadcast to ``shape``, as a flat Python list."""
    d = np.asarray(data, dtype=object)
    if d.shape != tuple(shape):
        d = np.broadcast_to(d, shape)
    return d.ravel().tolist()


def _unflat(items: list, shape) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(shape)


def _wrap(x) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    out = _obj(())
    out[()] = x
    return out


class SealBFV(PackedBackend):
    """BFV through SEAL (``tenseal.sealapi``); interface of :class:`PackedBackend`.

    Parameters
    ----------
    poly_degree : ring dimension N (4096 or 8192; 128-bit security via BFVDefault).
    plain_bits : bits of the batching plaintext modulus (GALA: 20).
    n : logical slots per ciphertext; a power of two dividing ``N/2`` (default ``N/2``).
    noise_model : the §II-C model tracked alongside SEAL's own noise (default: calibrated on
        this backend by :func:`calibrate_noise_model`).
    flood_bits : statistical security parameter of noise flooding (0: off; 40 is usual);
        every ciphertext the protocols return is then flooded (:meth:`flood`).
    seed : *tests only, insecure*: seeds SEAL's random generator (keys, encryptions) and the
        flooding noise so that a run is reproducible; ``None`` (default) uses SEAL's secure
        generator and the OS CSPRNG.
    """

    name = "seal"
    tracks_values = True
    real = True
    holds_secret_key = True

    def __init__(self, poly_degree: int = 4096, plain_bits: int = 20, n: int | None = None,
                 noise_model: NoiseModel | None = None, ledger: Ledger | None = None,
                 flood_bits: int = 0, seed: int | None = None):
        if poly_degree not in (4096, 8192, 16384):
            raise ValueError(f"poly_degree must be 4096, 8192 or 16384 (N = 2048 has no key "
                             f"switching in SEAL), got {poly_degree}")
        if not 17 <= plain_bits <= 30:
            raise ValueError(f"plain_bits must be in [17, 30], got {plain_bits}")
        N = poly_degree
        row = N // 2
        n = row if n is None else int(n)
        if n < 2 or row % n or n & (n - 1):
            raise ValueError(f"n must be a power of two dividing N/2 = {row}, got {n}")
        parms = sealapi.EncryptionParameters(sealapi.SCHEME_TYPE.BFV)
        parms.set_poly_modulus_degree(N)
        cm = sealapi.CoeffModulus.BFVDefault(N, sealapi.SEC_LEVEL_TYPE.TC128)
        parms.set_coeff_modulus(cm)
        pm = sealapi.PlainModulus.Batching(N, plain_bits)
        parms.set_plain_modulus(pm)
        self._flood_rng = None
        if seed is not None:
            words = [int(w) for w in np.random.SeedSequence(seed).generate_state(8, np.uint64)]
            parms.set_random_generator(sealapi.Blake2xbPRNGFactory(words))
            self._flood_rng = np.random.default_rng(seed)
        self.context = sealapi.SEALContext(parms, True, sealapi.SEC_LEVEL_TYPE.TC128)
        if not self.context.parameters_set():
            raise ValueError(f"SEAL rejected the parameters: "
                             f"{self.context.parameters_error_message()}")
        bits = [m.bit_count() for m in cm]
        self.coeff_bits = bits
        super().__init__(n, int(pm.value()), N, sum(bits[:-1]),
                         noise_model or NoiseModel(1.0, 0.0), ledger, special_bits=bits[-1])
        self.plain_bits = plain_bits
        self.key_primes = len(bits) - 1  # one key-switching pair per ciphertext prime
        self.row_size = row
        keygen = sealapi.KeyGenerator(self.context)
        self._keygen = keygen
        self._sk = keygen.secret_key()
        self._pk = sealapi.PublicKey()
        keygen.create_public_key(self._pk)
        self._gk = sealapi.GaloisKeys()
        self.encryptor = sealapi.Encryptor(self.context, self._pk)
        self.decryptor = sealapi.Decryptor(self.context, self._sk)
        self.evaluator = sealapi.Evaluator(self.context)
        self.encoder = sealapi.BatchEncoder(self.context)
        self._parms_id = self.context.first_parms_id()
        self._primes = [int(m.value()) for m in cm[:-1]]
        if noise_model is None:
            self.noise_model = calibrate_noise_model(self)
        self.set_flooding(flood_bits)


    def galois_elt(self, step: int) -> int:
        """SEAL's Galois element for a left row rotation by ``step`` (3^step mod 2N)."""
        return pow(3, int(step) % self.row_size, 2 * self.poly_degree)

    # -- keys -------------------------------------------------------------------------------
    def _make_keys(self, steps: list[int]) -> None:
        elts = sorted({self.galois_elt(s) for s in set(steps) | self._steps})
        gk = sealapi.GaloisKeys()
        self._keygen.create_galois_keys(elts, gk)
        self._gk = gk

    # -- what the client sends a server that must not decrypt (see SealPublicBFV) ----------
    def public_parameters(self) -> bytes:
        """The encryption parameters (N, the primes of q, p), SEAL-serialized: public."""
        return seal_bytes(self.context.key_context_data().parms())

    def public_key_bytes(self) -> bytes:
        """The public key, SEAL-serialized (the server encrypts zero with it to flood)."""
        return seal_bytes(self._pk)

    def galois_key_bytes(self, steps) -> bytes:
        """Fresh Galois keys for left rotations by ``steps`` in SEAL's seeded serialization
        (``KeyGenerator.create_galois_keys`` returning a ``Serializable``: the uniform half of
        every key-switching pair is a seed the receiver expands). Only the key holder can make
        them; :meth:`SealPublicBFV.install_galois_keys` loads them."""
        elts = sorted({self.galois_elt(s) for s in steps})
        if not elts:
            raise ValueError("galois_key_bytes needs at least one step")
        return seal_bytes(self._keygen.create_galois_keys(elts))

    def _rotation_keys(self, step: int):
        """The ``GaloisKeys`` that hold the key of a left rotation by ``step``."""
        return self._gk

    def _key_state(self):
        return self._gk  # _make_keys builds a new GaloisKeys object, never changes this one

    def _set_key_state(self, state) -> None:
        self._gk = state

    # -- encoding ---------------------------------------------------------------------------
    def _tile(self, v: np.ndarray) -> np.ndarray:
        return np.tile(v, self.poly_degree // self.n)

    def _plain(self, vec: np.ndarray):
        pt = sealapi.Plaintext()
        self.encoder.encode(self._tile(vec).tolist(), pt)
        return pt

    def _encode(self, v, shape):
        """Batch-encode every slot vector and move it to NTT form once (server preprocessing;
        the coefficient form is kept for add_plain/sub_plain)."""
        out = _obj(shape)
        flat = v.reshape(-1, self.n)
        for i, idx in enumerate(np.ndindex(*shape)):  # one SEAL plaintext per slot vector
            out[idx] = self._plain(flat[i])
        return [out, self._ntt_plains(out)]

    def _ntt_plains(self, plain: np.ndarray) -> np.ndarray:
        """NTT forms of plaintexts (``None`` for an all-zero plaintext, see _zero_ntt)."""
        out = _obj(plain.shape)
        for idx in np.ndindex(*plain.shape):
            if plain[idx].is_zero():
                continue
            q = sealapi.Plaintext()
            self.evaluator.transform_to_ntt(plain[idx], self._parms_id, q)
            out[idx] = q
        return out

    def _pt_ntt(self, pt) -> np.ndarray:
        if pt.data is None:
            raise ValueError("plaintext was not encoded by this backend")
        if pt.data[1] is None:
            pt.data[1] = self._ntt_plains(pt.data[0])
        return pt.data[1]

    def _zero_ntt(self):
        """A fresh public-key encryption of zero in NTT form.

        SEAL refuses a product with an all-zero plaintext (the result would be a transparent
        ciphertext that leaks). Such products occur for structurally zero weights (padded
        channels, zero taps); the server substitutes a fresh encryption of zero, which is what
        the product means and keeps the output re-randomised. It is still booked as a ScMult."""
        c, z = sealapi.Ciphertext(), sealapi.Ciphertext()
        self.encryptor.encrypt_zero(c)
        self.evaluator.transform_to_ntt(c, z)
        return z

    # -- form conversions (cached per Ct) -----------------------------------------------------
    def _conv(self, data: np.ndarray, to_ntt: bool) -> np.ndarray:
        out = _obj(data.shape)
        f = self.evaluator.transform_to_ntt if to_ntt else self.evaluator.transform_from_ntt
        for idx in np.ndindex(*data.shape):
            c = sealapi.Ciphertext()
            f(data[idx], c)
            out[idx] = c
        return out

    def _ntt_data(self, ct: Ct) -> np.ndarray:
        if ct.ntt:
            return ct.data
        if ct._cache is None:
            ct._cache = self._conv(ct.data, True)
        return ct._cache

    def _coeff_data(self, ct: Ct) -> np.ndarray:
        if not ct.ntt:
            return ct.data
        if ct._cache is None:
            ct._cache = self._conv(ct.data, False)
        return ct._cache

    def _for_products(self, ct: Ct) -> Ct:
        if ct.ntt:
            return ct
        out = Ct(self, ct.shape, self._ntt_data(ct), ct.noise, ntt=True)
        out._cache = ct.data
        return out

    def _from_ntt(self, ct: Ct) -> Ct:
        if not ct.ntt:
            return ct
        return Ct(self, ct.shape, self._coeff_data(ct), ct.noise, ntt=False)

    # -- data operations --------------------------------------------------------------------
    def _encrypt(self, v, shape):
        out = _obj(shape)
        flat = v.reshape(-1, self.n)
        for i, idx in enumerate(np.ndindex(*shape)):
            c = sealapi.Ciphertext()
            self.encryptor.encrypt(self._plain(flat[i]), c)
            out[idx] = c
        return out

    def _decrypt(self, ct: Ct) -> np.ndarray:
        data = self._coeff_data(ct)
        out = np.empty(ct.shape + (self.n,), dtype=np.int64)
        for idx in np.ndindex(*ct.shape):
            pt = sealapi.Plaintext()
            self.decryptor.decrypt(data[idx], pt)
            out[idx] = np.asarray(self.encoder.decode_uint64(pt)[: self.n], dtype=np.int64)
        return out

    def noise_budget(self, ct: Ct) -> np.ndarray:
        """SEAL's invariant noise budget (bits) of every ciphertext in the batch."""
        self._check_ct(ct, "noise_budget(ct)")
        data = self._coeff_data(ct)
        out = np.empty(ct.shape, dtype=np.int64)
        for idx in np.ndindex(*ct.shape):
            out[idx] = self.decryptor.invariant_noise_budget(data[idx])
        return out

    # -- noise flooding (server) and the client's view of the noise ---------------------------
    @property
    def fresh_noise_log2(self) -> float:
        """log2 of a fresh ciphertext's noise ``|e|`` (coefficients of the phase) implied by the
        model's fresh budget: budget ``b`` means ``|t e| ~ q 2^-(b+1)``."""
        log2_q = sum(math.log2(q) for q in self._primes)
        return log2_q - 1 - math.log2(self.p) - self.noise_model.fresh_bits

    def _random_bytes(self, n: int) -> bytes:
        return self._flood_rng.bytes(n) if self._flood_rng is not None else \
            secrets.token_bytes(n)

    def flood_polynomial(self, bits: int) -> np.ndarray:
        """``N`` integers uniform in ``[-2^bits, 2^bits)`` (object array of Python ints) from
        the OS CSPRNG (or the test seed): the flooding term ``E``."""
        limbs = -(-(bits + 1) // 64)
        raw = np.frombuffer(self._random_bytes(8 * limbs * self.poly_degree), dtype=np.uint64)
        raw = raw.reshape(limbs, self.poly_degree).copy()
        top = bits + 1 - 64 * (limbs - 1)
        if top < 64:
            raw[-1] &= np.uint64((1 << top) - 1)
        E = np.zeros(self.poly_degree, dtype=object)
        for j in range(limbs):  # a few 64-bit limbs per coefficient, whole arrays at a time
            E = E + (raw[j].astype(object) << (64 * j))
        return E - (1 << bits)

    def _flood(self, ct, log2_bound):
        bits = int(math.ceil(log2_bound + self.fresh_noise_log2))
        src = self._coeff_data(ct)
        L, N = len(self._primes), self.poly_degree
        out = _obj(ct.shape)
        for idx in np.ndindex(*ct.shape):  # one ciphertext at a time, whole polynomials
            e = np.zeros((2, L, N), dtype=np.uint64)
            e[0] = reduce_mod_primes(self.flood_polynomial(bits), self._primes)
            c = sealapi.Ciphertext()
            self.evaluator.add(src[idx], ciphertext_from_coeffs(self.context, self._parms_id, e),
                               c)                                   # + (E, 0)
            z = sealapi.Ciphertext()
            self.encryptor.encrypt_zero(z)                          # + Enc_pk(0)
            self.evaluator.add_inplace(c, z)
            out[idx] = c
        return out

    def phase_noise(self, ct: Ct) -> np.ndarray:
        """Client, with the secret key: the noise ``e`` of every ciphertext, i.e. the phase
        ``c0 + c1 s (mod q)`` minus its message part, as floats of shape ``ct.shape + (N,)``:
        ``e = [t (c0 + c1 s) mod q] / t`` (centered), so ``|e| < q / (2t)`` decrypts correctly
        and ``log2 max|e|`` is what SEAL's noise budget rounds (budget ``~ log2 q - 1 -
        log2 t - log2 max|e|``). Diagnostics only (the server cannot compute it)."""
        self._check_ct(ct, "phase_noise(ct)")
        data = self._ntt_data(ct)
        L, N = len(self._primes), self.poly_degree
        sk = secret_key_ntt(self._sk, L, N).astype(object)
        q = math.prod(self._primes)
        out = np.empty(ct.shape + (N,), dtype=float)
        for idx in np.ndindex(*ct.shape):
            a = read_coeffs(data[idx], (2, L, N)).astype(object)
            ph = np.stack([np.mod(a[0, i] + a[1, i] * sk[i], qi).astype(np.uint64)
                           for i, qi in enumerate(self._primes)])  # c0 + c1 s, NTT form
            # back to coefficients with SEAL's own NTT (c1 is kept only to stay non-transparent)
            c = ciphertext_from_coeffs(self.context, self._parms_id,
                                       np.stack([ph, a[1].astype(np.uint64)]), ntt=True)
            self.evaluator.transform_from_ntt_inplace(c)
            phase = crt_combine(read_coeffs(c, (1, L, N))[0], self._primes)
            v = np.mod(phase * self.p, q)
            v = np.where(v > q // 2, v - q, v)
            out[idx] = np.asarray(v, dtype=float) / self.p
        return out

    def _add(self, a, b, shape):
        ntt = a.ntt and b.ntt
        da = self._ntt_data(a) if ntt else self._coeff_data(a)
        db = self._ntt_data(b) if ntt else self._coeff_data(b)
        add, res = self.evaluator.add, []
        for x, y in zip(_flat(da, shape), _flat(db, shape)):
            c = sealapi.Ciphertext()
            add(x, y, c)
            res.append(c)
        return _unflat(res, shape), ntt

    def _plain_add(self, ct, pt, shape, sign):
        d = np.broadcast_to(self._coeff_data(ct), shape)
        plain = np.broadcast_to(pt.data[0], shape)
        f = self.evaluator.add_plain if sign > 0 else self.evaluator.sub_plain
        out = _obj(shape)
        for idx in np.ndindex(*shape):
            c = sealapi.Ciphertext()
            f(d[idx], plain[idx], c)
            out[idx] = c
        return out, False

    def _mul_plain(self, ct, pt, shape):
        mul, res = self.evaluator.multiply_plain, []
        for x, q in zip(_flat(self._ntt_data(ct), shape), _flat(self._pt_ntt(pt), shape)):
            if q is None:
                res.append(self._zero_ntt())
                continue
            c = sealapi.Ciphertext()
            mul(x, q, c)
            res.append(c)
        return _unflat(res, shape)

    def _mul_plain_sum(self, ct, pt, shape, axes, out_shape):
        nd = len(shape)
        keep = [i for i in range(nd) if i not in axes]
        d = np.broadcast_to(self._ntt_data(ct), shape).transpose(keep + list(axes))
        q = np.broadcast_to(self._pt_ntt(pt), shape).transpose(keep + list(axes))
        d = d.reshape(out_shape + (-1,))
        q = q.reshape(out_shape + (-1,))
        out = _obj(out_shape)
        mul, add_inplace = self.evaluator.multiply_plain, self.evaluator.add_inplace
        tmp = sealapi.Ciphertext()
        for idx in np.ndindex(*out_shape):
            acc = None
            for j in range(d.shape[-1]):
                if q[idx][j] is None:  # zero plaintext: contributes nothing
                    continue
                if acc is None:
                    acc = sealapi.Ciphertext()
                    mul(d[idx][j], q[idx][j], acc)
                else:
                    mul(d[idx][j], q[idx][j], tmp)
                    add_inplace(acc, tmp)
            out[idx] = acc if acc is not None else self._zero_ntt()
        return out

    def _sum(self, ct, axes, out_shape):
        nd = ct.ndim
        keep = [i for i in range(nd) if i not in axes]
        d = ct.data.transpose(keep + list(axes)).reshape(out_shape + (-1,))
        out = _obj(out_shape)
        add, add_inplace = self.evaluator.add, self.evaluator.add_inplace
        for idx in np.ndindex(*out_shape):
            row = d[idx]
            if row.shape[0] == 1:
                out[idx] = row[0]
                continue
            acc = sealapi.Ciphertext()
            add(row[0], row[1], acc)
            for j in range(2, row.shape[0]):
                add_inplace(acc, row[j])
            out[idx] = acc
        return out

    def _rotate(self, ct, steps, shape, hoisted=False):
        src = self._coeff_data(ct)
        src = src[..., None] if hoisted else src
        srcs = _flat(src, shape)
        ks = [int(steps)] * len(srcs) if np.ndim(steps) == 0 else \
            np.broadcast_to(steps, shape).ravel().tolist()
        rot, keys = self.evaluator.rotate_rows, self._rotation_keys
        res = []
        for c, k in zip(srcs, ks):
            if k == 0:
                res.append(c)
                continue
            r = sealapi.Ciphertext()
            rot(c, k, keys(k), r)
            res.append(r)
        return _unflat(res, shape)

    def _index(self, ct: Ct, idx) -> Ct:
        idx = idx if isinstance(idx, tuple) else (idx,)
        if any(i is Ellipsis or i is None for i in idx):
            raise ValueError("Ct indexing supports ints, slices and index arrays (no ... / None)")
        noise = ct.noise[idx]
        data = _wrap(ct.data[idx])
        out = Ct(self, noise.shape, data, noise, ct.ntt)
        if ct._cache is not None:
            out._cache = _wrap(ct._cache[idx])
        return out

    def _reshape(self, ct: Ct, shape) -> Ct:
        noise = ct.noise.reshape(shape)
        out = Ct(self, noise.shape, ct.data.reshape(noise.shape), noise, ct.ntt)
        if ct._cache is not None:
            out._cache = ct._cache.reshape(noise.shape)
        return out

    def _stack(self, cts, axis):
        return np.stack([c.data for c in cts], axis=axis)


def seal_bytes(obj) -> bytes:
    """SEAL's own serialization of ``obj`` (its ``save``: SEAL header, zstd), kept in memory
    (an anonymous memfd, :mod:`.seal_coeffs`): the binding saves only to a path."""
    with _memory_path(b"") as path:
        obj.save(path)
        with open(path, "rb") as f:
            return f.read()


def seal_load(obj, blob: bytes, context=None):
    """``obj`` loaded from SEAL-serialized ``blob`` (validated by SEAL against ``context``,
    when the type takes one); returns ``obj``."""
    with _memory_path(bytes(blob)) as path:
        if context is None:
            obj.load(path)
        else:
            obj.load(context, path)
    return obj


class SealPublicBFV(SealBFV):
    """BFV through SEAL holding **no secret key**: the server's backend across processes.

    Built from what a client (:class:`SealBFV`) sends: the serialized encryption parameters
    (:meth:`SealBFV.public_parameters`) and public key (:meth:`SealBFV.public_key_bytes`);
    the Galois keys arrive later, per rotation set (:meth:`install_galois_keys`, from
    :meth:`SealBFV.galois_key_bytes`). It evaluates everything the server does -- encode,
    add, AddPlain, ScMult, rotations, flooding (a public-key encryption of zero and the
    flooding polynomial) -- and encrypts with the public key (the server's stand-ins). It
    has no ``KeyGenerator``, no secret key and no ``Decryptor``: :meth:`decrypt`,
    :meth:`noise_budget`, :meth:`phase_noise` and making Galois keys raise
    ``PermissionError``.

    ``noise_model`` (default: calibrated by :func:`calibrate_noise_model` on a throwaway
    key pair of the same parameters, made and discarded here): the §II-C model the flooding
    bound reads -- a property of the parameters, which the server measures itself."""

    name = "seal-public"
    holds_secret_key = False

    def __init__(self, parameters: bytes, public_key: bytes, n: int | None = None,
                 noise_model: NoiseModel | None = None, ledger: Ledger | None = None,
                 flood_bits: int = 0):
        parms = seal_load(sealapi.EncryptionParameters(sealapi.SCHEME_TYPE.BFV), parameters)
        if parms.scheme() != sealapi.SCHEME_TYPE.BFV:
            raise ValueError("the serialized parameters are not BFV's")
        N = int(parms.poly_modulus_degree())
        row = N // 2
        n = row if n is None else int(n)
        if n < 2 or row % n or n & (n - 1):
            raise ValueError(f"n must be a power of two dividing N/2 = {row}, got {n}")
        self.context = sealapi.SEALContext(parms, True, sealapi.SEC_LEVEL_TYPE.TC128)
        if not self.context.parameters_set():
            raise ValueError(f"SEAL rejected the parameters: "
                             f"{self.context.parameters_error_message()}")
        cm = parms.coeff_modulus()
        bits = [m.bit_count() for m in cm]
        self.coeff_bits = bits
        p = int(parms.plain_modulus().value())
        self.plain_bits = p.bit_length()
        if noise_model is None:  # a key pair of its own, discarded after the calibration
            noise_model = SealBFV(N, self.plain_bits, n).noise_model
        PackedBackend.__init__(self, n, p, N, sum(bits[:-1]), noise_model, ledger,
                               special_bits=bits[-1])
        self.key_primes = len(bits) - 1
        self.row_size = row
        self._flood_rng = None
        self._pk = seal_load(sealapi.PublicKey(), public_key, self.context)
        self._gks: dict[int, object] = {}
        self.encryptor = sealapi.Encryptor(self.context, self._pk)
        self.evaluator = sealapi.Evaluator(self.context)
        self.encoder = sealapi.BatchEncoder(self.context)
        self._parms_id = self.context.first_parms_id()
        self._primes = [int(m.value()) for m in cm[:-1]]
        self.set_flooding(flood_bits)

    def install_galois_keys(self, steps, blob: bytes) -> list[int]:
        """Load the client's serialized Galois keys for left rotations by ``steps`` (SEAL
        validates them against the parameters); returns the steps that were new."""
        gk = seal_load(sealapi.GaloisKeys(), blob, self.context)
        new = sorted({int(s) % self.n for s in steps} - {0})
        for s in new:
            if not gk.has_key(self.galois_elt(s)):
                raise ValueError(f"the Galois keys received hold no key for step {s}")
            self._gks[s] = gk
        fresh = sorted(set(new) - self._steps)
        self._steps.update(new)
        return fresh

    def _no_secret_key(self, what: str):
        return PermissionError(f"{what}: this backend holds no secret key (the server's: "
                               "public and Galois keys only)")

    def _make_keys(self, steps: list[int]) -> None:
        raise self._no_secret_key("making Galois keys")

    def _rotation_keys(self, step: int):
        return self._gks[int(step)]

    def _key_state(self):
        return dict(self._gks)

    def _set_key_state(self, state) -> None:
        self._gks = state

    def public_parameters(self) -> bytes:
        return seal_bytes(self.context.key_context_data().parms())

    def galois_key_bytes(self, steps) -> bytes:
        raise self._no_secret_key("making Galois keys")

    def _decrypt(self, ct: Ct) -> np.ndarray:
        raise self._no_secret_key("decrypt")

    def noise_budget(self, ct: Ct) -> np.ndarray:
        raise self._no_secret_key("noise_budget (SEAL's needs the secret key)")

    def phase_noise(self, ct: Ct) -> np.ndarray:
        raise self._no_secret_key("phase_noise")


def calibrate_noise_model(backend: SealBFV, chain: int = 32) -> NoiseModel:
    """Fit the §II-C model's constants to SEAL's measured invariant noise budget.

    * ``fresh_bits``: budget of a fresh encryption;
    * ``eta_mult``: 2^(budget drop) after one ScMult by a uniformly random plaintext;
    * ``eta_rot``: from ``chain`` successive rotations of a fresh ciphertext,
      ``eta_0 + chain * eta_rot = eta_0 * 2^(drop)``.

    The budget is an integer number of bits, so each constant is known to about a factor 2.
    Randomness comes from SEAL's own generator and a fixed-seed numpy generator (the plaintext).
    """
    rng = np.random.default_rng(12345)
    n = backend.n
    saved_ledger, backend.ledger = backend.ledger, None
    with contextlib.ExitStack() as stack:
        stack.callback(setattr, backend, "ledger", saved_ledger)
        stack.enter_context(backend.key_scope())
        backend.keygen([1])
        ct = backend.encrypt(rng.integers(0, backend.p, size=n))
        fresh = float(backend.noise_budget(ct)[()])
        w = backend.encode(rng.integers(0, backend.p, size=n))
        after_mult = float(backend.noise_budget(backend.mul_plain(ct, w))[()])
        r = ct
        for _ in range(chain):
            r = backend.rotate(r, 1)
        after_rot = float(backend.noise_budget(r)[()])
    eta_mult = 2.0 ** (fresh - after_mult)
    eta_rot = max(0.0, (2.0 ** (fresh - after_rot) - 1.0) / chain)
    return NoiseModel(eta_mult=eta_mult, eta_rot=eta_rot, eta0=1.0, fresh_bits=fresh,
                      source=f"calibrated on SEAL N={backend.poly_degree}, p={backend.p}")
