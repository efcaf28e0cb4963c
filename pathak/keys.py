"""Public keys as Pathak's messages carry them, validated on arrival: Paillier keys (ξ, and Charlie's ζ with
Π^mod) and Charlie's comparison key."""

from __future__ import annotations

from functools import lru_cache

from cryptocore import modulus_proof
from cryptocore.elgamal import ElGamalKeyPair, ElGamalPublicKey
from cryptocore.errors import InvalidKey
from cryptocore.paillier import KeyPair, PublicKey
from mpdp_proto.v1 import pathak_pb2
from sessions.integers import int_to_bytes


def public_key_message(key: PublicKey) -> pathak_pb2.PaillierPublicKeyMessage:
    return pathak_pb2.PaillierPublicKeyMessage(n=int_to_bytes(key.n), hs=int_to_bytes(key.hs))


@lru_cache(maxsize=4)
def _proof_message(p: int, q: int) -> pathak_pb2.ModulusProof:
    proof = modulus_proof.prove(p, q)
    return pathak_pb2.ModulusProof(w=int_to_bytes(proof.w), selectors=list(proof.selectors),
                                   fourth_roots=[int_to_bytes(x) for x in proof.fourth_roots],
                                   nth_roots=[int_to_bytes(z) for z in proof.nth_roots])


def proven_key_message(keypair: KeyPair) -> pathak_pb2.PaillierPublicKeyMessage:
    """The owner's public key with Π^mod for its modulus (made once per key and process)."""
    message = public_key_message(keypair.public)
    message.modulus_proof.CopyFrom(_proof_message(keypair.private.p, keypair.private.q))
    return message


def curator_keys_message(zeta: KeyPair, comparison: ElGamalKeyPair) -> pathak_pb2.CuratorKeys:
    return pathak_pb2.CuratorKeys(zeta=proven_key_message(zeta), comparison_key=comparison.public.to_bytes())


def comparison_key_from_message(body: pathak_pb2.CuratorKeys) -> ElGamalPublicKey:
    """Charlie's comparison key, checked in public: an element other than 1 of the group of order q."""
    return ElGamalPublicKey.from_bytes(bytes(body.comparison_key))


def public_key_from_message(body, key_bits: int, proven: bool = False) -> PublicKey:
    """A peer's public key, validated (crypto.md): the session's size, odd, no small factor, h_s a unit other than
    ±1; with `proven`, also a Paillier–Blum modulus by the message's Π^mod (once per modulus and process)."""
    key = PublicKey.from_integers(int.from_bytes(body.n, "big"), int.from_bytes(body.hs, "big"), key_bits)
    if proven:
        proof = body.modulus_proof
        if not len(proof.fourth_roots) == len(proof.selectors) == len(proof.nth_roots) == modulus_proof.ROUNDS:
            raise InvalidKey(f"Charlie's key needs a modulus proof of {modulus_proof.ROUNDS} rounds")  # before parsing
        modulus_proof.verify(key.n, modulus_proof.ModulusProof(
            int.from_bytes(proof.w, "big"), tuple(int.from_bytes(x, "big") for x in proof.fourth_roots),
            tuple(proof.selectors), tuple(int.from_bytes(z, "big") for z in proof.nth_roots)))
    return key
