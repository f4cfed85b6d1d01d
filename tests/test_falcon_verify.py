"""Malicious Falcon verifies every product before anything that depends on it is opened
(issue finding 2: pow opened its DReLU bits on unverified products and aborted only after
all of them were public)."""

import numpy as np
import pytest

from ppnn.protocols.falcon import Deviation, Falcon, MaliciousAbort
from ppnn.protocols.falcon.numeric import pow2_bound

PC_STEP5 = "pow/drelu/wrap3/private_compare::pc step 5: u = (-1)^beta (S - T)"


def _pow_bit_messages(fal: Falcon) -> list[str]:
    return sorted({m.what for m in fal.ledger.messages if m.what.startswith("pow bit")})


@pytest.mark.parametrize("occurrence,opened_before", [(0, []), (2, ["pow bit 3", "pow bit 4"])])
def test_a_tampered_private_compare_product_aborts_before_its_pow_bit_is_opened(
        occurrence, opened_before):
    """P1 reshares an inconsistent ``u`` in private compare (step 5) of pow's search for bit
    ``4 - occurrence``: the honest parties must abort before that bit (or any later one) is
    opened; the bits of earlier, untampered iterations may be public."""
    dev = Deviation("P1", PC_STEP5, "inconsistent_send", occurrence=occurrence)
    fal = Falcon(np.random.default_rng(0), malicious=True, deviation=dev)
    b = fal.share_fixed(np.array([0.5, 1.0, 2.0, 3.0]))
    with pytest.raises(MaliciousAbort, match="multiplication check"):
        pow2_bound(fal, b)
    assert dev.fired
    assert [w.split(":")[0] for w in _pow_bit_messages(fal)] == opened_before


def test_a_plain_opening_inside_an_open_round_with_pending_products_is_refused():
    """It could not verify first without a round of its own: refuse rather than open."""
    fal = Falcon(np.random.default_rng(1), malicious=True)
    x = fal.share_fixed(np.array([0.5, -1.25]))
    with fal.protocol("demo"):
        y = fal.mul(x, x, "square")
        with fal.ledger.round(), pytest.raises(RuntimeError, match="inside an open round"):
            fal.open(y, "open y", "plain")
        with pytest.raises(ValueError, match="opening kind"):
            fal.open(y, "open y", "secret")
        pending = len(fal._pending)
        opened = fal.open(y, "open y", "plain")  # verifies first, then opens
        assert pending == 1 and not fal._pending
    np.testing.assert_array_equal(opened, fal.reveal(y))


def test_a_plain_opening_verifies_pending_products_first():
    fal = Falcon(np.random.default_rng(2), malicious=True,
                 deviation=Deviation("P2", "demo::square", "inconsistent_send"))
    x = fal.share_fixed(np.array([0.5, -1.25]))
    with pytest.raises(MaliciousAbort, match="multiplication check"), fal.protocol("demo"):
        y = fal.mul(x, x, "square")
        fal.open(y, "open y", "plain")
    assert not [m for m in fal.ledger.messages if m.what == "open y"]  # never sent
