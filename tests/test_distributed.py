"""Runs on a Dask cluster: a LocalCluster of 2 worker processes gives every family the same
logits and the same ledger as the in-process run split the same way, and a worker killed
mid-run loses nothing."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

import ppnn
from ppnn import data, distributed, nn
from ppnn.core import Ledger
from ppnn.protocols import api

pytest.importorskip("dask.distributed")

KEYS = list(api._REGISTRY)


def _ledger_key(led):
    msgs = sorted((m.sender, m.receiver, m.bits, m.round, m.phase, m.label, m.what)
                  for m in led.messages)
    return msgs, led.op_counts(), dict(led.depths)


@pytest.fixture(scope="module")
def client():
    with distributed.cluster(workers=2, dashboard=False) as c:
        yield c


@pytest.fixture(scope="module")
def setup():
    x, _, xt, _ = data.load_mnist()
    net = nn.zoo.get("minionn_mnist")
    params = nn.pretrained("minionn_mnist", quick=True, seed=0)
    return net, params, np.asarray(x[:300]), np.asarray(xt[:4])


def test_block_bounds_cover_the_batch_in_whole_runs():
    assert distributed.block_bounds(7, 3) == [(0, 3), (3, 5), (5, 7)]
    assert distributed.block_bounds(8, 3, unit=2) == [(0, 4), (4, 6), (6, 8)]
    with pytest.raises(ValueError, match="runs of 2"):
        distributed.block_bounds(7, 2, unit=2)
    with pytest.raises(ValueError, match="cannot split 4 images into 5"):
        distributed.block_bounds(4, 5)
    with pytest.raises(ValueError, match="positive int"):
        distributed.block_bounds(4, 0)


def test_block_seeds_are_independent_and_reproducible():
    a = [np.random.default_rng(s).integers(1 << 62) for s in distributed.block_seeds(5, 3)]
    b = [np.random.default_rng(s).integers(1 << 62) for s in distributed.block_seeds(5, 3)]
    assert a == b and len(set(a)) == 3


def test_merge_ledgers_aligns_rounds_adds_bits_and_books_keys_once():
    def one(bits):
        led = Ledger(["a", "b"])
        with led.label("setup"), led.offline():
            led.send("a", "b", 100, "key")
        with led.label("layer"):
            led.send("a", "b", bits, "x")
            led.send("b", "a", bits, "y")
            led.count("op", 3, party="a")
        return led

    merged = distributed.merge_ledgers([one(8), one(16)])
    assert merged.total_bits("online") == 2 * (8 + 16)
    assert merged.rounds("online") == 2  # side by side, not one after the other
    assert merged.total_bits("offline") == 100  # the key once
    assert merged.op_count("op") == 6
    with pytest.raises(ValueError, match="parties"):
        distributed.merge_ledgers([one(8), Ledger(["a", "c"])])


@pytest.mark.parametrize("key", KEYS)
def test_distributed_run_equals_in_process_run(client, setup, key):
    net, params, calib, x = setup
    plan = ppnn.compile(key, net, params, calib=calib)
    local = ppnn.run(plan, x, seed=3, chunks=2)
    remote = ppnn.run(plan, x, seed=3, client=client, chunks=2)
    assert np.array_equal(local.logits, remote.logits)
    assert np.array_equal(local.predictions, remote.predictions)
    assert _ledger_key(local.ledger) == _ledger_key(remote.ledger)
    assert remote.extra["blocks"] == 2 and len(remote.timings["block"].unique()) == 2
    # the blocks compute what the family's own run computes on them
    block = ppnn.run(plan, x[:2], seed=distributed.block_seeds(3, 2)[0])
    assert np.array_equal(block.logits, local.logits[:2])


def test_default_split_is_one_block_per_worker(client, setup):
    net, params, calib, x = setup
    plan = ppnn.compile("falcon_sh", net, params, calib=calib)
    res = ppnn.run(plan, x, seed=0, client=client)
    assert res.extra["blocks"] == distributed.n_workers(client) == 2
    assert np.array_equal(res.logits, ppnn.run(plan, x, seed=0, chunks=2).logits)


def test_the_local_cluster_speaks_tls_on_loopback_and_its_dashboard_is_not_on_0000():
    """Scheduler, workers and dashboard listen on 127.0.0.1 only; the scheduler speaks TLS
    with the cluster's own certificate and turns away a client without one."""
    import operator
    import socket
    import ssl

    import psutil

    with distributed.cluster(workers=1, dashboard=True) as c:
        assert c.scheduler.address.startswith("tls://127.0.0.1:")
        assert all(a.startswith("tls://127.0.0.1:") for a in c.scheduler_info()["workers"])
        link = distributed.dashboard_link(c)
        assert link.startswith("http://127.0.0.1:")
        port = int(link.split(":")[2].split("/")[0])
        bound = {x.laddr.ip for x in psutil.Process().net_connections("tcp")
                 if x.status == psutil.CONN_LISTEN and x.laddr.port == port}
        assert bound == {"127.0.0.1"}
        assert c.submit(operator.add, 1, 2).result() == 3
        host, sport = c.scheduler.address[len("tls://"):].rsplit(":", 1)
        ctx = ssl.create_default_context()
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
        with socket.create_connection((host, int(sport)), timeout=30) as raw, \
                ctx.wrap_socket(raw) as s, pytest.raises(ssl.SSLError, match="CERTIFICATE_REQ"):
            s.recv(1)


