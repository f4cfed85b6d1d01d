//! Shape bookkeeping shared by `BitArray` and `IntArray`, and numpy conversions.
//!
//! A batch is a flat, row-major `Vec` of ciphertexts plus a numpy-style shape and the id of
//! the key that made it. The vector sits behind an `Arc`, so `reshape` never copies
//! ciphertexts; `take` and `concat` clone the ciphertexts they select (cheap compared to a
//! gate: one clone is a memcpy of a few kilobytes).

use std::sync::Arc;

use numpy::{PyArrayDyn, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use serde::{de::DeserializeOwned, Serialize};

/// Flat ciphertexts + shape + key id.
pub struct Batch<T> {
    pub items: Arc<Vec<T>>,
    pub shape: Vec<usize>,
    pub key_id: u64,
}

impl<T> Clone for Batch<T> {
    fn clone(&self) -> Self {
        Batch {
            items: Arc::clone(&self.items),
            shape: self.shape.clone(),
            key_id: self.key_id,
        }
    }
}

pub fn fmt_shape(shape: &[usize]) -> String {
    match shape.len() {
        1 => format!("({},)", shape[0]),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

pub fn fmt_key(key_id: u64) -> String {
    format!("0x{key_id:016x}")
}

impl<T: Clone + Send + Sync> Batch<T> {
    pub fn new(items: Vec<T>, shape: Vec<usize>, key_id: u64) -> Self {
        debug_assert_eq!(items.len(), shape.iter().product::<usize>());
        Batch {
            items: Arc::new(items),
            shape,
            key_id,
        }
    }

    pub fn size(&self) -> usize {
        self.items.len()
    }

    /// Raise unless the batch was made under `key_id` (`what` names the argument).
    pub fn check_key(&self, key_id: u64, what: &str) -> PyResult<()> {
        if self.key_id != key_id {
            return Err(PyValueError::new_err(format!(
                "{what} belongs to key {} but this key is {}: ciphertexts can only be used \
                 with the key that produced them",
                fmt_key(self.key_id),
                fmt_key(key_id)
            )));
        }
        Ok(())
    }

    /// Raise unless `self` and `other` have the same shape and key.
    pub fn check_same(&self, other: &Self, names: (&str, &str)) -> PyResult<()> {
        if self.shape != other.shape {
            return Err(PyValueError::new_err(format!(
                "shape mismatch: {} has shape {} but {} has shape {} (gates are element-wise \
                 on equal shapes; no broadcasting)",
                names.0,
                fmt_shape(&self.shape),
                names.1,
                fmt_shape(&other.shape)
            )));
        }
        if self.key_id != other.key_id {
            return Err(PyValueError::new_err(format!(
                "key mismatch: {} belongs to key {} but {} belongs to key {}",
                names.0,
                fmt_key(self.key_id),
                names.1,
                fmt_key(other.key_id)
            )));
        }
        Ok(())
    }

    pub fn reshape(&self, requested: &[i64]) -> PyResult<Self> {
        let shape = resolve_shape(self.size(), &self.shape, requested)?;
        Ok(Batch {
            items: Arc::clone(&self.items),
            shape,
            key_id: self.key_id,
        })
    }

    pub fn take(&self, indices: &[i64], shape: Vec<usize>) -> PyResult<Self> {
        let n = self.size() as i64;
        let mut out = Vec::with_capacity(indices.len());
        for &i in indices {
            let j = if i < 0 { i + n } else { i };
            if j < 0 || j >= n {
                return Err(PyIndexError::new_err(format!(
                    "index {i} is out of bounds for a flattened array of size {n}"
                )));
            }
            out.push(self.items[j as usize].clone());
        }
        Ok(Batch::new(out, shape, self.key_id))
    }

    pub fn concat(parts: &[Self]) -> PyResult<Self> {
        let first = parts.first().ok_or_else(|| {
            PyValueError::new_err("concat needs at least one array (got an empty list)")
        })?;
        let mut out = Vec::with_capacity(parts.iter().map(|p| p.size()).sum());
        for (i, p) in parts.iter().enumerate() {
            if p.key_id != first.key_id {
                return Err(PyValueError::new_err(format!(
                    "key mismatch in concat: arrays[0] belongs to key {} but arrays[{i}] \
                     belongs to key {}",
                    fmt_key(first.key_id),
                    fmt_key(p.key_id)
                )));
            }
            out.extend(p.items.iter().cloned());
        }
        let len = out.len();
        Ok(Batch::new(out, vec![len], first.key_id))
    }
}

impl<T: Clone + Send + Sync + Serialize + DeserializeOwned> Batch<T> {
    /// Exact size in bytes of the bincode serialisation of every ciphertext (summed).
    pub fn serialized_size(&self) -> PyResult<u64> {
        let mut total = 0u64;
        for ct in self.items.iter() {
            total += bincode::serialized_size(ct)
                .map_err(|e| PyValueError::new_err(format!("serialization failed: {e}")))?;
        }
        Ok(total)
    }

    pub fn to_bytes(&self, tag: &str) -> PyResult<Vec<u8>> {
        let shape: Vec<u64> = self.shape.iter().map(|&d| d as u64).collect();
        bincode::serialize(&(tag, self.key_id, shape, &*self.items))
            .map_err(|e| PyValueError::new_err(format!("serialization failed: {e}")))
    }

    pub fn from_bytes(data: &[u8], tag: &str) -> PyResult<Self> {
        let (got, key_id, shape, items): (String, u64, Vec<u64>, Vec<T>) =
            bincode::deserialize(data).map_err(|e| {
                PyValueError::new_err(format!("data is not a serialized {tag}: {e}"))
            })?;
        if got != tag {
            return Err(PyValueError::new_err(format!(
                "data holds a serialized {got}, not a {tag}"
            )));
        }
        let shape: Vec<usize> = shape.into_iter().map(|d| d as usize).collect();
        if shape.iter().product::<usize>() != items.len() {
            return Err(PyValueError::new_err(format!(
                "corrupt data: shape {} does not match {} ciphertexts",
                fmt_shape(&shape),
                items.len()
            )));
        }
        Ok(Batch::new(items, shape, key_id))
    }
}

/// numpy-style reshape target: at most one -1, product must match `size`.
fn resolve_shape(size: usize, old: &[usize], requested: &[i64]) -> PyResult<Vec<usize>> {
    let unknown: Vec<usize> = requested
        .iter()
        .enumerate()
        .filter(|(_, &d)| d == -1)
        .map(|(i, _)| i)
        .collect();
    let bad = || {
        PyValueError::new_err(format!(
            "cannot reshape an array of shape {} (size {size}) into shape {:?}",
            fmt_shape(old),
            requested
        ))
    };
    if unknown.len() > 1 || requested.iter().any(|&d| d < -1) {
        return Err(bad());
    }
    let known: usize = requested
        .iter()
        .filter(|&&d| d >= 0)
        .map(|&d| d as usize)
        .product();
    let mut shape: Vec<usize> = requested.iter().map(|&d| d.max(0) as usize).collect();
    if let Some(&i) = unknown.first() {
        if known == 0 || !size.is_multiple_of(known) {
            return Err(bad());
        }
        shape[i] = size / known;
    } else if known != size {
        return Err(bad());
    }
    Ok(shape)
}

/// Accept an int or a tuple/list of ints as a shape (like `numpy.reshape`).
pub fn shape_arg(obj: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    if let Ok(d) = obj.extract::<i64>() {
        return Ok(vec![d]);
    }
    obj.extract::<Vec<i64>>()
        .map_err(|_| PyTypeError::new_err("shape must be an int or a tuple of ints"))
}

/// Convert any array-like of integers or bools to (flat int64 values, shape).
///
/// `what` names the argument in error messages. Floats, strings and objects raise TypeError.
pub fn int_array(
    obj: &Bound<'_, PyAny>,
    what: &str,
    allow_bool: bool,
) -> PyResult<(Vec<i64>, Vec<usize>)> {
    let np = obj.py().import("numpy")?;
    let arr = np.call_method1("asarray", (obj,))?;
    let dtype = arr.getattr("dtype")?;
    let kind: String = dtype.getattr("kind")?.extract()?;
    let ok = matches!(kind.as_str(), "u" | "i") || (allow_bool && kind == "b");
    if !ok {
        return Err(PyTypeError::new_err(format!(
            "{what} must be an integer{} numpy array, got dtype {}",
            if allow_bool { " or bool" } else { "" },
            dtype.str()?
        )));
    }
    if kind == "u" && dtype.getattr("itemsize")?.extract::<usize>()? == 8 {
        // uint64 values >= 2**63 would wrap in int64: reject them here.
        let too_big: bool = arr
            .call_method1("__ge__", (1u64 << 63,))?
            .call_method0("any")?
            .extract()?;
        if too_big {
            return Err(PyValueError::new_err(format!(
                "{what} holds a value >= 2**63, far outside the allowed range"
            )));
        }
    }
    let arr = np.call_method1("ascontiguousarray", (arr, "int64"))?;
    let arr: PyReadonlyArrayDyn<'_, i64> = arr.extract()?;
    let shape = arr.shape().to_vec();
    let values = arr
        .as_slice()
        .map_err(|e| PyValueError::new_err(format!("{what}: {e}")))?
        .to_vec();
    Ok((values, shape))
}

/// A numpy array of `values` with the given shape.
pub fn to_numpy<'py, E: numpy::Element>(
    py: Python<'py>,
    values: Vec<E>,
    shape: &[usize],
) -> PyResult<Bound<'py, PyArrayDyn<E>>> {
    use numpy::IntoPyArray;
    let arr = numpy::ndarray::ArrayD::from_shape_vec(numpy::IxDyn(shape), values)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(arr.into_pyarray(py))
}

pub fn shape_tuple<'py>(py: Python<'py>, shape: &[usize]) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, shape)
}

