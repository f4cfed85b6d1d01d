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

from .adversary import TAMPER_KINDS, Tamper
from .runtime import ACTIONS, PARTIES, RSS, Deviation, Falcon, MaliciousAbort

__all__ = ["steps_sent_by", "scenarios", "run_scenario", "run_all", "default_step",
           "compare_threat_models", "event_types", "harness_scenarios", "run_tamper",
           "run_harness", "harness_summary", "HARNESS_COLUMNS"]

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
    ``outcome`` (in words: where the semi-honest protocol has no such step, it says so),
    ``detected``, ``result_correct``."""
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
         "outcome": ("completed; result " + ("unchanged" if same else "WRONG"))
         if fsh.deviation.fired else
         "completed; the semi-honest protocol sends no message at this step (it exists only "
         "in the malicious protocol), so there was nothing to change",
         "detected": False, "result_correct": same}])


# ---------------------------------------------------------------------------------------------
# The full harness: every message class (adversary.Tamper), any occurrence, any subset of
# elements, and a record of what the honest parties revealed before they aborted.

HARNESS_COLUMNS = ["protocol", "party", "kind", "step", "material", "occurrence", "elements",
                   "offset", "in_threat_model", "changed", "aborted", "check", "detected_by",
                   "detected_at", "opened_before_abort", "plain_opened_before_abort",
                   "tainted_openings", "exposed_openings", "plain_values_changed", "error"]


def _clean_run(protocol: Protocol, seed: int) -> tuple[list, list]:
    """(trace, openings) of an honest malicious run."""
    fal = Falcon(np.random.default_rng(seed), malicious=True, record_openings=True)
    protocol(fal)
    return fal.trace, fal.openings


def event_types(protocol: Protocol, seed: int = 0) -> dict[str, list[tuple]]:
    """What a corrupt party can change in ``protocol``, by tamper kind:
    ``{kind: [(step, material, count), ...]}`` from an honest malicious run's trace."""
    return _event_types(protocol, seed)[0]


def _event_types(protocol: Protocol, seed: int = 0) -> tuple[dict[str, list[tuple]], set]:
    """:func:`event_types` and the steps opened one way (a check value ``v``: one message per
    party, no redundant copy -- so no ``open_copy`` there, and a wrong copy of dealer
    material reaches it only through the component the party sends, its first)."""
    from collections import Counter

    from .adversary import DEALER_CORRUPT, DEALER_LOCAL

    trace, _ = _clean_run(protocol, seed)
    counts = Counter(trace)
    out: dict[str, list[tuple]] = {k: [] for k in TAMPER_KINDS}
    one_way = set()
    for (kind, step, material), c in counts.items():
        if kind == "reshare":
            out["reshare"].append((step, None, c))
        elif kind in ("open", "open1"):
            for k in ("open", "open_copy", "open_both") if kind == "open" else ("open",):
                out[k].append((step, None, c))
            if kind == "open1":
                one_way.add(step)
            if material in DEALER_LOCAL:
                out["dealer_local"].append((step, material, c))
        elif kind == "dealer" and material in DEALER_CORRUPT:
            out["dealer"].append((None, material, c))
        elif kind == "key":
            out["key"].append((step, None, c))
    if not out["reshare"]:  # no product: a wrong PRF key is never used
        out["key"] = []
    return out, one_way


