//! TFHE Boolean gates (tfhe-rs `boolean` module) on whole arrays of encrypted bits.

use std::sync::atomic::{AtomicU64, Ordering};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use bincode::Options;
use pyo3::types::{PyBytes, PyDict};
use rayon::prelude::*;
use tfhe::boolean::ciphertext::Ciphertext;
use tfhe::boolean::client_key::ClientKey;
use tfhe::boolean::parameters::{BooleanParameters, DEFAULT_PARAMETERS};
use tfhe::boolean::server_key::{BinaryBooleanGates, ServerKey};

use crate::arrays::{batch_methods, int_array, to_numpy, Batch};

/// Name of the tfhe-rs constant used by `BooleanKey.generate`.
pub const PARAMETERS_NAME: &str = "DEFAULT_PARAMETERS";

/// Gate names in counter order. `not` never bootstraps in tfhe-rs (it negates the LWE
/// ciphertext), so it only appears in `op_count`.
const GATES: [&str; 8] = ["and", "or", "xor", "nand", "nor", "xnor", "mux", "not"];
const MUX: usize = 6;
const NOT: usize = 7;

#[derive(Clone, Copy)]
enum Binary {
    And = 0,
    Or = 1,
    Xor = 2,
    Nand = 3,
    Nor = 4,
    Xnor = 5,
}

fn is_encrypted(ct: &Ciphertext) -> bool {
    matches!(ct, Ciphertext::Encrypted(_))
}

/// Bootstraps tfhe-rs 1.8 runs for one MUX: none if the condition is a trivial constant,
/// one if either branch is (it becomes a single AND/OR), otherwise two.
fn mux_bootstraps(c: &Ciphertext, a: &Ciphertext, b: &Ciphertext) -> u64 {
    match (is_encrypted(c), is_encrypted(a), is_encrypted(b)) {
        (false, _, _) => 0,
        // encrypted condition, both branches trivial: tfhe-rs returns c, NOT c or a constant
        (true, false, false) => 0,
        (true, true, true) => 2,
        _ => 1,
    }
}

#[derive(Default)]
struct Counters {
    /// element-wise evaluations that ran at least one programmable bootstrap
    gates: [AtomicU64; 8],
    /// all element-wise evaluations, including trivial shortcuts and NOT
    ops: [AtomicU64; 8],
    /// programmable bootstraps (a full MUX is two)
    bootstraps: AtomicU64,
}

impl Counters {
    fn add(&self, gate: usize, ops: u64, gates: u64, bootstraps: u64) {
        self.ops[gate].fetch_add(ops, Ordering::Relaxed);
        self.gates[gate].fetch_add(gates, Ordering::Relaxed);
        self.bootstraps.fetch_add(bootstraps, Ordering::Relaxed);
    }

    fn reset(&self) {
        for c in self.gates.iter().chain(self.ops.iter()) {
            c.store(0, Ordering::Relaxed);
        }
        self.bootstraps.store(0, Ordering::Relaxed);
    }

    fn dict<'py>(
        &self,
        py: Python<'py>,
        which: &[AtomicU64; 8],
        with_not: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (i, name) in GATES.iter().enumerate() {
            if i != NOT || with_not {
                d.set_item(name, which[i].load(Ordering::Relaxed))?;
            }
        }
        Ok(d)
    }
}

/// Map over one slice in parallel (sequentially for a single element, which keeps the
/// one-gate latency equal to a plain Rust call on the calling thread).
fn par_map<T: Sync, U: Send>(xs: &[T], f: impl Fn(&T) -> U + Sync + Send) -> Vec<U> {
    if xs.len() <= 1 {
        xs.iter().map(f).collect()
    } else {
        xs.par_iter().with_min_len(1).map(f).collect()
    }
}

fn par_map_idx<U: Send>(n: usize, f: impl Fn(usize) -> U + Sync + Send) -> Vec<U> {
    if n <= 1 {
        (0..n).map(f).collect()
    } else {
        (0..n).into_par_iter().with_min_len(1).map(f).collect()
    }
}

/// An array of encrypted bits (opaque). See the module docstring.
#[pyclass(module = "ppnn_tfhe", frozen)]
pub struct BitArray {
    pub inner: Batch<Ciphertext>,
}

batch_methods!(BitArray, "BitArray");

/// TFHE Boolean keys (client + server key) with gate counters.
#[pyclass(module = "ppnn_tfhe", frozen)]
pub struct BooleanKey {
    client: ClientKey,
    server: ServerKey,
    key_id: u64,
    counters: Counters,
}

