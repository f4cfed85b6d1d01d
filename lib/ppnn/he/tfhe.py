"""Real TFHE through tfhe-rs: the gate backend over the project's binding ``ppnn_tfhe``.

:class:`TfheBackend` has the interface of :class:`ppnn.he.bitsim.BitSimulator` (same circuits,
same public bookkeeping of trivial bits and depths) but evaluates every gate on tfhe-rs
Boolean ciphertexts (``DEFAULT_PARAMETERS``), one binding call per array, in parallel across
cores inside Rust. Its own counters predict the bootstraps; :meth:`TfheBackend.native_counts`
reads the binding's counters, which tests compare with the simulator.
:class:`TfheServerBackend` holds the server key alone (no secret key): it evaluates gates on
ciphertexts it received and cannot encrypt or decrypt -- what a computing party holds (the
server's process of wire mode, :mod:`ppnn.wire.she`).

:class:`PbsLookup` (real, tfhe-rs ``shortint``) and :class:`SimulatedLookup` evaluate a table
``Z_2^k -> Z_2^k`` on encrypted small integers with one programmable bootstrap per element
(the Tabula idea in FHE: a 5-bit ReLU as one lookup instead of a gate circuit).

The binding is built from source (``make setup``); without it, :func:`load_binding` raises an
ImportError that says so.
"""

from __future__ import annotations

import numpy as np

from .bitsim import GATES, SIM_CIPHERTEXT_BYTES, GateBackend

__all__ = ["load_binding", "binding_available", "TfheBackend", "TfheServerBackend",
           "DaskTfheBackend", "PbsLookup", "SimulatedLookup", "relu_table"]

_BUILD_HINT = ("the tfhe-rs binding `ppnn_tfhe` is not installed. Build it from source with "
               "`make setup` (or `.venv/bin/pip install ./lib/ppnn_tfhe`; needs cargo/rustc "
               ">= 1.91, about 3 minutes on 2 cores).")


def load_binding():
    """Import ``ppnn_tfhe`` or raise ImportError explaining how to build it."""
    try:
        import ppnn_tfhe
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(_BUILD_HINT) from e
    return ppnn_tfhe


def binding_available() -> bool:
    try:
        load_binding()
    except ImportError:  # pragma: no cover - depends on the environment
        return False
    return True


class TfheBackend(GateBackend):
    """Gate backend on real tfhe-rs ciphertexts.

    Parameters
    ----------
    key : ppnn_tfhe.BooleanKey, optional
        Client + server key (generated with tfhe-rs's CSPRNG if omitted). The same
        object decrypts, as the client would; the server only uses its gate methods.
    public_constants, ledger, party : see :class:`ppnn.he.bitsim.GateBackend`.
    """

    name = "tfhe-rs"

    def __init__(self, key=None, public_constants: bool = True, ledger=None,
                 party: str = "server"):
        self.binding = load_binding()
        if key is None:
            key = self.binding.BooleanKey.generate()
        elif not isinstance(key, self.binding.BooleanKey):
            raise TypeError(f"key must be a ppnn_tfhe.BooleanKey, got {type(key).__name__}")
        self.key = key
        super().__init__(public_constants, ledger, party)
        self.key_id = key.key_id
        self.ciphertext_bytes = key.encrypt(np.zeros(1, np.uint8)).serialized_size()

    @property
    def parameters(self) -> dict:
        return {"name": self.key.parameters_name, **self.key.parameters}

    @property
    def holds_secret_key(self) -> bool:
        """True: the backend's key (client + server key) can encrypt and decrypt."""
        return hasattr(self.key, "decrypt")

    def reset_counts(self) -> None:
        super().reset_counts()
        if hasattr(self, "key"):
            self.key.reset_counts()

    def native_counts(self) -> dict[str, int]:
        """The binding's own counters: bootstrapped evaluations per gate and bootstraps."""
        g = dict(self.key.gate_count)
        return {**{k: int(g.get(k, 0)) for k in GATES}, "hgops": int(sum(g.values())),
                "bootstraps": int(self.key.bootstrap_count)}

    def wire(self, parts) -> list[bytes]:
        """The tfhe-rs ciphertexts of ``parts`` as sent: each array's encrypted
        (non-trivial) bits serialized by the binding (bincode), one ``bytes`` per array (a
        recording ledger keeps their size and SHA-256 digest)."""
        out = []
        for i, p in enumerate(parts):
            self._own(p, f"parts[{i}]")
            enc = np.flatnonzero(~p.trivial.reshape(-1))
            data = p.data.reshape([-1])
            out.append(data.take(enc).to_bytes() if enc.size < p.size else data.to_bytes())
        return out

    # payload hooks: one binding call per array
    def _encrypt(self, bits):
        return self.key.encrypt(bits)

    def _decrypt(self, data):
        return self.key.decrypt(data)

    def _trivial(self, bits):
        return self.key.trivial(bits)

    def _binary(self, gate, a, b):
        fn = {"and": self.key.and_, "or": self.key.or_, "xor": self.key.xor,
              "nand": self.key.nand, "nor": self.key.nor, "xnor": self.key.xnor}[gate]
        return fn(a, b)

    def _not(self, a):
        return self.key.not_(a)

    def _mux(self, c, a, b):
        return self.key.mux(c, a, b)

    def _take(self, data, idx):
        return data.take(idx)

    def _concat(self, datas):
        return self.binding.BitArray.concat(list(datas))

    def _reshape(self, data, shape):
        return data.reshape(list(shape))


