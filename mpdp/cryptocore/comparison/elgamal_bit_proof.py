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

import secrets
import threading
from collections import deque
from dataclasses import dataclass

import gmpy2

from mpdp.cryptocore.comparison.elgamal import Ciphertext, ElGamalPublicKey, g_power, h_power, random_exponent
from mpdp.cryptocore.comparison.group import ELEMENT_BYTES, G, P, Q
from mpdp.cryptocore.errors import CryptoError
from mpdp.cryptocore.keys.key_checks import length_prefixed_digest

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
    digest = length_prefixed_digest((DOMAIN, public.key_id, context, *(
        int(v).to_bytes(ELEMENT_BYTES, "big") for v in (ciphertext.a, ciphertext.b, *commitments))))
    return int.from_bytes(digest[:CHALLENGE_BITS // 8], "big")


@dataclass(frozen=True)
class Prepared:
    """One bit's encryption and proof, all but what depends on the bit: every power from the fixed-base tables,
    drawn uniformly and used once (a reused mask w gives away s, and with it the bit)."""

    randomness: int  # s
    g_s: int
    h_s: int
    mask: int  # w, the real branch's commitment exponent
    g_w: int
    h_w: int
    simulated_challenge: int
    simulated_response: int
    g_t: int  # t = z − s·e: the simulated branch's commitments are g^t and h^t·g^(∓e)
    h_t: int
    g_e: int
    g_minus_e: int


def prepare(public: ElGamalPublicKey, randomness: int | None = None) -> Prepared:
    s = random_exponent() if randomness is None else randomness
    mask, challenge, response = random_exponent(), secrets.randbelow(2**CHALLENGE_BITS), random_exponent()
    t = (response - s * challenge) % Q
    return Prepared(s, g_power(s), h_power(public, s), mask, g_power(mask), h_power(public, mask), challenge,
                    response, g_power(t), h_power(public, t), g_power(challenge), g_power(-challenge % Q))


def _prove_prepared(public: ElGamalPublicKey, ciphertext: Ciphertext, bit: int, prepared: Prepared,
                    context: bytes) -> BitProof:
    if bit not in (0, 1):
        raise ValueError("the plaintext is a bit")
    other = 1 - bit
    commitments = [0, 0, 0, 0]  # A_0, B_0, A_1, B_1
    commitments[2 * bit], commitments[2 * bit + 1] = prepared.g_w, prepared.h_w
    # The simulated branch solved for its commitments: A = g^z·a^−e = g^(z − s·e),
    # B = h^z·(b/g^other)^−e = h^(z − s·e)·g^(−(bit − other)·e).
    commitments[2 * other] = prepared.g_t
    commitments[2 * other + 1] = prepared.h_t * (prepared.g_minus_e if bit else prepared.g_e) % P
    total = _challenge(public, context, ciphertext, commitments)
    real_challenge = (total - prepared.simulated_challenge) % 2**CHALLENGE_BITS
    challenges, responses = [0, 0], [0, 0]
    challenges[bit], challenges[other] = real_challenge, prepared.simulated_challenge
    responses[bit] = (prepared.mask + real_challenge * prepared.randomness) % Q
    responses[other] = prepared.simulated_response
    return BitProof((challenges[0], challenges[1]), (responses[0], responses[1]))


def prove(public: ElGamalPublicKey, ciphertext: Ciphertext, bit: int, randomness: int, context: bytes) -> BitProof:
    """By the encrypter, who knows s (`ciphertext` = (g^s, g^bit·h^s))."""
    return _prove_prepared(public, ciphertext, bit, prepare(public, randomness), context)


_pools: dict[bytes, deque[Prepared]] = {}
MAX_PREPARED = 4096  # per key: a K = 32 tournament's bits and then some (about 2 MB)


def encrypt_and_prove(public: ElGamalPublicKey, bit: int, context: bytes) -> tuple[Ciphertext, BitProof]:
    """Enc(bit) and its proof, from a prepared item if this process holds one (each taken once)."""
    try:
        prepared = _pools.get(public.key_id, deque()).popleft()  # atomic: each item is taken once
    except IndexError:
        prepared = prepare(public)
    ciphertext = Ciphertext(prepared.g_s, prepared.h_s).plus_constant(bit)
    return ciphertext, _prove_prepared(public, ciphertext, bit, prepared, context)


def prepare_while_idle(public: ElGamalPublicKey, count: int) -> None:
    """In a background thread, prepare up to `count` bits' encryptions and proofs for the owner's next tournament."""
    pool = _pools.setdefault(public.key_id, deque())
    wanted = max(0, min(count, MAX_PREPARED) - len(pool))
    if wanted:
        threading.Thread(target=lambda: pool.extend(prepare(public) for _ in range(wanted)),
                         name="bit encryptions", daemon=True).start()


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
