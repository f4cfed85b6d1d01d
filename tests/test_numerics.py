"""The numerics pin (ppnn.numerics): the same float bits on every x86-64-v3 CPU."""

import hashlib

import numpy as np
import pytest

from ppnn import nn, numerics
from ppnn.nn import Conv2d, Dense, Flatten, MaxPool, MeanPool, Network, ReLU
from ppnn.numerics import env

V3 = frozenset(env.NEEDS) | {"sse4_2"}


def test_apply_sets_the_pin_on_a_v3_cpu_and_keeps_what_the_user_set():
    e = {}
    assert env.apply(e, V3) and e == env.PIN
    e = {"OPENBLAS_CORETYPE": "SkylakeX"}
    assert not env.apply(e, V3)  # the user's choice stands, and the pin is not in force
    assert e["OPENBLAS_CORETYPE"] == "SkylakeX"


def test_apply_leaves_a_cpu_below_v3_and_an_opt_out_alone():
    e = {}
    assert not env.apply(e, V3 - {"fma"}) and e == {}
    e = {env.OPT_OUT: "1"}
    assert not env.apply(e, V3) and e == {env.OPT_OUT: "1"}


def test_cpu_flags_reads_the_first_flags_line(tmp_path):
    f = tmp_path / "cpuinfo"
    f.write_text("processor : 0\nflags\t\t: fpu avx2 fma\n\nprocessor : 1\nflags : sse\n")
    assert env.cpu_flags(str(f)) == {"fpu", "avx2", "fma"}
    assert env.cpu_flags(str(tmp_path / "missing")) == frozenset()


def test_install_writes_a_pth_that_runs_the_env_module(tmp_path):
    pth = numerics.install(str(tmp_path))
    assert pth.name == numerics.PTH_NAME and not list(tmp_path.glob("*.tmp"))
    line = pth.read_text()
    assert line.startswith("import runpy;") and "numerics" in line and line.count("\n") == 1
    with pytest.raises(ValueError, match="site_packages"):
        numerics.install(str(tmp_path / "nope"))


def test_this_environment_runs_the_pinned_kernels():
    """make setup installs the .pth, so every process of the environment (pytest, notebook
    kernels, the pipeline) runs OpenBLAS's Haswell kernels and numpy's AVX2 loops."""
    s = numerics.status()
    if not s["cpu_can_pin"] or s["opted_out"]:
        pytest.skip(f"no pin on this CPU / opted out: {s}")
    assert s["pinned"], s
    assert numerics.fingerprint() == "Haswell/avx2"


#: sha256 of the weights below after training, under the pin. The same on every CPU the pin
#: runs on: measured natively on an AMD EPYC (Zen 5, AVX-512) and under QEMU's Haswell,
#: Skylake-Client and Icelake-Server CPU models; without the pin the Zen 5 gives other bits.
TRAINING_DIGEST = {
    "float32": "768731092e43add00219da6057c6cca65c0b034852b195e0ff617154561c0771",
    "float64": "54ca7c1a70b9ab626e3ea21d46532e21aeac0c493739c434958e57eb6d1dcac6"}


def _train_digest(dtype) -> str:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 1, 12, 12)).astype(dtype)
    y = (x[:, 0, :6].sum(axis=(1, 2)) > 0).astype(np.int64) + 2 * (x[:, 0, 6:, :6].mean(
        axis=(1, 2)) > 0)
    net = Network("digest", (1, 12, 12), (Conv2d(6, 3, 1, 1), ReLU(), MaxPool(2),
                                          Conv2d(8, 3), ReLU(), MeanPool(2), Flatten(),
                                          Dense(16), ReLU(), Dense(4)))
    params = nn.init_params(net, rng)
    params = nn.unflatten_params(net, {k: v.astype(dtype)
                                       for k, v in nn.flatten_params(params).items()})
    trained, hist = nn.train(net, params, x, y, epochs=2, batch_size=32, lr=3e-3, rng=rng)
    h = hashlib.sha256()
    for k, v in sorted(nn.flatten_params(trained).items()):
        h.update(k.encode() + v.tobytes())
    h.update(np.asarray(hist["loss"], np.float64).tobytes())
    return h.hexdigest()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_training_gives_the_same_bits_on_every_cpu(dtype):
    """Float training (im2col convolutions on BLAS, pooling, softmax cross-entropy, Adam)
    gives the committed digest: the bits trained weights, accuracies and SHE's calibrated
    gate counts are computed from do not depend on the CPU (under the pin)."""
    if not numerics.pinned():
        pytest.skip(f"numerics not pinned here ({numerics.fingerprint()}): bits may differ")
    assert _train_digest(np.dtype(dtype)) == TRAINING_DIGEST[dtype]


def test_float_inference_gives_the_same_bits_on_any_number_of_blas_threads():
    """OpenBLAS sums a large product in another order on one thread than on several (here:
    float32 LeNet logits of 1000 images differ by ~1e-6 between one and two threads), so the
    float forward pass -- every accuracy, the quantizers' calibration -- runs on one thread,
    as training does: its bits do not depend on the machine's cores or the caller's
    setting."""
    from ppnn.nn._blas import blas_threads
    from ppnn.nn.forward import forward

    net = nn.zoo.get("falcon_lenet")
    params = nn.init_params(net, np.random.default_rng(0))
    x = np.random.default_rng(1).uniform(0, 1, (1000, *net.input_shape)).astype(np.float32)
    logits = []
    for threads in (1, 2, 4):
        with blas_threads(threads):
            logits.append(forward(net, params, x).tobytes())
    assert logits[0] == logits[1] == logits[2]
