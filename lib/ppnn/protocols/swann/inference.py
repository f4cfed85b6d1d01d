"""End-to-end SwaNN predictions in the two settings of §4 (client-server, two-server).

A run follows the paper's figures 1 and 2:

1. **setup** -- (two-server) the client splits its Paillier secret key and gives one share to
   each server;
2. **input** -- the client encrypts its image(s) under its public key and sends them (in the
   two-server setting one image to each server, so two images are classified at once);
3. **non-interactive phase** -- the server evaluates Conv, FC and the scaled mean pool on
   ciphertexts (§4.1.1), and a residual block's Add as a product of the two branches'
   ciphertexts (the branch at the smaller scale raised to ``2^lift`` first);
4. **interactive phase** -- activations: Protocol 1 (PHE only) or Protocol 2 → 2PC (x², or
   ReLU + max-pool, then the exact truncation) → Protocol 3 (hybrid) (§4.1.2);
5. **output** -- the server rerandomizes the encrypted logits and returns them; the client
   decrypts and takes the arg-max.

``optimized=True`` turns on the two optimisations of §5.1 (packing before every decryption,
Lim–Lee multi-exponentiation in Conv and FC). Every message and operation is booked on the
returned ledger (labels = the paper's row names, ``Conv 1``, ``Act 1`` ...); wall-clock
seconds per party and operation are in the returned :class:`~ppnn.core.timing.Timings`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...core import Ledger, Ring
from ...core.randomness import check_source
from ...core.timing import Timings
from ...he.paillier import (
    KEY_BITS,
    CipherArray,
    KeyShare,
    Paillier,
    PrivateKey,
    PublicKey,
    SimulatedPaillier,
    keygen,
    split_private_key,
)
from .model import Step, SwannModel
from .switching import (
    KeyHolderDecryption,
    Masking,
    Roles,
    SplitKeyDecryption,
    bool_to_phe,
    phe_to_2pc,
    secure_square,
)
from .twopc import OTCostModel, TwoPC

__all__ = ["SwannKeys", "RunResult", "run_inference", "SCENARIOS", "PARTIES", "OP_GROUPS"]

SCENARIOS = ("client-server", "two-server")
PARTIES = {"client-server": ("client", "server"), "two-server": ("client", "server1", "server2")}
# operation names of the timings, grouped as the rows of the paper's Table 2
OP_GROUPS = {"pack": "Packing", "Dec": "Decryption", "PartialDec": "Decryption",
             "unpack": "Unpacking", "ABY": "ABY", "Enc": "Encryption"}


@dataclass
class SwannKeys:
    """The client's Paillier key pair and (two-server) the two shares of its secret key."""

    public_key: PublicKey
    private_key: PrivateKey
    shares: tuple[KeyShare, KeyShare] | None = None

    @classmethod
    def generate(cls, n_bits: int = KEY_BITS, two_server: bool = True) -> SwannKeys:
        """Fresh keys (2048 bits by default: about 112-bit security, NIST SP 800-57)."""
        pk, sk = keygen(n_bits)
        return cls(pk, sk, split_private_key(sk) if two_server else None)


@dataclass
class RunResult:
    """Predictions, decrypted logits, and the cost of one run."""

    scenario: str
    setting: str
    optimized: bool
    predictions: list[int]
    logits: list[np.ndarray]
    ledger: Ledger
    timings: Timings
    labels: list[str] = field(default_factory=list)

    def times_ms(self) -> pd.DataFrame:
        """Measured milliseconds per step (rows, paper order) and party (columns)."""
        parties = [p for p in PARTIES[self.scenario]]
        rows = {}
        for lab in self.labels:
            rows[lab] = {p: 1e3 * self.timings.total(party=p, label=lab) for p in parties}
        return pd.DataFrame.from_dict(rows, orient="index", columns=parties)

    def op_times_ms(self, label_prefix: str | None = None) -> pd.DataFrame:
        """Milliseconds per Table 2 operation group and party, summed over ``Act`` steps."""
        df = self.timings.frame()
        if label_prefix is not None:
            df = df[df["label"].str.split("/").str[0].str.startswith(label_prefix)]
        df = df.assign(group=df["op"].map(OP_GROUPS).fillna("other"))
        out = df.groupby(["group", "party"])["seconds"].sum().unstack(fill_value=0.0) * 1e3
        return out.reindex(columns=list(PARTIES[self.scenario]), fill_value=0.0)

    def protocol_bytes(self, phase: str | None = None) -> float:
        """Bytes of the prediction protocol proper (the layers; input, output and key setup
        excluded, as in the paper's Table 3)."""
        return sum(self.ledger.total_bytes(phase, lab) for lab in self.labels)


