//! Python binding of tfhe-rs for PPNN Lab (see the module docstring below and `ppnn_tfhe.pyi`).

mod arrays;
mod boolean;
mod shortint;

use pyo3::prelude::*;
use tfhe::core_crypto::prelude::new_seeder;

/// Version of the `tfhe` crate this module is built against (pinned in Cargo.toml).
const TFHE_VERSION: &str = "1.8.2";

/// A random 64-bit tag for a new key, drawn from tfhe-rs's seeder (RDSEED or /dev/urandom).
fn random_key_id() -> u64 {
    let seed = new_seeder().seed().0;
    (seed as u64) ^ ((seed >> 64) as u64)
}

/// Number of threads gates and encryptions run on (rayon's pool: one per core unless
/// RAYON_NUM_THREADS is set before the first call).
#[pyfunction]
fn num_threads() -> usize {
    rayon::current_num_threads()
}

/// tfhe-rs (Zama's TFHE library) for PPNN Lab: Boolean gates and small-integer table lookups
/// on whole numpy arrays of ciphertexts.
///
/// Boolean gates (`BooleanKey`, tfhe-rs `boolean`, parameters `DEFAULT_PARAMETERS`)
/// ---------------------------------------------------------------------------------
/// key = BooleanKey.generate()            # client + server key, tfhe-rs's own CSPRNG
/// a = key.encrypt(np.array([[0, 1], [1, 1]], np.uint8))   # BitArray, shape (2, 2)
/// c = key.and_(a, key.not_(a))           # one call per array, rayon-parallel, GIL released
/// key.decrypt(c)                         # numpy uint8, same shape
///
/// Gates: and_, or_, xor, nand, nor, xnor (one bootstrap each), mux(c, a, b) = c ? a : b (two
/// bootstraps), not_(a) (free: tfhe-rs negates the LWE ciphertext, no bootstrap).
/// Inputs must have equal shapes and the key's key_id (ValueError otherwise).
/// key.trivial(bits) makes public constants (tfhe-rs `Ciphertext::Trivial`); gates with a
/// trivial input are evaluated by shortcut without bootstrapping.
/// Counters: key.gate_count (bootstrapped evaluations by gate name), key.op_count (all
/// evaluations, including `not`), key.bootstrap_count, key.reset_counts().
///
/// BitArray routes bits without gates: .shape, .size, len(), .take(indices) (flat indices,
/// result has the indices' shape), BitArray.concat([...]) (flattened), .reshape(shape),
/// .serialized_size() (bincode bytes), .to_bytes() / BitArray.from_bytes().
///
/// Table lookups (`ShortintKey`, tfhe-rs `shortint`)
/// -------------------------------------------------
/// sk = ShortintKey.generate(message_bits=5)   # PARAM_MESSAGE_5_CARRY_0 (v1.2 set)
/// x = sk.encrypt(np.arange(32))               # IntArray
/// y = sk.apply_lookup_table(x, table)         # table[x], one PBS per element
/// sk.decrypt(y)                               # numpy int64
#[pymodule]
fn ppnn_tfhe(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<boolean::BooleanKey>()?;
    m.add_class::<boolean::BooleanServerKey>()?;
    m.add_class::<boolean::BitArray>()?;
    m.add_class::<shortint::ShortintKey>()?;
    m.add_class::<shortint::IntArray>()?;
    m.add_function(wrap_pyfunction!(num_threads, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("TFHE_VERSION", TFHE_VERSION)?;
    m.add("BOOLEAN_PARAMETERS_NAME", boolean::PARAMETERS_NAME)?;
    Ok(())
}
