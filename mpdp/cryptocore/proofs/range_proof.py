"""A sender's proof that each of its Paillier plaintexts lies in a public range [0, L] (docs/malicious-party-du.md).

The value is the weighted sum of m = ⌊log₂ L⌋ + 1 bits with weights w_j = ⌊(L + 2^j) / 2^(j+1)⌋: these add up to L
and every subset sum is a value of [0, L], every value of [0, L] is one (greedy from the largest weight),
so no second proof for the upper end is needed. Each bit is a DJN ciphertext with a membership proof over {0, 1}
(`membership_proof`, verified in one random combination per sender); the verifier derives the value's ciphertext
itself as Π Enc(b_j)^(w_j), so there is nothing to prove about it: it encrypts Σ w_j·b_j ∈ [0, L] by construction.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from mpdp.cryptocore.arithmetic.multi_exponent import multi_powmod
from mpdp.cryptocore.proofs import membership_proof as mp

BIT = (0, 1)


def weights(bound: int) -> list[int]:
    """w_j for [0, bound], largest first; none for bound 0."""
    if bound < 0:
        raise ValueError("a range's upper end is ≥ 0")
    return [(bound + (1 << j)) >> (j + 1) for j in range(bound.bit_length())]


def bits_of(value: int, bound: int) -> list[int]:
    """Greedy from the largest weight: each w_j ≤ 1 + Σ_{i>j} w_i, so the remainder always fits the rest."""
    if not 0 <= value <= bound:
        raise ValueError(f"{value} is outside [0, {bound}]")
    bits = []
    for weight in weights(bound):
        bits.append(int(value >= weight))
        value -= weight * bits[-1]
    return bits


@dataclass(frozen=True)
class Proven:
    """The sender's side: its bit ciphertexts and proofs, the derived value ciphertexts and their DJN randomness."""
    bit_ciphertexts: list[int]
    proofs: list[mp.MembershipProof]
    values: list[int]  # Π Enc(b_j)^(w_j), one per value, as the verifier derives them
    randomness: list[int]  # Σ w_j·r_j: values[i] = (1 + x_i·n)·h_s^randomness[i]


def derive(key: mp.ProofKey, bit_ciphertexts: Sequence[int], bounds: Sequence[int]) -> list[int]:
    """Each value's ciphertext from its bits' (shapes checked by the caller)."""
    values, start = [], 0
    for bound in bounds:
        w = weights(bound)
        chunk = bit_ciphertexts[start:start + len(w)]
        values.append(int(multi_powmod(chunk, w, key.nsquare)) if w else 1)  # bound 0: Enc(0) with r = 0
        start += len(w)
    return values


def digit_count(bounds: Sequence[int]) -> int:
    return sum(bound.bit_length() for bound in bounds)


def prove(key: mp.ProofKey, values: Sequence[int], bounds: Sequence[int], context: bytes) -> Proven:
    """By the sender: bits of each values[i] ∈ [0, bounds[i]], encrypted and proven."""
    if len(values) != len(bounds):
        raise ValueError("one bound per value")
    picks = [bit for value, bound in zip(values, bounds) for bit in bits_of(value, bound)]
    r = [secrets.randbits(key.randomness_bits) for _ in picks]
    ciphertexts, proofs = mp.encrypt_and_prove(key, [BIT] * len(picks), picks, context, r)
    randomness, start = [], 0
    for bound in bounds:
        w = weights(bound)
        randomness.append(sum(weight * rj for weight, rj in zip(w, r[start:start + len(w)])))
        start += len(w)
    return Proven(ciphertexts, proofs, derive(key, ciphertexts, bounds), randomness)


def verify(key: mp.ProofKey, bit_ciphertexts: Sequence[int], proofs: Sequence[mp.MembershipProof],
           bounds: Sequence[int], context: bytes) -> list[int]:
    """Raises MembershipProofInvalid unless every bit is proven; returns each value's ciphertext (in [0, bound])."""
    if len(bit_ciphertexts) != digit_count(bounds):
        raise mp.MembershipProofInvalid(f"{len(bit_ciphertexts)} bit ciphertexts for {digit_count(bounds)} bits")
    mp.verify(key, bit_ciphertexts, [BIT] * len(bit_ciphertexts), proofs, context)
    return derive(key, bit_ciphertexts, bounds)
