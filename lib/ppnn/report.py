"""Paper-vs-reproduced tables and the reproduction report.

Paper values live in ``data/paper/<paper>_<table>.csv`` (tidy: ``table,row,metric,value,unit,
note``). A notebook computes its own values as a DataFrame with columns ``row, metric, value``
(optional ``kind`` -- measured / counted / projected / formula -- and ``note``) and calls
:func:`compare`, then :func:`save`. :func:`build_report` assembles ``figures/REPORT.md`` from
every saved table. Nothing here types in a reproduced number.

Every compared row gets one of :data:`STATUSES`: ``exact`` (equal at the paper's printed
precision), ``within tolerance``, ``differs`` (the ``reason`` column says why, when known),
``definition differs`` (the same quantity by another definition, shown, not judged),
``not reproducible: network unspecified`` (the paper's value depends on a network it does not
specify), ``not reproducible here``, ``ours only``, ``paper value missing`` and ``paper value
garbled`` (the transcription's cell is empty or unreadable; see ``data/paper/README.md``).
:data:`STATUS_LEGEND`, printed in REPORT.md, says what each one means and how accuracies,
speed-ups and shares of the run time are judged (:data:`CLAIM_STATUSES`).

Where we built something differently from the paper (another network, circuit, parameter set,
accounting) and the paper's choice is fully specified, a builder also computes the paper's
choice and reports it as a row labelled :func:`paper_choice` ``(row, what)``. It is compared
with the paper's cell of ``row``, shown right below our own row, and our row's reason names
its value and status -- so a difference is never just "we built it differently".

Also: :func:`load_paper`, :func:`ratio_claims`, :func:`headlines`, :func:`save_errata`,
:func:`to_markdown`, :func:`projection_note` and :func:`wire_error_summary` (the wire-mode
table's errors, shared with :mod:`ppnn.experiments.wire`).
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np
import pandas as pd

from . import paths

__all__ = ["load_paper", "compare", "save", "build_report", "save_errata", "STATUSES",
           "headlines", "headline_verdicts", "ladder_slug", "HEADLINE_COLUMNS",
           "reproduced_frame", "status_counts", "paper_choice", "paper_row_of", "PAPER_CHOICE",
           "INFERRED", "is_inferred_choice", "projection_note", "wire_error_summary"]

#: the status of a row whose paper value depends on a network the paper does not specify
NETWORK_UNSPECIFIED = "not reproducible: network unspecified"
#: the prefix of such a row's reason (and of a value-less note that gives the status)
UNSPECIFIED_PREFIX = "network unspecified"
#: a row of ours that differs where the paper's own (stated) choice, computed by us, matches
CHOICE_REPRODUCES = "differs; paper's choice reproduces"
STATUSES = ("exact", "within tolerance", "differs", CHOICE_REPRODUCES, "definition differs",
            "verified",
            "machine-dependent", "claim holds", "direction holds, magnitude not reached",
            "claim fails", "too close to call", "quoted",
            "input", "formula", "not reproducible here", NETWORK_UNSPECIFIED, "ours only",
            "paper value missing", "paper value garbled")
#: statuses of a claim row (see :func:`_claim`)
CLAIM_STATUSES = ("claim holds", "direction holds, magnitude not reached", "claim fails",
                  "too close to call")
#: statuses that judge a value against the paper's (a definition mismatch overrides them)
JUDGED = ("exact", "within tolerance", "differs", "verified")
#: a paper cell whose note starts with this is unreadable in this copy of the paper
GARBLED = "garbled in this copy"
#: separates a paper row's label from the description of the paper's choice we also ran
PAPER_CHOICE = " | paper's choice: "


#: marks a paper's-choice row whose setting we inferred (fitted to the printed number)
INFERRED = "inferred: "


def paper_choice(row: str, what: str, inferred: bool = False) -> str:
    """The row label of a value computed with the paper's own choice (network, parameters,
    accounting) where ours differs: compared with the paper's cell of ``row``.

    ``inferred=True``: the paper does not state this setting; we fitted it to the printed
    number (the label says so, and the summary counts such rows apart)."""
    if not str(what).strip():
        raise ValueError("paper_choice needs a description of the paper's choice")
    if PAPER_CHOICE in str(row):
        raise ValueError(f"row {row!r} is already a paper's-choice row")
    return f"{row}{PAPER_CHOICE}{INFERRED if inferred else ''}{what}"


def is_inferred_choice(row) -> bool:
    """A paper's-choice row whose setting was inferred, not stated by the paper."""
    return f"{PAPER_CHOICE}{INFERRED}" in str(row)


def paper_row_of(row) -> str | None:
    """The paper row a paper's-choice row is compared with, None for other rows."""
    row = str(row)
    return row.split(PAPER_CHOICE, 1)[0] if PAPER_CHOICE in row else None
KINDS = ("measured", "counted", "projected", "formula", "quoted", "input", "arithmetic")
#: units of absolute times: measured here vs measured on the paper's machine
TIME_UNITS = {"ns", "us", "ms", "s", "min", "h", "weeks", "days"}


def _base_unit(unit) -> str:
    return str(unit or "").split("(x1e")[0].strip()


#: an accuracy is within tolerance when our error rate is within this factor of the paper's,
#: either way (or within ACCURACY_SLACK_PP percentage points of it)
ACCURACY_ERROR_RATIO = 1.25
ACCURACY_SLACK_PP = 0.1


def _accuracy_status(paper_s: str, ours) -> str | None:
    """The status of an accuracy row (see :func:`_status`), None when either is missing."""
    status, _ = _status(paper_s, ours, 0.0, accuracy=True)
    return status if status in ("exact", "within tolerance", "differs") else None


def _is_accuracy(metric: str, unit) -> bool:
    m = str(metric).lower()
    return _base_unit(unit) == "%" and "acc" in m and "tolerance" not in m


#: a percentage is a share of the run time when its metric says so (a relative error or an
#: accuracy in % is deterministic for a seed)
TIME_SHARE = re.compile(r"pct|share|time|latency|fraction")


def _timing_derived(kind: str, unit, metric: str = "") -> bool:
    """A value computed from wall-clock times measured on this machine: an absolute time, or
    a speed-up (``x``) / share of the run time (``%`` with pct/share/time in the metric)
    measured or projected from measured unit costs. Accuracies and relative errors are not
    timings."""
    if kind not in ("measured", "projected"):
        return False
    base = _base_unit(unit)
    if base in TIME_UNITS or base == "x":
        return True
    return base == "%" and not _is_accuracy(metric, unit) and bool(
        TIME_SHARE.search(str(metric).lower()))


