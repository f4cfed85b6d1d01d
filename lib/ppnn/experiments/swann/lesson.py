"""03_swann's protocol lessons: Protocols 1-3 played with every message recorded, in both
settings, and the key holder's view of Protocol 2 as an experiment.

:func:`switch_demo` runs, on a handful of values and with real Paillier, the client's input
``[x]``, Protocol 1 (``[x] -> [x^2]``), Protocol 2 (``[x] -> <x>``), ReLU in 2PC (A2B and the
ReLU circuit), Protocol 3 (``<ReLU(x)> -> [ReLU(x)]``) and the output (the client decrypts
``x^2`` and ``ReLU(x)``), on a ledger that keeps every value: ciphertexts as size and digest,
shares and masked values whole, what each party decrypts or opens as a holding. The 2PC
circuits between Protocol 2 and the encryption of Protocol 3 (A2B, ReLU, Protocol 3's masked
adder: ``l - 1 + 1 + m + kappa`` rounds of AND gates) are hundreds of messages of uniform bits
and size-only OT-extension traffic; :func:`switching_steps` folds them away for the player.

The view experiment (:func:`switch_view_experiment`): the key holder (the *helper*: the client,
or the other server) decrypts ``z = x + 2^(l-1) + r`` in Protocol 2. For two secrets, many
runs give two samples of ``z``; a two-sample KS test (:func:`ppnn.core.views.ks_test`) asks
whether the helper can tell the secrets apart. With the paper's ``r`` of ``l + kappa`` bits
(``kappa = 80``) the two distributions differ by ``|x_a - x_b| / 2^(l + kappa)`` in statistical
distance and the test cannot; with a mask drawn from a too-small range (``kappa = 1``: ``r`` has
barely more bits than ``x``) it tells them apart at once. Runs on the Paillier simulator with
masks from the seeded ``rng`` (what the helper decrypts is the same integer as with real keys),
so the experiment is reproducible; it shows the masking's logic, not a real CSPRNG's quality.
"""

from __future__ import annotations

import numpy as np

from ...core import Ledger, Ring
from ...core.transcript import EVERY_ELEMENT
from ...core.views import KSResult, view_experiment, view_values
from ...he.paillier import Paillier, SimulatedPaillier
from ...protocols.swann import (
    Masking,
    Roles,
    SwannKeys,
    TwoPC,
    bool_to_phe,
    inference,
    phe_to_2pc,
    secure_square,
)
from ...protocols.swann.inference import PARTIES, SCENARIOS

__all__ = ["GATE_TRAFFIC", "roles_for", "switch_demo", "switching_steps", "switch_view",
           "switch_view_experiment", "SECRETS"]

#: ``what`` of the 2PC engine's gate traffic (Beaver openings of AND gates, OT-extension
#: triples), which :func:`switching_steps` folds away
GATE_TRAFFIC = ("beaver AND", "OT extension")

#: the two secrets of the view experiment: ``-2^(l-2)`` and ``+2^(l-2)`` for ``l = 32``
SECRETS = (-(1 << 30), 1 << 30)

#: every element of every value (the demo's arrays are a handful of elements)


def roles_for(setting: str, keys: SwannKeys) -> Roles:
    """Who evaluates and who decrypts (:func:`ppnn.protocols.swann.inference.roles_for` of the
    first image): the server and the client (key holder) in the client-server setting;
    server1 and server2 (one key share each) in the two-server one."""
    if setting not in SCENARIOS:
        raise ValueError(f"setting must be one of {SCENARIOS}, got {setting!r}")
    if setting == "two-server" and keys.shares is None:
        raise ValueError("the two-server setting needs keys with secret-key shares")
    return inference.roles_for(setting, keys)