def harness_scenarios(protocols: dict[str, Protocol], n: int, rng: np.random.Generator,
                      seed: int = 0, kinds=None) -> list[tuple[str, Tamper]]:
    """``n`` tamper scenarios drawn with ``rng``: the kinds in turn (every message class gets
    the same share), then a protocol that has events of that kind, an event, an occurrence
    (or every occurrence), a subset of elements (all, a fraction, one or two indices), an
    offset (random per element, 1, or a large constant) and a corrupt party."""
    kinds = tuple(kinds or TAMPER_KINDS)
    typed = {name: _event_types(p, seed) for name, p in protocols.items()}
    events = {name: ev for name, (ev, _) in typed.items()}
    out = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        names = [nm for nm, ev in events.items() if ev[kind]]
        if not names:
            raise ValueError(f"no protocol has events of kind {kind!r}")
        name = names[int(rng.integers(len(names)))]
        step, material, count = events[name][kind][int(rng.integers(len(events[name][kind])))]
        occurrence = None if rng.random() < 0.15 else int(rng.integers(count))
        e = int(rng.integers(4))
        elements = (None if e == 0 else float(rng.uniform(0.05, 1.0)) if e == 1
                    else [int(rng.integers(1 << 20))] if e == 2
                    else [int(v) for v in rng.integers(1 << 20, size=2)])
        o = int(rng.integers(3))
        offset = None if o == 0 else 1 if o == 1 else int(rng.integers(2, 1 << 31))
        party = (step.rsplit("k_", 1)[1] if kind == "key" else PARTIES[int(rng.integers(3))])
        if kind == "key":
            party, occurrence = PARTIES[int(party)], 0
        component = int(rng.integers(2))
        if kind == "dealer_local" and step in typed[name][1]:
            component = 0  # one-way opening: only the party's first component is sent
        t = Tamper(party, kind, step=step, occurrence=occurrence, elements=elements,
                   offset=offset, material=material, component=component,
                   seed=int(rng.integers(1 << 31)))
        out.append((name, t))
    return out


def run_tamper(protocol: Protocol, tamper: Tamper, clean_openings: list, seed: int = 0,
               name: str = "") -> dict:
    """One scenario: does an honest party abort, and what had the honest parties opened (to
    everyone) by then? ``plain_values_changed`` counts plain openings whose value differs from
    the honest run's -- a revealed value the adversary steered."""
    fal = Falcon(np.random.default_rng(seed), malicious=True, deviation=tamper,
                 record_openings=True)
    rec = {"protocol": name, "party": tamper.party, "kind": tamper.kind, "step": tamper.step,
           "material": tamper.material, "occurrence": tamper.occurrence,
           "elements": repr(tamper.elements), "offset": tamper.offset,
           "in_threat_model": tamper.kind != "dealer", "aborted": False, "check": "",
           "detected_by": "", "detected_at": "", "error": ""}
    try:
        protocol(fal)
    except MaliciousAbort as e:
        rec.update(aborted=True, check=e.check, detected_by=e.party, detected_at=e.step)
    except (ValueError, ArithmeticError) as e:  # a protocol's own range check stopped it
        rec["error"] = f"{type(e).__name__}: {e}"[:200]
    opened = fal.openings
    changed_plain = 0
    for i, o in enumerate(opened):
        if o.kind != "plain":
            continue
        ref = clean_openings[i] if i < len(clean_openings) else None
        if ref is None or ref.step != o.step or not np.array_equal(ref.value, o.value):
            changed_plain += 1
    rec.update(changed=tamper.changed > 0, opened_before_abort=len(opened),
               plain_opened_before_abort=sum(o.kind == "plain" for o in opened),
               tainted_openings=sum(o.tainted for o in opened),
               exposed_openings=sum(o.exposed for o in opened),
               plain_values_changed=changed_plain)
    return rec


def run_harness(protocols: dict[str, Protocol], n: int, rng: np.random.Generator,
                seed: int = 0, kinds=None) -> pd.DataFrame:
    """Run ``n`` scenarios of :func:`harness_scenarios`; one row each (``HARNESS_COLUMNS``)."""
    clean = {name: _clean_run(p, seed)[1] for name, p in protocols.items()}
    rows = [run_tamper(protocols[name], t, clean[name], seed, name)
            for name, t in harness_scenarios(protocols, n, rng, seed, kinds)]
    return pd.DataFrame(rows, columns=HARNESS_COLUMNS)


def harness_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per tamper kind: scenarios, how many changed something, aborted, and what leaked."""
    g = df.groupby("kind", sort=False)
    out = pd.DataFrame({
        "in threat model": g["in_threat_model"].first(),
        "scenarios": g.size(),
        "changed a value": g["changed"].sum(),
        "aborted": g["aborted"].sum(),
        "aborted (of those that changed a value, %)": g.apply(
            lambda d: 100.0 * d.loc[d["changed"], "aborted"].mean() if d["changed"].any()
            else float("nan"), include_groups=False),
        "openings before the abort (mean)": g["opened_before_abort"].mean(),
        "plain openings of a tainted value": g["exposed_openings"].sum(),
        "plain values the adversary changed": g["plain_values_changed"].sum(),
    })
    return out.reset_index()