#: a speed-up the paper prints is also a claim about who wins; ours is "about as fast" inside
#: this zone around parity (what a loaded machine cannot tell apart)
CLAIM_PARITY = (0.8, 1.25)
#: a share of the run time the paper prints is a claim that the part dominates (> 50 %) or
#: not; ours is too close to call inside this zone
CLAIM_MAJORITY = (45.0, 55.0)
#: a claim holds only at its magnitude: ours must reach this fraction of the paper's factor
#: (a "10x faster" is not reproduced by 4x; a "slower" claim, the inverse)
CLAIM_MAGNITUDE = 0.75
#: a speed-up of at least this factor (or at most its inverse) is a clear claim; a claim and
#: ours in different zones are too close to call only when both lie inside
CLAIM_CLEAR = 1.5
#: the same for shares of the run time (percent)
CLAIM_CLEAR_SHARE = (40.0, 60.0)


def _zone(v: float, edges: tuple[float, float], names: tuple[str, str, str]) -> str:
    lo, hi = edges
    return names[0] if v >= hi else names[2] if v <= lo else names[1]


def _claim(metric: str, unit, paper_s: str, ours, words: tuple[str, str, str] | None = None
           ) -> tuple[str, str, str] | None:
    """The relative claim behind a timing-derived cell: ``(paper's claim, ours, status)``.

    A speed-up is faster at ``CLAIM_PARITY[1]`` or more, slower at ``CLAIM_PARITY[0]`` or
    less, about as fast in between -- the paper's ``P`` and ours ``R`` by the same edges.
    One rule in both directions:

    * same zone: the claim holds when ours reaches ``CLAIM_MAGNITUDE`` of the paper's factor
      (``R / P``; ``P / R`` for "slower"); short of it, ``direction holds, magnitude not
      reached``;
    * different zones: ``too close to call`` when neither number is a clear speed-up (both
      within ``1 / CLAIM_CLEAR`` and ``CLAIM_CLEAR``), ``claim fails`` otherwise -- a "3x" met
      by 1.0x fails as a "1x" met by 3x does, and a "1x" met by 1.44x is as close as a
      "1.44x" met by 1x.

    A share of the run time says the part takes most of the time (over 50 %), half, or less
    than half (zones at ``CLAIM_MAJORITY``); its magnitude is judged on the smaller side: the
    remainder ``100 - P`` of a majority share (a 74 % linear share against 98 % leaves 26 %
    against 2 %), the share itself otherwise; different zones are too close to call when
    both shares lie within ``CLAIM_CLEAR_SHARE``. ``words``: the zones' names for a factor
    that is not a speed-up (a ratio of bytes or of storage). None for other cells."""
    p, o = _to_float(paper_s), _to_float(ours)
    if math.isnan(p) or math.isnan(o):
        return None
    base, m = _base_unit(unit), str(metric).lower()
    if base == "x" and "speedup" in m:
        if p <= 0 or o <= 0:
            return None
        names = words or ("faster", "about as fast", "slower")
        said, got = (_zone(v, CLAIM_PARITY, names) for v in (p, o))
        q = p / o if said == names[2] else o / p  # the low zone by its own name
        close = all(1 / CLAIM_CLEAR < v < CLAIM_CLEAR for v in (p, o))
        sign, extra = "x", ""
    elif base == "%" and TIME_SHARE.search(m) and not _is_accuracy(metric, unit):
        names = ("most of the time", "half", "less than half")
        said, got = (_zone(v, CLAIM_MAJORITY, names) for v in (p, o))
        small_p, small_o = (100 - p, 100 - o) if said == "most of the time" else (p, o)
        q = math.inf if small_o <= 0 else small_p / small_o
        close = all(CLAIM_CLEAR_SHARE[0] < v < CLAIM_CLEAR_SHARE[1] for v in (p, o))
        sign = "%"
        extra = (f"; remainder {100 - o:.3g}% against the paper's {100 - p:.3g}%"
                 if said == "most of the time" else "")
    else:
        return None
    note = ""
    if got == said:
        status = "claim holds"
        if said != names[1] and q < CLAIM_MAGNITUDE:
            status = "direction holds, magnitude not reached"
            note = f"; {q:.2f} of the paper's magnitude{extra}"
    else:
        status = "too close to call" if close else "claim fails"
        if status == "claim fails" and extra:
            note = extra
    return f"{said} ({paper_s.strip()}{sign})", f"{got} ({o:.3g}{sign}{note})", status


def _final_status(status: str, kind: str, unit, check, metric: str = "") -> str:
    """What a row's status means, beyond the numbers (issue: statuses that mean something).

    * a value we did not compute -- quoted from the paper or another publication (``quoted``),
      or a setting we chose to match the paper (``input``) -- is context, never a match;
    * a row the builder checked (``check``: the paper's formula holds for what we ran) is
      ``verified`` or ``differs``;
    * an absolute time measured or projected here vs one measured on the paper's machine is
      ``machine-dependent``: the ratio is shown, no pass/fail; so is a speed-up or a share of
      the run time measured here (or projected from unit costs measured here): its value
      moves with the machine's load, and a status that two runs can disagree on says nothing.
      Deterministic rows (counted, formula, accuracies for a seed) keep their statuses, so
      two runs give identical status counts."""
    if kind in ("quoted", "input") and status not in ("paper value missing",):
        return kind
    if kind == "arithmetic" and status not in ("paper value missing",):
        return "formula"  # the paper's own numbers recomputed: nothing of ours ran
    if check is not None and not (isinstance(check, float) and math.isnan(check)):
        return "verified" if bool(check) else "differs"
    if _timing_derived(kind, unit, metric) and status in ("exact", "within tolerance",
                                                          "differs"):
        return "machine-dependent"
    return status
COLUMNS = ["table", "row", "metric", "unit", "paper", "ours", "ratio", "kind", "status", "reason"]


