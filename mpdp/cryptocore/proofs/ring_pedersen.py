"""Ring-Pedersen parameters (N̂, s, t) and Π^prm, the proof that s lies in the group t generates (Canetti,
Gennaro, Goldfeder, Makriyannis, Peled, ePrint 2021/060, Fig. 17), made non-interactive with a hash.

A commitment s^x·t^y mod N̂ binds x for whoever does not know N̂'s factors (strong RSA) and hides x if s ∈ ⟨t⟩
(y drawn from a range much wider than N̂). So the parameters belong to a verifier: it makes N̂ from two safe
primes, keeps the factors, and proves s ∈ ⟨t⟩ to the prover, whose secret a commitment might otherwise leak
(with s outside ⟨t⟩ and N̂'s group orders smooth, s^x reveals x). Π^prm: in each of ROUNDS rounds the parameters'
maker sends A = t^a and answers a hashed bit e with z = a + e·λ mod φ(N̂), which a is uniform enough to hide;
the prover checks t^z = A·s^e. If s ∉ ⟨t⟩ at most one bit has an answer: 2^−ROUNDS.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from dataclasses import dataclass

import gmpy2

from mpdp.cryptocore.arithmetic import primes
from mpdp.cryptocore.errors import InvalidKey
from mpdp.cryptocore.keys.key_checks import check_modulus

ROUNDS = 80
TAG = b"mpdp/ring-pedersen-parameters/v1"


@dataclass(frozen=True)
class RingPedersen:
    modulus: int  # N̂
    s: int
    t: int

    def commit(self, value: int, randomness: int) -> int:
        """s^value · t^randomness mod N̂ (negative exponents through the inverse)."""
        return int(gmpy2.powmod(self.s, value, self.modulus) * gmpy2.powmod(self.t, randomness, self.modulus)
                   % self.modulus)

    def check(self, bits: int) -> None:
        """Cheap checks: N̂ of `bits` bits, odd, without a small factor; s and t units other than ±1."""
        check_modulus(self.modulus, bits)
        for name, value in (("s", self.s), ("t", self.t)):
            if not 1 < value < self.modulus - 1 or gmpy2.gcd(value, self.modulus) != 1:
                raise InvalidKey(f"ring-Pedersen {name} must be a unit of Z*_N̂ other than ±1")


@dataclass(frozen=True)
class RingPedersenSecret:
    public: RingPedersen
    phi: int  # φ(N̂)
    exponent: int  # λ: s = t^λ


@dataclass(frozen=True)
class ParameterProof:
    commitments: tuple[int, ...]  # A_i = t^a_i
    responses: tuple[int, ...]  # z_i = a_i + e_i·λ mod φ(N̂)


def generate(bits: int) -> RingPedersenSecret:
    """N̂ = p̂·q̂ from two safe primes, t a random square, s = t^λ for a random λ."""
    p, q = primes.distinct_prime_pair(bits // 2, primes.safe_prime)
    modulus, phi = p * q, (p - 1) * (q - 1)
    while True:
        tau = secrets.randbelow(modulus - 3) + 2
        t = int(gmpy2.powmod(tau, 2, modulus))
        if gmpy2.gcd(tau, modulus) == 1 and t != 1:
            break
    exponent = secrets.randbelow(phi - 1) + 1
    return RingPedersenSecret(RingPedersen(modulus, int(gmpy2.powmod(t, exponent, modulus)), t), phi, exponent)


def _challenge_bits(public: RingPedersen, commitments, context: bytes) -> list[int]:
    digest = hashlib.shake_256()
    for item in (TAG, context, *(value.to_bytes((value.bit_length() + 7) // 8 or 1, "big")
                                 for value in (public.modulus, public.s, public.t, *commitments))):
        digest.update(len(item).to_bytes(4, "big") + item)
    word = int.from_bytes(digest.digest((ROUNDS + 7) // 8), "big")
    return [(word >> index) & 1 for index in range(ROUNDS)]


def prove(secret: RingPedersenSecret, context: bytes = b"") -> ParameterProof:
    public = secret.public
    masks = [secrets.randbelow(secret.phi) for _ in range(ROUNDS)]
    commitments = tuple(int(gmpy2.powmod(public.t, a, public.modulus)) for a in masks)
    bits = _challenge_bits(public, commitments, context)
    responses = tuple((a + e * secret.exponent) % secret.phi for a, e in zip(masks, bits))
    return ParameterProof(commitments, responses)


def verify(public: RingPedersen, proof: ParameterProof, bits: int, context: bytes = b"") -> None:
    """Raises InvalidKey unless the parameters pass the cheap checks and the proof shows s ∈ ⟨t⟩."""
    if not len(proof.commitments) == len(proof.responses) == ROUNDS:
        raise InvalidKey(f"a ring-Pedersen proof has {ROUNDS} rounds")
    public.check(bits)
    modulus = public.modulus
    if any(not 0 < a < modulus for a in proof.commitments) or any(not 0 <= z < modulus for z in proof.responses):
        raise InvalidKey("a ring-Pedersen proof's values lie in [0, N̂)")
    challenge = _challenge_bits(public, proof.commitments, context)
    powers = gmpy2.powmod_exp_list(public.t, list(proof.responses), modulus)  # every round's t^z in one call
    for power, commitment, e in zip(powers, proof.commitments, challenge):
        if power != commitment * (public.s if e else 1) % modulus:
            raise InvalidKey("the ring-Pedersen parameters are not shown to have s in the group of t")


_held: dict[int, tuple[RingPedersenSecret, ParameterProof]] = {}
_making: dict[int, threading.Lock] = {}
_lock = threading.Lock()  # guards the two dicts only, never held while primes are made


def held(bits: int) -> tuple[RingPedersenSecret, ParameterProof]:
    """This process's parameters of `bits` bits with their Π^prm, made at the first call (a second caller waits
    for the same ones). A verifier may keep them for good: they commit to nothing of its own, and only their
    factors, which never leave the process, matter."""
    with _lock:
        if bits in _held:
            return _held[bits]
        making = _making.setdefault(bits, threading.Lock())
    with making:
        with _lock:
            if bits in _held:
                return _held[bits]
        secret = generate(bits)
        made = (secret, prove(secret))
        with _lock:
            _held[bits] = made
        return made


def prepare(bits: int) -> None:
    """Start making this process's parameters in a background thread, unless they are held already."""
    with _lock:
        if bits in _held:
            return
    threading.Thread(target=held, args=(bits,), name="ring-pedersen", daemon=True).start()