def test_bad_arguments_name_the_problem(setup):
    net, params, calib, x = setup
    plan = ppnn.compile("falcon_sh", net, params, calib=calib)
    with pytest.raises(ValueError, match="cannot split 4 images into 9"):
        ppnn.run(plan, x, chunks=9)
    with pytest.raises(ValueError, match="backend"):
        ppnn.run(plan, x, chunks=2, backend="real")
    with pytest.raises(ValueError, match="tcp://"):
        distributed.connect("localhost")
    with pytest.raises(ValueError, match="workers"):
        with distributed.cluster(workers=0):
            pass


def test_a_worker_killed_mid_run_loses_nothing(client, setup):
    """Kill the worker process that is running a block; Dask reschedules the block on the
    other worker (the nanny restarts the dead one) and the result is identical."""
    net, params, calib, _ = setup
    x = np.asarray(data.load_mnist()[2][:8])
    plan = ppnn.compile("gazelle_gc", net, params, calib=calib)
    expected = ppnn.run(plan, x, seed=1, chunks=4)

    out: dict = {}

    def go():
        out["res"] = ppnn.run(plan, x, seed=1, client=client, chunks=4)

    t = threading.Thread(target=go)
    t.start()
    victim, deadline = None, time.time() + 60
    while victim is None and time.time() < deadline:
        busy = {w: ts for w, ts in client.processing().items() if ts}
        victim = next(iter(busy), None)
        time.sleep(0.05)
    assert victim is not None, "no block ever started"
    try:
        client.run(os._exit, 1, workers=[victim])
    except Exception:  # noqa: BLE001 - the worker dies while answering
        pass
    t.join(timeout=300)
    assert "res" in out, "the run did not finish after a worker died"
    res = out["res"]
    assert np.array_equal(res.logits, expected.logits)
    assert _ledger_key(res.ledger) == _ledger_key(expected.ledger)
    client.wait_for_workers(2, timeout=60)
    # the victim really died: its nanny started a new worker process at a new address
    assert victim not in client.scheduler_info()["workers"]


def _tiny_she_plan():
    from ppnn.nn import Dense, Flatten, Network, ReLU
    from ppnn.nn.forward import init_params

    net = Network("she_tiny_test", (1, 2, 2), (Flatten(), Dense(2), ReLU(), Dense(2)))
    params = init_params(net, np.random.default_rng(0), dtype=np.float64)
    calib = np.random.default_rng(1).random((64, 1, 2, 2))
    return ppnn.compile("she", net, params, calib=calib), calib


def test_she_on_real_tfhe_splits_gate_levels_across_workers(client):
    """One encrypted image on real tfhe-rs, every bootstrapped gate level split over the two
    workers (the server key shipped once): logits equal the integer oracle, and the binding's
    own counters (summed over the workers' blocks) equal the simulator's count."""
    pytest.importorskip("ppnn_tfhe", reason="build the binding with `make setup`")
    from ppnn.he.tfhe import DaskTfheBackend

    plan, calib = _tiny_she_plan()
    x = calib[:1]
    res = ppnn.run(plan, x, backend="real", client=client)
    assert np.array_equal(res.logits, plan.oracle(x))
    sim = ppnn.run(plan, x, backend="sim")
    assert res.ledger.op_counts() == sim.ledger.op_counts()
    assert res.ledger.total_bits() == sim.ledger.total_bits()
    # the blocks really ran on the workers, and their counters add up to the circuit's
    be = DaskTfheBackend(client, min_block=4)
    a, b = be.encrypt(np.array([0, 1, 1, 0, 1, 0, 1, 1] * 2)), be.encrypt(np.ones(16, np.uint8))
    out = be.and_(a, b)
    assert list(be.decrypt(out)) == [0, 1, 1, 0, 1, 0, 1, 1] * 2
    assert be._remote["and"] == 16 and be.key.gate_count["and"] == 0
    assert be.native_counts() == be.counts()


def test_tfhe_arrays_and_server_key_pickle():
    import pickle

    tfhe = pytest.importorskip("ppnn_tfhe", reason="build the binding with `make setup`")
    key = tfhe.BooleanKey.generate()
    a = key.encrypt(np.array([[1, 0], [0, 1]], np.uint8))
    a2 = pickle.loads(pickle.dumps(a))
    assert a2.shape == (2, 2) and a2.key_id == key.key_id
    sk = pickle.loads(pickle.dumps(key.server_key()))
    assert not hasattr(sk, "decrypt") and not hasattr(sk, "encrypt")
    assert key.decrypt(sk.xor(a2, a)).tolist() == [[0, 0], [0, 0]]
    with pytest.raises(ValueError, match="not a serialized BooleanServerKey"):
        tfhe.BooleanServerKey.from_bytes(a.to_bytes())


def test_the_comparison_runs_its_families_as_dask_tasks(client):
    """The cross-paper comparison with a client: the families run side by side on the
    workers and the counted columns equal the in-process comparison's."""
    from ppnn.experiments import compare

    fams = ["falcon_sh", "delphi_tabula"]
    local = compare.run_comparison(quick=True, seed=0, n_run=1, n_acc=50, families=fams)
    remote = compare.run_comparison(quick=True, seed=0, n_run=1, n_acc=50, families=fams,
                                    client=client, workload=local.workload)
    cols = [c for c in compare.COUNTED_COLUMNS if c in local.frame.columns]
    assert cols and local.frame[cols].equals(remote.frame[cols])
    assert list(remote.seconds) == fams


def test_progress_bar_over_blocks(client, setup, capsys):
    net, params, calib, x = setup
    plan = ppnn.compile("falcon_sh", net, params, calib=calib)
    res = ppnn.run(plan, x, seed=0, client=client, chunks=2, progress=True)
    assert res.extra["blocks"] == 2
    assert "falcon_sh blocks" in capsys.readouterr().err