def load_paper(paper: str, table: str) -> pd.DataFrame:
    """Read ``data/paper/<paper>_<table>.csv`` keeping printed values as strings."""
    path = paths.paper_dir() / f"{paper}_{table}.csv"
    if not path.exists():
        raise FileNotFoundError(f"no transcribed paper table {path.name} in data/paper/")
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    need = {"table", "row", "metric", "value", "unit", "note"}
    if set(df.columns) - {"source"} != need:
        raise ValueError(f"{path.name}: header must be {sorted(need)} (and source), got "
                         f"{list(df.columns)}")
    dup = df.duplicated(["row", "metric"])
    if dup.any():
        raise ValueError(f"{path.name}: duplicate (row, metric) pairs: "
                         f"{df.loc[dup, ['row', 'metric']].values.tolist()[:5]}")
    return df


#: the columns of a reproduced-values frame (``check`` is added when a record has it)
REPRODUCED_COLUMNS = ["row", "metric", "value", "note", "kind"]


#: optional columns of a reproduced-values frame, kept when any record has them
OPTIONAL_COLUMNS = ("check", "definition", "unspecified", "rtol")


def records_frame(records) -> pd.DataFrame:
    """Records (dicts, or tuples ``row, metric, value, note, kind[, check]``) -> the frame
    :func:`compare` takes. ``check`` (True/False, on rows whose agreement with the paper a
    builder established itself) and ``definition`` (text: how our quantity is defined where
    the paper defines it otherwise) are kept when any record has them; so is ``rtol``, a
    row's own relative tolerance (e.g. for a value the paper gives as "about")."""
    cols = REPRODUCED_COLUMNS
    records = [r if isinstance(r, dict) else
               dict(zip(cols + ["check"] if len(r) == 6 else cols, r, strict=True))
               for r in records]
    extra = [c for c in OPTIONAL_COLUMNS if any(c in r for r in records)]
    df = pd.DataFrame(records, columns=cols + extra)
    for col in ("definition", "unspecified"):
        if col in df.columns:
            df[col] = df[col].fillna("")
    return df


def reproduced_frame(records, kind: str | None = None) -> pd.DataFrame:
    """Build a reproduced-values frame from ``[(row, metric, value[, note]), ...]``, all of
    one ``kind``."""
    return records_frame([(row, metric, value, rest[0] if rest else "", kind or "")
                          for row, metric, value, *rest in records])


def _decimals(s: str) -> int | None:
    s = s.strip()
    m = re.fullmatch(r"[-+]?\d*\.?(\d*)", s)
    if not m or not s or s in {".", "-", "+"}:
        return None
    return len(m.group(1)) if "." in s else 0


def _to_float(v) -> float:
    if v is None:
        return math.nan
    if isinstance(v, int | float | np.integer | np.floating):
        return float(v)
    try:
        return float(str(v).strip())
    except ValueError:
        return math.nan


def _round_half_up(x: float, decimals: int) -> Decimal:
    """``x`` rounded to ``decimals`` as a paper prints it: halves away from zero (SHE prints
    its own 784 x 5 x 32KB = 122.5MB as 123MB), not Python's round-half-to-even."""
    return Decimal(repr(float(x))).quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP)


def _status(paper_s: str, ours, rtol: float, accuracy: bool = False) -> tuple[str, float]:
    """Status and ratio of one numeric or textual value. "Within" the tolerance means a
    relative difference up to ``rtol``; for an ``accuracy`` (percent) it compares error
    rates: our error (100 - acc) at most ``ACCURACY_ERROR_RATIO`` x the paper's. "Exact" is
    equal to the paper's printed precision and within -- never looser than within."""
    p = _to_float(paper_s)
    o = _to_float(ours)
    if isinstance(ours, str) and math.isnan(o):
        # symbolic / textual values (formulas): compare normalised text
        if not paper_s.strip():
            return "paper value missing", math.nan
        same = re.sub(r"\s+", "", ours) == re.sub(r"\s+", "", paper_s)
        return ("exact" if same else "differs"), math.nan
    if math.isnan(o):
        return "not reproducible here", math.nan
    if not paper_s.strip() or math.isnan(p):
        return "paper value missing", math.nan
    ratio = o / p if p != 0 else (1.0 if o == 0 else math.inf)
    if p == 0 and not accuracy:
        return ("exact" if o == 0 else "differs"), ratio
    if accuracy:  # two-sided: a much better accuracy than the paper's is a difference too
        err_o, err_p = 100 - o, 100 - p
        within = (abs(o - p) <= ACCURACY_SLACK_PP or
                  err_p / ACCURACY_ERROR_RATIO <= err_o <= ACCURACY_ERROR_RATIO * err_p)
    else:
        within = abs(ratio - 1) <= rtol
    d = _decimals(paper_s)
    # (so paper "1" vs ours 1.43 is not exact)
    if d is not None and _round_half_up(o, d) == _round_half_up(p, d) and within:
        return "exact", ratio
    return ("within tolerance" if within else "differs"), ratio


