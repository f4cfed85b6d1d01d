"""Falcon in wire mode: P0, P1, P2 and the dealer as four processes, SPMD with garbage.

Every process runs the in-process Falcon code as :class:`WireFalcon`, which changes only
where values come from: ``Pi`` holds components ``i`` and ``i+1`` of every replicated sharing
and the PRF keys ``k_i``, ``k_{i+1}``; every other component and value (the image, the model,
the dealer's streams) is garbage from the process's own generator.
``Falcon._transmit(sender, receiver, value, ...)`` is the transport: the sender's process
sends the real bytes, the receiver's returns what arrived, any other returns garbage. An
opening returns what the process's party reconstructed, and a malicious party checks only
what it received. The heavy local steps (a multiplication's resharing, private compare)
compute only the process's own share and components (:meth:`WireFalcon._not_computed`).

:class:`WireDealer` is the trusted dealer's process; it also plays the data holder and the
model owner. Its truncation stream follows the run seed (the logits equal the in-process
run's only with the same truncation masks); everything else, and every party's PRF key,
comes from OS entropy (:func:`falcon_randomness` says so in the provenance).

Main names: :func:`run_plan`, :func:`run_program` (a Falcon program on the wire, e.g.
:func:`relu_program`), :data:`FALCON_FAMILIES`, :data:`WIRE_PATH`; the ledger-vs-wire
summary of every run is :func:`ppnn.wire.summary.wire_summary`.
:func:`relu_reading_all_components` is a deliberately broken step (an opening from all three
local components) that the garbage test catches.

See also
--------
docs/wire.md : the honesty argument, and Falcon's processes in "Family by family".
"""

from __future__ import annotations

import dataclasses
import math
import secrets
from collections.abc import Callable
from functools import partial

import numpy as np

from ppnn.protocols.falcon import family as _family  # noqa: F401 -- imported before "go"
from ppnn.protocols.falcon.runtime import PARTIES, RSS, Falcon, FalconDealer, key_bytes

from .launch import launch
from .summary import wire_summary
from .transport import Wire, WireError

__all__ = ["WireFalcon", "WireDealer", "FALCON_FAMILIES", "run_plan", "run_program",
           "relu_program", "relu_reading_all_components", "falcon_randomness"]

#: the families whose wire run is here (:func:`run_plan`)
FALCON_FAMILIES = ("falcon_sh", "falcon_mal")

#: the wire path of a Falcon party (:mod:`.split`, ``PPNN_WIRE_SPLIT``): what a process does
#: because its party is a process of its own -- the choke point and the ledger booking it
#: wraps, a round's reshare and settle, the dealer's material and input shares read from the
#: stream, the honesty apparatus's garbage; :meth:`Wire.send` and ``_recv`` are counted too
WIRE_PATH = {"WireFalcon": ("_transmit", "_reshare", "_settle", "open_components", "share"),
             "WireDealer": ("book", "share"), None: ("_garbage", "_garbage_view")}

#: garbage is cut from a per-process pool of this many random elements (times two) at a
#: random offset, in blocks of this size: drawing it fresh was a large part of a party's time
#: on big layers, and ~20 us per call on small ones (LeNet's ~200-700 calls per party)
_POOL = 1 << 16
_pools: dict = {}


def _pool(alg, g: np.random.Generator, size: int) -> np.ndarray:
    """This process's ``2 * size`` random elements of ``alg`` (drawn once, from ``g``)."""
    key = (id(g), repr(alg), size)
    if key not in _pools:
        _pools[key] = np.asarray(alg.random(g, 2 * size), dtype=alg.dtype)
    return _pools[key]


def _garbage(alg, shape, g: np.random.Generator, out: np.ndarray | None = None
             ) -> np.ndarray:
    """Elements of ``alg`` this process's party does not hold: random, cut from this
    process's pool (drawn once from its own ``g``) at an offset drawn from ``g``, into
    ``out`` if given."""
    n = math.prod(shape)
    pool = _pool(alg, g, _POOL)
    off = int(g.integers(_POOL))
    if out is None:
        out = np.empty(shape, dtype=alg.dtype)
    flat = out.reshape(-1)  # a view: out is C-contiguous
    m = n // _POOL
    if m:
        flat[:m * _POOL].reshape(m, _POOL)[...] = pool[off:off + _POOL]
    flat[m * _POOL:] = pool[off:off + n - m * _POOL]
    return out


