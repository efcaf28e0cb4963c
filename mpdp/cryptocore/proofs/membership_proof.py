"""A sender's proof that each of its Paillier ciphertexts encrypts one value of a public list (a one-hot vote at
a packed position, or a bit): an OR over the list (Cramer–Damgård–Schoenmakers) of proofs that V·(1+n)^(−m) is
h_s^r, made non-interactive by hashing the key id, a context (protocol, session, sender), the ciphertext's index,
the ciphertext, the list and every commitment into a 128-bit challenge (docs/malicious-party.md).

Encryption is DJN's V = (1 + m·n)·h_s^r (`fast_encryption`) with the sender keeping r, so every branch costs the
sender one fixed-base exponentiation h_s^w (the simulated ones included: a_c = h_s^w·(1+n)^((m_c − m)·e_c)),
and none needs the factorisation. The verifier checks all branches of all ciphertexts of one sender in one
random linear combination with secret 64-bit coefficients: one exponentiation of h_s plus a multi-exponentiation.

Soundness (per branch c, in Z*_{n²} modulo the n-th residues, ≅ Z_n): h_s^z = a_c·u_c^e with u_c = V·(1+n)^(−m_c)
reads 0 = [a_c] + e·[u_c]. If V's plaintext is in no branch, every [u_c] ≠ 0 modulo a prime factor (> 2^638 by
Π^fac), so every e_c is fixed by the commitments and their sum must hit the hash: 2^−128 per try. A false branch
survives the combination with probability ≤ 2^−64, and each failure names the sender. This needs h_s to be an
n-th residue, which the dealer makes it (h_s = h^n) and which a threshold decryption of h_s to 0 confirms.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import gmpy2

from mpdp.cryptocore.arithmetic.fixed_base import FixedBaseTable
from mpdp.cryptocore.arithmetic.multi_exponent import multi_powmod
from mpdp.cryptocore.errors import CryptoError
from mpdp.cryptocore.keys.key_checks import length_prefixed_digest

CHALLENGE_BITS = 128
STATISTICAL_BITS = 128  # z = k + e·r hides r to 2^−128
BATCH_BITS = 64
TAG = b"mpdp/paillier-membership-proof/v1"
MAX_CHOICES = 1_000
CHUNK = 8_192  # bases per multi-exponentiation (the bucket method keeps no table per base)


class PowerPairs(Protocol):
    """Pairs (x, h_s^x) made ahead of use, each handed out once (`precomputed_powers.PowerPool`)."""

    def randomness(self) -> tuple[int, int]: ...  # r below 2^randomness_bits, for an encryption

    def mask(self) -> tuple[int, int]: ...  # w below 2^mask_bits, for a branch's commitment


class MembershipProofInvalid(CryptoError):
    """A membership proof does not verify."""


@dataclass(frozen=True)
class MembershipProof:
    commitments: tuple[int, ...]  # a_c, one per listed value
    challenges: tuple[int, ...]  # e_c, 128 bits, summing to the hash modulo 2^128
    responses: tuple[int, ...]  # z_c ≥ 0, below 2^response_bits


@dataclass(frozen=True)
class ProofKey:
    """What a proof needs of the threshold key: n, h_s, its id."""
    n: int
    hs: int
    key_id: bytes

    @property
    def nsquare(self) -> int:
        return self.n * self.n

    @property
    def randomness_bits(self) -> int:
        return (self.n.bit_length() + 1) // 2  # DJN's r (`fast_encryption`)

    @property
    def mask_bits(self) -> int:
        return self.randomness_bits + CHALLENGE_BITS + STATISTICAL_BITS

    @property
    def response_bits(self) -> int:
        return self.mask_bits + 1


_tables: dict[tuple[int, int], FixedBaseTable] = {}
_tables_lock = threading.Lock()


def _table(key: ProofKey) -> FixedBaseTable:
    """h_s's table for exponents of mask_bits, one per key and process (about 21 MB at 2048 bits)."""
    with _tables_lock:
        table = _tables.get((key.n, key.hs))
        if table is None:
            table = _tables[(key.n, key.hs)] = FixedBaseTable(key.hs, key.nsquare, key.mask_bits, 8)
        return table