class TfheServerBackend(TfheBackend):
    """Gate backend holding a tfhe-rs *server key only* (``ppnn_tfhe.BooleanServerKey``, from
    ``BooleanKey.server_key()`` or its serialized bytes): it evaluates gates, routes and makes
    trivial constants on ciphertexts of that key, and cannot encrypt or decrypt (no secret
    key: :meth:`encrypt` and :meth:`decrypt` raise). Without public constants it needs the
    client's encrypted 0 (:meth:`~ppnn.he.bitsim.GateBackend.set_encrypted_zero`) before
    the first constant.

    Parameters
    ----------
    server_key : ppnn_tfhe.BooleanServerKey
        The evaluation key (bootstrapping and key-switching keys) of the client's key.
    public_constants, ledger, party : see :class:`ppnn.he.bitsim.GateBackend`.
    ciphertext_bytes : int
        Serialized size of one encrypted bit, for message sizes. A server key cannot make a
        ciphertext to measure it, so it is the public size of the parameters: by default
        :data:`~ppnn.he.bitsim.SIM_CIPHERTEXT_BYTES` (tfhe-rs 1.8, ``DEFAULT_PARAMETERS``; a
        test checks it against the binding). A receiver checks what arrives against it.
    """

    name = "tfhe-rs (server key)"

    def __init__(self, server_key, public_constants: bool = True, ledger=None,
                 party: str = "server", ciphertext_bytes: int = SIM_CIPHERTEXT_BYTES):
        self.binding = load_binding()
        if not isinstance(server_key, self.binding.BooleanServerKey):
            raise TypeError(f"server_key must be a ppnn_tfhe.BooleanServerKey (no secret key), "
                            f"got {type(server_key).__name__}")
        if isinstance(ciphertext_bytes, bool) or not isinstance(
                ciphertext_bytes, int | np.integer) or ciphertext_bytes < 1:
            raise ValueError(f"ciphertext_bytes must be a positive int, got {ciphertext_bytes!r}")
        self.key = server_key
        GateBackend.__init__(self, public_constants, ledger, party)
        self.key_id = server_key.key_id
        self.ciphertext_bytes = int(ciphertext_bytes)

    @property
    def holds_secret_key(self) -> bool:
        """False: the backend's key has no encrypt or decrypt (checked on the key itself)."""
        return hasattr(self.key, "encrypt") or hasattr(self.key, "decrypt")

    def _encrypt(self, bits):
        raise RuntimeError("a tfhe-rs server key cannot encrypt (it holds no secret key): the "
                           "client encrypts; give the server its encrypted 0 with "
                           "set_encrypted_zero")

    def _decrypt(self, data):
        raise RuntimeError("a tfhe-rs server key cannot decrypt (it holds no secret key): only "
                           "the client can")


