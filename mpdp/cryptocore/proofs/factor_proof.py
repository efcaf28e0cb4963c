"""Proof that both prime factors of a Paillier modulus are large: Π^fac of Canetti, Gennaro, Goldfeder,
Makriyannis, Peled (ePrint 2021/060, Fig. 28, "no small factor"), made non-interactive with a hash, against a
verifier's ring-Pedersen parameters (`ring_pedersen`).

The owner of n = p·q commits to p and q (P = s^p·t^μ, Q = s^q·t^ν) and shows, with masks α, β of
CHALLENGE_BITS + SLACK_BITS bits more than √n, that it knows openings z₁ = α + e·p and z₂ = β + e·q no longer
than √n·2^(CHALLENGE_BITS + SLACK_BITS), and that the committed values multiply to n (Q^p·t^(σ − ν·p) =
s^n·t^σ). Whoever cannot break the strong RSA assumption for N̂ gets factors p, q of n with |p|, |q| ≤
2·√n·2^(CHALLENGE_BITS + SLACK_BITS), so each is at least √n / 2^(CHALLENGE_BITS + SLACK_BITS + 1): 2^638 for a
2048-bit n, 2^126 for a 1024-bit one (tests). The masks hide p and q up to 2^−SLACK_BITS.

Why Pathak needs it: Π^mod (`modulus_proof`) shows n = p·q but not that both are large, and a bit proof
(`bit_proof`) is sound only up to 1 / (smallest factor) per Fiat–Shamir try; with a factor just above 2^16 Charlie
could forge the indicator's bit proofs modulo it (README, "What Charlie can still do").
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

import gmpy2

from mpdp.cryptocore.errors import InvalidKey
from mpdp.cryptocore.proofs.ring_pedersen import RingPedersen

CHALLENGE_BITS = 128  # ℓ: e ∈ [−2^ℓ, 2^ℓ]
SLACK_BITS = 256  # ε: the masks exceed what they hide by 2^ε
TAG = b"mpdp/no-small-factor/v1"


@dataclass(frozen=True)
class FactorProof:
    P: int
    Q: int
    A: int
    B: int
    T: int
    sigma: int
    z1: int
    z2: int
    w1: int
    w2: int
    v: int

    def commitments(self) -> tuple[int, ...]:
        return self.P, self.Q, self.A, self.B, self.T


RESPONSES = ("sigma", "z1", "z2", "w1", "w2", "v")  # FactorProof's signed fields, as the wire names them


def _signed(bound: int) -> int:
    """Uniform in [−bound, bound]."""
    return secrets.randbelow(2 * bound + 1) - bound


def _bytes(value: int) -> bytes:
    return value.to_bytes((value.bit_length() + 8) // 8, "big", signed=True)


def _challenge(n: int, setup: RingPedersen, commitments, sigma: int, context: bytes) -> int:
    digest = hashlib.shake_256()
    for item in (TAG, context, *(_bytes(value) for value in (n, setup.modulus, setup.s, setup.t, *commitments, sigma))):
        digest.update(len(item).to_bytes(4, "big") + item)
    word = int.from_bytes(digest.digest(CHALLENGE_BITS // 8 + 1), "big")
    return word % (2 ** (CHALLENGE_BITS + 1) + 1) - 2**CHALLENGE_BITS


def _bounds(n: int, setup: RingPedersen) -> dict[str, int]:
    """The honest ranges of the masks; the verifier allows the responses twice as much (they add e·secret)."""
    root, masks = gmpy2.isqrt(n), 2 ** (CHALLENGE_BITS + SLACK_BITS)
    return {"alpha": int(masks * root), "mu": 2**CHALLENGE_BITS * setup.modulus,
            "sigma": 2**CHALLENGE_BITS * n * setup.modulus, "r": masks * n * setup.modulus,
            "x": masks * setup.modulus}


def prove(p: int, q: int, setup: RingPedersen, context: bytes = b"") -> FactorProof:
    n, N = p * q, setup.modulus
    bound = _bounds(n, setup)
    alpha, beta = _signed(bound["alpha"]), _signed(bound["alpha"])
    mu, nu = _signed(bound["mu"]), _signed(bound["mu"])
    sigma, r = _signed(bound["sigma"]), _signed(bound["r"])
    x, y = _signed(bound["x"]), _signed(bound["x"])
    P, Q = setup.commit(p, mu), setup.commit(q, nu)
    A, B = setup.commit(alpha, x), setup.commit(beta, y)
    T = int(gmpy2.powmod(Q, alpha, N) * gmpy2.powmod(setup.t, r, N) % N)
    e = _challenge(n, setup, (P, Q, A, B, T), sigma, context)
    return FactorProof(P, Q, A, B, T, sigma, z1=alpha + e * p, z2=beta + e * q, w1=x + e * mu, w2=y + e * nu,
                       v=r + e * (sigma - nu * p))


def verify(n: int, proof: FactorProof, setup: RingPedersen, context: bytes = b"") -> None:
    """Raises InvalidKey unless the proof shows both factors of n are at least √n / 2^(ℓ + ε). Every range is
    checked before any exponentiation, so a long value costs nothing."""
    N, bound = setup.modulus, _bounds(n, setup)
    limits = {"z1": bound["alpha"], "z2": bound["alpha"], "w1": 2 * bound["x"], "w2": 2 * bound["x"],
              "sigma": bound["sigma"], "v": 2 * bound["r"]}
    for name, limit in limits.items():
        if abs(getattr(proof, name)) > limit:
            raise InvalidKey(f"a no-small-factor proof's {name} is out of range")
    for value in proof.commitments():
        if not 0 < value < N or gmpy2.gcd(value, N) != 1:
            raise InvalidKey("a no-small-factor proof's commitments are units mod N̂")
    e = _challenge(n, setup, proof.commitments(), proof.sigma, context)
    R = setup.commit(n, proof.sigma)
    checks = ((setup.commit(proof.z1, proof.w1), proof.A * gmpy2.powmod(proof.P, e, N)),
              (setup.commit(proof.z2, proof.w2), proof.B * gmpy2.powmod(proof.Q, e, N)),
              (gmpy2.powmod(proof.Q, proof.z1, N) * gmpy2.powmod(setup.t, proof.v, N), proof.T * gmpy2.powmod(R, e, N)))
    if any(left % N != right % N for left, right in checks):
        raise InvalidKey("the modulus is not shown to have two large prime factors")


def smallest_factor_bits(n: int) -> int:
    """What a verified proof guarantees: both factors have at least this many bits."""
    return (n.bit_length() - 1) // 2 - CHALLENGE_BITS - SLACK_BITS - 1
