"""05_falcon's protocol lessons: a tampered message played in the protocol player, and the
view experiment of private compare.

**Tampering** (:func:`tamper_demo`; the lesson's controls with a static twin:
:func:`tamper_explorer`). Private compare (Algorithm 1) of a handful of secret
``r`` against public ``x``, its output bit opened to everyone, with every value recorded.
The corrupt party :data:`CORRUPT` (P2) changes the first message it sends at one chosen step
(a resharing or an opening; ``Deviation(..., "inconsistent_send")``). Malicious, an honest
party aborts: either it received two copies of one component that differ (an opening), or
the multiplication check ``v`` of a tampered product is not zero; it holds what it compared
and the check that fired. Semi-honest, nothing is checked: the run completes and each honest
party holds the output it reconstructed, beside the true value. P2 is the corrupt one
because the simulator keeps one copy of every component and reconstructs an opened value as
P0 does: P2's resharing goes to P1 (P2 holds the other copy), its first copy of an opening
to P0, so what the simulation carries forward is exactly what the honest parties hold.

**The view of private compare** (:func:`pc_view_experiment`). P2 learns ``d = m * prod c``
(the only value private compare opens). For the secrets ``r = 1000`` and ``r = 5`` against
the public ``x = 500`` (``r > x`` true, then false), ``n`` comparisons each give one ``d``; a
two-sample KS test (:func:`ppnn.core.views.ks_test`) asks whether P2's samples tell the
secrets apart. With a fresh random bit ``beta`` and mask ``m`` per comparison they cannot
(``d`` is 0 with probability 1/2 whatever ``r`` is, and otherwise uniform in Z_37^*); with
the broken dealer that draws them from a fixed seed -- the same ``beta`` and ``m`` every
time -- ``d = 0`` exactly when ``r > x`` is one fixed answer, and the test tells them apart.
Simulated: the dealer is trusted and seeded; this shows the protocol's logic, not the
security of a real preprocessing phase.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core import Ledger
from ...core.transcript import EVERY_ELEMENT
from ...core.views import EVERYONE, ViewExperiment, view_experiment, view_values
from ...protocols.falcon.algebra import bits_of
from ...protocols.falcon.comparison import pc_material, private_compare
from ...protocols.falcon.runtime import PARTIES, RSS, Deviation, Falcon, MaliciousAbort

__all__ = ["CORRUPT", "PC_R", "PC_X", "OUTPUT_STEP", "DEFAULT_TARGET", "CHECK_LABEL",
           "pc_with_output", "tamper_targets", "TamperDemo", "tamper_demo", "tamper_explorer",
           "pc_view", "PCViewExperiment", "pc_view_experiment", "plot_pc_views"]

#: the corrupt party of the tamper lesson (see the module docstring for why P2)
CORRUPT = "P2"
#: the secrets r (their bits shared in Z_37) and the public x of the tamper lesson
PC_R = (1000, 5, 40)
PC_X = (999, 5, 41)
_OUTPUT_WHAT = "open r > x"
#: the step (ledger ``label::what``) at which the output bit is opened
OUTPUT_STEP = f"output::{_OUTPUT_WHAT}"
#: the step tampered with first: the opening of d (abort at once, or a wrong output bit)
DEFAULT_TARGET = "private_compare::pc step 9: open d"
_OUTPUT_HELD = "output r > x (opened)"


def _recording_ledger() -> Ledger:
    return Ledger(PARTIES, record_values=EVERY_ELEMENT)


def pc_with_output(fal: Falcon, r=PC_R, x=PC_X) -> np.ndarray:
    """Private compare of the secrets ``r`` with the public ``x`` (dealer material: the
    random bit ``beta`` in Z_2 and Z_37 and the mask ``m``), then the output bit opened to
    everyone -- every party holds the value it reconstructed. Returns the first honest
    party's output."""
    r = np.asarray(r, dtype=np.uint64)
    b2, bp, m = pc_material(fal, r.shape)
    out = private_compare(fal, fal.share(bits_of(fal.ring, r), fal.field),
                          np.asarray(x, dtype=np.uint64), b2, bp, m)
    with fal.protocol("output"):
        return fal.open(out, _OUTPUT_WHAT, "plain", held=_OUTPUT_HELD)