def switch_demo(setting: str = "client-server", n: int = 4, seed: int = 0,
                keys: SwannKeys | None = None, key_bits: int = 1024) -> Ledger:
    """Protocols 1-3 on ``n`` random values in [-100, 100] with real Paillier, every value
    recorded (see the module docstring). ``keys``: the client's keys (generated with a
    ``key_bits``-bit modulus if omitted; the two-server setting needs their shares, which are
    taken as handed out at setup: that message is not in this ledger). Masks and shares use
    the paper's parameters, ``l = 32``, ``kappa = 80``, 32-bit shares.

    The ledger's holdings include the client's input ``x`` and what it decrypts at the end,
    ``x^2`` and ``ReLU(x)``."""
    if not isinstance(n, int) or not 1 <= n <= 64:
        raise ValueError(f"n must be an int in [1, 64], got {n!r}")
    keys = keys or SwannKeys.generate(key_bits, two_server=setting == "two-server")
    roles = roles_for(setting, keys)
    rng = np.random.default_rng(seed)
    led = Ledger(PARTIES[setting], record_values=EVERY_ELEMENT)
    be = Paillier(keys.public_key, led)
    masking, ring = Masking(32), Ring(32)
    tpc = TwoPC(led, (roles.helper, roles.evaluator), rng)
    x = rng.integers(-100, 101, size=n)
    with led.label("input"):
        led.hold("client", "x (its input)", x)
        cx = be.encrypt(x, "client")
        led.send("client", roles.evaluator, cx.bits(), "[x]", value=cx.wire())
    with led.label("Protocol 1"):
        sq = secure_square(be, cx, roles, rng, masking)
    with led.label("Protocol 2"):
        sh = phe_to_2pc(be, cx, roles, tpc, rng, masking, ring)
    with led.label("ReLU in 2PC"):
        xb = tpc.relu(tpc.a2b(sh, masking.ell))
    with led.label("Protocol 3"):
        back = bool_to_phe(be, xb, roles, tpc, rng, masking.kappa)
    with led.label("output"):
        for name, c in (("x^2", sq), ("ReLU(x)", back)):
            out = be.rerandomize(c, roles.evaluator)
            led.send(roles.evaluator, "client", out.bits(), f"[{name}]", value=out.wire())
            led.hold("client", f"{name} (decrypted)", be.decrypt(keys.private_key, out, "client"))
    return led


def switching_steps(ledger: Ledger) -> Ledger:
    """The switching messages of a :func:`switch_demo` ledger: every message but the 2PC
    engine's gate traffic (:data:`GATE_TRAFFIC`); holdings and operation counts all kept."""
    return ledger.subset(lambda m: not m.what.startswith(GATE_TRAFFIC))


def switch_view(secret: int, runs: int, n: int, rng: np.random.Generator, keys: SwannKeys,
                kappa: int = 80, ell: int = 32, setting: str = "client-server") -> np.ndarray:
    """What the helper decrypts in Protocol 2, ``z = x + 2^(l-1) + r``, scaled to
    ``z / 2^(l+kappa)``, for ``runs`` runs of Protocol 2 on ``n`` copies of ``secret`` (a fresh
    recorded ledger per run; the values are read from the helper's view)."""
    masking, ring = Masking(ell, kappa), Ring(32 if ell <= 32 else 64)
    roles = roles_for(setting, keys)
    out = []
    for _ in range(runs):
        led = Ledger(PARTIES[setting], record_values=EVERY_ELEMENT)
        be = SimulatedPaillier(keys.public_key, led)
        c = be.encrypt(np.full(n, secret, dtype=object), "client")
        phe_to_2pc(be, c, roles, TwoPC(led, (roles.helper, roles.evaluator), rng), rng,
                   masking, ring)
        z = view_values(led, roles.helper, what="decrypted", kind="held")
        out += [int(v) / (1 << masking.mask_bits) for v in z]
    return np.asarray(out, dtype=np.float64)


def switch_view_experiment(broken: bool = False, runs: int = 100, n: int = 20, seed: int = 0,
                           keys: SwannKeys | None = None, alpha: float = 0.001,
                           setting: str = "client-server"
                           ) -> tuple[np.ndarray, np.ndarray, KSResult]:
    """:func:`switch_view` for the secrets :data:`SECRETS` (``runs * n`` values each), honest
    (``kappa = 80``) or ``broken`` (``kappa = 1``: a mask from a too-small range), and the KS
    test of the two samples at level ``alpha``. ``keys``: any Paillier key pair (a 1024-bit
    one is generated if omitted; the simulator only uses its modulus)."""
    if runs * n < 100:
        raise ValueError(f"runs * n must be >= 100 for the KS test's threshold to hold, "
                         f"got {runs * n}")
    keys = keys or SwannKeys.generate(1024, two_server=setting == "two-server")
    kappa = 1 if broken else 80
    e = view_experiment(lambda s, rng: switch_view(s, runs, n, rng, keys, kappa, 32, setting),
                        SECRETS, runs * n, seed, alpha, broken)
    return (*e.samples, e.test)
