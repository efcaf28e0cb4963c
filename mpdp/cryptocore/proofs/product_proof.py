"""A sender's proof that C encrypts a·x, given A = Enc(a) (public, plaintext unknown to the verifier) and
X = (1+n)^x·h_s^ρ (the sender knows x ≥ 0 and ρ), with C = A^x·h_s^σ (docs/malicious-party-du.md).

Σ-protocol (Cramer–Damgård–Nielsen's multiplication proof, DJN form), Fiat–Shamir over the key id, a context, the
index and every ciphertext: the sender draws k, u, v with CHALLENGE + STATISTICAL bits more than x, ρ, σ, sends
e and z = k + e·x, z_ρ = u + e·ρ, z_σ = v + e·σ over the integers; the verifier recomputes the commitments
T_1 = (1+n)^z·h_s^(z_ρ)·X^(−e) and T_2 = A^z·h_s^(z_σ)·C^(−e) and checks the hash.

Soundness in Z*_{n²} modulo the n-th residues (≅ Z_n; h_s is an n-th residue): two answers to e ≠ e' for the same
commitments give Δz ≡ Δe·x (mod n) and a·Δz ≡ Δe·c (mod n), so c ≡ a·x (mod n), Δe < 2^128 being invertible
modulo both prime factors (> 2^638 by Π^fac); a false statement passes with probability 2^−128 per try.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass

import gmpy2

from mpdp.cryptocore.errors import CryptoError
from mpdp.cryptocore.keys.key_checks import length_prefixed_digest
from mpdp.cryptocore.proofs import membership_proof as mp

TAG = b"mpdp/paillier-product-proof/v1"
SLACK_BITS = mp.CHALLENGE_BITS + mp.STATISTICAL_BITS


class ProductProofInvalid(CryptoError):
    """A product proof does not verify."""


@dataclass(frozen=True)
class ProductProof:
    challenge: int  # e, 128 bits
    z: int  # k + e·x
    z_rho: int  # u + e·ρ
    z_sigma: int  # v + e·σ


@dataclass(frozen=True)
class Limits:
    """Bit lengths of x and of the randomness exponents, public: they bound the responses and the verifier's work."""
    x_bits: int
    rho_bits: int
    sigma_bits: int

    def response_bits(self, witness_bits: int) -> int:
        return witness_bits + SLACK_BITS + 1


def _hs_power(key: mp.ProofKey, exponent: int) -> int:
    """h_s^y: the fixed-base table for the low mask_bits, a short exponentiation for the rest."""
    table = mp._table(key)
    low, high = exponent & ((1 << key.mask_bits) - 1), exponent >> key.mask_bits
    result = table.pow(low)
    if high:
        result = result * gmpy2.powmod(_hs_shifted(key), high, key.nsquare) % key.nsquare
    return int(result)


_shifted: dict[tuple[int, int], int] = {}


def _hs_shifted(key: mp.ProofKey) -> int:
    value = _shifted.get((key.n, key.hs))
    if value is None:
        value = _shifted[(key.n, key.hs)] = int(gmpy2.powmod(key.hs, 1 << key.mask_bits, key.nsquare))
    return value


def _challenge(key: mp.ProofKey, context: bytes, index: int, statement: tuple[int, int, int],
               commitments: tuple[int, int]) -> int:
    width = (key.nsquare.bit_length() + 7) // 8
    digest = length_prefixed_digest((TAG, key.key_id, context, index.to_bytes(8, "big"),
                                     *(int(v).to_bytes(width, "big") for v in (*statement, *commitments))))
    return int.from_bytes(digest[:mp.CHALLENGE_BITS // 8], "big")


def multiply(key: mp.ProofKey, a_ciphertext: int, x: int, sigma_bits: int | None = None) -> tuple[int, int]:
    """By the sender: C = A^x·h_s^σ for a fresh σ; returns (C, σ)."""
    sigma = secrets.randbits(sigma_bits or key.randomness_bits)
    return int(gmpy2.powmod(a_ciphertext, x, key.nsquare) * _hs_power(key, sigma) % key.nsquare), sigma


def prove(key: mp.ProofKey, limits: Limits, statements: Sequence[tuple[int, int, int]],
          witnesses: Sequence[tuple[int, int, int]], context: bytes) -> list[ProductProof]:
    """statements[i] = (A, X, C), witnesses[i] = (x, ρ, σ)."""
    nsquare, n = key.nsquare, key.n
    proofs = []
    for index, ((a, big_x, c), (x, rho, sigma)) in enumerate(zip(statements, witnesses, strict=True)):
        if not (0 <= x < 1 << limits.x_bits and 0 <= rho < 1 << limits.rho_bits and 0 <= sigma < 1 << limits.sigma_bits):
            raise ValueError("a witness exceeds its declared length")
        k, u, v = (secrets.randbits(bits + SLACK_BITS) for bits in (limits.x_bits, limits.rho_bits, limits.sigma_bits))
        t1 = (1 + (k % n) * n) * _hs_power(key, u) % nsquare
        t2 = gmpy2.powmod(a, k, nsquare) * _hs_power(key, v) % nsquare
        e = _challenge(key, context, index, (a, big_x, c), (t1, int(t2)))
        proofs.append(ProductProof(e, k + e * x, u + e * rho, v + e * sigma))
    return proofs


def verify(key: mp.ProofKey, limits: Limits, statements: Sequence[tuple[int, int, int]],
           proofs: Sequence[ProductProof], context: bytes) -> None:
    """Raises ProductProofInvalid unless every C_i encrypts a_i·x_i. Lengths first (they bound the work)."""
    if len(statements) != len(proofs):
        raise ProductProofInvalid("one product proof per statement")
    bounds = (limits.response_bits(limits.x_bits), limits.response_bits(limits.rho_bits),
              limits.response_bits(limits.sigma_bits))
    for proof in proofs:
        if not 0 <= proof.challenge < 1 << mp.CHALLENGE_BITS or \
                any(not 0 <= value < 1 << bits for value, bits in zip((proof.z, proof.z_rho, proof.z_sigma), bounds)):
            raise ProductProofInvalid("a product proof's numbers are out of range")
    nsquare, n = key.nsquare, key.n
    for index, ((a, big_x, c), proof) in enumerate(zip(statements, proofs)):
        if any(gmpy2.gcd(value, n) != 1 for value in (a, big_x, c)):
            raise ProductProofInvalid(f"statement {index}: not a unit of Z*_(n²)")
        e = proof.challenge
        t1 = (1 + (proof.z % n) * n) * _hs_power(key, proof.z_rho) % nsquare * \
            gmpy2.invert(gmpy2.powmod(big_x, e, nsquare), nsquare) % nsquare
        t2 = gmpy2.powmod(a, proof.z, nsquare) * _hs_power(key, proof.z_sigma) % nsquare * \
            gmpy2.invert(gmpy2.powmod(c, e, nsquare), nsquare) % nsquare
        if _challenge(key, context, index, (a, big_x, c), (int(t1), int(t2))) != e:
            raise ProductProofInvalid(f"ciphertext {index} is not shown to encrypt the product")
