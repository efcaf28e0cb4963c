"""A key holder's answer to a threshold sum's decryption request, for every protocol a party holds a
key share in: cheap checks first, then one partial decryption per ciphertext and one proof for all of them."""

from __future__ import annotations

from cryptocore.key_checks import check_key_id
from mpdp_proto.v1 import threshold_sum_pb2
from party.resources import PartyResources
from sessions.errors import precondition
from sessions.integers import int_to_bytes
from threshold_sum import decryption


def proven_partials(own: PartyResources, request: threshold_sum_pb2.DecryptionRequest, parties: int,
                    min_contributors: int, ciphertext_count: int,
                    proof_context: bytes) -> threshold_sum_pb2.PartialDecryptions:
    if own.key_share is None:
        raise precondition(f"party {own.id} holds no key share")
    public_key = own.public_key
    check_key_id(public_key.key_id, bytes(request.aggregate.key_id))
    ciphertexts = decryption.check_request(public_key, request, parties, min_contributors, ciphertext_count)
    partials = decryption.partial_decryptions(own.key_share, ciphertexts, proof_context)
    if own.fault == "tamper-partial-decryption":  # test mode only: a share whose proof must fail
        partials.values[0] = int_to_bytes(int.from_bytes(partials.values[0], "big") * 2 % public_key.paillier.nsquare)
    return partials
