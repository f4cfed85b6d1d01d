use pyo3::prelude::*;
#[pymodule]
fn ppnn_tfhe(_m: &Bound<'_, PyModule>) -> PyResult<()> { Ok(()) }
