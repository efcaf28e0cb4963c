"""mpdp.cryptocore.dkg messages and public keys ↔ keygen.proto. Integers: big-endian two's complement."""

from __future__ import annotations

from mpdp.cryptocore.dkg.messages import BROADCAST, STAGES, Message
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.proto.v1 import keygen_pb2
from mpdp.sessions.errors import invalid

MAX_VALUE_BYTES = 8192 * 2 // 8 + 128  # a value of stage KEY_SHARES at the largest modulus, with room


def int_to_bytes(value: int) -> bytes:
    return int(value).to_bytes((int(value).bit_length() + 8) // 8, "big", signed=True)


def int_from_bytes(data: bytes) -> int:
    if not data or len(data) > MAX_VALUE_BYTES:
        raise invalid(f"an integer of {len(data)} bytes")
    return int.from_bytes(data, "big", signed=True)


def round_to_proto(message: Message) -> keygen_pb2.KeygenRound:
    return keygen_pb2.KeygenRound(stage=message.stage, attempt=message.attempt, round=message.round,
                                  broadcast=message.recipient == BROADCAST,
                                  values=[int_to_bytes(v) for v in message.values])


def round_from_proto(sender: int, receiver: int, body: keygen_pb2.KeygenRound) -> Message:
    if body.stage not in STAGES:
        raise invalid(f"unknown keygen stage {body.stage!r}")
    return Message(body.stage, body.attempt, body.round, sender, BROADCAST if body.broadcast else receiver,
                   tuple(int_from_bytes(v) for v in body.values))


def public_key_to_proto(public: ThresholdPublicKey, candidates_tried: int) -> keygen_pb2.KeygenPublicKey:
    return keygen_pb2.KeygenPublicKey(n=int_to_bytes(public.n), threshold=public.threshold,
                                      v=int_to_bytes(public.verification_base),
                                      verification_keys=[int_to_bytes(v) for v in public.verification_keys],
                                      hs=int_to_bytes(public.hs), candidates_tried=candidates_tried)


def public_key_from_proto(body: keygen_pb2.KeygenPublicKey) -> ThresholdPublicKey:
    """Validated as every public key is (ThresholdPublicKey's constructor)."""
    return ThresholdPublicKey(n=int_from_bytes(body.n), threshold=body.threshold,
                              verification_base=int_from_bytes(body.v),
                              verification_keys=tuple(int_from_bytes(v) for v in body.verification_keys),
                              hs=int_from_bytes(body.hs))
