"""A key holder's answer to a threshold sum's decryption request, for every protocol a party holds a
key share in: every contribution checked and C computed from them (crypto.md, "Bound decryption"), then
one partial decryption per ciphertext and one proof for all of them."""

from __future__ import annotations

from collections.abc import Callable

from mpdp.proto.v1 import threshold_sum_pb2
from mpdp.sessions.errors import precondition
from mpdp.threshold_sum import decryption
from mpdp.threshold_sum.binding import SumSlot, signature_for
from party.resources import PartyResources


def proven_partials(own: PartyResources, request: threshold_sum_pb2.DecryptionRequest, slot: SumSlot, parties: int,
                    min_contributors: int, ciphertext_count: int,
                    proof_context: bytes,
                    well_formed: Callable[[threshold_sum_pb2.DecryptionRequest], None] | None = None
                    ) -> threshold_sum_pb2.PartialDecryptions:
    if own.key_share is None:
        raise precondition(f"party {own.id} holds no key share")
    public_key = own.public_key
    holders = len(public_key.verification_keys)
    # Two disjoint groups could each decrypt a different subset of one slot. The full condition, 2t > ℓ + c with the
    # shares one principal holds, needs the layout: a serving holder checks it at start (serve.check_quorums).
    if 2 * public_key.threshold <= holders:
        raise precondition(f"a key with t = {public_key.threshold} of {holders} holders does not bound decryption; "
                           f"it needs t > {holders // 2}")
    aggregate, _ = decryption.check_request(public_key, request, slot, own.contribution_keys, parties,
                                            min_contributors, ciphertext_count, well_formed)
    return decryption.partial_decryptions(own.key_share, aggregate, proof_context)


def signed(own: PartyResources, slot: SumSlot, key_id: bytes,
           ciphertexts: list[bytes]) -> threshold_sum_pb2.ContributionSignature:
    """The party's signature on its contribution to `slot` (empty in a plaintext deployment)."""
    return signature_for(own.contribution_keys, slot, own.id, key_id, ciphertexts)
