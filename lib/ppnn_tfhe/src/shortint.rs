//! Programmable-bootstrapping table lookups on small encrypted integers (tfhe-rs `shortint`).

use std::sync::atomic::{AtomicU64, Ordering};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;
use tfhe::shortint::parameters::v1_2::*;
use tfhe::shortint::parameters::ClassicPBSParameters;
use tfhe::shortint::{Ciphertext, ClientKey, ServerKey};

use crate::arrays::{batch_methods, int_array, to_numpy, Batch};

/// Parameter set for `message_bits` = k: tfhe-rs `PARAM_MESSAGE_k_CARRY_0` (128-bit
/// security, p-fail <= 2^-128, Gaussian noise). These carry-free sets put the whole
/// plaintext space into the message, so one bootstrap evaluates an arbitrary table
/// Z_{2^k} -> Z_{2^k}. tfhe-rs 1.8's current sets are all MESSAGE_k_CARRY_k; the most recent
/// release that lists the CARRY_0 sets is 1.2 (kept in `shortint::parameters::v1_2`).
fn parameters(bits: u32) -> Option<(ClassicPBSParameters, &'static str)> {
    macro_rules! p {
        ($name:ident) => {
            Some(($name, stringify!($name)))
        };
    }
    match bits {
        1 => p!(V1_2_PARAM_MESSAGE_1_CARRY_0_KS_PBS_GAUSSIAN_2M128),
        2 => p!(V1_2_PARAM_MESSAGE_2_CARRY_0_KS_PBS_GAUSSIAN_2M128),
        3 => p!(V1_2_PARAM_MESSAGE_3_CARRY_0_KS_PBS_GAUSSIAN_2M128),
        4 => p!(V1_2_PARAM_MESSAGE_4_CARRY_0_KS_PBS_GAUSSIAN_2M128),
        5 => p!(V1_2_PARAM_MESSAGE_5_CARRY_0_KS_PBS_GAUSSIAN_2M128),
        6 => p!(V1_2_PARAM_MESSAGE_6_CARRY_0_KS_PBS_GAUSSIAN_2M128),
        7 => p!(V1_2_PARAM_MESSAGE_7_CARRY_0_KS_PBS_GAUSSIAN_2M128),
        8 => p!(V1_2_PARAM_MESSAGE_8_CARRY_0_KS_PBS_GAUSSIAN_2M128),
        _ => None,
    }
}

/// An array of encrypted small integers (opaque).
#[pyclass(module = "ppnn_tfhe", frozen)]
pub struct IntArray {
    pub inner: Batch<Ciphertext>,
}

batch_methods!(IntArray, "IntArray");

/// tfhe-rs shortint keys for `message_bits`-bit integers.
#[pyclass(module = "ppnn_tfhe", frozen)]
pub struct ShortintKey {
    client: ClientKey,
    server: ServerKey,
    key_id: u64,
    message_bits: u32,
    params: ClassicPBSParameters,
    params_name: &'static str,
    lookups: AtomicU64,
}

impl ShortintKey {
    fn modulus(&self) -> i64 {
        1i64 << self.message_bits
    }

    /// Flat u64 values in [0, 2^bits) from an array-like (`what` names the argument).
    fn values(&self, obj: &Bound<'_, PyAny>, what: &str) -> PyResult<(Vec<u64>, Vec<usize>)> {
        let (values, shape) = int_array(obj, what, false)?;
        let m = self.modulus();
        if let Some((i, v)) = values.iter().enumerate().find(|(_, &v)| v < 0 || v >= m) {
            return Err(PyValueError::new_err(format!(
                "{what} must lie in [0, {m}) for message_bits={}, found {v} at flat index {i}",
                self.message_bits
            )));
        }
        Ok((values.into_iter().map(|v| v as u64).collect(), shape))
    }
}

#[pymethods]
impl ShortintKey {
    /// Generate client + server keys for `message_bits`-bit integers (1..=8, default 5).
    #[staticmethod]
    #[pyo3(signature = (message_bits = 5))]
    fn generate(py: Python<'_>, message_bits: u32) -> PyResult<Self> {
        let (params, params_name) = parameters(message_bits).ok_or_else(|| {
            PyValueError::new_err(format!("message_bits must be in 1..=8, got {message_bits}"))
        })?;
        Ok(py.detach(|| {
            let client = ClientKey::new(params);
            let server = ServerKey::new(&client);
            ShortintKey {
                client,
                server,
                key_id: crate::random_key_id(),
                message_bits,
                params,
                params_name,
                lookups: AtomicU64::new(0),
            }
        }))
    }

