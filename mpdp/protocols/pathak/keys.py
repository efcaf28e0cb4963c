"""Public keys as Pathak's messages carry them, validated on arrival: Paillier keys (ξ, and Charlie's ζ with
Π^mod and Π^fac), Charlie's comparison key, and the leader's ring-Pedersen parameters (with Π^prm for Charlie)."""

from __future__ import annotations

from functools import lru_cache

from mpdp.cryptocore.comparison.elgamal import ElGamalKeyPair, ElGamalPublicKey
from mpdp.cryptocore.errors import InvalidKey
from mpdp.cryptocore.paillier.keypair import KeyPair, PublicKey
from mpdp.cryptocore.proofs import factor_proof, modulus_proof, ring_pedersen
from mpdp.cryptocore.proofs.ring_pedersen import RingPedersen
from mpdp.proto.v1 import pathak_pb2
from mpdp.protocols.pathak.encoding import MAX_INTEGER_BYTES, int_from_signed_bytes, signed_bytes
from mpdp.sessions.errors import invalid
from mpdp.sessions.integers import int_to_bytes

FACTOR_PROOF_CONTEXT = b"mpdp/pathak/zeta"


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


@lru_cache(maxsize=4)
def factor_proof_message(p: int, q: int, setup: RingPedersen) -> pathak_pb2.FactorProof:
    proof = factor_proof.prove(p, q, setup, FACTOR_PROOF_CONTEXT)
    return pathak_pb2.FactorProof(commitments=[int_to_bytes(value) for value in proof.commitments()],
                                  **{name: signed_bytes(getattr(proof, name))
                                     for name in factor_proof.RESPONSES})


def curator_keys_message(zeta: KeyPair, comparison: ElGamalKeyPair, setup: RingPedersen) -> pathak_pb2.CuratorKeys:
    """ζ with Π^mod, and Π^fac against the leader's ring-Pedersen parameters (each made once per key and process)."""
    return pathak_pb2.CuratorKeys(zeta=proven_key_message(zeta), comparison_key=comparison.public.to_bytes(),
                                  factor_proof=factor_proof_message(zeta.private.p, zeta.private.q, setup))


def ring_pedersen_message(setup: RingPedersen, proof: ring_pedersen.ParameterProof | None = None
                          ) -> pathak_pb2.RingPedersenParameters:
    message = pathak_pb2.RingPedersenParameters(modulus=int_to_bytes(setup.modulus), s=int_to_bytes(setup.s),
                                                t=int_to_bytes(setup.t))
    if proof is not None:
        message.commitments.extend(int_to_bytes(value) for value in proof.commitments)
        message.responses.extend(int_to_bytes(value) for value in proof.responses)
    return message


def ring_pedersen_from_message(body: pathak_pb2.RingPedersenParameters, key_bits: int,
                               proven: bool = False) -> RingPedersen:
    """The leader's parameters: the cheap checks; with `proven` (Charlie, whose secret they must hide) also
    Π^prm, once per parameters and process."""
    if proven and not len(body.commitments) == len(body.responses) == ring_pedersen.ROUNDS:
        raise invalid(f"ring-Pedersen parameters need a proof of {ring_pedersen.ROUNDS} rounds")  # before parsing
    width = (key_bits + 7) // 8
    values = (body.modulus, body.s, body.t, *body.commitments, *body.responses)
    if any(len(value) > width for value in values):
        raise invalid(f"ring-Pedersen values have at most {width} bytes")
    setup = RingPedersen(*(int.from_bytes(value, "big") for value in (body.modulus, body.s, body.t)))
    setup.check(key_bits)
    if proven:
        _check_parameter_proof(setup, tuple(int.from_bytes(a, "big") for a in body.commitments),
                               tuple(int.from_bytes(z, "big") for z in body.responses), key_bits)
    return setup


@lru_cache(maxsize=16)
def _check_parameter_proof(setup: RingPedersen, commitments: tuple[int, ...], responses: tuple[int, ...],
                           key_bits: int) -> None:
    ring_pedersen.verify(setup, ring_pedersen.ParameterProof(commitments, responses), key_bits)


def check_factor_proof(zeta: PublicKey, body: pathak_pb2.FactorProof, setup: RingPedersen) -> None:
    """Π^fac for ζ against the parties' parameters: both of Charlie's factors are large (once per key, parameters
    and process)."""
    if len(body.commitments) != 5 or any(len(value) > MAX_INTEGER_BYTES for value in body.commitments):
        raise invalid("a no-small-factor proof has five commitments")
    values = {name: int_from_signed_bytes(getattr(body, name)) for name in factor_proof.RESPONSES}
    proof = factor_proof.FactorProof(*(int.from_bytes(value, "big") for value in body.commitments), **values)
    _check_factor_proof(zeta.n, proof, setup)


@lru_cache(maxsize=16)
def _check_factor_proof(n: int, proof: factor_proof.FactorProof, setup: RingPedersen) -> None:
    factor_proof.verify(n, proof, setup, FACTOR_PROOF_CONTEXT)


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