def roles_for(scenario: str, keys: SwannKeys, image: int = 0) -> Roles:
    """Who evaluates and who decrypts image ``image``: the server and the client (key holder)
    in the client-server setting; in the two-server one server1 evaluates even images and
    server2 odd ones, the other decrypting with its key share."""
    if scenario == "client-server":
        return Roles("server", "client", KeyHolderDecryption(keys.private_key))
    s1, s2 = keys.shares
    if image == 0:
        return Roles("server1", "server2", SplitKeyDecryption(s1, s2))
    return Roles("server2", "server1", SplitKeyDecryption(s2, s1))


def _linear(be: Paillier, step: Step, c: CipherArray, ev: str, method: str) -> CipherArray:
    if step.kind == "conv":
        y = be.gather_dot(c.ravel(), step.index, step.W, ev, method)        # (C_out, P)
        b = np.repeat(step.b, step.index.shape[0]).reshape(y.shape)
        return be.add_plain(y, b, ev).ravel()
    if step.kind == "fc":
        return be.add_plain(be.dot(c.ravel(), step.W, ev, method), step.b, ev)
    if step.kind == "sumpool":
        return be.sum_windows(c.ravel(), step.index, ev)
    if step.kind == "flatten":
        return c
    raise ValueError(f"not a linear step: {step.kind}")  # pragma: no cover


def _residual(be: Paillier, step: Step, c: CipherArray, kept: list, ev: str) -> CipherArray:
    """A residual block's steps on the evaluator's ciphertexts (no message): ``fork`` keeps
    the block input, ``swap`` keeps the body's output and takes the input back, ``add``
    multiplies ``[body]^(2^lb) · [shortcut]^(2^ls) = [body 2^lb + shortcut 2^ls]``."""
    if step.kind == "fork":
        kept.append(c)
        return c
    if step.kind == "swap":
        body, kept[-1] = kept[-1], c
        return body
    body, (lb, ls) = kept.pop(), step.lift
    body, c = body.ravel(), c.ravel()
    if lb:
        body = be.mul_plain(body, 1 << lb, ev)
    if ls:
        c = be.mul_plain(c, 1 << ls, ev)
    return be.add(body, c, ev)


def _activation(be: Paillier, step: Step, c: CipherArray, roles: Roles, tpc: TwoPC,
                rng: np.random.Generator, model: SwannModel, pack: bool) -> CipherArray:
    kappa = model.plan.kappa
    masking = Masking(step.ell_in, kappa)
    if model.setting == "phe":
        return secure_square(be, c, roles, rng, masking, pack)            # Protocol 1
    if step.act == "square":
        ring = Ring(64)
        sh = phe_to_2pc(be, c, roles, tpc, rng, masking, ring, pack)     # Protocol 2
        if step.pre_trunc:
            xb = TwoPC.truncate(tpc.a2b(sh, step.ell_in), step.pre_trunc)
            sh = tpc.b2a(xb, ring)
        xb = tpc.a2b(tpc.square(sh), step.a2b_bits)                      # x², then A2B
    else:
        ring = Ring(32) if step.ell_in <= 32 else Ring(64)
        sh = phe_to_2pc(be, c, roles, tpc, rng, masking, ring, pack)     # Protocol 2
        xb = tpc.relu(tpc.a2b(sh, step.ell_in))                          # ReLU
        if step.pool_index is not None:
            xb = tpc.max_pool(xb, step.pool_index)                       # max-pool
    xb = TwoPC.truncate(xb, step.trunc)
    return bool_to_phe(be, xb, roles, tpc, rng, kappa)                   # Protocol 3