def compare(paper: str, table: str, reproduced: pd.DataFrame, rtol: float = 0.05,
            kind: str | None = None, reasons: dict | None = None,
            keep_extra: bool = True) -> pd.DataFrame:
    """Join reproduced values with the paper's and give each row a status.

    Parameters
    ----------
    reproduced : DataFrame with columns ``row``, ``metric``, ``value`` (and optionally ``kind``,
        ``note``, ``check``, ``definition``, ``rtol``: a row's own tolerance in place of
        ``rtol``, stated in its reason). ``value`` may be NaN/None: the row is then "not
        reproducible here" and ``note`` should say why. String values are compared as text
        (formulas). ``check`` (True/False) marks a row whose agreement the builder
        established itself (a sympy identity, the paper's formula evaluated against what
        ran): "verified" or "differs"; ``value`` is then what we computed, never the paper's
        text. Kinds ``quoted`` (a value from the paper or another publication) and ``input``
        (a setting chosen to match the paper) get those statuses: context, not matches. A
        non-empty ``definition`` (how our quantity is defined where the paper defines it
        otherwise) makes a judged row "definition differs". A row labelled
        :func:`paper_choice` ``(row, what)`` is compared with the paper's cell of ``row`` and
        listed right after it.
    rtol : relative tolerance for "within tolerance".
    kind : default provenance for rows without a ``kind`` (measured/counted/projected/formula).
    reasons : ``{(row, metric): text}`` explanations added to the ``reason`` column.
    """
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    missing = {"row", "metric", "value"} - set(reproduced.columns)
    if missing:
        raise ValueError(f"reproduced frame lacks columns {sorted(missing)}")
    ref = load_paper(paper, table)
    ours = reproduced.copy()
    for col in ("kind", "note"):
        if col not in ours.columns:
            ours[col] = ""
    ours["kind"] = ours["kind"].replace("", kind or "").fillna(kind or "")
    bad = set(ours["kind"]) - set(KINDS) - {""}
    if bad:
        raise ValueError(f"unknown kind(s) {sorted(bad)}; use one of {KINDS}")
    dup = ours.duplicated(["row", "metric"])
    if dup.any():
        raise ValueError(f"reproduced values repeat (row, metric): "
                         f"{ours.loc[dup, ['row', 'metric']].values.tolist()[:5]}")
    keys_ref = set(zip(ref["row"], ref["metric"]))
    keys_ours = set(zip(ours["row"], ours["metric"]))
    choices: dict = {}
    for row, metric in sorted(keys_ours, key=str):
        base = paper_row_of(row)
        if base is not None:
            if (base, metric) not in keys_ref:
                raise ValueError(f"paper's-choice row {row!r} / {metric!r}: the paper has no "
                                 f"cell ({base!r}, {metric!r}) in {table}")
            choices.setdefault((base, metric), []).append((row, metric))
    unknown = keys_ours - keys_ref - {k for v in choices.values() for k in v}
    if unknown and not keep_extra:
        raise ValueError(f"rows not in the paper's {table}: {sorted(unknown)[:5]}")
    reasons = reasons or {}
    ours_by = {(r.row, r.metric): r for r in ours.itertuples(index=False)}

    def judged(r, o) -> dict:
        value = o.value if o is not None else None
        own = _to_float(getattr(o, "rtol", None)) if o is not None else math.nan
        row_rtol = own if math.isfinite(own) else rtol
        status, ratio = _status(r.value, value, row_rtol,
                                accuracy=_is_accuracy(r.metric, r.unit))
        definition = unspecified = ""
        if o is not None:
            status = _final_status(status, o.kind, r.unit, getattr(o, "check", None),
                                   r.metric)
            definition = getattr(o, "definition", "")
            definition = definition if isinstance(definition, str) else ""
            if definition.strip() and status in JUDGED:
                status = "definition differs"
            unspecified = getattr(o, "unspecified", "")
            unspecified = unspecified if isinstance(unspecified, str) else ""
            if unspecified.strip() and status in (*JUDGED, "definition differs"):
                status, definition = NETWORK_UNSPECIFIED, ""
            elif (status == "not reproducible here" and isinstance(o.note, str)
                  and o.note.startswith(UNSPECIFIED_PREFIX)):
                status = NETWORK_UNSPECIFIED
        if str(r.note).startswith(GARBLED) and status not in ("not reproducible here",):
            status, ratio = "paper value garbled", math.nan  # its note says what was printed
        reason = "; ".join(x for x in (
            (f"definition differs: {definition}" if status == "definition differs" else ""),
            (f"{UNSPECIFIED_PREFIX}: {unspecified}" if unspecified.strip()
             and status == NETWORK_UNSPECIFIED else ""),
            (o.note if o is not None else "not computed by this notebook"),
            (f"this row's tolerance: {_pct(own)}" if math.isfinite(own) else ""),
            reasons.get((o.row if o is not None else r.row, r.metric), ""),
            (r.note if status not in ("exact", "verified") else ""),
        ) if isinstance(x, str) and x)
        return {"table": r.table, "row": o.row if o is not None else r.row,
                "metric": r.metric, "unit": r.unit, "paper": r.value, "ours": value,
                "ratio": ratio, "kind": o.kind if o is not None else "", "status": status,
                "reason": reason}

    def claim_row(r, j: dict) -> dict | None:
        """The paper's relative claim behind a machine-dependent speed-up or time share."""
        if j["status"] != "machine-dependent":
            return None
        c = _claim(r.metric, r.unit, r.value, j["ours"])
        if c is None:
            return None
        said, got, status = c
        return {"table": r.table, "row": j["row"], "metric": f"{r.metric} (claim)",
                "unit": "", "paper": said, "ours": got, "ratio": math.nan, "kind": j["kind"],
                "status": status,
                "reason": "the paper's value read as a claim about which side wins; ours from "
                          "the row above (both sides measured or projected in one run)"}

    out = []
    for r in ref.itertuples(index=False):
        mine = judged(r, ours_by.get((r.row, r.metric)))
        claim = claim_row(r, mine)
        alts = [judged(r, ours_by[k]) for k in choices.get((r.row, r.metric), [])]
        if mine["status"] == "differs" and any(
                a["status"] in ("exact", "within tolerance") and not is_inferred_choice(a["row"])
                for a in alts):
            mine["status"] = CHOICE_REPRODUCES
        for alt in alts:
            what = alt["row"].split(PAPER_CHOICE, 1)[1]
            mine["reason"] = "; ".join(x for x in (mine["reason"], (
                f"with the paper's choice ({what}): {_fmt(alt['ours'])}, {alt['status']} "
                "(next row)")) if x)
        out += [mine, *([claim] if claim else []), *alts]
    for key in sorted(unknown, key=str) if keep_extra else []:
        o = ours_by[key]
        out.append({"table": ref["table"].iloc[0] if len(ref) else table, "row": o.row,
                    "metric": o.metric, "unit": "", "paper": "", "ours": o.value,
                    "ratio": math.nan, "kind": o.kind, "status": "ours only",
                    "reason": o.note if isinstance(o.note, str) else ""})
    df = pd.DataFrame(out, columns=COLUMNS)
    df.attrs["rtol"] = rtol  # stated in the table's heading by save()
    if "rtol" in ours.columns and ours["rtol"].map(_to_float).map(math.isfinite).any():
        df.attrs["row_rtol"] = True  # so is the existence of rows with their own
    return df


