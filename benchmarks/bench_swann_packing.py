"""SwaNN §5.1: packing before the switch, with and without, measured side by side.

For every activation layer of Experiments 1 and 2 (CryptoNets x², MiniONN ReLU; hybrid
setting, client-server), run Protocol 2 (PHE → 2PC) for real with a 2048-bit key, once with
every value in its own ciphertext and once packed ρ per ciphertext. Reported per layer:
decryptions, bytes server → client, client decryption time and server masking time, and the
ratios (expected ≈ ρ for decryptions and bytes). The networks' weights are random (the cost
does not depend on them); the values have the layer's ℓ = 32 bits.

Run: ``.venv/bin/python benchmarks/bench_swann_packing.py [--quick]``; writes
``figures/swann/bench_packing_timings.csv``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from ppnn import paths
from ppnn.core import Ledger, Ring
from ppnn.core.timing import Timings
from ppnn.he.paillier import Paillier, keygen
from ppnn.protocols.swann.switching import KeyHolderDecryption, Masking, Roles, phe_to_2pc
from ppnn.protocols.swann.twopc import TwoPC

LAYERS = [("Exp. 1 Act 1 (x²)", 845), ("Exp. 1 Act 2 (x²)", 100),
          ("Exp. 2 Act+Pool 1 (ReLU)", 9216), ("Exp. 2 Act+Pool 2 (ReLU)", 1024),
          ("Exp. 2 Act (ReLU)", 100)]


def run(n: int, pack: bool, pk, sk, seed: int) -> dict:
    led = Ledger(["client", "server"])
    tm = Timings(led)
    be = Paillier(pk, led, tm)
    rng = np.random.default_rng(seed)
    x = rng.integers(-2**31, 2**31, size=n)
    c = be.encrypt(x, "client")
    tm.records.clear()
    roles = Roles("server", "client", KeyHolderDecryption(sk))
    t0 = time.perf_counter()
    with led.label("p2"):
        sh = phe_to_2pc(be, c, roles, TwoPC(led, ("client", "server"), rng), rng,
                        Masking(32, 80), Ring(32), pack)
    wall = time.perf_counter() - t0
    assert (Ring(32).to_signed(sh.reveal()) == x).all()
    sent = [m.bits for m in led.messages if m.label == "p2" and m.sender == "server"]
    return {"decryptions": led.op_count("Dec", label="p2"),
            "server_to_client_bytes": sum(sent) / 8,
            "client_decrypt_s": tm.total("client", op="Dec"),
            "server_s": tm.total("server"), "wall_s": wall}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="Experiment 1 layers only")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    pk, sk = keygen(2048)
    rho = Paillier(pk).layout(Masking(32, 80).slot_bits).rho
    rows = []
    for name, n in LAYERS[:2] if args.quick else LAYERS:
        res = {p: run(n, p, pk, sk, args.seed) for p in (False, True)}
        rows.append({
            "layer": name, "values": n, "rho": rho,
            "dec_unpacked": res[False]["decryptions"], "dec_packed": res[True]["decryptions"],
            "dec_ratio": res[False]["decryptions"] / res[True]["decryptions"],
            "bytes_unpacked": res[False]["server_to_client_bytes"],
            "bytes_packed": res[True]["server_to_client_bytes"],
            "bytes_ratio": res[False]["server_to_client_bytes"]
            / res[True]["server_to_client_bytes"],
            "client_dec_s_unpacked": res[False]["client_decrypt_s"],
            "client_dec_s_packed": res[True]["client_decrypt_s"],
            "client_dec_speedup": res[False]["client_decrypt_s"] / res[True]["client_decrypt_s"],
            "server_s_unpacked": res[False]["server_s"], "server_s_packed": res[True]["server_s"],
        })
    df = pd.DataFrame(rows)
    pd.set_option("display.width", 200)
    print(df.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    target = paths.figures_dir("swann") / "bench_packing_timings.csv"
    paths.atomic_write(target, df.to_csv(index=False))
    print("wrote", target)


if __name__ == "__main__":
    main()
