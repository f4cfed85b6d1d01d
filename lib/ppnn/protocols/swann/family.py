"""SwaNN's hybrid protocol (Paillier + 2PC) as two :class:`~ppnn.protocols.api.Family` s.

``compile`` builds the integer model (:class:`~.model.SwannModel`, options ``setting``
("hybrid" | "phe"), ``optimized`` (packing + multi-exponentiation, §5.1), ``key_bits`` and
``widths`` ("calibrated", the paper's counts, | "worst-case": every ``ℓ`` covers the worst
case of the input contract))
and the client's keys (real Paillier, generated here with the secret-key shares of the
two-server setting; 2048-bit keys by default, about 112-bit security by NIST SP 800-57, not
128); ``run`` executes :func:`~.inference.run_inference` per image (client-
server) or per pair of images (two-server), on the Paillier simulator (``backend="sim"``:
identical counts) or on real Paillier (``"real"``); ``count`` is a dry run on the simulator.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppnn.core import Ledger
from ppnn.errors import InvalidArgument, InvalidType
from ppnn.he.paillier import KEY_BITS
from ppnn.nn.canonical import canonicalize

from ..api import Costs, Family, FamilySpec, Plan, layer_kinds, offline_received, split_one_time
from ..checks import check_int
from .inference import PARTIES, SwannKeys, run_inference
from .model import FixedPointPlan, SwannModel

__all__ = ["SwannClientServer", "SwannTwoServer"]

_LAYERS = ("Conv2d", "Dense", "BatchNorm", "ReLU", "Square", "MaxPool", "MeanPool",
           "Flatten", "Residual")
_REAL = ("Paillier (phe + gmpy2, 2048-bit keys as in the paper: about 112-bit security by "
         "NIST SP 800-57, not 128) with backend='real'")
_SIM = ("the ABY-style 2PC (OT and AND-triple costs booked from a cost model); Paillier on "
        "its simulator with backend='sim' (identical operation counts)")
_ENCODING = ("a pixel is x 2^8; the activations' widths hold for inputs up to the calibration "
             "maximum x 2^margin_bits (the client's input contract)")


#: the smallest Paillier modulus the families accept without insecure=True (the paper's,
#: about 112-bit security) and the largest they generate (key generation time grows ~ bits^4)
MIN_KEY_BITS, MAX_KEY_BITS = KEY_BITS, 8192
#: the statistical security of the two-server key shares' hiding (KeyShare.stat_bits)
MIN_SHARE_STAT_BITS = 40


class _Swann(Family):
    scenario: str

    def input_range(self, plan: Plan) -> tuple[float, float]:
        """The model's input contract, ``|pixel| <=`` the calibration maximum ``x
        2^margin_bits`` (the encoding is signed, and the activations' widths are derived for
        every input within it); calibration images themselves lie in the spec's ``[0, 1]``."""
        model = plan.impl["model"]
        bound = model.input_bound / 2.0 ** model.plan.f_in
        return -bound, bound

    def security_shortfalls(self, options: dict) -> list[str]:
        keys = options.get("keys")
        weak = []
        if keys is not None:
            if not isinstance(keys, SwannKeys):
                raise InvalidType(f"keys must be a SwannKeys (or None: generated), got "
                                  f"{type(keys).__name__}")
            bits = int(keys.public_key.n).bit_length()
            what = "the given keys' Paillier modulus"
            for share in keys.shares or ():
                if share.stat_bits < MIN_SHARE_STAT_BITS:
                    weak.append(f"the given key shares hide the secret key with "
                                f"{share.stat_bits} statistical bits < {MIN_SHARE_STAT_BITS}")
                    break
        else:
            bits = check_int(options.get("key_bits", KEY_BITS), "key_bits", 128, MAX_KEY_BITS)
            if bits % 2:
                raise InvalidArgument(f"key_bits must be even, got {bits}")
            what = "key_bits"
        if bits < MIN_KEY_BITS:
            weak.insert(0, f"{what} = {bits} < {MIN_KEY_BITS}: a Paillier modulus that short "
                        "gives far less than the claimed ~112-bit security (NIST SP 800-57)")
        return weak

    def _compile(self, net, params, calib, setting: str = "hybrid", optimized: bool = True,
                 key_bits: int = 2048, keys: SwannKeys | None = None,
                 widths: str = "calibrated"):
        if calib is None:
            raise ValueError("SwaNN needs calibration images (calib=) for its activation "
                             "bit widths")
        if not isinstance(optimized, bool):
            raise TypeError(f"optimized must be True or False, got {optimized!r}")
        net, params, rewrites = canonicalize(net, params)
        model = SwannModel(net, params, setting, FixedPointPlan(widths=widths),
                           np.asarray(calib))
        keys = keys or SwannKeys.generate(key_bits, two_server=True)
        return {"model": model, "keys": keys, "optimized": bool(optimized)}, {
            "key_bits": int(keys.public_key.n).bit_length(), "rewrites": rewrites}

    def _run(self, plan: Plan, x, rng, backend):
        imp, per = plan.impl, self.spec.images_per_run
        ledger, logits, times = Ledger(PARTIES[self.scenario]), [], []
        for j in range(0, len(x), per):
            res = run_inference(imp["model"], x[j:j + per], self.scenario, imp["optimized"],
                                imp["keys"], rng, simulated=backend == "sim")
            ledger.merge(res.ledger)
            logits += [np.asarray(z, dtype=object) for z in res.logits]
            df = res.timings.frame()
            times += [("online", lab, s) for lab, s in
                      df.groupby(df["label"].str.split("/").str[0], sort=False)["seconds"]
                      .sum().items()]
        prov = {"communication": "counted: ledger of this run (Paillier ciphertext sizes "
                "exact; OT / AND-triple traffic from the 2PC cost model)",
                "compute": "measured: " + (f"real {plan.info['key_bits']}-bit Paillier"
                                           if backend == "real" else
                                           "the Paillier simulator (not a real-crypto time)")
                + " and the 2PC simulator, all parties"}
        return np.stack(logits), ledger, times, prov

    def oracle(self, plan: Plan, x):
        model = plan.impl["model"]
        return model.forward_int(model.encode(x))

    def describe(self, plan: Plan) -> pd.DataFrame:
        return plan.impl["model"].summary()

    def accuracy_predictions(self, plan: Plan, x, rng):
        return (plan.impl["model"].predict(x, exact="int64"),
                "SwaNN's integer model (= decrypted logits exactly, checked)")

    def costs(self, plan: Plan, results, units) -> Costs:
        from .costs import count_model, measure_unit_costs, project_ms

        model, keys = plan.impl["model"], plan.impl["keys"]
        classify = layer_kinds(plan.net)
        first = results[0]
        if first.backend == "real":
            df = first.timings
            total = float(df["seconds"].sum())
            by = df.assign(cls=df["layer"].map(classify)).groupby("cls")["seconds"].sum()
            kind = "measured"
            note = ("real 2048-bit Paillier and the ABY-style 2PC simulator, one run, all "
                    "parties' compute")
        else:
            uc = units.get("Paillier-2048 + 2PC per operation", lambda: measure_unit_costs(
                2048, reps=10 if units.quick else 20, keys=(keys.public_key, keys.private_key),
                rng=np.random.default_rng(units.seed)))
            ms = project_ms(count_model(model, self.scenario, plan.impl["optimized"], 2048), uc)
            per_step = ms.sum(axis=1) / 1e3
            total = float(per_step.sum())
            by = pd.Series(per_step.values, index=[classify(s) for s in per_step.index]) \
                .groupby(level=0).sum()
            kind = "projected"
            note = ("counted Paillier / 2PC operations x unit costs measured here with real "
                    "2048-bit Paillier; all parties' compute (input encryption excluded)")
        pub = int(keys.public_key.n).bit_length()
        ledger, _ = split_one_time(first.ledger)
        received = offline_received(ledger)
        return Costs(
            total, kind, note, {c: float(by.get(c, 0.0)) for c in
                                ("linear", "nonlinear", "input/output")},
            max(received.values(), default=0.0) + 2 * pub / 8,
            "busiest party: offline 2PC material (OT / AND triples) + a 2048-bit Paillier key "
            "pair (two-server: each server's secret-key share, a signed integer of "
            "2 log2 N + 129 bits, is left out)",
            "SwaNN's integer model (= decrypted logits exactly, checked)",
            "integer model: f_in = f_w = f_act = 8, ell >= 32 calibrated per activation",
            "ledger of a run (Paillier simulator: identical counts)" + (
                "; compute from a real run" if first.backend == "real" else ""),
            {"scenario": self.scenario})


class SwannClientServer(_Swann):
    scenario = "client-server"
    spec = FamilySpec(
        "swann_cs", "SwaNN client-server", "SwaNN", PARTIES["client-server"],
        "2PC, semi-honest", "semi-honest", "two parties", real=_REAL, simulated=_SIM,
        layers=_LAYERS, backends=("sim", "real"),
        input_encoding=_ENCODING)


class SwannTwoServer(_Swann):
    scenario = "two-server"
    spec = FamilySpec(
        "swann_2s", "SwaNN two-server", "SwaNN", PARTIES["two-server"],
        "2 non-colluding servers, semi-honest", "semi-honest", "non-colluding servers",
        real=_REAL, simulated=_SIM, layers=_LAYERS, backends=("sim", "real"),
        images_per_run=2, input_encoding=_ENCODING)
