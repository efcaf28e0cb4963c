"""The leader's next ξ, made while idle (mpdp/cryptocore/paillier/key_reserve.py): handed out once, fresh every time."""

import time

from mpdp.cryptocore.paillier import key_reserve


def test_a_prepared_keypair_is_handed_out_once_and_then_keys_are_made_on_demand():
    key_reserve.prepare(1024)
    deadline = time.monotonic() + 30
    while not key_reserve.held(1024) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert key_reserve.held(1024)
    first = key_reserve.take(1024)
    assert not key_reserve.held(1024)  # taken, never handed out again
    second = key_reserve.take(1024)  # nothing prepared: made now
    assert first.public.n != second.public.n
    assert first.public.n.bit_length() == second.public.n.bit_length() == 1024
    assert first.private.p * first.private.q == first.public.n