def _step(m) -> str:
    return f"{m.label}::{m.what}"


#: the prefix of a dropdown label of a message only the malicious protocol sends
CHECK_LABEL = "check (malicious only): "


def tamper_targets(seed: int = 0, malicious: bool = True) -> list[tuple[str, str]]:
    """The online steps at which :data:`CORRUPT` sends something, as ``(label, step)`` pairs
    (a dropdown's options), the ones a change there does something to in that protocol.
    Semi-honest: the protocol's own messages (resharings, openings). Malicious: those first,
    then the malicious protocol's own -- the messages of the multiplication checks (rho,
    sigma, v), grouped by check and labelled :data:`CHECK_LABEL` ``+ what``."""
    def sends(mal: bool) -> dict[str, str]:
        fal = Falcon(np.random.default_rng(seed), malicious=mal)
        pc_with_output(fal)
        seen: dict[str, str] = {}
        for m in fal.ledger.messages:
            if m.phase == "online" and m.sender == CORRUPT:
                seen.setdefault(_step(m), m.what)
        return seen

    own = sends(False)
    out = [(what, step) for step, what in own.items()]
    if malicious:
        checks = [(what, step) for step, what in sends(True).items() if step not in own]
        order = {"rho": 0, "sigma": 1, "v": 2}
        checks.sort(key=lambda ws: order.get(ws[0].split(":")[0].rsplit(" ", 1)[-1], 3))
        out += [(CHECK_LABEL + what, step) for what, step in checks]
    return out


@dataclass
class TamperDemo:
    """One tampered run of :func:`pc_with_output`, every value recorded.

    ``ledger``: the whole run; ``tampered_index``: the ledger index of the message the corrupt
    party changed (None when it sent nothing at ``target`` -- the semi-honest protocol has no
    multiplication checks); ``fired``: the check that aborted the run (None: it completed);
    ``output``: per honest party, the output bit it reconstructed (None after an abort);
    ``expected``: the true ``r > x``."""

    target: str
    malicious: bool
    ledger: Ledger
    tampered_index: int | None
    fired: str | None
    output: dict[str, np.ndarray] | None
    expected: np.ndarray
    abort: MaliciousAbort | None = None

    @property
    def mode(self) -> str:
        return "malicious" if self.malicious else "semi-honest"

    @property
    def what(self) -> str:
        return self.target.split("::", 1)[1]

    @property
    def wrong(self) -> list[str]:
        """The honest parties whose output differs from the true value."""
        return [p for p, v in (self.output or {}).items()
                if not np.array_equal(v, self.expected)]

    def focus(self) -> tuple[Ledger, dict[int, str]]:
        """The part of the run the lesson plays: the messages of the tampered step, of the
        step where the check fired and of the output opening, with every holding (the copies
        compared, the check, the outputs); and the alert (message index -> note) that marks
        the tampered message in it."""
        keep_steps = {self.target, OUTPUT_STEP} | ({self.abort.step} if self.abort else set())
        keep = [i for i, m in enumerate(self.ledger.messages) if _step(m) in keep_steps]
        ids = {id(self.ledger.messages[i]) for i in keep}
        sub = self.ledger.subset(lambda m: id(m) in ids)
        alert = {}
        if self.tampered_index in keep:
            alert[keep.index(self.tampered_index)] = f"tampered by {CORRUPT}"
        return sub, alert

    def player(self, seat: str = EVERYONE):
        """The protocol player on :meth:`focus`, the tampered message in red."""
        from ...widgets import protocol_player

        sub, alert = self.focus()
        title = (f"{self.mode}: {CORRUPT} tampers with '{self.what}' -- "
                 + (self.fired if self.fired else
                    f"the run completes (true r > x = {_bits(self.expected)})"))
        return protocol_player(sub, seat=seat, title=title, alert=alert)

    def summary(self) -> str:
        """What happened, in words."""
        n = len(self.ledger.messages)
        if self.tampered_index is None:
            return (f"The {self.mode} protocol sends no '{self.what}' message: multiplication "
                    "checks (rho, sigma, v) exist only in the malicious protocol, so "
                    f"{CORRUPT} had nothing to change. The run is the honest one and every "
                    f"honest party's output r > x = {_bits(self.expected)} is right.")
        m = self.ledger.messages[self.tampered_index]
        head = (f"{CORRUPT} changed the message it sends to {m.receiver} at '{self.what}' "
                f"(message {self.tampered_index} of the {n} this run booked). ")
        if self.abort is not None:
            e = self.abort
            if e.check == "open consistency check":
                why = (f"{e.party} received the same component twice, from two parties, and "
                       "the copies differ: it aborts at once, before anything else is opened.")
            else:
                why = (f"the multiplication check of that product opened v = z - c - sigma a "
                       f"- rho b - rho sigma, which is not 0: {e.party} aborts.")
            return head + why
        if self.fired is None and self.malicious:
            return head + "No check fired (outside the threat model?)."
        outs = "; ".join(f"{p} outputs {_bits(v)}" for p, v in self.output.items())
        if self.wrong:
            return (head + "The semi-honest protocol checks nothing, so the run completes: "
                    f"{outs}, the true value is {_bits(self.expected)} -- WRONG at "
                    f"{', '.join(self.wrong)}.")
        return (head + "The semi-honest protocol checks nothing, so the run completes: "
                f"{outs}, the true value is {_bits(self.expected)} -- unchanged, because "
                "private compare uses only whether d is zero, and this change left every "
                "element of d on the same side (a nonzero product stayed nonzero). The "
                "malicious run aborts here all the same: its checks compare values, not "
                "their effect on the output.")


