"""Tampering harness: a chosen corrupt party deviates at a chosen step; do the others abort?

For a protocol (a function of a :class:`Falcon` instance), a clean malicious run lists every
step at which each party sends something (from the ledger). Each scenario then re-runs the
protocol with the same seed while one party changes one message at one step:

* ``flip_share`` -- flips the lowest bit of one element of the share it sends;
* ``inconsistent_send`` -- sends a value shifted by random nonzero offsets;
* ``bad_triple`` -- at a multiplication check, uses a wrong component of its triple when
  computing ``rho``/``sigma`` (only at ``mult-check rho`` steps).

A scenario is *detected* when an honest party raises :class:`MaliciousAbort`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from .runtime import ACTIONS, PARTIES, RSS, Deviation, Falcon, MaliciousAbort

__all__ = ["steps_sent_by", "scenarios", "run_scenario", "run_all", "default_step",
           "compare_threat_models"]

Protocol = Callable[[Falcon], object]


def steps_sent_by(fal: Falcon, party: str) -> list[str]:
    """Distinct online steps (``label::what``) at which ``party`` sent a message, in order."""
    seen: dict[str, None] = {}
    for m in fal.ledger.messages:
        if m.phase == "online" and m.sender == party:
            seen.setdefault(f"{m.label}::{m.what}", None)
    return list(seen)


def scenarios(protocol: Protocol, seed: int = 0, parties=PARTIES, actions=ACTIONS
              ) -> list[tuple[str, str, str]]:
    """All (party, step, action) triples for ``protocol`` (clean malicious run first)."""
    fal = Falcon(np.random.default_rng(seed), malicious=True)
    protocol(fal)
    out = []
    for p in parties:
        for step in steps_sent_by(fal, p):
            for a in actions:
                if a == "bad_triple" and "mult-check rho" not in step:
                    continue
                out.append((p, step, a))
    return out


def run_scenario(protocol: Protocol, party: str, step: str, action: str, seed: int = 0
                 ) -> dict:
    """Run one deviation; report whether it fired and whether (and where) it was detected."""
    dev = Deviation(party, step, action)
    fal = Falcon(np.random.default_rng(seed), malicious=True, deviation=dev)
    rec = {"party": party, "step": step, "action": action, "fired": False, "detected": False,
           "check": "", "detected_by": "", "detected_at": ""}
    try:
        protocol(fal)
    except MaliciousAbort as e:
        rec.update(detected=True, check=e.check, detected_by=e.party, detected_at=e.step)
    rec["fired"] = dev.fired
    return rec


def run_all(protocols: dict[str, Protocol], seed: int = 0, limit: int | None = None,
            rng: np.random.Generator | None = None) -> pd.DataFrame:
    """Every scenario of every protocol (or a random ``limit`` of each, drawn with ``rng``)."""
    rows = []
    for name, proto in protocols.items():
        sc = scenarios(proto, seed)
        if limit is not None and len(sc) > limit:
            if rng is None:
                raise ValueError("pass rng= to sample a limited number of scenarios")
            idx = np.sort(rng.choice(len(sc), size=limit, replace=False))
            sc = [sc[i] for i in idx]
        for party, step, action in sc:
            rows.append({"protocol": name, **run_scenario(proto, party, step, action, seed)})
    return pd.DataFrame(rows, columns=["protocol", "party", "step", "action", "fired",
                                       "detected", "check", "detected_by", "detected_at"])


def default_step(protocol: Protocol, party: str, action: str, seed: int = 0) -> str | None:
    """The step to show first for ``party`` deviating with ``action``: the last step that
    also exists semi-honestly (not a multiplication check; usually the output product), else
    the last one; None if the party sends nothing this action applies to."""
    opts = [s for p, s, a in scenarios(protocol, seed) if p == party and a == action]
    plain = [s for s in opts if "mult-check" not in s]
    return (plain or opts)[-1] if opts else None


def compare_threat_models(protocol: Protocol, party: str, step: str, action: str,
                          seed: int = 0) -> pd.DataFrame:
    """One deviation run twice: malicious (does an honest party abort, and where?) and
    semi-honest (it completes; is the result still right?). Rows ``run``, ``deviation fired``,
    ``outcome``, ``detected``, ``result_correct``."""
    rec = run_scenario(protocol, party, step, action, seed)
    fsh = Falcon(np.random.default_rng(seed), deviation=Deviation(party, step, action))
    clean = Falcon(np.random.default_rng(seed))
    res, ref = protocol(fsh), protocol(clean)
    val = (lambda r: r[0] if isinstance(r, tuple) else r)
    if isinstance(val(res), RSS):
        same = bool(np.array_equal(fsh.reveal(val(res)), clean.reveal(val(ref))))
    else:
        same = bool(np.array_equal(val(res), val(ref)))
    return pd.DataFrame([
        {"run": "malicious", "deviation fired": rec["fired"],
         "outcome": f"ABORT by {rec['detected_by']}: {rec['check']}" if rec["detected"]
         else "completed (undetected!)", "detected": rec["detected"], "result_correct": None},
        {"run": "semi-honest", "deviation fired": fsh.deviation.fired,
         "outcome": "completed; result " + ("unchanged" if same else "WRONG"),
         "detected": False, "result_correct": same}])