def _g_power(key: ProofKey, exponent: int) -> int:
    """(1 + n)^x mod n² = 1 + (x mod n)·n."""
    return 1 + (exponent % key.n) * key.n


def _width(key: ProofKey) -> int:
    return (key.nsquare.bit_length() + 7) // 8


def _challenge(key: ProofKey, context: bytes, index: int, ciphertext: int, choices: Sequence[int],
               commitments: Sequence[int]) -> int:
    width = _width(key)
    digest = length_prefixed_digest(
        (TAG, key.key_id, context, index.to_bytes(8, "big"), int(ciphertext).to_bytes(width, "big"),
         b"".join(int(m).to_bytes(width, "big") for m in choices),
         *(int(a).to_bytes(width, "big") for a in commitments)))
    return int.from_bytes(digest[:CHALLENGE_BITS // 8], "big")


def encrypt_and_prove(key: ProofKey, choices: Sequence[Sequence[int]], picks: Sequence[int],
                      context: bytes, randomness: Sequence[int] | None = None, powers: PowerPairs | None = None
                      ) -> tuple[list[int], list[MembershipProof]]:
    """By the sender: V_i = Enc(choices[i][picks[i]]) and a proof that V_i encrypts some value of choices[i].
    `randomness` (DJN r_i, below 2^randomness_bits) when the sender needs it afterwards; drawn here otherwise,
    with h_s^r and every h_s^w from `powers` when it holds them (made offline: no exponentiation here)."""
    if len(choices) != len(picks) or (randomness is not None and len(randomness) != len(picks)):
        raise ValueError("one pick (and one r) per list of choices")
    table, nsquare = _table(key), key.nsquare
    ciphertexts, proofs = [], []
    for index, (values, pick) in enumerate(zip(choices, picks)):
        if not 0 <= pick < len(values) <= MAX_CHOICES:
            raise ValueError("the pick must index its list of choices")
        chosen = values[pick]
        if randomness is None and powers is not None:
            r, hr = powers.randomness()
        else:
            r = secrets.randbits(key.randomness_bits) if randomness is None else int(randomness[index])
            if not 0 <= r < 1 << key.randomness_bits:
                raise ValueError("r outside DJN's range")
            hr = table.pow(r)
        ciphertext = int(_g_power(key, chosen) * hr % nsquare)
        commitments, challenges, masks = [0] * len(values), [0] * len(values), [0] * len(values)
        for branch, value in enumerate(values):
            if powers is not None:
                masks[branch], commitment = powers.mask()
            else:
                masks[branch] = secrets.randbits(key.mask_bits)
                commitment = table.pow(masks[branch])
            if branch != pick:
                challenges[branch] = secrets.randbits(CHALLENGE_BITS)
                commitment = commitment * _g_power(key, (value - chosen) * challenges[branch]) % nsquare
            commitments[branch] = int(commitment)
        total = _challenge(key, context, index, ciphertext, values, commitments)
        challenges[pick] = (total - sum(challenges)) % 2**CHALLENGE_BITS
        responses = tuple(w + r * e for w, e in zip(masks, challenges))
        ciphertexts.append(ciphertext)
        proofs.append(MembershipProof(tuple(commitments), tuple(challenges), responses))
    return ciphertexts, proofs


def _check_shapes(key: ProofKey, ciphertexts: Sequence[int], choices: Sequence[Sequence[int]],
                  proofs: Sequence[MembershipProof]) -> None:
    if not len(ciphertexts) == len(choices) == len(proofs):
        raise MembershipProofInvalid("one proof per ciphertext")
    nsquare, response_limit = key.nsquare, 1 << key.response_bits
    for values, proof in zip(choices, proofs):
        if not len(proof.commitments) == len(proof.challenges) == len(proof.responses) == len(values):
            raise MembershipProofInvalid("a proof has one commitment, challenge and response per listed value")
        if any(not 0 <= e < 2**CHALLENGE_BITS for e in proof.challenges) or \
                any(not 0 <= z < response_limit for z in proof.responses) or \
                any(not 0 < a < nsquare for a in proof.commitments):
            raise MembershipProofInvalid("a proof's numbers are out of range")


@dataclass(frozen=True)
class Claims:
    """One sender's ciphertexts, their lists and proofs, under one context; proof i hashes index first_index + i."""
    ciphertexts: Sequence[int]
    choices: Sequence[Sequence[int]]
    proofs: Sequence[MembershipProof]
    context: bytes
    first_index: int = 0


def verify(key: ProofKey, ciphertexts: Sequence[int], choices: Sequence[Sequence[int]],
           proofs: Sequence[MembershipProof], context: bytes) -> None:
    """Raises MembershipProofInvalid unless every ciphertext is shown to encrypt a value of its list. Shapes and
    hashes first, then one combination of every branch."""
    verify_all(key, [Claims(ciphertexts, choices, proofs, context)])


def verify_all(key: ProofKey, groups: Sequence[Claims]) -> None:
    """`verify` for several groups (senders, contexts) in one random linear combination: one exponentiation of h_s
    for all of them. A failure names no group: a caller that must name the sender checks the groups one by one."""
    for number, group in enumerate(groups):
        _check_shapes(key, group.ciphertexts, group.choices, group.proofs)
        for index, (ciphertext, values, proof) in enumerate(zip(group.ciphertexts, group.choices, group.proofs)):
            if sum(proof.challenges) % 2**CHALLENGE_BITS != _challenge(
                    key, group.context, group.first_index + index, ciphertext, values, proof.commitments):
                raise MembershipProofInvalid(f"ciphertext {group.first_index + index}: the challenges do not add up "
                                             "to the hash")
    n, nsquare = key.n, key.nsquare
    units = gmpy2.mpz(1)  # a number shares a factor with n = pq iff the product of all of them does
    for group in groups:
        for ciphertext, proof in zip(group.ciphertexts, group.proofs):
            units = units * ciphertext % n
            for a in proof.commitments:
                units = units * a % n
    if gmpy2.gcd(units, n) != 1:
        raise MembershipProofInvalid("a ciphertext or commitment is not a unit of Z*_(n²)")
    # Σ ρ·z against Π a^ρ · Π V^(Σ_c ρ·e) · (1+n)^(−Σ ρ·e·m_c)
    exponent, plaintext_part = 0, 0
    commitment_bases: list[int] = []
    commitment_weights: list[int] = []
    cipher_bases: list[int] = []
    cipher_weights: list[int] = []
    for group in groups:
        for values, proof in zip(group.choices, group.proofs):
            weight = 0
            for value, a, e, z in zip(values, proof.commitments, proof.challenges, proof.responses):
                rho = secrets.randbits(BATCH_BITS)
                exponent += rho * z
                plaintext_part += rho * e * value
                weight += rho * e
                commitment_bases.append(a)
                commitment_weights.append(rho)
            cipher_weights.append(weight)
        cipher_bases.extend(group.ciphertexts)
    right = _g_power(key, -plaintext_part)
    for bases, weights in ((commitment_bases, commitment_weights), (cipher_bases, cipher_weights)):
        for start in range(0, len(bases), CHUNK):  # bounds the multi-exponentiation's working set
            right = right * multi_powmod(bases[start:start + CHUNK], weights[start:start + CHUNK], nsquare) % nsquare
    if gmpy2.powmod(key.hs, exponent, nsquare) != right:
        raise MembershipProofInvalid("a ciphertext is not shown to encrypt one of its listed values")