#: a message between two other parties is a read-only view of this many random elements
#: (a row repeated along the leading axes) when its last axis fits, else :func:`_garbage`
_VIEW = 1 << 21


def _garbage_view(alg, shape, g: np.random.Generator) -> np.ndarray:
    """Garbage of ``shape`` that costs no memory: a read-only view of a per-process row of
    random elements (at a random offset), broadcast along the leading axes. For a value the
    process only passes on, if at all (writing into it is an error)."""
    shape = tuple(shape)
    last = shape[-1] if shape else 1
    if last > _VIEW:
        return _garbage(alg, shape, g)
    off = int(g.integers(_VIEW))
    row = _pool(alg, g, _VIEW)[off:off + last]
    return np.broadcast_to(row if shape else row[0], shape)


def _fresh(g: np.random.Generator) -> np.random.Generator:
    """A generator seeded from this process's garbage: stands in for a stream it lacks."""
    return np.random.Generator(np.random.SFC64(int(g.integers(1 << 62))))


def _os_stream() -> np.random.Generator:
    """A stream of this process's own, seeded from 128 bits of OS entropy."""
    return np.random.Generator(np.random.SFC64(np.random.SeedSequence()))


class WireDealer(FalconDealer):
    """Falcon's dealer whose material crosses the wire: in the dealer process :meth:`book`
    sends each party its two components of every sharing; in ``Pi``'s process it receives
    them into the sharings (only their shapes are formed there: :meth:`WireFalcon._deals`)
    and fills the third with garbage."""

    def __init__(self, rngs, ledger, wire: Wire):
        super().__init__(rngs, ledger, PARTIES)
        self.wire = wire

    def share(self, x, alg, stream: str) -> RSS:
        """The dealer's process shares ``x``; a party's process, which receives its two
        components at :meth:`book`, holds garbage of the same shape until then."""
        if self.wire.party is None:
            return super().share(x, alg, stream)
        if stream not in self.rngs:
            raise ValueError(f"unknown dealer stream {stream!r}; one of {sorted(self.rngs)}")
        comps = np.empty((3, *np.shape(x)), alg.dtype)  # its two rows are received into
        _garbage(alg, comps.shape[1:], self.wire.garbage, out=comps[(self.wire.party - 1) % 3])
        return RSS(comps, alg)

    def book(self, bits_per_party: int, what: str, *material: RSS,
             names: tuple[str, ...] | None = None) -> None:
        if not material:
            raise WireError(f"dealer material '{what}' was booked without its sharings: "
                            "wire mode cannot send it")
        w = self.wire
        for i in range(3):
            parts = [(m.components[j], m.ring.bits) for m in material for j in (i, (i + 1) % 3)]
            bits = sum(a.size * b for a, b in parts)
            if bits != bits_per_party:
                raise WireError(f"dealer material '{what}': the ledger books {bits_per_party} "
                                f"bits per party, its sharings are {bits} bits")
            if w.party is None:
                w.send(PARTIES[i], parts, what, "offline dealer")
            elif w.party == i:
                w.recv("dealer", [(a.shape, a.dtype, b) for a, b in parts], what,
                       "offline dealer", into=[a for a, _ in parts])
        # (a party's third component is still the garbage of :meth:`share`)
        super().book(bits_per_party, what, *material, names=names)