/// The server key alone (no secret key): evaluates gates, cannot encrypt or decrypt.
/// It is what a computing party holds; it pickles (bincode, size-limited) so a Dask worker
/// can receive it once.
#[pyclass(module = "ppnn_tfhe", frozen)]
pub struct BooleanServerKey {
    server: ServerKey,
    key_id: u64,
    counters: Counters,
}

/// Largest serialized server key `BooleanServerKey.from_bytes` accepts (the DEFAULT_PARAMETERS
/// key is ~ 10^8 bytes; the limit stops a corrupt length prefix from allocating more).
pub const SERVER_KEY_SIZE_LIMIT: u64 = 1 << 31;

/// What a gate evaluator needs: the server key, its id and the counters.
trait Gates {
    fn server(&self) -> &ServerKey;
    fn key_id(&self) -> u64;
    fn counters(&self) -> &Counters;

    fn own<'a>(&self, a: &'a BitArray, what: &str) -> PyResult<&'a Batch<Ciphertext>> {
        a.inner.check_key(self.key_id(), what)?;
        Ok(&a.inner)
    }

    fn binary(
        &self,
        py: Python<'_>,
        gate: Binary,
        a: &BitArray,
        b: &BitArray,
    ) -> PyResult<BitArray> {
        let (a, b) = (self.own(a, "a")?, self.own(b, "b")?);
        a.check_same(b, ("a", "b"))?;
        let (xs, ys) = (&a.items[..], &b.items[..]);
        let server = self.server();
        let out = py.detach(|| {
            par_map_idx(xs.len(), |i| {
                let (x, y) = (&xs[i], &ys[i]);
                match gate {
                    Binary::And => server.and(x, y),
                    Binary::Or => server.or(x, y),
                    Binary::Xor => server.xor(x, y),
                    Binary::Nand => server.nand(x, y),
                    Binary::Nor => server.nor(x, y),
                    Binary::Xnor => server.xnor(x, y),
                }
            })
        });
        let boot = xs
            .iter()
            .zip(ys)
            .filter(|(x, y)| is_encrypted(x) && is_encrypted(y))
            .count();
        self.counters()
            .add(gate as usize, xs.len() as u64, boot as u64, boot as u64);
        Ok(BitArray {
            inner: Batch::new(out, a.shape.clone(), self.key_id()),
        })
    }

    fn not_gate(&self, a: &BitArray) -> PyResult<BitArray> {
        let a = self.own(a, "a")?;
        let out = a.items.iter().map(|ct| self.server().not(ct)).collect();
        self.counters().add(NOT, a.size() as u64, 0, 0);
        Ok(BitArray {
            inner: Batch::new(out, a.shape.clone(), self.key_id()),
        })
    }

    fn mux_gate(
        &self,
        py: Python<'_>,
        c: &BitArray,
        a: &BitArray,
        b: &BitArray,
    ) -> PyResult<BitArray> {
        let (c, a, b) = (self.own(c, "c")?, self.own(a, "a")?, self.own(b, "b")?);
        c.check_same(a, ("c", "a"))?;
        c.check_same(b, ("c", "b"))?;
        let (cs, xs, ys) = (&c.items[..], &a.items[..], &b.items[..]);
        let server = self.server();
        let out = py.detach(|| par_map_idx(cs.len(), |i| server.mux(&cs[i], &xs[i], &ys[i])));
        let boots: Vec<u64> = (0..cs.len())
            .map(|i| mux_bootstraps(&cs[i], &xs[i], &ys[i]))
            .collect();
        let gates = boots.iter().filter(|&&n| n > 0).count() as u64;
        self.counters()
            .add(MUX, cs.len() as u64, gates, boots.iter().sum());
        Ok(BitArray {
            inner: Batch::new(out, c.shape.clone(), self.key_id()),
        })
    }

    fn trivial_bits(&self, bits: &Bound<'_, PyAny>) -> PyResult<BitArray> {
        let (bits, shape) = bits_arg(bits)?;
        let cts = bits
            .iter()
            .map(|&b| self.server().trivial_encrypt(b))
            .collect();
        Ok(BitArray {
            inner: Batch::new(cts, shape, self.key_id()),
        })
    }
}

impl Gates for BooleanKey {
    fn server(&self) -> &ServerKey {
        &self.server
    }
    fn key_id(&self) -> u64 {
        self.key_id
    }
    fn counters(&self) -> &Counters {
        &self.counters
    }
}

impl Gates for BooleanServerKey {
    fn server(&self) -> &ServerKey {
        &self.server
    }
    fn key_id(&self) -> u64 {
        self.key_id
    }
    fn counters(&self) -> &Counters {
        &self.counters
    }
}

