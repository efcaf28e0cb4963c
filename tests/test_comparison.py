import dataclasses

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from cryptocore import ciphertext as ct
from cryptocore.comparison import ComparisonKeyHolder, ComparisonValueHolder, compare
from cryptocore.errors import (
    CryptoError,
    InvalidCiphertext,
    KeyMismatch,
    ProtocolStateError,
)

BITS = 24
TOP = 2**BITS - 1
operand = st.integers(min_value=0, max_value=TOP)


@given(operand, operand)
@example(0, 0)
@example(TOP, TOP)
@example(TOP, 0)
@example(0, TOP)
@example(TOP, TOP - 1)
@example(TOP - 1, TOP)
@example(1, 0)
@example(0, 1)
@example(2**23, 2**23 - 1)
@example(2**23 - 1, 2**23)
def test_agrees_with_greater_than(keypair, x, y):
    assert compare(keypair, x, y, BITS) == (x > y)


@given(operand)
def test_equal_values_and_neighbours(keypair, x):
    assert compare(keypair, x, x, BITS) is False
    if x < TOP:
        assert compare(keypair, x + 1, x, BITS) is True
        assert compare(keypair, x, x + 1, BITS) is False


@given(operand, operand)
def test_key_holder_sees_at_most_one_zero(keypair, x, y):
    key_holder = ComparisonKeyHolder(keypair, y, BITS)
    answer = ComparisonValueHolder(keypair.public, x, BITS).respond(key_holder.encrypted_bits())
    zeros = [keypair.is_zero(ct.from_bytes(keypair.public.paillier, c)) for c in answer.ciphertexts]
    assert sum(zeros) == (1 if x > y else 0)


def test_one_bit_and_wide_comparisons(keypair):
    assert compare(keypair, 1, 0, 1) and not compare(keypair, 0, 1, 1)
    big = 2**115
    assert compare(keypair, big + 1, big, 116) and not compare(keypair, big, big + 1, 116)


def test_operands_outside_range_rejected(keypair):
    with pytest.raises(CryptoError):
        ComparisonKeyHolder(keypair, 2**BITS, BITS)
    with pytest.raises(CryptoError):
        ComparisonValueHolder(keypair.public, -1, BITS)


def test_messages_are_wire_ready(keypair):
    message = ComparisonKeyHolder(keypair, 5, BITS).encrypted_bits()
    assert message.key_id == keypair.public.key_id
    assert len(message.ciphertexts) == BITS
    assert all(isinstance(c, bytes) and len(c) == 256 for c in message.ciphertexts)


def test_out_of_order_steps_rejected(keypair):
    key_holder = ComparisonKeyHolder(keypair, 5, BITS)
    value_holder = ComparisonValueHolder(keypair.public, 7, BITS)
    premature = ComparisonValueHolder(keypair.public, 7, BITS).respond(ComparisonKeyHolder(keypair, 1, BITS).encrypted_bits())
    with pytest.raises(ProtocolStateError):
        key_holder.receive(premature)
    first = key_holder.encrypted_bits()
    with pytest.raises(ProtocolStateError):
        key_holder.encrypted_bits()
    answer = value_holder.respond(first)
    with pytest.raises(ProtocolStateError):
        value_holder.respond(first)
    assert key_holder.receive(answer) is True
    with pytest.raises(ProtocolStateError):
        key_holder.receive(answer)


def test_bad_messages_rejected_without_changing_state(keypair, other_keypair):
    key_holder = ComparisonKeyHolder(keypair, 5, BITS)
    first = key_holder.encrypted_bits()
    value_holder = ComparisonValueHolder(keypair.public, 9, BITS)
    with pytest.raises(KeyMismatch):
        value_holder.respond(dataclasses.replace(first, key_id=other_keypair.public.key_id))
    with pytest.raises(CryptoError):
        value_holder.respond(dataclasses.replace(first, ciphertexts=first.ciphertexts[:-1]))
    with pytest.raises(InvalidCiphertext):
        value_holder.respond(dataclasses.replace(first, ciphertexts=(b"\x00" * 256,) + first.ciphertexts[1:]))
    answer = value_holder.respond(first)  # still usable after the rejections
    with pytest.raises(InvalidCiphertext):
        key_holder.receive(dataclasses.replace(answer, ciphertexts=answer.ciphertexts[:-1] + (b"\x01",)))
    assert key_holder.receive(answer) is True
