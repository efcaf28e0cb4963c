"""A key holder's part of a threshold sum: check the aggregator's request, then one proven partial
decryption per ciphertext with one proof for all (at most once per session; the caller's state machine sees to that)."""

from __future__ import annotations

from cryptocore.threshold import KeyShare, ThresholdPublicKey
from mpdp_proto.v1 import threshold_sum_pb2
from sessions.errors import invalid, precondition
from threshold_sum.codec import batch_to_proto, ciphertexts_from_proto


def check_request(public_key: ThresholdPublicKey, request: threshold_sum_pb2.DecryptionRequest, parties: int,
                  min_contributors: int, ciphertext_count: int) -> list[int]:
    """Cheap checks before any work; returns the parsed aggregate."""
    contributors = list(request.contributors)
    if len(set(contributors)) != len(contributors) or not all(1 <= c <= parties for c in contributors):
        raise invalid("contributor set names unknown or repeated parties")
    if len(contributors) < min_contributors:
        raise precondition(f"insufficient noise: {len(contributors)} contributors, need {min_contributors}")
    return ciphertexts_from_proto(public_key, request.aggregate, ciphertext_count)


def partial_decryptions(key_share: KeyShare, ciphertexts: list[int],
                        proof_context: bytes) -> threshold_sum_pb2.PartialDecryptions:
    """One share per ciphertext and one proof for the whole vector (crypto.md, "Batched proofs")."""
    return batch_to_proto(key_share.partial_decrypt_batch(ciphertexts, proof_context))