/// The gate methods shared by `BooleanKey` and `BooleanServerKey`.
macro_rules! gate_methods {
    ($ty:ident) => {
        #[pymethods]
        impl $ty {
            #[getter(key_id)]
            fn key_id_py(&self) -> u64 {
                self.key_id
            }

            #[getter]
            fn parameters_name(&self) -> &'static str {
                PARAMETERS_NAME
            }

            /// The numeric parameters (LWE/GLWE dimensions, decomposition bases and levels).
            #[getter]
            fn parameters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
                params_dict(py, &DEFAULT_PARAMETERS)
            }

            /// Trivial (noiseless, *not secret*) encryptions of public constants.
            ///
            /// tfhe-rs represents them as `Ciphertext::Trivial`; a gate with a trivial input
            /// takes a shortcut and runs no bootstrap.
            fn trivial(&self, bits: &Bound<'_, PyAny>) -> PyResult<BitArray> {
                self.trivial_bits(bits)
            }

            fn and_(&self, py: Python<'_>, a: PyRef<'_, BitArray>, b: PyRef<'_, BitArray>)
                -> PyResult<BitArray> {
                self.binary(py, Binary::And, &a, &b)
            }

            fn or_(&self, py: Python<'_>, a: PyRef<'_, BitArray>, b: PyRef<'_, BitArray>)
                -> PyResult<BitArray> {
                self.binary(py, Binary::Or, &a, &b)
            }

            fn xor(&self, py: Python<'_>, a: PyRef<'_, BitArray>, b: PyRef<'_, BitArray>)
                -> PyResult<BitArray> {
                self.binary(py, Binary::Xor, &a, &b)
            }

            fn nand(&self, py: Python<'_>, a: PyRef<'_, BitArray>, b: PyRef<'_, BitArray>)
                -> PyResult<BitArray> {
                self.binary(py, Binary::Nand, &a, &b)
            }

            fn nor(&self, py: Python<'_>, a: PyRef<'_, BitArray>, b: PyRef<'_, BitArray>)
                -> PyResult<BitArray> {
                self.binary(py, Binary::Nor, &a, &b)
            }

            fn xnor(&self, py: Python<'_>, a: PyRef<'_, BitArray>, b: PyRef<'_, BitArray>)
                -> PyResult<BitArray> {
                self.binary(py, Binary::Xnor, &a, &b)
            }

            /// NOT: free in tfhe-rs (negates the LWE ciphertext, no bootstrap, no noise
            /// growth).
            fn not_(&self, a: PyRef<'_, BitArray>) -> PyResult<BitArray> {
                self.not_gate(&a)
            }

            /// Element-wise `c ? a : b` (two bootstraps per element when all inputs are
            /// encrypted).
            fn mux(&self, py: Python<'_>, c: PyRef<'_, BitArray>, a: PyRef<'_, BitArray>,
                   b: PyRef<'_, BitArray>) -> PyResult<BitArray> {
                self.mux_gate(py, &c, &a, &b)
            }

            /// Element-wise evaluations that ran a bootstrap, by gate name (and, or, xor,
            /// nand, nor, xnor, mux). NOT and gates with a trivial input are not counted.
            #[getter]
            fn gate_count<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
                self.counters.dict(py, &self.counters.gates, false)
            }

            /// All element-wise evaluations by gate name, including `not` and trivial
            /// shortcuts.
            #[getter]
            fn op_count<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
                self.counters.dict(py, &self.counters.ops, true)
            }

            /// Programmable bootstraps executed (a MUX on three encrypted inputs counts two).
            #[getter]
            fn bootstrap_count(&self) -> u64 {
                self.counters.bootstraps.load(Ordering::Relaxed)
            }

            fn reset_counts(&self) {
                self.counters.reset();
            }
        }
    };
}

gate_methods!(BooleanKey);
gate_methods!(BooleanServerKey);

pub fn params_dict<'py>(py: Python<'py>, p: &BooleanParameters) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("lwe_dimension", p.lwe_dimension.0)?;
    d.set_item("glwe_dimension", p.glwe_dimension.0)?;
    d.set_item("polynomial_size", p.polynomial_size.0)?;
    d.set_item("pbs_base_log", p.pbs_base_log.0)?;
    d.set_item("pbs_level", p.pbs_level.0)?;
    d.set_item("ks_base_log", p.ks_base_log.0)?;
    d.set_item("ks_level", p.ks_level.0)?;
    d.set_item(
        "encryption_key_choice",
        format!("{:?}", p.encryption_key_choice),
    )?;
    Ok(d)
}