    #[getter]
    fn key_id(&self) -> u64 {
        self.key_id
    }

    #[getter]
    fn message_bits(&self) -> u32 {
        self.message_bits
    }

    #[getter]
    fn parameters_name(&self) -> &'static str {
        self.params_name
    }

    #[getter]
    fn parameters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let p = &self.params;
        let d = PyDict::new(py);
        d.set_item("message_modulus", p.message_modulus.0)?;
        d.set_item("carry_modulus", p.carry_modulus.0)?;
        d.set_item("lwe_dimension", p.lwe_dimension.0)?;
        d.set_item("glwe_dimension", p.glwe_dimension.0)?;
        d.set_item("polynomial_size", p.polynomial_size.0)?;
        d.set_item("pbs_base_log", p.pbs_base_log.0)?;
        d.set_item("pbs_level", p.pbs_level.0)?;
        d.set_item("ks_base_log", p.ks_base_log.0)?;
        d.set_item("ks_level", p.ks_level.0)?;
        d.set_item("log2_p_fail", p.log2_p_fail)?;
        Ok(d)
    }

    /// Encrypt integers in [0, 2^message_bits) (any integer dtype, any shape).
    fn encrypt(&self, py: Python<'_>, values: &Bound<'_, PyAny>) -> PyResult<IntArray> {
        let (values, shape) = self.values(values, "values")?;
        let client = &self.client;
        let cts = py.detach(|| values.par_iter().map(|&v| client.encrypt(v)).collect());
        Ok(IntArray {
            inner: Batch::new(cts, shape, self.key_id),
        })
    }

    /// Decrypt to a numpy int64 array of the same shape.
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        a: PyRef<'_, IntArray>,
    ) -> PyResult<Bound<'py, numpy::PyArrayDyn<i64>>> {
        a.inner.check_key(self.key_id, "the IntArray")?;
        let client = &self.client;
        let items = &a.inner.items[..];
        let out: Vec<i64> = py.detach(|| {
            items
                .par_iter()
                .map(|ct| client.decrypt(ct) as i64)
                .collect()
        });
        to_numpy(py, out, &a.inner.shape)
    }

    /// `table[x]` for every encrypted x: one programmable bootstrap per element, in parallel.
    ///
    /// `table` has length 2^message_bits and entries in [0, 2^message_bits).
    fn apply_lookup_table(
        &self,
        py: Python<'_>,
        a: PyRef<'_, IntArray>,
        table: &Bound<'_, PyAny>,
    ) -> PyResult<IntArray> {
        a.inner.check_key(self.key_id, "the IntArray")?;
        let (table, tshape) = self.values(table, "table")?;
        let m = self.modulus() as usize;
        if tshape.len() != 1 || table.len() != m {
            return Err(PyValueError::new_err(format!(
                "table must be 1-D of length 2^message_bits = {m}, got shape {}",
                crate::arrays::fmt_shape(&tshape)
            )));
        }
        let server = &self.server;
        let items = &a.inner.items[..];
        let out = py.detach(|| {
            let lut = server.generate_lookup_table(|x| table[(x as usize) % m]);
            items
                .par_iter()
                .map(|ct| server.apply_lookup_table(ct, &lut))
                .collect()
        });
        self.lookups
            .fetch_add(items.len() as u64, Ordering::Relaxed);
        Ok(IntArray {
            inner: Batch::new(out, a.inner.shape.clone(), self.key_id),
        })
    }

    /// Programmable bootstraps run by `apply_lookup_table` (one per element).
    #[getter]
    fn bootstrap_count(&self) -> u64 {
        self.lookups.load(Ordering::Relaxed)
    }

    fn reset_counts(&self) {
        self.lookups.store(0, Ordering::Relaxed);
    }

    fn __repr__(&self) -> String {
        format!(
            "ShortintKey(message_bits={}, parameters_name='{}', key_id={})",
            self.message_bits,
            self.params_name,
            crate::arrays::fmt_key(self.key_id)
        )
    }
}
