"""Proof that a Paillier modulus is a Paillier–Blum modulus: Π^mod of Canetti, Gennaro, Goldfeder, Makriyannis,
Peled (CCS 2020 / ePrint 2021/060, "UC non-interactive ... threshold ECDSA", Fig. 16), made non-interactive with
a hash.

Statement: n = p·q with p ≡ q ≡ 3 (mod 4) primes and gcd(n, φ(n)) = 1. The owner publishes w with Jacobi
symbol −1; for each of ROUNDS challenges y_i derived from (n, w) it sends z_i = y_i^(1/n) mod n and
x_i = ((−1)^a_i·w^b_i·y_i)^(1/4) mod n. Every y has an n-th root only if gcd(n, φ(n)) = 1, and one of ±y, ±wy
has a fourth root for every y only if n has exactly two prime factors, both ≡ 3 mod 4; a modulus that is
neither passes a round with probability at most 1/2, so all ROUNDS with at most 2^−80.

Why Pathak needs it: a value holder's guarantees rest on Z*_{n²} being (1+n)^m·ρ^n with a unique m mod n (an
opening then shows the plaintext: `plaintext_opening`), and on the owner reading r·c only modulo p and q (with
more factors the owner would learn a zero test per factor). `key_checks` refuses prime factors below 2^16;
`factor_proof` (Π^fac) shows that both are large.
Verifying costs ROUNDS exponentiations mod n (about 0.4 CPU-s at 2048 bits, on every core), once per key and process.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass

import gmpy2

from mpdp.cryptocore.arithmetic import roots
from mpdp.cryptocore.arithmetic.shared_exponent import powmod_all
from mpdp.cryptocore.errors import InvalidKey

ROUNDS = 80
CHALLENGE_TAG = b"mpdp/paillier-blum-modulus/v1"
_MAX_REMEMBERED = 16


@dataclass(frozen=True)
class ModulusProof:
    w: int
    fourth_roots: tuple[int, ...]  # x_i
    selectors: tuple[int, ...]  # a_i + 2·b_i
    nth_roots: tuple[int, ...]  # z_i


def _challenges(n: int, w: int) -> list[int]:
    """y_1..y_ROUNDS from (n, w): SHAKE-256 output 128 bits longer than n, reduced mod n."""
    width = (n.bit_length() + 128 + 7) // 8
    values = []
    for index in range(ROUNDS):
        digest = hashlib.shake_256()
        for item in (CHALLENGE_TAG, n.to_bytes((n.bit_length() + 7) // 8, "big"), w.to_bytes(width, "big"),
                     index.to_bytes(4, "big")):
            digest.update(len(item).to_bytes(4, "big") + item)
        values.append(int.from_bytes(digest.digest(width), "big") % n)
    return values


def prove(p: int, q: int) -> ModulusProof:
    """By the owner of n = p·q (p ≡ q ≡ 3 mod 4)."""
    if p % 4 != 3 or q % 4 != 3:
        raise ValueError("a Paillier–Blum modulus needs p ≡ q ≡ 3 (mod 4)")
    n = p * q
    while True:  # a challenge that shares a factor with n (only likely for a small factor) needs another w
        w = secrets.randbelow(n - 2) + 2
        if gmpy2.jacobi(w, n) == -1:
            proof = _rounds(p, q, w)
            if proof is not None:
                return proof


def _rounds(p: int, q: int, w: int) -> ModulusProof | None:
    n = p * q
    fourth_roots, selectors, nth_roots = [], [], []
    for y in _challenges(n, w):
        if gmpy2.gcd(y, n) != 1:
            return None
        nth_roots.append(roots.nth_root(y, p, q))
        # −1 is a non-residue mod p and q, w mod exactly one: one of ±y, ±wy is a residue mod both
        for selector in range(4):
            candidate = (-1) ** (selector & 1) * pow(w, selector >> 1) * y % n
            if gmpy2.legendre(candidate, p) == 1 and gmpy2.legendre(candidate, q) == 1:
                break
        fourth_roots.append(roots.crt(roots.fourth_root(candidate, p), roots.fourth_root(candidate, q), p, q))
        selectors.append(selector)
    return ModulusProof(w, tuple(fourth_roots), tuple(selectors), tuple(nth_roots))


_verified: OrderedDict[int, None] = OrderedDict()
_verified_lock = threading.Lock()


def verify(n: int, proof: ModulusProof) -> None:
    """Raises InvalidKey unless the proof shows n is a Paillier–Blum modulus. Cheap shape checks first; a modulus
    verified before in this process is accepted at once (the statement is about n alone)."""
    with _verified_lock:
        if n in _verified:
            _verified.move_to_end(n)
            return
    if not (len(proof.fourth_roots) == len(proof.selectors) == len(proof.nth_roots) == ROUNDS):
        raise InvalidKey(f"a modulus proof has {ROUNDS} rounds")
    values = (proof.w, *proof.fourth_roots, *proof.nth_roots)
    if n % 2 == 0 or any(not 0 < value < n for value in values) or any(s not in range(4) for s in proof.selectors):
        raise InvalidKey("a modulus proof's values lie in [1, n) and its selectors in 0..3")
    if gmpy2.jacobi(proof.w, n) != -1:
        raise InvalidKey("a modulus proof's w must have Jacobi symbol −1")
    w = proof.w
    challenges = _challenges(n, w)
    for y, x, selector in zip(challenges, proof.fourth_roots, proof.selectors):
        if gmpy2.powmod(x, 4, n) != (-1) ** (selector & 1) * pow(w, selector >> 1) * y % n:
            raise InvalidKey("the modulus is not shown to be a product of two primes ≡ 3 (mod 4)")
    if powmod_all(list(proof.nth_roots), n, n) != challenges:
        raise InvalidKey("the modulus is not shown to be coprime to φ(n)")
    with _verified_lock:
        _verified[n] = None
        while len(_verified) > _MAX_REMEMBERED:
            _verified.popitem(last=False)
