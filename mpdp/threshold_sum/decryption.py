"""A key holder's part of a threshold sum (crypto.md, "Bound decryption"): check every contribution of
the aggregator's request and compute C from them, before any exponentiation with the share; then one
proven partial decryption per ciphertext with one proof for all. At most one sum per slot: the caller's
state machine sees to that."""

from __future__ import annotations

from collections.abc import Callable

from mpdp.cryptocore.paillier import ciphertext as ct
from mpdp.cryptocore.paillier.threshold import KeyShare, ThresholdPublicKey
from mpdp.privacy.collusion import MIN_CONTRIBUTORS  # crypto.md: a single contribution is never decryptable
from mpdp.proto.v1 import threshold_sum_pb2
from mpdp.sessions.errors import invalid, precondition
from mpdp.threshold_sum.binding import ContributionKeys, SumSlot, authenticate
from mpdp.threshold_sum.codec import batch_to_proto, ciphertexts_from_proto


def _check_shape(request: threshold_sum_pb2.DecryptionRequest, parties: int, min_contributors: int,
                 ciphertext_count: int) -> None:
    """At least `min_contributors` distinct known senders, each once, each with `ciphertext_count` ciphertexts."""
    senders = [c.sender for c in request.contributions]
    if len(set(senders)) != len(senders):
        raise invalid("a contributor is counted twice")
    if not all(1 <= s <= parties for s in senders):
        raise invalid("the contributions name unknown parties")
    needed = max(MIN_CONTRIBUTORS, min_contributors)  # whatever τ a session names, never one party's vector alone
    if len(senders) < needed:
        raise precondition(f"insufficient noise: {len(senders)} contributors, need {needed}")
    for contribution in request.contributions:
        if len(contribution.ciphertexts.values) != ciphertext_count:
            raise invalid(f"party {contribution.sender} contributed {len(contribution.ciphertexts.values)} "
                          f"ciphertexts, expected {ciphertext_count}")


def _product(public_key: ThresholdPublicKey,
             request: threshold_sum_pb2.DecryptionRequest, ciphertext_count: int) -> tuple[list[int], list[int]]:
    vectors = [ciphertexts_from_proto(public_key, c.ciphertexts, ciphertext_count) for c in request.contributions]
    return [ct.add(public_key.paillier, *column) for column in zip(*vectors)], sorted(c.sender for c in request.contributions)


def aggregate_of(public_key: ThresholdPublicKey, request: threshold_sum_pb2.DecryptionRequest, parties: int,
                 min_contributors: int, ciphertext_count: int) -> tuple[list[int], list[int]]:
    """(C, S) of a request, for the role that combines the holders' answers: the cheap checks, then the
    product. Authenticates no one (the holders did; a different C fails their proofs)."""
    _check_shape(request, parties, min_contributors, ciphertext_count)
    return _product(public_key, request, ciphertext_count)


def check_request(public_key: ThresholdPublicKey, request: threshold_sum_pb2.DecryptionRequest, slot: SumSlot,
                  keys: ContributionKeys | None, parties: int, min_contributors: int, ciphertext_count: int,
                  well_formed: Callable[[threshold_sum_pb2.DecryptionRequest], None] | None = None
                  ) -> tuple[list[int], list[int]]:
    """(C, S) if every contribution is its sender's, for this slot; refused otherwise. The signatures are
    checked after the cheap checks and before C is computed (K ECDSA checks cost less than the product); then
    the protocol's own check that each contribution is well formed (`well_formed`: proofs, folds), if it has one."""
    _check_shape(request, parties, min_contributors, ciphertext_count)
    for contribution in request.contributions:
        authenticate(keys, slot, contribution.sender, bytes(contribution.ciphertexts.key_id),
                     list(contribution.ciphertexts.values), contribution.signature)
    if well_formed is not None:
        well_formed(request)
    return _product(public_key, request, ciphertext_count)


def partial_decryptions(key_share: KeyShare, ciphertexts: list[int],
                        proof_context: bytes) -> threshold_sum_pb2.PartialDecryptions:
    """One share per ciphertext and one proof for the whole vector (crypto.md, "Batched proofs")."""
    return batch_to_proto(key_share.partial_decrypt_batch(ciphertexts, proof_context))