def run_inference(model: SwannModel, images, scenario: str = "client-server",
                  optimized: bool = True, keys: SwannKeys | None = None,
                  rng: np.random.Generator | None = None, simulated: bool = False,
                  ot: OTCostModel | None = None, ledger: Ledger | None = None,
                  twopc=TwoPC, paillier=None) -> RunResult:
    """Classify ``images`` with SwaNN and return predictions, logits and costs.

    Parameters
    ----------
    model : SwannModel
        The integer network (``setting`` "phe" or "hybrid").
    images : float array ``(n, C, H, W)`` in [0, 1]
        One image (client-server) or two (two-server: one per server).
    scenario : "client-server" or "two-server"
    optimized : packing + multi-exponentiation (§5.1) on or off
    keys : the client's keys (generated, 2048-bit -- about 112-bit security -- if omitted)
    rng : numpy Generator (or a SecureRandom) for masks and shares (required)
    simulated : use :class:`SimulatedPaillier` (same counts; for projections)
    ledger : an empty ledger of the scenario's parties to book on (default: a new one; wire
        mode passes its own, :mod:`ppnn.wire.swann`)
    twopc : the 2PC engine's class (:class:`TwoPC`; wire mode passes its subclass)
    paillier : the Paillier backend's class (default: by ``simulated``; wire mode passes its
        simulator)

    Raises ``ValueError`` before any key is made, anything encrypted or any message booked if
    an image is outside the model's input contract or could drive an activation past its
    ``ℓ`` bits (:meth:`SwannModel.check_input`), on either backend.
    """
    if scenario not in SCENARIOS:
        raise ValueError(f"scenario must be one of {SCENARIOS}, got {scenario!r}")
    if not isinstance(model, SwannModel):
        raise TypeError("model must be a SwannModel")
    check_source(rng)
    images = np.asarray(images)
    if images.ndim == 3:
        images = images[None]
    want = 1 if scenario == "client-server" else 2
    if images.shape[0] != want:
        raise ValueError(f"the {scenario} setting classifies {want} image(s) per run, "
                         f"got {images.shape[0]}")
    # the client's check, on any backend, before anything is encrypted or sent: an input
    # whose activations could leave their ℓ bits is refused (under encryption nobody could
    # see the overflow)
    x_ints = [model.encode(img) for img in images]
    for x_int in x_ints:
        model.check_input(x_int)
    keys = keys or SwannKeys.generate(two_server=scenario == "two-server")
    if scenario == "two-server" and keys.shares is None:
        raise ValueError("the two-server setting needs keys with secret-key shares")
    if ledger is None:
        ledger = Ledger(PARTIES[scenario])
    elif tuple(ledger.parties) != PARTIES[scenario] or ledger.messages:
        raise ValueError(f"ledger must be an empty ledger of the parties {PARTIES[scenario]}")
    timings = Timings(ledger)
    if paillier is None:
        paillier = SimulatedPaillier if simulated else Paillier
    be = paillier(keys.public_key, ledger, timings)
    method = "multiexp" if optimized else "naive"
    ot = ot or OTCostModel()

    if scenario == "two-server":
        with ledger.label("setup"), ledger.round():
            got = [ledger.transmit("client", f"server{i + 1}", s.wire_bits,
                                   "secret-key share", s, np.array([s.d], dtype=object))
                   for i, s in enumerate(keys.shares)]
            keys = SwannKeys(keys.public_key, keys.private_key, tuple(got))
    pipes = []
    for i, x_int in enumerate(x_ints):
        roles = roles_for(scenario, keys, i)
        with ledger.label("input"):
            ledger.hold("client", "image (encoded, its input)", x_int)
            c = be.encrypt(x_int.ravel(), "client")
            c = ledger.transmit("client", roles.evaluator, c.bits(), "[image]", c, c.wire())
        tpc = twopc(ledger, (roles.helper, roles.evaluator), rng, ot, timings)
        pipes.append([roles, tpc, c, []])  # the last: ciphertexts a residual block keeps
    for step in model.steps:
        with ledger.label(step.label):
            for pipe in pipes:
                roles, tpc, c, kept = pipe
                if step.interactive:
                    pipe[2] = _activation(be, step, c, roles, tpc, rng, model, optimized)
                elif step.kind in ("fork", "swap", "add"):
                    pipe[2] = _residual(be, step, c, kept, roles.evaluator)
                else:
                    pipe[2] = _linear(be, step, c, roles.evaluator, method)
    preds, logits = [], []
    with ledger.label("output"):
        for roles, _, c, _ in pipes:
            out = be.rerandomize(c, roles.evaluator)
            out = ledger.transmit(roles.evaluator, "client", out.bits(), "[logits]", out,
                                  out.wire())
            z = be.decrypt(keys.private_key, out, "client")
            ledger.hold("client", "logits (decrypted, its output)", z)
            logits.append(z)
            preds.append(int(np.argmax(np.asarray(z, dtype=np.float64))))
    labels = list(dict.fromkeys(s.label for s in model.steps if s.kind != "flatten"))
    return RunResult(scenario, model.setting, optimized, preds, logits, ledger, timings, labels)
