"""Threshold-sum messages ↔ the values the crypto core uses."""

from __future__ import annotations

from cryptocore import ciphertext as ct
from cryptocore.key_checks import check_key_id
from cryptocore.threshold import PartialDecryption, ThresholdPublicKey
from mpdp_proto.v1 import common_pb2, threshold_sum_pb2
from sessions.errors import invalid
from sessions.integers import int_to_bytes


def ciphertexts_to_proto(public_key: ThresholdPublicKey, values: list[int]) -> common_pb2.Ciphertexts:
    return common_pb2.Ciphertexts(key_id=public_key.key_id, values=[ct.to_bytes(public_key.paillier, c) for c in values])


def ciphertexts_from_proto(public_key: ThresholdPublicKey, message: common_pb2.Ciphertexts, count: int) -> list[int]:
    """Exactly `count` ciphertexts under this key (key id and count checked before any parsing)."""
    check_key_id(public_key.key_id, bytes(message.key_id))
    if len(message.values) != count:
        raise invalid(f"{len(message.values)} ciphertexts, expected {count}")
    return [ct.from_bytes(public_key.paillier, value) for value in message.values]


def partial_to_proto(partial: PartialDecryption) -> threshold_sum_pb2.PartialDecryption:
    return threshold_sum_pb2.PartialDecryption(value=int_to_bytes(partial.value), challenge=int_to_bytes(partial.challenge),
                                               response=int_to_bytes(partial.response))


def partials_from_proto(public_key: ThresholdPublicKey, holder: int, message: threshold_sum_pb2.PartialDecryptions,
                        count: int) -> list[PartialDecryption]:
    if len(message.shares) != count:
        raise invalid(f"{len(message.shares)} partial decryptions for {count} ciphertexts")
    max_bytes = 4 * ct.ciphertext_length(public_key.paillier)  # z is longer than n²
    partials = []
    for share in message.shares:
        for name in ("value", "challenge", "response"):
            if not 0 < len(getattr(share, name)) <= max_bytes:
                raise invalid(f"partial decryption field {name} has a wrong length")
        partials.append(PartialDecryption(holder, int.from_bytes(share.value, "big"),
                                          int.from_bytes(share.challenge, "big"), int.from_bytes(share.response, "big")))
    return partials