class WireFalcon(Falcon):
    """One process's Falcon: the party ``wire.party`` (or, for ``None``, the dealer and
    input owner), holding real values only where that party holds them (module docstring).

    Takes :class:`~ppnn.protocols.falcon.Falcon`'s arguments (``deviation`` and
    ``record_openings`` are for the in-process harness), ``wire``, the process's
    :class:`~ppnn.wire.transport.Wire`, and ``offline_first``: a party reads all the
    dealer's material (and its input shares) after the setup round, before its online phase
    begins (:meth:`Wire.prefetch`; the moment is marked ``"online"``, once the three
    parties are there: :meth:`Wire.barrier`). An inference marks it again once the model is
    shared (:meth:`query_begins`): the model is the server's before any query, as in the
    C++ reference, whose timed inference starts with the weights already shared and the
    parties synchronized."""

    def __init__(self, rng: np.random.Generator, *, wire: Wire, offline_first: bool = False,
                 **kwargs):
        if kwargs.get("deviation") is not None or kwargs.get("record_openings"):
            raise ValueError("wire mode runs honest parties: deviation and record_openings "
                             "are for the in-process harness")
        super().__init__(rng, **kwargs)
        if self.ledger.records_values:
            raise ValueError("record_values works for in-process runs only")
        self.wire = wire
        me, g = wire.party, wire.garbage
        rngs = self.dealer.rngs
        if me is None:  # the dealer: no PRF key; its own streams, but for "trunc" (docstring)
            self._keys = [_fresh(g) for _ in range(3)]
            self._input_rng = _os_stream()
            rngs = {name: s if name == "trunc" else _os_stream() for name, s in rngs.items()}
        else:  # the setup round on the wire: Pi draws k_i and sends it to P_{i-1}
            nxt, prv = (me + 1) % 3, (me - 1) % 3
            key = secrets.randbits(128)
            wire.send(PARTIES[prv], [(key_bytes(key), 8)], f"setup::PRF key k_{me}",
                      "offline setup")
            (kb,) = wire.recv(PARTIES[nxt], [((16,), np.uint8, 8)], f"setup::PRF key k_{nxt}",
                              "offline setup")
            keys = [None, None, None]
            keys[me] = np.random.Generator(np.random.SFC64(key))
            keys[nxt] = np.random.Generator(np.random.SFC64(int.from_bytes(kb.tobytes(),
                                                                           "little")))
            keys[prv] = _fresh(g)
            self._keys = keys
            self._input_rng = _fresh(g)
            rngs = {name: _fresh(g) for name in rngs}
            # the garbage pools, drawn in the set-up: garbage is the honesty test's apparatus,
            # not the protocol's work (drawn lazily, they fell in a LeNet's online phase)
            for alg in (self.ring, self.field, self.bit):
                for size in (_POOL, _VIEW):
                    _pool(alg, g, size)
            if offline_first:  # the offline phase: everything the dealer sends, then online
                wire.prefetch("dealer")
                self._online_begins()
        self.dealer = WireDealer(rngs, self.ledger, wire)
        self._offline_first = offline_first and me is not None

    def _deals(self) -> bool:
        return self.wire.party is None

    def query_begins(self) -> None:
        if self._offline_first:  # the model's shares are in: the query's online phase begins
            self._online_begins()

    def _online_begins(self) -> None:
        """The three parties wait for each other, then mark the online phase's start: it
        begins on every party at once, not on the first one ready (:meth:`Wire.barrier`)."""
        self.wire.barrier([PARTIES[i] for i in range(3) if i != self.wire.party])
        self.wire.mark("online")

    # -- what the process's party holds ---------------------------------------------------
    def _honest(self) -> int:
        return 0 if self.wire.party is None else self.wire.party

    def _local(self) -> tuple[int, ...]:
        """The process's own party (checks and lean steps, :meth:`Falcon._rows` follows);
        none in the dealer's process."""
        return () if self.wire.party is None else (self.wire.party,)

    def _not_computed(self, comps: np.ndarray, alg, rows: tuple[int, ...]) -> None:
        """A lean party's rows it did not compute get garbage (the dealer's stay as they
        are: it holds no component, and its outputs are not used)."""
        if self.wire.party is not None:
            for r in range(3):
                if r not in rows:
                    _garbage(alg, comps.shape[1:], self.wire.garbage, out=comps[r])

    def _missing(self, x: RSS) -> None:
        """Fill the component this process's party does not hold with garbage."""
        if self.wire.party is not None:
            x.components[(self.wire.party - 1) % 3] = _garbage(x.ring, x.shape,
                                                               self.wire.garbage)

    def share(self, x, alg=None) -> RSS:
        """The input owner (dealer process) shares ``x`` and sends ``Pi`` its two components;
        a party's process (whose ``x`` is garbage) receives them."""
        sh = super().share(x, alg)
        w, C, bits = self.wire, sh.components, sh.ring.bits
        if w.party is None:
            for i in range(3):
                w.send(PARTIES[i], [(C[i], bits), (C[(i + 1) % 3], bits)], "input share",
                       "inputs")
        else:
            i = w.party
            C[i], C[(i + 1) % 3] = w.recv("dealer", [(C.shape[1:], C.dtype, bits)] * 2,
                                          "input share", "inputs")
            self._missing(sh)
        return sh

    def public(self, x, alg=None) -> RSS:
        out = super().public(x, alg)
        self._missing(out)
        return out

    def _public(self, value: np.ndarray) -> np.ndarray:
        """The dealer's process (no party) uses zeros for every opened value."""
        return value if self.wire.party is not None else np.zeros_like(value)

    def open_components(self, x: RSS, what: str = "open", kind: str = "plain",
                        material: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Like :meth:`open`, with all three components *as this party has them*: its two
        and the one the opening delivered (the simulation returns the three local ones)."""
        value = self.open(x, what, kind, material)
        comps = x.components.copy()
        if self.wire.party is not None:  # the last message it received: the missing one
            comps[(self.wire.party - 1) % 3] = self._received
        return value, comps

    # -- the choke point ----------------------------------------------------------------
    def _transmit(self, sender: int, receiver: int, value: np.ndarray, alg, what: str,
                  change: bool = False, into: np.ndarray | None = None) -> np.ndarray:
        """Book the message (as the simulation does), then: the sender's process sends it,
        the receiver's process gets the array the message will fill at the next
        :meth:`_settle` (``into``, if given), any other process returns garbage."""
        out = super()._transmit(sender, receiver, value, alg, what, change)
        w = self.wire
        rnd = self.ledger.messages[-1].round
        w.enter_round(rnd)
        if w.party == receiver:
            self._received = w.expect(PARTIES[sender], [(out.shape, out.dtype, alg.bits)],
                                      self._step(what),
                                      into=None if into is None else [into])[0]
            return self._received
        if w.party != sender:  # a message between the two other parties: nothing of it here
            if into is None:
                return _garbage_view(alg, out.shape, w.garbage)
            return _garbage(alg, out.shape, w.garbage, out=into)
        w.send(PARTIES[receiver], [(out, alg.bits)], self._step(what), round=rnd)
        if into is None:
            return out
        into[...] = out
        return into

    def _settle(self) -> None:
        """Wait for the messages of the round (the sends of the round have all gone)."""
        self.wire.settle()

    def _reshare(self, z: np.ndarray, alg, what: str) -> tuple[RSS, bool]:
        """:meth:`Falcon._reshare` for an honest party, whose received component is filled
        in place at :meth:`_settle` (the simulation's version stacks the delivered values)."""
        comps, me = z, self.wire.party  # z's own row is in place, the others filled here
        for i in range(3):
            self._transmit(i, (i - 1) % 3, z[i], alg, what, into=None if i == me else comps[i])
        return RSS(comps, alg), self._zero_off


# -- jobs run in each process ---------------------------------------------------------------
def _rng(seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def _skeleton(params) -> list:
    """The public shapes of a plan's parameters (a residual block's branches nested)."""
    return [{k: _skeleton(v) if isinstance(v, list) else np.shape(v) for k, v in p.items()}
            for p in params]


def _garbage_params(g: np.random.Generator, skeleton) -> list:
    """Garbage parameters of the shapes of :func:`_skeleton`."""
    return [{k: _garbage_params(g, s) if isinstance(s, list) else g.uniform(0.25, 1.0, s)
             for k, s in p.items()} for p in skeleton]


def _plan_job(wire: Wire, task: dict) -> dict:
    from ppnn.protocols.api import family

    plan, x = task["plan"], task.get("x")
    g = wire.garbage
    if wire.party is not None:  # garbage of the public shapes for the model and the image
        plan = dataclasses.replace(plan, impl={**plan.impl,
                                               "params": _garbage_params(g, task["params"])})
        x = g.uniform(0.0, 1.0, task["x_shape"])
    logits, ledger, times, prov = family(plan.family)._run(
        plan, x, _rng(task.get("seed")), "sim",  # a party's process: no seed, OS entropy
        runtime=partial(WireFalcon, wire=wire, offline_first=task.get("offline_first", False)))
    return {"output": logits if wire.party is not None else None, "ledger": ledger,
            "times": times, "prov": prov}


def _program_job(wire: Wire, task: dict) -> dict:
    inputs = task["inputs"]
    if wire.party is not None:  # garbage ring elements of the public shapes
        inputs = {k: wire.garbage.integers(0, 1 << 32, s, dtype=np.uint64)
                  for k, s in inputs.items()}
    fal = WireFalcon(_rng(task.get("seed")), wire=wire, malicious=task["malicious"],
                     offline_first=task.get("offline_first", False))
    out = task["program"](fal, inputs)
    return {"output": out if wire.party is not None else None, "ledger": fal.ledger}


def falcon_job(wire: Wire, task: dict) -> dict:
    """What each process of a Falcon wire run does (a module-level function for ``spawn``)."""
    return (_plan_job if task["kind"] == "plan" else _program_job)(wire, task)


# -- the two ways to run -------------------------------------------------------------------
def _check_same(launched, what: str) -> None:
    """Every party's process booked the same ledger and (``what``) the same output."""
    res = [launched[p][0] for p in PARTIES]
    led = res[0]["ledger"]
    for p, r in zip(PARTIES[1:], res[1:]):
        if r["ledger"].messages != led.messages:
            raise WireError(f"{p}'s process booked a different ledger than P0's")
        if what and not np.array_equal(r["output"], res[0]["output"]):
            raise WireError(f"P0 and {p} reconstructed different {what}: some party read a "
                            "value it does not hold")


def run_plan(plan, x, seed=0, *, timeout: float | None = 30.0,
             deadline: float | None = 600.0, offline_first: bool = False):
    """Falcon's wire run (``falcon_sh``, ``falcon_mal``; :func:`ppnn.wire.dispatch.run_plan`
    checks the arguments and dispatches every wire family): returns a
    :class:`~ppnn.protocols.api.Result` whose ``extra["wire"]`` is
    :func:`~ppnn.wire.summary.wire_summary`. ``timeout``: seconds a process waits for a
    message (None: 30 s); ``offline_first``: the dealer's material all arrives before the
    parties' online phase, whose time the summary gives as ``online seconds``."""
    import pandas as pd

    from ppnn.protocols.api import Result, _check_images

    if plan.family not in FALCON_FAMILIES:
        raise ValueError(f"wire.falcon runs {', '.join(FALCON_FAMILIES)}; got a plan of "
                         f"{plan.family!r}")
    if timeout is None:
        timeout = 30.0
    x = _check_images(plan, x)
    skeleton = _skeleton(plan.impl["params"])
    public = dataclasses.replace(plan, impl={**plan.impl, "params": None})
    party = {"kind": "plan", "plan": public, "params": skeleton, "x_shape": x.shape,
             "offline_first": bool(offline_first)}
    tasks = {p: party for p in PARTIES}
    tasks["dealer"] = {"kind": "plan", "plan": plan, "x": x, "seed": seed}
    launched = launch(falcon_job, tasks, timeout=timeout, deadline=deadline)
    _check_same(launched, "logits")
    first = launched["P0"][0]
    summary = wire_summary(first["ledger"], launched)
    seconds = max(summary["party seconds"][p] for p in PARTIES)
    timings = pd.DataFrame([("online", "input, all layers, output", seconds)],
                           columns=["phase", "layer", "seconds"])
    prov = {"communication": "measured on a wire: 4 processes (P0, P1, P2, dealer) over "
            "loopback TCP; ledger booked by every party's process (equal)",
            "compute": "measured: the slowest party's process (SPMD with garbage; "
            "multiplications and private compare computed lean: its own share and its two "
            "components only)",
            "randomness": falcon_randomness(seed)}
    return Result(plan.family, "sim", np.asarray(first["output"]), first["ledger"], timings,
                  prov, {"wall_s": launched.seconds, "wire": summary, "transport": "tcp"})


def falcon_randomness(seed) -> str:
    """Where a Falcon wire run's secret randomness came from (the provenance's
    ``"randomness"``; module docstring)."""
    own = ("PRF keys: each k_i from OS entropy in Pi's process (128 bits; the PRF is "
           "simulated: SFC64 keyed by k_i); input sharing and the dealer's streams: OS entropy "
           "in the dealer's process")
    if seed is None:
        return own + ", the truncation stream too (seed=None); no seed reached any process"
    return (own + ", except the truncation stream (each truncation's r and its sharing), "
            "which follows the run seed in the dealer's process so that the logits' one-ulp "
            "roundings equal the in-process run's -- whoever knows the seed knows every "
            "truncation mask r, hence every truncated value (simulation; seed=None draws it "
            "from OS entropy); no seed reached P0, P1, P2")


def run_program(program: Callable, inputs: dict[str, np.ndarray], seed=0, *,
                malicious: bool = False, timeout: float = 30.0,
                deadline: float | None = 600.0, offline_first: bool = False) -> dict:
    """Run ``program(fal, inputs) -> opened array`` in wire mode (``program`` a module-level
    function; ``inputs`` ring elements held by the input owner). Returns ``{"outputs":
    {party: array}, "ledger": P0's ledger, "wire": wire_summary}``; the outputs are not
    compared (the garbage test compares them with the in-process run). ``offline_first``: as
    for :func:`run_plan`."""
    if not isinstance(inputs, dict) or not all(isinstance(k, str) for k in inputs):
        raise ValueError("inputs must be a dict of name -> array of ring elements")
    inputs = {k: np.asarray(v, dtype=np.uint64) for k, v in inputs.items()}
    party = {"kind": "program", "program": program, "malicious": bool(malicious),
             "inputs": {k: v.shape for k, v in inputs.items()},
             "offline_first": bool(offline_first)}
    tasks = {p: party for p in PARTIES}
    tasks["dealer"] = {**party, "inputs": inputs, "seed": seed}
    launched = launch(falcon_job, tasks, timeout=timeout, deadline=deadline)
    _check_same(launched, "")
    led = launched["P0"][0]["ledger"]
    return {"outputs": {p: launched[p][0]["output"] for p in PARTIES}, "ledger": led,
            "wire": wire_summary(led, launched)}


# -- programs for the garbage test ------------------------------------------------------
def relu_program(fal: Falcon, inputs: dict) -> np.ndarray:
    """Falcon's ReLU (Algorithm 3) on the shared ring elements ``inputs["a"]``, opened."""
    from ppnn.protocols.falcon.comparison import relu

    a = fal.share(inputs["a"])
    r, _ = relu(fal, a)
    with fal.protocol("output"):
        return fal.open(r, "relu output", "plain")


def _open_reading_all_components(fal: Falcon, x: RSS, what: str = "open", kind: str = "plain",
                                 material=None, held=None) -> np.ndarray:
    """A broken opening: it sends and books what the real one does, but reconstructs from
    all three *local* components -- reading the one it should have received."""
    with fal.ledger.round():
        for i in range(3):
            fal._transmit((i - 1) % 3, i, x.components[(i - 1) % 3], x.ring, what)
    return np.asarray(x.ring.sum(x.components, axis=0), dtype=np.uint64)


def relu_reading_all_components(fal: Falcon, inputs: dict) -> np.ndarray:
    """:func:`relu_program` with the broken opening (semi-honest): the simulation gives the
    right output, the garbage test does not."""
    original = Falcon.open
    Falcon.open = _open_reading_all_components
    try:
        return relu_program(fal, inputs)
    finally:
        Falcon.open = original
