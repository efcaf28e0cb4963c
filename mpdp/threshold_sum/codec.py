"""Threshold-sum messages ↔ the values the crypto core uses."""

from __future__ import annotations

from mpdp.cryptocore.keys.key_checks import check_key_id
from mpdp.cryptocore.paillier import ciphertext as ct
from mpdp.cryptocore.paillier.threshold import BatchPartialDecryption, ThresholdPublicKey
from mpdp.proto.v1 import common_pb2, threshold_sum_pb2
from mpdp.sessions.errors import invalid
from mpdp.sessions.integers import int_to_bytes


def ciphertexts_to_proto(public_key: ThresholdPublicKey, values: list[int]) -> common_pb2.Ciphertexts:
    return common_pb2.Ciphertexts(key_id=public_key.key_id, values=[ct.to_bytes(public_key.paillier, c) for c in values])


def ciphertexts_from_proto(public_key: ThresholdPublicKey, message: common_pb2.Ciphertexts, count: int) -> list[int]:
    """Exactly `count` ciphertexts under this key (key id and count checked before any parsing)."""
    check_key_id(public_key.key_id, bytes(message.key_id))
    if len(message.values) != count:
        raise invalid(f"{len(message.values)} ciphertexts, expected {count}")
    return [ct.from_bytes(public_key.paillier, value) for value in message.values]


def batch_to_proto(batch: BatchPartialDecryption) -> threshold_sum_pb2.PartialDecryptions:
    return threshold_sum_pb2.PartialDecryptions(values=[int_to_bytes(v) for v in batch.values],
                                                challenge=int_to_bytes(batch.challenge),
                                                response=int_to_bytes(batch.response),
                                                commitment_a=int_to_bytes(a) if (a := _commitment(batch, 0)) else b"",
                                                commitment_b=int_to_bytes(b) if (b := _commitment(batch, 1)) else b"")


def _commitment(batch: BatchPartialDecryption, which: int) -> int:
    return batch.commitments[which] if batch.commitments is not None else 0


def batch_from_proto(public_key: ThresholdPublicKey, holder: int, message: threshold_sum_pb2.PartialDecryptions,
                     count: int) -> BatchPartialDecryption:
    """Sizes checked before any arithmetic; the proof is checked by `verify_batch`."""
    if len(message.values) != count:
        raise invalid(f"{len(message.values)} partial decryptions for {count} ciphertexts")
    max_bytes = 4 * ct.ciphertext_length(public_key.paillier)  # z is longer than n²
    committed = bool(message.commitment_a or message.commitment_b)
    commitments = [("commitment a", message.commitment_a), ("commitment b", message.commitment_b)] if committed else []
    for name, field in [("value", v) for v in message.values] + [("challenge", message.challenge),
                                                                   ("response", message.response)] + commitments:
        if not 0 < len(field) <= max_bytes:
            raise invalid(f"partial decryption field {name} has a wrong length")
    return BatchPartialDecryption(holder, tuple(int.from_bytes(v, "big") for v in message.values),
                                  int.from_bytes(message.challenge, "big"), int.from_bytes(message.response, "big"),
                                  (int.from_bytes(message.commitment_a, "big"), int.from_bytes(message.commitment_b, "big"))
                                  if committed else None)