/// Flat bools from an array-like of 0/1 values (ValueError naming the first bad value).
fn bits_arg(bits: &Bound<'_, PyAny>) -> PyResult<(Vec<bool>, Vec<usize>)> {
    let (values, shape) = int_array(bits, "bits", true)?;
    if let Some((i, v)) = values.iter().enumerate().find(|(_, &v)| v != 0 && v != 1) {
        return Err(PyValueError::new_err(format!(
            "bits must hold only 0 and 1, found {v} at flat index {i}"
        )));
    }
    Ok((values.into_iter().map(|v| v == 1).collect(), shape))
}

#[pymethods]
impl BooleanKey {
    /// Generate a fresh client + server key with tfhe-rs `DEFAULT_PARAMETERS`.
    ///
    /// Secret key material comes from tfhe-rs's own CSPRNG (seeded from the OS / RDSEED);
    /// `key_id` is a random 64-bit tag from the same seeder.
    #[staticmethod]
    fn generate(py: Python<'_>) -> Self {
        py.detach(|| {
            let client = ClientKey::new(&DEFAULT_PARAMETERS);
            let server = ServerKey::new(&client);
            BooleanKey {
                client,
                server,
                key_id: crate::random_key_id(),
                counters: Counters::default(),
            }
        })
    }

    /// Encrypt an array of 0/1 values (bool or any integer dtype, any shape).
    fn encrypt(&self, py: Python<'_>, bits: &Bound<'_, PyAny>) -> PyResult<BitArray> {
        let (bits, shape) = bits_arg(bits)?;
        let client = &self.client;
        let cts = py.detach(|| par_map(&bits, |&b| client.encrypt(b)));
        Ok(BitArray {
            inner: Batch::new(cts, shape, self.key_id),
        })
    }

    /// Decrypt to a numpy uint8 array of the same shape.
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        a: PyRef<'_, BitArray>,
    ) -> PyResult<Bound<'py, numpy::PyArrayDyn<u8>>> {
        let a = self.own(&a, "the BitArray")?;
        let client = &self.client;
        let bits: Vec<u8> = py.detach(|| par_map(&a.items[..], |ct| client.decrypt(ct) as u8));
        to_numpy(py, bits, &a.shape)
    }

    /// The server key alone (a copy, with counters of its own): what to give a computing
    /// party or a Dask worker. Ciphertexts of this key stay compatible (same `key_id`).
    fn server_key(&self, py: Python<'_>) -> BooleanServerKey {
        let server = py.detach(|| self.server.clone());
        BooleanServerKey {
            server,
            key_id: self.key_id,
            counters: Counters::default(),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "BooleanKey(parameters_name='{PARAMETERS_NAME}', key_id={})",
            crate::arrays::fmt_key(self.key_id)
        )
    }
}

#[pymethods]
impl BooleanServerKey {
    /// Serialise (server key, key id) with bincode.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let data = py
            .detach(|| bincode::serialize(&("BooleanServerKey", self.key_id, &self.server)))
            .map_err(|e| PyValueError::new_err(format!("serialization failed: {e}")))?;
        Ok(PyBytes::new(py, &data))
    }

    /// Inverse of `to_bytes` (only for data you produced yourself); refuses more than
    /// `SERVER_KEY_SIZE_LIMIT` bytes.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        if data.len() as u64 > SERVER_KEY_SIZE_LIMIT {
            return Err(PyValueError::new_err(format!(
                "a serialized server key is at most {SERVER_KEY_SIZE_LIMIT} bytes, got {}",
                data.len()
            )));
        }
        let opts = bincode::DefaultOptions::new()
            .with_fixint_encoding()
            .allow_trailing_bytes()
            .with_limit(SERVER_KEY_SIZE_LIMIT);
        let (tag, key_id, server): (String, u64, ServerKey) = py
            .detach(|| opts.deserialize(data))
            .map_err(|e| {
                PyValueError::new_err(format!("data is not a serialized BooleanServerKey: {e}"))
            })?;
        if tag != "BooleanServerKey" {
            return Err(PyValueError::new_err(format!(
                "data holds a serialized {tag}, not a BooleanServerKey"
            )));
        }
        Ok(BooleanServerKey {
            server,
            key_id,
            counters: Counters::default(),
        })
    }

    /// Pickle support: rebuilt from `to_bytes` (counters start at zero).
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let f = slf.get_type().getattr("from_bytes")?;
        Ok((f, (slf.get().to_bytes(py)?,)))
    }

    fn __repr__(&self) -> String {
        format!(
            "BooleanServerKey(parameters_name='{PARAMETERS_NAME}', key_id={})",
            crate::arrays::fmt_key(self.key_id)
        )
    }
}
