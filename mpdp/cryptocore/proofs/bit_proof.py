"""A key owner's proof that Paillier ciphertexts encrypt bits: for each, an OR of two proofs that c·(1+n)^(−β) is
an n-th residue, β = 0 or 1 (Cramer–Damgård–Schoenmakers), made non-interactive by hashing the key id, a context,
the ciphertext and both commitments.

The owner needs no record of its randomness: with p and q it takes the n-th root of c·(1+n)^(−b) itself
(`plaintext_opening`). Per ciphertext the owner needs two n-th powers of random units (made while idle:
`prepare_while_idle`), the verifier two n-th powers and two 128-bit powers; n-th powers share their exponent and
run on every core (`shared_exponent`).

Soundness: a ciphertext of m ∉ {0, 1} modulo a prime factor q > 2^128 fixes both challenges modulo q once the
commitments are fixed, so the hash must hit their sum: 2^−128 per try. Π^mod (`modulus_proof`) shows n = p·q, and
Π^fac (`factor_proof`) that both p and q exceed 2^638 at 2048 bits (2^126 for 1024-bit test keys), so this holds
modulo each: without Π^fac a factor just above 2^16 would let an owner forge a proof modulo it in about 2^17 tries.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass

import gmpy2

from mpdp.cryptocore.arithmetic.shared_exponent import powmod_all
from mpdp.cryptocore.errors import CryptoError
from mpdp.cryptocore.keys.key_checks import length_prefixed_digest
from mpdp.cryptocore.paillier import ciphertext as ct
from mpdp.cryptocore.paillier import nth_powers
from mpdp.cryptocore.paillier.keypair import KeyPair, PublicKey
from mpdp.cryptocore.proofs.plaintext_opening import open_ciphertext, unblinded

CHALLENGE_BITS = 128
TAG = b"mpdp/paillier-bit-proof/v1"


class BitProofInvalid(CryptoError):
    """A bit proof does not verify."""


@dataclass(frozen=True)
class BitProof:
    challenges: tuple[int, int]  # e_0, e_1 (128 bits each)
    responses: tuple[int, int]  # z_0, z_1 (units mod n)


def _challenge(public: PublicKey, context: bytes, ciphertext: int, commitments: tuple[int, int]) -> int:
    width = 2 * ct.modulus_bytes(public.paillier)
    digest = length_prefixed_digest(
        (TAG, public.key_id, context, *(value.to_bytes(width, "big") for value in (ciphertext, *commitments))))
    return int.from_bytes(digest[:CHALLENGE_BITS // 8], "big")


def _fresh_pairs(n: int, count: int) -> list[tuple[int, int]]:
    units = [ct.random_unit(n) for _ in range(count)]
    return list(zip(units, powmod_all(units, n, n * n)))


def _take_pairs(n: int, count: int) -> list[tuple[int, int]]:
    """(s, s^n mod n²) pairs, each used once: prepared ones first."""
    taken = nth_powers.rooted_pool_for(n).take_up_to(count)
    return taken + _fresh_pairs(n, count - len(taken))


def prepare_while_idle(n: int, count: int) -> None:
    """In a background thread, make up to `count` pairs for the owner's next proofs (they depend on n alone)."""
    pool = nth_powers.rooted_pool_for(n)
    wanted = max(0, min(count, nth_powers.MAX_PREPARED) - len(pool))
    if wanted:
        threading.Thread(target=lambda: pool.add(_fresh_pairs(n, wanted)), name="bit-proof commitments",
                         daemon=True).start()


def prove_bits(keypair: KeyPair, ciphertexts: list[int], bits: list[int], context: bytes) -> list[BitProof]:
    """By the owner: one proof per ciphertext that it encrypts 0 or 1 (`bits` are the plaintexts)."""
    if any(bit not in (0, 1) for bit in bits) or len(bits) != len(ciphertexts):
        raise ValueError("one plaintext bit per ciphertext")
    n = keypair.public.n
    nsquare = n * n
    count = len(ciphertexts)
    pairs = _take_pairs(n, 2 * count)
    masks = [unit for unit, _ in pairs[:count]]  # s: the real branch's commitment is s^n
    simulated = [unit for unit, _ in pairs[count:]]  # the other branch's response
    powers = [power for _, power in pairs]
    proofs = []
    for index, (ciphertext, bit) in enumerate(zip(ciphertexts, bits)):
        other = 1 - bit
        simulated_challenge = secrets.randbits(CHALLENGE_BITS)
        commitments = [0, 0]
        commitments[bit] = powers[index]
        commitments[other] = int(powers[count + index] *
                                 gmpy2.powmod(unblinded(n, ciphertext, other), -simulated_challenge, nsquare) % nsquare)
        total = _challenge(keypair.public, context, ciphertext, (commitments[0], commitments[1]))
        real_challenge = (total - simulated_challenge) % 2**CHALLENGE_BITS
        root = open_ciphertext(keypair, ciphertext, bit)
        challenges, responses = [0, 0], [0, 0]
        challenges[bit], challenges[other] = real_challenge, simulated_challenge
        responses[bit] = int(masks[index] * gmpy2.powmod(root, real_challenge, n) % n)
        responses[other] = simulated[index]
        proofs.append(BitProof((challenges[0], challenges[1]), (responses[0], responses[1])))
    return proofs


def verify_bits(public: PublicKey, ciphertexts: list[int], proofs: list[BitProof], context: bytes) -> None:
    """Raises BitProofInvalid unless every proof shows its ciphertext encrypts 0 or 1. Shapes first, then the
    2·len n-th powers on every core."""
    n = public.n
    nsquare = n * n
    if len(proofs) != len(ciphertexts):
        raise BitProofInvalid("one bit proof per ciphertext")
    for proof in proofs:
        if len(proof.challenges) != 2 or len(proof.responses) != 2 or \
                any(not 0 <= e < 2**CHALLENGE_BITS for e in proof.challenges) or \
                any(not 0 < z < n or gmpy2.gcd(z, n) != 1 for z in proof.responses):
            raise BitProofInvalid("a bit proof's challenges have 128 bits and its responses are units mod n")
    powers = powmod_all([z for proof in proofs for z in proof.responses], n, nsquare)
    for index, (ciphertext, proof) in enumerate(zip(ciphertexts, proofs)):
        commitments = tuple(
            int(powers[2 * index + beta] * gmpy2.powmod(unblinded(n, ciphertext, beta), -proof.challenges[beta], nsquare)
                % nsquare) for beta in (0, 1))
        expected = _challenge(public, context, ciphertext, (commitments[0], commitments[1]))
        if (proof.challenges[0] + proof.challenges[1]) % 2**CHALLENGE_BITS != expected:
            raise BitProofInvalid("a ciphertext is not shown to encrypt 0 or 1")