def _bits(v) -> str:
    return "[" + " ".join(str(int(b)) for b in np.ravel(v)) + "]"


def tamper_demo(target: str = DEFAULT_TARGET, malicious: bool = True, seed: int = 0
                ) -> TamperDemo:
    """Run :func:`pc_with_output` with :data:`CORRUPT` changing the first message it sends at
    ``target`` (a ``label::what`` step of :func:`tamper_targets`), every value recorded."""
    if not isinstance(target, str) or "::" not in target:
        raise ValueError(f"target must be a 'label::what' step, got {target!r}")
    led = _recording_ledger()
    fal = Falcon(np.random.default_rng(seed), malicious=malicious, ledger=led,
                 deviation=Deviation(CORRUPT, target, "inconsistent_send"))
    expected = (np.asarray(PC_R, np.uint64) > np.asarray(PC_X, np.uint64)).astype(np.uint64)
    abort = None
    try:
        pc_with_output(fal)
    except MaliciousAbort as e:
        abort = e
    output = None
    if abort is None:
        output = {h.party: h.value.array() for h in led.holds
                  if h.name == _OUTPUT_HELD and h.party != CORRUPT}
    fired = (f"{abort.party} aborts: {abort.check}" if abort is not None else None)
    return TamperDemo(target, malicious, led, fal.altered[0] if fal.altered else None, fired,
                      output, expected, abort)


def tamper_explorer(seed: int = 0):
    """The tamper lesson as controls: the protocol (malicious or semi-honest) and the message
    :data:`CORRUPT` changes (only the ones that do something in that protocol:
    :func:`tamper_targets`), what happened in words and the player of the run
    (:meth:`TamperDemo.player`). An :class:`ppnn.widgets.InteractiveView`: its static twin
    shows the first choice -- the words, the player's diagram and views table -- and what a
    live kernel lets a reader choose."""
    import html

    import ipywidgets as w

    from ...widgets import InteractiveView

    targets = {mal: tamper_targets(seed, mal) for mal in (True, False)}
    mode = w.ToggleButtons(options=["malicious", "semi-honest"], value="malicious",
                           description="protocol")
    target = w.Dropdown(options=targets[True], value=DEFAULT_TARGET,
                        description=f"{CORRUPT} changes", layout=w.Layout(width="80%"))
    said, holder = w.HTML(), w.VBox()
    busy = False

    def words(demo: TamperDemo) -> str:
        return f"<p class='ppnn-tamper-said'><b>{demo.mode}</b>: {html.escape(demo.summary())}</p>"

    def show(change=None):
        if busy:
            return
        demo = tamper_demo(target.value, mode.value == "malicious", seed)
        said.value = words(demo)
        holder.children = (demo.player().widget(),)

    def switch(change):
        nonlocal busy
        busy = True  # the options change first, then one redraw
        try:
            keep, opts = target.value, targets[mode.value == "malicious"]
            target.options = opts
            target.value = keep if keep in {s for _, s in opts} else DEFAULT_TARGET
        finally:
            busy = False
        show()

    mode.observe(switch, names="value")
    target.observe(show, names="value")
    first = tamper_demo(DEFAULT_TARGET, True, seed)
    said.value = words(first)
    holder.children = (first.player().widget(),)
    choices = (f"<p class='ppnn-tamper-choices'>protocol: <b>malicious</b>; {CORRUPT} "
               f"changes: <b>{html.escape(first.what)}</b>. With a live kernel, pick the "
               f"protocol and any of the {len(targets[True])} messages {CORRUPT} sends in the "
               f"malicious protocol ({len(targets[False])} in the semi-honest one: the "
               "multiplication checks exist only in the malicious protocol).</p>")
    static = (f"<div class='ppnn-tamper-static'>{choices}{words(first)}"
              f"{first.player().static_html()}</div>")
    return InteractiveView(w.VBox([mode, target, said, holder]), static)