def relu_table(bits: int, signed_input: bool = True) -> np.ndarray:
    """Lookup table of ReLU on ``bits``-bit two's-complement codes (index = code, value = code
    of max(x, 0))."""
    codes = np.arange(1 << bits)
    if not signed_input:
        return codes
    x = np.where(codes >= 1 << (bits - 1), codes - (1 << bits), codes)
    return np.maximum(x, 0)


class _LookupBase:
    name = "lookup"

    def _check_table(self, table) -> np.ndarray:
        t = np.asarray(table)
        m = 1 << self.message_bits
        if t.ndim != 1 or t.size != m:
            raise ValueError(f"table must be 1-D of length 2^message_bits = {m}, got shape "
                             f"{t.shape}")
        if not np.issubdtype(t.dtype, np.integer) or t.min() < 0 or t.max() >= m:
            raise ValueError(f"table entries must be integers in [0, {m})")
        return t.astype(np.int64)

    def _check_values(self, values) -> np.ndarray:
        v = np.asarray(values)
        m = 1 << self.message_bits
        if not np.issubdtype(v.dtype, np.integer):
            raise TypeError(f"values must be integers, got dtype {v.dtype}")
        if v.size and (v.min() < 0 or v.max() >= m):
            raise ValueError(f"values must lie in [0, {m}) for message_bits={self.message_bits}")
        return v.astype(np.int64)


class PbsLookup(_LookupBase):
    """Programmable-bootstrapping table lookups on tfhe-rs shortint ciphertexts (real)."""

    name = "tfhe-rs shortint"

    def __init__(self, message_bits: int = 5, key=None, ledger=None, party: str = "server"):
        binding = load_binding()
        if isinstance(message_bits, bool) or not isinstance(message_bits, int) or not (
                1 <= message_bits <= 8):
            raise ValueError(f"message_bits must be an int in [1, 8], got {message_bits!r}")
        self.key = key if key is not None else binding.ShortintKey.generate(message_bits)
        self.message_bits = int(self.key.message_bits)
        self.ledger, self.party = ledger, party
        self.bootstraps = 0

    def encrypt(self, values):
        return self.key.encrypt(self._check_values(values))

    def decrypt(self, ct) -> np.ndarray:
        return np.asarray(self.key.decrypt(ct), np.int64)

    def apply(self, ct, table):
        out = self.key.apply_lookup_table(ct, self._check_table(table))
        self.bootstraps += ct.size
        if self.ledger is not None:
            self.ledger.count("pbs_lookup", ct.size, self.party)
        return out

    def ciphertext_bytes(self) -> int:
        return self.key.encrypt(np.zeros(1, np.int64)).serialized_size()


class SimulatedLookup(_LookupBase):
    """The same lookups on plaintext integers, counting one bootstrap per element."""

    name = "simulated lookup"

    def __init__(self, message_bits: int = 5, ledger=None, party: str = "server"):
        if isinstance(message_bits, bool) or not isinstance(message_bits, int) or not (
                1 <= message_bits <= 8):
            raise ValueError(f"message_bits must be an int in [1, 8], got {message_bits!r}")
        self.message_bits = message_bits
        self.ledger, self.party = ledger, party
        self.bootstraps = 0

    def encrypt(self, values):
        return self._check_values(values).copy()

    def decrypt(self, ct) -> np.ndarray:
        return np.asarray(ct, np.int64)

    def apply(self, ct, table):
        out = self._check_table(table)[np.asarray(ct)]
        self.bootstraps += int(np.asarray(ct).size)
        if self.ledger is not None:
            self.ledger.count("pbs_lookup", int(np.asarray(ct).size), self.party)
        return out


