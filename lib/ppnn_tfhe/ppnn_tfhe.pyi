"""tfhe-rs (Zama's TFHE library) for PPNN Lab.

Boolean gates and small-integer table lookups on whole numpy arrays of ciphertexts, built
against the `tfhe` crate 1.8.2 (see ``TFHE_VERSION``).

Boolean gates (:class:`BooleanKey`)
-----------------------------------
Parameters: tfhe-rs ``DEFAULT_PARAMETERS`` (132-bit security, p-fail <= 2^-64; LWE dimension
805, GLWE 3 x 512, PBS base 2^10 x 2 levels, KS base 2^3 x 5 levels).

* ``and_``, ``or_``, ``xor``, ``nand``, ``nor``, ``xnor``: one programmable bootstrap each.
* ``mux(c, a, b)`` = ``c ? a : b``: two bootstraps.
* ``not_(a)``: free. tfhe-rs negates the LWE ciphertext; no bootstrap, no noise growth.
* Gates with a trivial (public-constant) input are evaluated by a shortcut with no bootstrap
  (e.g. ``a AND 1 = a``); ``key.trivial(bits)`` makes such constants.
* Each gate call processes a whole array: rayon runs elements on all cores with the GIL
  released; a one-element call runs on the calling thread.
* Inputs must have equal shapes (no broadcasting) and the key's ``key_id``: otherwise
  ``ValueError`` naming the shapes or keys.

Table lookups (:class:`ShortintKey`)
------------------------------------
``ShortintKey.generate(message_bits=k)`` uses tfhe-rs ``PARAM_MESSAGE_k_CARRY_0_KS_PBS``
(``V1_2_PARAM_MESSAGE_k_CARRY_0_KS_PBS_GAUSSIAN_2M128``: 128-bit security, p-fail <= 2^-128).
With no carry space, one bootstrap evaluates any table Z_{2^k} -> Z_{2^k}; k = 5 (the default)
holds 5-bit values. tfhe-rs 1.8's own current sets are all MESSAGE_k_CARRY_k; 1.2 is the most
recent release that lists the carry-free sets, which 1.8 still ships.
"""

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__version__: str
TFHE_VERSION: str
BOOLEAN_PARAMETERS_NAME: str

def num_threads() -> int:
    """Threads gates and encryptions run on (rayon pool; set RAYON_NUM_THREADS to change)."""

class BitArray:
    """Opaque array of encrypted bits: ciphertexts, a numpy-style shape and the key id.

    Routing (take / concat / reshape) costs no gate: it only copies ciphertexts.
    """

    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def size(self) -> int:
        """Number of ciphertexts (product of the shape)."""
    @property
    def ndim(self) -> int: ...
    @property
    def key_id(self) -> int:
        """Random 64-bit id of the key that produced these ciphertexts."""
    def __len__(self) -> int:
        """Length of the first axis, as for numpy arrays (TypeError for 0-d)."""
    def reshape(self, shape: int | Sequence[int]) -> BitArray:
        """Same ciphertexts, new shape (no copy; one dimension may be -1)."""
    def take(self, indices: npt.ArrayLike) -> BitArray:
        """Ciphertexts at flat (row-major) indices; result shape = ``indices.shape``.

        Negative indices count from the end; out-of-range ones raise IndexError.
        """
    @staticmethod
    def concat(arrays: Sequence[BitArray]) -> BitArray:
        """Flattened concatenation; all arrays must share one key (ValueError otherwise)."""
    def serialized_size(self) -> int:
        """Bytes of the bincode serialisation of every ciphertext, summed.

        An encrypted bit under DEFAULT_PARAMETERS is 3,260 bytes; a trivial one is 5.
        """
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes) -> BitArray:
        """Inverse of ``to_bytes`` (only for data you produced yourself)."""

