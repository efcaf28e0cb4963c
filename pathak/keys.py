"""Paillier public keys as Pathak's messages carry them, validated on arrival."""

from __future__ import annotations

from cryptocore.paillier import PublicKey
from mpdp_proto.v1 import pathak_pb2
from sessions.integers import int_to_bytes


def public_key_message(key: PublicKey) -> pathak_pb2.PaillierPublicKeyMessage:
    return pathak_pb2.PaillierPublicKeyMessage(n=int_to_bytes(key.n), hs=int_to_bytes(key.hs))


def public_key_from_message(body, key_bits: int) -> PublicKey:
    """A peer's public key, validated (crypto.md): the session's size, odd, h_s a unit other than ±1."""
    return PublicKey.from_integers(int.from_bytes(body.n, "big"), int.from_bytes(body.hs, "big"), key_bits)
