"""Stage 2 step 1's indicator as the wire carries it: the bit proofs of its entries, and what they are bound to."""

from __future__ import annotations

from mpdp.cryptocore.proofs.bit_proof import CHALLENGE_BITS, BitProof
from mpdp.proto.v1 import pathak_pb2


def indicator_context(session_id: str) -> bytes:
    """What Charlie's bit proofs are bound to: this session's indicator."""
    return b"pathak/indicator/" + session_id.encode()


def bit_proof_message(proof: BitProof, width: int) -> pathak_pb2.BitProof:
    challenge_width = CHALLENGE_BITS // 8
    return pathak_pb2.BitProof(challenge_0=proof.challenges[0].to_bytes(challenge_width, "big"),
                               challenge_1=proof.challenges[1].to_bytes(challenge_width, "big"),
                               response_0=proof.responses[0].to_bytes(width, "big"),
                               response_1=proof.responses[1].to_bytes(width, "big"))


def bit_proof_from_message(message: pathak_pb2.BitProof, width: int) -> BitProof | None:
    """The proof, or None if a field has the wrong length (checked before any arithmetic)."""
    challenge_width = CHALLENGE_BITS // 8
    fields = (message.challenge_0, message.challenge_1, message.response_0, message.response_1)
    if [len(field) for field in fields] != [challenge_width, challenge_width, width, width]:
        return None
    e0, e1, z0, z1 = (int.from_bytes(field, "big") for field in fields)
    return BitProof((e0, e1), (z0, z1))