def ratio_claims(compared: pd.DataFrame, pairs, reasons: dict | None = None) -> pd.DataFrame:
    """Claim rows for speed-ups the paper states only through two times it prints.

    ``pairs``: ``(row, slow_metric, fast_metric, label)`` -- the paper says ``fast`` beats
    ``slow`` by the ratio of its two printed times (SwaNN: 'takes 43 seconds ... reduced to 30
    seconds with optimizations'). The paper's ratio is computed from its two transcribed cells
    (never typed in) and ours from our two values of the same run (``compared``, the output of
    :func:`compare`); the claim is judged as a printed speed-up's is (:func:`_claim`). Each
    claim row is placed right after the row of ``fast_metric``; ``reasons`` (``{label:
    text}``) adds what explains a difference."""
    df, reasons = compared.reset_index(drop=True), reasons or {}
    cells = {(r.row, r.metric): r for r in df.itertuples(index=False)}
    after: dict[int, list] = {}
    for row, slow, fast, label in pairs:
        missing = [m for m in (slow, fast) if (row, m) not in cells]
        if missing:
            raise ValueError(f"ratio claim {label!r}: no compared row ({row!r}, {missing[0]!r})")
        s, f = cells[(row, slow)], cells[(row, fast)]
        ps, pf, os_, of = (_to_float(v) for v in (s.paper, f.paper, s.ours, f.ours))
        if not all(math.isfinite(v) and v > 0 for v in (ps, pf, os_, of)):
            raise ValueError(f"ratio claim {label!r}: both sides need positive paper and ours "
                             f"values, got paper {s.paper!r} / {f.paper!r}, ours {s.ours!r} / "
                             f"{f.ours!r}")
        said, got, status = _claim(f"{label}_speedup", "x", f"{ps / pf:.3g}", os_ / of)
        reason = (f"the paper's ratio of its printed {slow} {s.paper} {s.unit} to {fast} "
                  f"{f.paper} {f.unit}, read as a claim about which side wins; ours is "
                  f"{_fmt(os_)} / {_fmt(of)} from the rows above (one run)")
        if reasons.get(label):
            reason += f"; {reasons[label]}"
        i = int(df.index[(df["row"] == row) & (df["metric"] == fast)][0])
        after.setdefault(i, []).append(
            {"table": f.table, "row": row, "metric": f"{label} speed-up (claim)", "unit": "",
             "paper": said, "ours": got, "ratio": math.nan, "kind": f.kind, "status": status,
             "reason": reason})
    out = []
    for i, r in enumerate(df.to_dict("records")):
        out += [r, *after.get(i, [])]
    res = pd.DataFrame(out, columns=COLUMNS)
    res.attrs.update(compared.attrs)
    return res


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, float | np.floating):
        if v != 0 and (abs(v) >= 1e6 or abs(v) < 1e-3):
            return f"{v:.4g}"
        return f"{v:.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
    return str(v)


def _pct(rtol: float) -> str:
    return f"{100 * rtol:g} %"