/// Generate the Python-facing methods shared by `BitArray` and `IntArray`.
///
/// `$ty` is a `#[pyclass(frozen)]` struct with one field `inner: Batch<_>`.
macro_rules! batch_methods {
    ($ty:ident, $name:literal) => {
        #[pymethods]
        impl $ty {
            /// numpy-style shape tuple.
            #[getter]
            fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
                $crate::arrays::shape_tuple(py, &self.inner.shape)
            }

            /// Number of ciphertexts (product of the shape).
            #[getter]
            fn size(&self) -> usize {
                self.inner.size()
            }

            #[getter]
            fn ndim(&self) -> usize {
                self.inner.shape.len()
            }

            /// Random 64-bit id of the key that produced these ciphertexts.
            #[getter]
            fn key_id(&self) -> u64 {
                self.inner.key_id
            }

            /// Length of the first axis, as for numpy arrays.
            fn __len__(&self) -> PyResult<usize> {
                self.inner.shape.first().copied().ok_or_else(|| {
                    pyo3::exceptions::PyTypeError::new_err(concat!("len() of a 0-d ", $name))
                })
            }

            fn __repr__(&self) -> String {
                format!(
                    "{}(shape={}, key_id={})",
                    $name,
                    $crate::arrays::fmt_shape(&self.inner.shape),
                    $crate::arrays::fmt_key(self.inner.key_id)
                )
            }

            /// Same ciphertexts, new shape (no copy; one dimension may be -1).
            fn reshape(&self, shape: &Bound<'_, PyAny>) -> PyResult<Self> {
                let requested = $crate::arrays::shape_arg(shape)?;
                Ok($ty {
                    inner: self.inner.reshape(&requested)?,
                })
            }

            /// New array of the ciphertexts at the given flat (row-major) indices.
            ///
            /// Result shape = shape of `indices`. Negative indices count from the end;
            /// out-of-range indices raise IndexError. Costs no gate.
            fn take(&self, indices: &Bound<'_, PyAny>) -> PyResult<Self> {
                let (idx, shape) = $crate::arrays::int_array(indices, "indices", false)?;
                Ok($ty {
                    inner: self.inner.take(&idx, shape)?,
                })
            }

            /// Flattened concatenation of several arrays made under the same key.
            #[staticmethod]
            fn concat(arrays: Vec<PyRef<'_, $ty>>) -> PyResult<Self> {
                let parts: Vec<_> = arrays.iter().map(|a| a.inner.clone()).collect();
                Ok($ty {
                    inner: $crate::arrays::Batch::concat(&parts)?,
                })
            }

            /// Bytes of the bincode serialisation of every ciphertext, summed.
            fn serialized_size(&self) -> PyResult<u64> {
                self.inner.serialized_size()
            }

            /// Serialise (ciphertexts, shape, key id) with bincode.
            fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
                let data = self.inner.to_bytes($name)?;
                Ok(pyo3::types::PyBytes::new(py, &data))
            }

            /// Inverse of `to_bytes` (only for data you produced yourself).
            #[staticmethod]
            fn from_bytes(data: &[u8]) -> PyResult<Self> {
                Ok($ty {
                    inner: $crate::arrays::Batch::from_bytes(data, $name)?,
                })
            }

            /// Pickle support (Dask ships arrays between processes): rebuilt by
            /// `from_bytes(to_bytes())`.
            fn __reduce__<'py>(
                slf: &Bound<'py, Self>,
                py: Python<'py>,
            ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, pyo3::types::PyBytes>,))> {
                let f = slf.get_type().getattr("from_bytes")?;
                let data = slf.get().inner.to_bytes($name)?;
                Ok((f, (pyo3::types::PyBytes::new(py, &data),)))
            }
        }
    };
}
pub(crate) use batch_methods;