class BooleanKey:
    """TFHE Boolean client + server key with gate counters."""

    @staticmethod
    def generate() -> BooleanKey:
        """New keys from tfhe-rs's own CSPRNG, parameters ``DEFAULT_PARAMETERS`` (~1 s)."""
    @property
    def key_id(self) -> int: ...
    @property
    def parameters_name(self) -> str:
        """Name of the tfhe-rs parameter constant: ``"DEFAULT_PARAMETERS"``."""
    @property
    def parameters(self) -> dict[str, int | str]:
        """LWE/GLWE dimensions, polynomial size, PBS and key-switch base logs and levels."""
    def encrypt(self, bits: npt.ArrayLike) -> BitArray:
        """Encrypt 0/1 values (bool or integer dtype, any shape).

        Other values raise ValueError naming the value; float dtypes raise TypeError.
        """
    def trivial(self, bits: npt.ArrayLike) -> BitArray:
        """Trivial encryptions of public constants (not secret!), usable in gates."""
    def decrypt(self, a: BitArray) -> npt.NDArray[np.uint8]:
        """Decrypt to uint8 of the same shape; a BitArray of another key raises ValueError."""
    def server_key(self) -> BooleanServerKey:
        """The server key alone (a copy with its own counters): no encrypt / decrypt."""
    def and_(self, a: BitArray, b: BitArray) -> BitArray: ...
    def or_(self, a: BitArray, b: BitArray) -> BitArray: ...
    def xor(self, a: BitArray, b: BitArray) -> BitArray: ...
    def nand(self, a: BitArray, b: BitArray) -> BitArray: ...
    def nor(self, a: BitArray, b: BitArray) -> BitArray: ...
    def xnor(self, a: BitArray, b: BitArray) -> BitArray: ...
    def not_(self, a: BitArray) -> BitArray:
        """NOT: free in tfhe-rs (no bootstrap)."""
    def mux(self, c: BitArray, a: BitArray, b: BitArray) -> BitArray:
        """Element-wise ``c ? a : b`` (two bootstraps per fully encrypted element)."""
    @property
    def gate_count(self) -> dict[str, int]:
        """Element-wise evaluations that ran a bootstrap, by gate.

        Keys: and, or, xor, nand, nor, xnor, mux. NOT and gates with a trivial input are not
        counted (they run no bootstrap).
        """
    @property
    def op_count(self) -> dict[str, int]:
        """All element-wise evaluations by gate, including ``not`` and trivial shortcuts."""
    @property
    def bootstrap_count(self) -> int:
        """Programmable bootstraps executed (a fully encrypted MUX counts two)."""
    def reset_counts(self) -> None: ...

class BooleanServerKey:
    """The server key alone: the gates, ``trivial`` and the counters of :class:`BooleanKey`,
    no secret key. Pickles (``to_bytes`` / ``from_bytes``, bincode, at most
    ``2**31`` bytes; the DEFAULT_PARAMETERS key is ~130 MB), so a Dask worker can hold it."""

    @property
    def key_id(self) -> int: ...
    @property
    def parameters_name(self) -> str: ...
    @property
    def parameters(self) -> dict[str, int | str]: ...
    def trivial(self, bits: npt.ArrayLike) -> BitArray: ...
    def and_(self, a: BitArray, b: BitArray) -> BitArray: ...
    def or_(self, a: BitArray, b: BitArray) -> BitArray: ...
    def xor(self, a: BitArray, b: BitArray) -> BitArray: ...
    def nand(self, a: BitArray, b: BitArray) -> BitArray: ...
    def nor(self, a: BitArray, b: BitArray) -> BitArray: ...
    def xnor(self, a: BitArray, b: BitArray) -> BitArray: ...
    def not_(self, a: BitArray) -> BitArray: ...
    def mux(self, c: BitArray, a: BitArray, b: BitArray) -> BitArray: ...
    @property
    def gate_count(self) -> dict[str, int]: ...
    @property
    def op_count(self) -> dict[str, int]: ...
    @property
    def bootstrap_count(self) -> int: ...
    def reset_counts(self) -> None: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes) -> BooleanServerKey: ...

class IntArray:
    """Opaque array of encrypted small integers (shortint ciphertexts)."""

    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def size(self) -> int: ...
    @property
    def ndim(self) -> int: ...
    @property
    def key_id(self) -> int: ...
    def __len__(self) -> int: ...
    def reshape(self, shape: int | Sequence[int]) -> IntArray: ...
    def take(self, indices: npt.ArrayLike) -> IntArray: ...
    @staticmethod
    def concat(arrays: Sequence[IntArray]) -> IntArray: ...
    def serialized_size(self) -> int: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes) -> IntArray: ...

class ShortintKey:
    """tfhe-rs shortint keys for ``message_bits``-bit integers, for table lookups."""

    @staticmethod
    def generate(message_bits: int = 5) -> ShortintKey:
        """Keys for values in [0, 2**message_bits); message_bits in 1..=8.

        Parameter set ``V1_2_PARAM_MESSAGE_{k}_CARRY_0_KS_PBS_GAUSSIAN_2M128``. Key generation
        and lookups grow quickly with k (GLWE polynomial size 2^(k+7)).
        """
    @property
    def key_id(self) -> int: ...
    @property
    def message_bits(self) -> int: ...
    @property
    def parameters_name(self) -> str: ...
    @property
    def parameters(self) -> dict[str, int | float]: ...
    def encrypt(self, values: npt.ArrayLike) -> IntArray:
        """Encrypt integers in [0, 2**message_bits); others raise ValueError."""
    def decrypt(self, a: IntArray) -> npt.NDArray[np.int64]: ...
    def apply_lookup_table(self, a: IntArray, table: npt.ArrayLike) -> IntArray:
        """``table[x]`` for every encrypted x: one programmable bootstrap per element.

        ``table`` is 1-D of length 2**message_bits with entries in [0, 2**message_bits).
        """
    @property
    def bootstrap_count(self) -> int:
        """Programmable bootstraps run by ``apply_lookup_table``."""
    def reset_counts(self) -> None: ...