def to_markdown(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for rec in df.itertuples(index=False):
        cells = [_fmt(v).replace("|", "\\|").replace("\n", " ") for v in rec]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def save(df: pd.DataFrame, paper: str, table: str, title: str = "") -> Path:
    """Write a compared table to ``figures/tables/<paper>_<table>.csv`` and ``.md``."""
    if list(df.columns) != COLUMNS:
        raise ValueError("save() takes the frame returned by compare()")
    out = paths.tables_dir()
    stem = f"{paper}_{table}"
    # six significant digits for every number, also in an 'ours' column that mixes numbers
    # with text (claim rows, formulas), where pandas' float_format does not apply
    csv = df.assign(ours=[f"{v:.6g}" if isinstance(v, float | np.floating) and not math.isnan(v)
                          else v for v in df["ours"]])
    paths.atomic_write(out / f"{stem}.csv", csv.to_csv(index=False, float_format="%.6g"))
    head = f"### {paper} {df['table'].iloc[0] if len(df) else table}"
    if title:
        head += f" — {title}"
    if "rtol" in df.attrs:
        head += f"\n\nTolerance: {_pct(df.attrs['rtol'])} relative difference for 'within " \
                "tolerance'; accuracies by error rate, both ways (ours within a factor " \
                f"{ACCURACY_ERROR_RATIO} of the paper's, or within {ACCURACY_SLACK_PP} points)."
        if df.attrs.get("row_rtol"):
            head += " Rows with a tolerance of their own state it in their reason."
    paths.atomic_write(out / f"{stem}.md", head + "\n\n" + to_markdown(df))
    return out / f"{stem}.csv"


ERRATA_COLUMNS = ["paper", "where", "finding", "evidence"]


def load_errata(paper: str | None = None) -> pd.DataFrame:
    """The inconsistencies this reproduction found in the papers, ``data/errata.csv`` (one
    committed file: paper, where, finding, evidence), optionally those of one ``paper``."""
    path = paths.root() / "data" / "errata.csv"
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    if list(df.columns) != ERRATA_COLUMNS:
        raise ValueError(f"{path.name}: header must be {ERRATA_COLUMNS}, got {list(df.columns)}")
    empty = (df[ERRATA_COLUMNS] == "").any(axis=1)
    if empty.any():
        raise ValueError(f"{path.name}: rows {list(df.index[empty] + 2)} leave a column empty")
    if paper is not None:
        df = df[df["paper"] == paper].reset_index(drop=True)
        if df.empty:
            raise ValueError(f"no errata for {paper!r} in {path.name}")
    return df


def save_errata(paper: str, rows: list[dict] | None = None) -> Path:
    """Write a paper's errata to ``figures/tables/errata_<paper>.csv`` for the report: by
    default those of ``data/errata.csv``; or ``rows``, dicts with ``where``, ``finding``,
    ``evidence``."""
    if rows is None:
        df = load_errata(paper)[ERRATA_COLUMNS[1:]]
    else:
        for r in rows:
            if set(r) != {"where", "finding", "evidence"}:
                raise ValueError("each erratum needs exactly the keys where, finding, evidence")
        df = pd.DataFrame(rows, columns=["where", "finding", "evidence"])
    df.insert(0, "paper", paper)
    return paths.atomic_write(paths.tables_dir() / f"errata_{paper}.csv", df.to_csv(index=False))


#: the columns of a paper's headline table, ``figures/tables/headlines_<paper>.csv``
HEADLINE_COLUMNS = ["paper", "claim", "metric", "unit", "paper_value", "source", "ours",
                    "kind", "verdict", "why", "ladder"]
#: a headline in % whose metric says "reduction" (a cut of c %) is judged as the speed-up
#: 1 / (1 - c / 100) it means
_REDUCTION = re.compile(r"reduction|cut|saving")


def _as_factor(metric: str, unit, v: float) -> float:
    if _base_unit(unit) == "%" and _REDUCTION.search(str(metric).lower()):
        return math.inf if v >= 100 else 1 / (1 - v / 100)
    return v


def headlines(paper: str, ours: pd.DataFrame, ladder_verdicts: dict | None = None,
              rtol: float = 0.05) -> pd.DataFrame:
    """Judge ``paper``'s headline claims, ``data/paper/<paper>_headlines.csv``, against ours
    and write ``figures/tables/headlines_<paper>.{csv,md}``; returns the frame
    (:data:`HEADLINE_COLUMNS`).

    ``ours``: a frame of ``row, metric, value, kind, note`` (``note``: the one line on why,
    and which of our tables the value comes from). A factor (unit ``x``) or a cut in percent
    (metric naming a reduction: a cut of c % is the factor 1 / (1 - c / 100)) is a claim,
    judged by the claim rule of the tables (:func:`_claim`); any other value by the tables'
    status rule with tolerance ``rtol``, except a share of the run time measured or projected
    here (a % whose metric names a share), which is judged as the tables' claim rows are, on
    its smaller side. ``ladder_verdicts``: ``{(row, metric): verdict}``
    of the ladders built for these claims."""
    ref = load_paper(paper, "headlines")
    need = {"row", "metric", "value"}
    if need - set(ours.columns):
        raise ValueError(f"ours lacks columns {sorted(need - set(ours.columns))}")
    by = {(r.row, r.metric): r for r in ours.itertuples(index=False)}
    unknown = set(by) - set(zip(ref["row"], ref["metric"]))
    if unknown:
        raise ValueError(f"ours has rows that are no headline of {paper}: {sorted(unknown)[:3]}")
    ladder_verdicts = ladder_verdicts or {}
    out = []
    for r in ref.itertuples(index=False):
        o = by.get((r.row, r.metric))
        value = getattr(o, "value", None) if o is not None else None
        kind = str(getattr(o, "kind", "") or "") if o is not None else ""
        why = str(getattr(o, "note", "") or "") if o is not None else ""
        v = _to_float(value)
        if o is None or math.isnan(v):
            verdict, shown = "not reproducible here", ""
            why = why or "not computed"
        elif _base_unit(r.unit) == "x" or _REDUCTION.search(str(r.metric).lower()):
            p = _as_factor(r.metric, r.unit, _to_float(r.value))
            words = None if re.search(r"speed|faster|latency|time", str(r.metric).lower()) \
                else ("above 1x", "about 1x", "below 1x")
            c = _claim("speedup", "x", f"{p:.6g}", _as_factor(r.metric, r.unit, v), words)
            verdict, shown = c[2], f"{_fmt(v)} {r.unit}".strip()
            if _base_unit(r.unit) == "%":
                shown += f" (x{_as_factor(r.metric, r.unit, v):.3g} against x{p:.3g})"
            else:
                shown = c[1]
        elif (_timing_derived(kind, r.unit, r.metric) and _base_unit(r.unit) == "%"
              and (c := _claim(r.metric, r.unit, r.value, v)) is not None):
            verdict, shown = c[2], c[1]  # a share of the run time: the tables' share rule
        else:
            verdict, _ = _status(r.value, v, rtol, accuracy=_is_accuracy(r.metric, r.unit))
            verdict = _final_status(verdict, kind, r.unit, None, r.metric)
            shown = f"{_fmt(v)} {r.unit}".strip()
        out.append({"paper": paper, "claim": r.row, "metric": r.metric, "unit": r.unit,
                    "paper_value": r.value, "source": getattr(r, "source", ""), "ours": shown,
                    "kind": kind, "verdict": verdict, "why": why,
                    "ladder": ladder_verdicts.get((r.row, r.metric), "")})
    df = pd.DataFrame(out, columns=HEADLINE_COLUMNS)
    tdir = paths.tables_dir()
    paths.atomic_write(tdir / f"headlines_{paper}.csv", df.to_csv(index=False))
    paths.atomic_write(tdir / f"headlines_{paper}.md",
                       f"### {paper}: headline claims\n\n" + to_markdown(_headline_view(df)))
    return df


def _headline_view(df: pd.DataFrame) -> pd.DataFrame:
    """A headline frame as the report shows it."""
    return pd.DataFrame({
        "paper": df["paper"], "claim": df["claim"],
        "paper's number (where)": [f"{v} {u}".strip() + (f" ({s})" if s else "")
                                   for v, u, s in zip(df["paper_value"], df["unit"],
                                                      df["source"])],
        "ours": df["ours"], "verdict": df["verdict"], "why": df["why"],
        "ladder": df["ladder"]})


def headline_verdicts(tdir: Path, paper: str) -> str:
    """One cell for the summary: how many of ``paper``'s headlines hold, fall short (and how
    many of those a ladder reproduces under the paper's assumptions) or fail."""
    p = tdir / f"headlines_{paper}.csv"
    if not p.exists():
        return ""
    df = pd.read_csv(p, dtype=str, keep_default_na=False)
    n = df["verdict"].value_counts()
    explained = int(df["ladder"].str.startswith("reproduced under").sum())
    parts = [f"{n.get('claim holds', 0)} hold"]
    short = int(n.get("direction holds, magnitude not reached", 0))
    if short:
        parts.append(f"{short} short of the magnitude")
    for s in ("too close to call", "claim fails", "exact", "within tolerance", "differs",
              "not reproducible here"):
        if n.get(s, 0):
            parts.append(f"{n[s]} {s}")
    if explained:
        parts.append(f"{explained} reproduced under the paper's assumptions")
    return f"{len(df)}: " + ", ".join(parts)


PAPERS = ("overview", "tabula", "gala", "swann", "she", "falcon")

STATUS_LEGEND = [
    "What a status means:",
    "",
    "- **exact**: equal to the precision the paper prints *and* within the table's tolerance "
    "(stated under each table's heading; 5 % unless the notebook chose another); **within "
    "tolerance**: within it; "
    "**differs**: outside it (the reason column says why where we know). Accuracies compare "
    "error rates, both ways: within tolerance when our error rate (100 - accuracy) is within "
    f"a factor {ACCURACY_ERROR_RATIO} of the paper's (or the accuracies within "
    f"{ACCURACY_SLACK_PP} points); an accuracy much higher than the paper's differs too -- "
    "the paper's finding (e.g. a drop) is then not reproduced.",
    "- **verified**: the paper's formula or identity checked against what we ran (sympy "
    "identity, or evaluated at random points); the value shown is ours.",
    "- **machine-dependent**: an absolute time measured or projected here beside one measured "
    "on the paper's machine, or a speed-up / share of run time measured here (or projected "
    "from unit costs measured here): the ratio is shown, no pass/fail -- such values move with "
    "the machine's load, so two runs could disagree on any status given to them. Every row "
    "but these and the claim rows below is deterministic for a seed: two runs give identical "
    "statuses.",
    "- **claim holds** / **direction holds, magnitude not reached** / **claim fails** / **too "
    "close to call**: the relative claim behind a speed-up or a share of the run time the "
    "paper prints (its rows have metric '... (claim)', right below the machine-dependent "
    "value). A speed-up is *faster* at "
    f">= {CLAIM_PARITY[1]}x, *slower* at <= {CLAIM_PARITY[0]}x, *about as fast* in between, "
    "the paper's and ours by the same edges. One rule in both directions: in the same zone "
    f"the claim holds when ours reaches {CLAIM_MAGNITUDE} of the paper's factor (of 1/factor "
    "for 'slower') and is **direction holds, magnitude not reached** short of it (ours says "
    "which fraction); in different zones it is **too close to call** when neither number is a "
    f"clear speed-up (both between 1/{CLAIM_CLEAR:g} and {CLAIM_CLEAR:g}x) and **claim fails** "
    "otherwise -- a '3x' met by 1.0x fails as a '1x' met by 3x does. A share of the run time "
    f"claims the part takes most of the time (>= {CLAIM_MAJORITY[1]:g} %), half, or less than "
    f"half (<= {CLAIM_MAJORITY[0]:g} %), and its magnitude is judged on the smaller side: a "
    "majority share by its remainder (74 % against the paper's 98 % leaves 26 % against 2 %: "
    "magnitude not reached). Both sides are measured in one run, so load moves them "
    "together, but a value near an edge can still change status between two runs: the "
    "summary counts claim rows apart ('claim rows'; they are not among the deterministic "
    "rows). A claim short of its magnitude has a **ladder** (Headlines, below).",
    "- **quoted** / **input**: a value quoted from a publication, or a setting chosen to match "
    "the paper: context, not a reproduced value.",
    "- **formula**: the paper's own arithmetic recomputed from its printed numbers (kind "
    "*arithmetic*): it checks the text, but nothing of ours ran, so it is context, not a "
    "reproduced value.",
    "- **definition differs**: ours and the paper's measure the same quantity by different "
    "definitions (e.g. SHE's multiplicative depth: the critical path of our circuits vs the "
    "paper's Eq. 1 sum of adder depths per layer); the reason says how. Both numbers are "
    "shown; neither a match nor a failure.",
    "- **paper's choice: ...** rows: where we chose another network, circuit, parameter set or "
    "accounting than the paper and the paper's choice is fully specified, we also compute the "
    "paper's choice (by code, never typed in) and compare *that* with the paper's cell; it is "
    "listed right below our own row, whose reason names it. Their count is the summary's "
    "'paper's choice rows' (they are included in the status counts). When it matches, our "
    f"own row is **{CHOICE_REPRODUCES}**, not a failure: the difference is our choice. "
    "Where the paper does not state its choice and we fitted one to its printed number, the "
    "label says **paper's choice: inferred: ...**; such rows are counted only as 'inferred "
    "choice rows', never among the statuses, and rescue no row: matching a number with a "
    "setting fitted to it shows the arithmetic is consistent, not that the paper's setting "
    "was reproduced.",
    "- **not reproducible: network unspecified**: the paper's value depends on a network it "
    "does not specify (SHE's pruned TCN / SHE networks, whose weights it never gives; a "
    "topology it does not print): ours, counted on the network we built, is shown beside it, "
    "and the reason says what the paper leaves out -- no comparison is possible.",
    "- **not reproducible here**, **paper value missing**, **paper value garbled** (the cell is "
    "unreadable in this copy of the paper; its note gives what was printed), **ours only**: "
    "no comparison.",
]


def status_counts(rows: pd.DataFrame) -> dict:
    """Rows, deterministic vs machine-dependent, and the count of every other status (the
    summary line of a paper in REPORT.md and the README)."""
    labels = rows["row"].astype(str)
    inferred = labels.str.contains(PAPER_CHOICE + INFERRED, regex=False)
    counts = rows.loc[~inferred, "status"].value_counts()
    n_md = int(counts.get("machine-dependent", 0))
    n_claim = int(sum(counts.get(s, 0) for s in CLAIM_STATUSES))
    n_choice = int(labels.str.contains(PAPER_CHOICE, regex=False).sum())
    n_inferred = int(inferred.sum())
    return {"rows": len(rows), "deterministic rows": len(rows) - n_md - n_claim,
            "machine-dependent rows": n_md, "claim rows": n_claim,
            "paper's choice rows": n_choice - n_inferred,
            "inferred choice rows": n_inferred,
            **{s: int(counts.get(s, 0)) for s in STATUSES if s != "machine-dependent"}}


def numerics_note() -> list[str]:
    """REPORT.md's paragraph on the float kernels the tables were computed with
    (:mod:`ppnn.numerics`; the pipeline's notebook kernels run in the same environment)."""
    from . import numerics

    fp = numerics.fingerprint()
    if numerics.pinned():
        return [f"Float kernels: `{fp}`, pinned by `ppnn.numerics` (OpenBLAS's Haswell kernels "
                "and numpy's AVX2 loops on every x86-64-v3 CPU; float training and inference "
                "on one BLAS thread), so the rows computed from "
                "float training -- trained weights, every accuracy, SHE's calibrated gate "
                "counts -- have the same bits on every such CPU, whatever its number of cores "
                "(`tests/test_numerics.py` checks a training digest and the inference bits).",
                ""]
    return [f"**Float kernels not pinned** (`{fp}`): the rows computed from float training -- "
            "every accuracy row and SHE's calibrated gate counts (Tables 2 and 4) -- depend on "
            "this CPU in their last digits and may differ from another machine's. "
            "`make reproduce` pins them (`ppnn.numerics`).", ""]


def headline_section(tdir: Path) -> list[str]:
    """REPORT.md's first section: every paper's headline claims, ours and the verdict."""
    frames = [pd.read_csv(tdir / f"headlines_{p}.csv", dtype=str, keep_default_na=False)
              for p in PAPERS if (tdir / f"headlines_{p}.csv").exists()]
    if not frames:
        return []
    return ["## Headlines", "",
            "The quantitative claims of each paper's abstract, introduction and conclusion, "
            "each beside ours and judged by the claim rule of the tables (legend below). A "
            "claim short of the paper's magnitude has a ladder (section *Ladders*): our "
            "assumptions replaced by the paper's one at a time, each step recomputed.", "",
            to_markdown(_headline_view(pd.concat(frames, ignore_index=True))), ""]


def ladder_section(tdir: Path) -> list[str]:
    """REPORT.md's ladders: per paper, each ladder's steps and its waterfall figure."""
    lines: list[str] = []
    for paper in PAPERS:
        p = tdir / f"ladders_{paper}.csv"
        if not p.exists():
            continue
        df = pd.read_csv(p, keep_default_na=False, dtype={"row": str, "metric": str})
        if df.empty:
            continue
        if not lines:
            lines += ["", "## Ladders", "",
                      "From ours to the paper's number, one assumption at a time: each step "
                      "replaces one of ours with the paper's and recomputes the result "
                      "(`ppnn.experiments.<paper>.ladders`); *factor* is what the step moves "
                      "it by. A ladder that ends within 10 % of the paper's number reproduces "
                      "the claim under the paper's assumptions; otherwise its residual is "
                      "unexplained.", ""]
        lines += [f"### {paper}", ""]
        for k, g in df.groupby("key", sort=False):
            g = g.sort_values("step")
            lines += [f"**{k}** — {g['verdict'].iloc[0]}", ""]
            fig = Path(paper) / "ladders" / f"{ladder_slug(k)}.svg"
            if (tdir.parent / fig).exists():
                lines += [f"![{k}]({fig.as_posix()})", ""]
            view = g[["step", "assumption", "ours_as", "paper_as", "value", "factor",
                      "source", "erratum"]].rename(columns={"ours_as": "ours",
                                                            "paper_as": "paper's"})
            lines += [to_markdown(view), ""]
    return lines


def ladder_slug(key: str) -> str:
    """The file name of a ladder's figure: its key in lower case, words joined by '-'."""
    return re.sub(r"[^a-z0-9]+", "-", key.lower()).strip("-")[:120]


def wire_error_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per family and network of a wire-mode table (``ppnn.experiments.wire``): the largest
    |error| of each time model over the networks measured (empty: loopback rows only)."""
    from .wire.timing import error_summary

    if "tables error %" not in df:  # loopback rows only
        return pd.DataFrame()
    return error_summary(df).round(1)


def projection_note(tables_dir: Path) -> list[str]:
    """REPORT.md's sentence on how far the projected LAN/WAN rows are from measurement
    (from ``overview_wire_timings.csv`` when a run wrote it; else that nothing checked
    them)."""
    p = Path(tables_dir) / "overview_wire_timings.csv"
    if not p.exists():
        return ["**Projected LAN/WAN rows** (`ppnn.core.netmodel`) were not checked against a "
                "measurement in this run (no wire-mode table).", ""]
    summ = wire_error_summary(pd.read_csv(p, dtype=object, keep_default_na=False))
    if not len(summ):
        return ["**Projected LAN/WAN rows**: the wire-mode table of this run has loopback "
                "rows only (no shaped links without root); the projections are unchecked.",
                ""]
    parts = []
    for net, g in summ.groupby("network", sort=False):
        parts.append(f"on {net} the tables' projection is off by up to "
                     f"{g['max |tables error %|'].max():g}% and the calibrated model by up to "
                     f"{g['max |calibrated error %|'].max():g}% "
                     f"({', '.join(g['family'])})")
    return ["**Projected LAN/WAN rows** (`ppnn.core.netmodel`) are checked against wire-mode "
            "runs in *Measured vs projected* below: " + "; ".join(parts) + ".", ""]


def build_report(out: str | Path | None = None) -> Path:
    """Assemble ``figures/REPORT.md`` from every saved table (generated; never hand-edited)."""
    tdir = paths.tables_dir()
    frames = {}
    for p in sorted(tdir.glob("*.csv")):
        if p.name.startswith("errata_") or p.name.endswith("_timings.csv"):
            continue
        df = pd.read_csv(p, dtype=str, keep_default_na=False)
        if list(df.columns) != COLUMNS:
            continue
        frames[p.stem] = df
    lines = ["# PPNN Lab — reproduction report", "",
             "Generated by `make reproduce` (`python -m ppnn.reproduce`); do not edit by hand.",
             "Each row: the paper's value, ours, their ratio, where ours came from "
             "(measured / counted / projected / formula / quoted / input) and a status.", "",
             *headline_section(tdir), *numerics_note(), *projection_note(tdir),
             *STATUS_LEGEND, "", "## Summary", ""]
    summary = []
    for paper in PAPERS:
        stems = [s for s in frames if s.split("_", 1)[0] == paper]
        if not stems:
            continue
        allrows = pd.concat([frames[s] for s in stems])
        summary.append({"paper": paper, "tables": len(stems),
                        "headlines": headline_verdicts(tdir, paper), **status_counts(allrows)})
    if summary:
        lines.append(to_markdown(pd.DataFrame(summary)))
    else:
        lines.append("No tables have been regenerated yet.\n")
    extra = sorted(p for p in tdir.glob("overview_*.md") if p.stem not in frames)
    if extra:
        lines += [""] + [p.read_text(encoding="utf-8") for p in extra]
    for paper in PAPERS:
        stems = sorted(s for s in frames if s.split("_", 1)[0] == paper)
        if not stems:
            continue
        lines += ["", f"## {paper}", ""]
        for s in stems:
            md = tdir / f"{s}.md"
            lines.append(md.read_text(encoding="utf-8") if md.exists() else to_markdown(frames[s]))
    lines += ladder_section(tdir)
    errata = sorted(tdir.glob("errata_*.csv"))
    lines += ["", "## Errata found in the papers", ""]
    if errata:
        lines.append(to_markdown(pd.concat([pd.read_csv(p, dtype=str, keep_default_na=False)
                                            for p in errata])))
    else:
        lines.append("None recorded yet.\n")
    target = Path(out) if out else paths.figures_root() / "REPORT.md"
    paths.atomic_write(target, "\n".join(lines))
    return target