# ---------------------------------------------------------------------------------------------
def _fixed_blinding(fal: Falcon, n: int, seed: int = 0) -> tuple[RSS, RSS, RSS]:
    """The broken dealer: ``beta`` and ``m`` from a fixed seed, so the same bit and mask for
    every comparison of every run (booked like the honest material)."""
    g = np.random.default_rng(seed)
    beta = np.full(n, g.integers(0, 2), dtype=np.uint64)
    m = np.full(n, fal.field.random_nonzero(g, 1)[0], dtype=np.uint64)
    out = (fal.dealer.share(beta, fal.bit, "pc"), fal.dealer.share(beta, fal.field, "pc"),
           fal.dealer.share(m, fal.field, "pc"))
    fal.dealer.book(2 * n * (1 + 2 * fal.field.bits), "private compare: beta (Z_2, Z_p), m",
                    *out, names=("beta (Z_2)", "beta (Z_p)", "m"))
    return out


def pc_view(secret: int, public: int, n: int, rng: np.random.Generator,
            broken: bool = False, party: str = "P2") -> np.ndarray:
    """The ``d`` that ``party`` reconstructs in ``n`` private compares of ``r = secret`` with
    the public ``x`` (read from its recorded view): fresh ``beta`` and ``m`` per comparison,
    or -- ``broken`` -- the fixed ones of the broken dealer."""
    led = _recording_ledger()
    fal = Falcon(rng, ledger=led)
    r = np.full(n, secret, dtype=np.uint64)
    b2, bp, m = _fixed_blinding(fal, n) if broken else pc_material(fal, (n,))
    private_compare(fal, fal.share(bits_of(fal.ring, r), fal.field),
                    np.full(n, public, dtype=np.uint64), b2, bp, m)
    return view_values(led, party, what="d = m * prod c", kind="held")


@dataclass(frozen=True)
class PCViewExperiment(ViewExperiment):
    """P2's samples of ``d`` for two secrets compared with the ``public`` x, and the KS test
    between them."""

    public: int = 0


def pc_view_experiment(n: int = 2000, seed: int = 0, broken: bool = False,
                       alpha: float = 0.001, secrets: tuple[int, int] = (1000, 5),
                       public: int = 500) -> PCViewExperiment:
    """Run :func:`pc_view` for two secrets (by default one above and one below ``public``)
    and test P2's two samples at level ``alpha``."""
    return view_experiment(lambda s, rng: pc_view(s, public, n, rng, broken), secrets, n,
                           seed, alpha, broken, cls=PCViewExperiment, public=public)


def plot_pc_views(experiments: dict[str, PCViewExperiment]):
    """One panel per experiment, each with its own y axis: how often P2 saw each ``d`` in
    Z_37, for the two secrets side by side, with the KS statistic in the title
    (:func:`ppnn.plotting.view_panels`)."""
    from ...plotting import view_panels

    public = {e.public for e in experiments.values()}
    against = f" (x = {public.pop()})" if len(public) == 1 else ""
    return view_panels(experiments, "d that P2 reconstructed (Z_37)", "comparisons",
                       levels=37, secret_label="r = {}" + against)
