"""A proof that a comparison ciphertext encrypts 0 or 1: an OR of two Chaum–Pedersen proofs (Cramer, Damgård and
Schoenmakers), non-interactive by Fiat–Shamir and bound to a context.

For Enc(β) = (a, b) = (g^s, g^β·h^s), branch β′ claims log_g a = log_h (b / g^β′). The prover answers the true
branch with a fresh commitment and simulates the other: its challenge and response are drawn first and its
commitments solved for. Only e_0 + e_1 (mod 2^128) is fixed by the hash, so the two branches look alike. The
group has prime order q > 2^255, so two accepting transcripts for one commitment give the witness: sound up to
2^−128 per hash query.

Without it the key owner can encrypt values other than bits and make each c_i of a comparison an affine test
of the value holder's bits: log₂(ℓ + 1) bits per comparison instead of one (docs/protocols/pathak-comparison-key.md).

A proof is four 32-byte numbers: e_0, e_1 < 2^128 and z_0, z_1 < q. The prover knows s, so it makes every
power with the fixed-base tables of g and h (including the simulated branch's a^−e = g^−s·e); the verifier
needs four 128-bit exponentiations of the ciphertext's components per proof.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

import gmpy2

from cryptocore.comparison_group import ELEMENT_BYTES, G, P, Q
from cryptocore.elgamal import Ciphertext, ElGamalPublicKey, g_power, h_power, random_exponent
from cryptocore.errors import CryptoError

CHALLENGE_BITS = 128
NUMBER_BYTES = 32
PROOF_BYTES = 4 * NUMBER_BYTES
DOMAIN = b"mpdp/elgamal-bit-proof/v1"
G_INVERSE = int(gmpy2.invert(G, P))


class BitProofInvalid(CryptoError):
    """A comparison ciphertext is not shown to encrypt 0 or 1."""


@dataclass(frozen=True)
class BitProof:
    challenges: tuple[int, int]
    responses: tuple[int, int]

    def to_bytes(self) -> bytes:
        return b"".join(int(v).to_bytes(NUMBER_BYTES, "big") for v in (*self.challenges, *self.responses))

    @classmethod
    def from_bytes(cls, data: bytes) -> BitProof:
        """Length and ranges only."""
        if len(data) != PROOF_BYTES:
            raise BitProofInvalid(f"a bit proof is {PROOF_BYTES} bytes, got {len(data)}")
        e0, e1, z0, z1 = (int.from_bytes(data[i:i + NUMBER_BYTES], "big") for i in range(0, PROOF_BYTES, NUMBER_BYTES))
        if not (e0 < 2**CHALLENGE_BITS and e1 < 2**CHALLENGE_BITS and z0 < Q and z1 < Q):
            raise BitProofInvalid("a bit proof's challenges have 128 bits and its responses lie in Z_q")
        return cls((e0, e1), (z0, z1))


def _challenge(public: ElGamalPublicKey, context: bytes, ciphertext: Ciphertext, commitments: list[int]) -> int:
    digest = hashlib.sha256()
    for item in (DOMAIN, public.key_id, context, *(int(v).to_bytes(ELEMENT_BYTES, "big") for v in
                                                    (ciphertext.a, ciphertext.b, *commitments))):
        digest.update(len(item).to_bytes(4, "big"))
        digest.update(item)
    return int.from_bytes(digest.digest()[:CHALLENGE_BITS // 8], "big")


def prove(public: ElGamalPublicKey, ciphertext: Ciphertext, bit: int, randomness: int, context: bytes) -> BitProof:
    """By the encrypter, who knows s (`ciphertext` = (g^s, g^bit·h^s))."""
    if bit not in (0, 1):
        raise ValueError("the plaintext is a bit")
    other = 1 - bit
    simulated_challenge, simulated_response, mask = secrets.randbelow(2**CHALLENGE_BITS), random_exponent(), random_exponent()
    commitments = [0, 0, 0, 0]  # A_0, B_0, A_1, B_1
    commitments[2 * bit], commitments[2 * bit + 1] = g_power(mask), h_power(public, mask)
    # The simulated branch solved for its commitments: A = g^z·a^−e = g^(z − s·e),
    # B = h^z·(b/g^other)^−e = h^(z − s·e)·g^(−(bit − other)·e).
    exponent = (simulated_response - randomness * simulated_challenge) % Q
    commitments[2 * other] = g_power(exponent)
    commitments[2 * other + 1] = h_power(public, exponent) * g_power(-(bit - other) * simulated_challenge % Q) % P
    total = _challenge(public, context, ciphertext, commitments)
    real_challenge = (total - simulated_challenge) % 2**CHALLENGE_BITS
    challenges, responses = [0, 0], [0, 0]
    challenges[bit], challenges[other] = real_challenge, simulated_challenge
    responses[bit], responses[other] = (mask + real_challenge * randomness) % Q, simulated_response
    return BitProof((challenges[0], challenges[1]), (responses[0], responses[1]))


def verify(public: ElGamalPublicKey, ciphertext: Ciphertext, proof: BitProof, context: bytes) -> None:
    """Raises BitProofInvalid unless the proof shows the ciphertext encrypts 0 or 1. The ciphertext's components
    must already be known to lie in the group."""
    a_inverse, b = int(gmpy2.invert(ciphertext.a, P)), ciphertext.b
    commitments = []
    for branch in (0, 1):
        e, z = proof.challenges[branch], proof.responses[branch]
        shifted_inverse = int(gmpy2.invert(b * (G_INVERSE if branch else 1) % P, P))  # (b / g^branch)^−1
        a_term, b_term = gmpy2.powmod_base_list([a_inverse, shifted_inverse], e, P)
        commitments += [g_power(z) * a_term % P, h_power(public, z) * b_term % P]
    if (proof.challenges[0] + proof.challenges[1]) % 2**CHALLENGE_BITS != _challenge(public, context, ciphertext,
                                                                                      commitments):
        raise BitProofInvalid("a comparison ciphertext is not shown to encrypt 0 or 1")