def _remote_gate(server_key, gate: str, *arrays):
    """One block of one gate level on a Dask worker: ``(result, bootstrapped evaluations,
    bootstraps)`` read from the worker's server-key counters around the call (workers are
    single-threaded, so no other gate interleaves)."""
    before, boots = dict(server_key.gate_count), server_key.bootstrap_count
    fn = {"and": server_key.and_, "or": server_key.or_, "xor": server_key.xor,
          "nand": server_key.nand, "nor": server_key.nor, "xnor": server_key.xnor,
          "mux": server_key.mux}[gate]
    out = fn(*arrays)
    after = dict(server_key.gate_count)
    return out, {k: after[k] - before.get(k, 0) for k in after}, (
        server_key.bootstrap_count - boots)


class DaskTfheBackend(TfheBackend):
    """:class:`TfheBackend` whose bootstrapped gates run on the workers of a Dask cluster.

    The server key (``BooleanKey.server_key()``: no secret key) is scattered to every worker
    once; each gate call of a circuit -- one level of gates over a whole array -- is split
    into contiguous blocks of at least ``min_block`` ciphertexts, ``blocks_per_worker``
    blocks per worker, and every block is one call of the binding's batched gate on a worker.
    The ciphertexts travel as bytes (``BitArray`` pickles through tfhe-rs's bincode
    serialization). Encryption and decryption stay with the client (this process); NOT and
    routing are free and stay here too. Outputs and counts equal :class:`TfheBackend`'s.
    """

    name = "tfhe-rs on dask"

    def __init__(self, client, key=None, public_constants: bool = True, ledger=None,
                 party: str = "server", min_block: int = 16, blocks_per_worker: int = 2):
        super().__init__(key, public_constants, ledger, party)
        if client is None:
            raise ValueError("DaskTfheBackend needs a dask.distributed Client")
        if isinstance(min_block, bool) or not isinstance(min_block, int) or min_block < 1:
            raise ValueError(f"min_block must be a positive int, got {min_block!r}")
        self.client = client
        self.min_block, self.blocks_per_worker = min_block, int(blocks_per_worker)
        [self._server] = client.scatter([self.key.server_key()], broadcast=True, hash=False)
        self._remote: dict[str, int] = dict.fromkeys(GATES, 0)
        self._remote_boots = 0

    def reset_counts(self) -> None:
        super().reset_counts()
        self._remote = dict.fromkeys(GATES, 0)
        self._remote_boots = 0

    def native_counts(self) -> dict[str, int]:
        """The binding's counters: this process's key plus every worker block's."""
        local = super().native_counts()
        out = {k: local[k] + self._remote.get(k, 0) for k in GATES}
        return {**out, "hgops": int(sum(out.values())),
                "bootstraps": local["bootstraps"] + self._remote_boots}

    def _dispatch(self, gate: str, *arrays):
        from ppnn.core.blocks import block_bounds, n_workers

        n = arrays[0].size
        blocks = min(n // self.min_block, self.blocks_per_worker * max(1, n_workers(self.client)))
        if blocks < 2:  # too small to be worth a round trip: evaluate here
            return None
        shape = list(arrays[0].shape)
        flat = [a.reshape([-1]) for a in arrays]
        futures = [self.client.submit(_remote_gate, self._server, gate,
                                      *[f.take(np.arange(lo, hi)) for f in flat], pure=False)
                   for lo, hi in block_bounds(n, blocks)]
        parts = self.client.gather(futures)
        for _, counts, boots in parts:
            for k, v in counts.items():
                self._remote[k] = self._remote.get(k, 0) + v
            self._remote_boots += boots
        return self.binding.BitArray.concat([p[0] for p in parts]).reshape(shape)

    def _binary(self, gate, a, b):
        out = self._dispatch(gate, a, b)
        return super()._binary(gate, a, b) if out is None else out

    def _mux(self, c, a, b):
        out = self._dispatch("mux", c, a, b)
        return super()._mux(c, a, b) if out is None else out
