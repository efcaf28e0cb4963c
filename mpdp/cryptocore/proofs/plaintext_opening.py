"""A key owner's proof that a ciphertext encrypts a given plaintext: the n-th root of c·(1+n)^(−m).

With gcd(n, φ(n)) = 1 every unit of Z*_{n²} is (1+n)^m·ρ^n for exactly one m mod n, so a ρ with
ρ^n ≡ c·(1+n)^(−m) (mod n²) shows that c encrypts m. The owner computes ρ from the factorisation (an n-th root
mod n); the verifier pays one full-length exponentiation. Revealing ρ, the randomness of c, tells nothing more:
c's plaintext is what is being shown. Used for Pathak's indicator (its K ciphertexts multiply to an encryption
of 1: pathak.md Stage 2 step 1), where Charlie's modulus has been proven to be a Paillier–Blum modulus.
"""

from __future__ import annotations

import gmpy2

from mpdp.cryptocore.arithmetic.roots import nth_root
from mpdp.cryptocore.errors import CryptoError
from mpdp.cryptocore.paillier import ciphertext as ct
from mpdp.cryptocore.paillier.keypair import KeyPair, PublicKey


class OpeningMismatch(CryptoError):
    """The opening does not show that the ciphertext encrypts the claimed plaintext."""


def unblinded(n: int, ciphertext: int, plaintext: int) -> int:
    """c·(1+n)^(−m) mod n², which is ρ^n when c encrypts m; (1+n)^(−m) = 1 − m·n mod n²."""
    nsquare = n * n
    return int(ciphertext * (1 - plaintext % n * n) % nsquare)


def open_ciphertext(keypair: KeyPair, ciphertext: int, plaintext: int) -> int:
    """ρ with ρ^n ≡ c·(1+n)^(−m) (mod n²), by the owner (CRT: an n-th root mod p and mod q)."""
    private = keypair.private
    return nth_root(unblinded(keypair.public.n, ciphertext, plaintext), private.p, private.q)


def check_opening(public: PublicKey, ciphertext: int, plaintext: int, opening: int) -> None:
    """Raises OpeningMismatch unless ρ = `opening` is a unit with ρ^n ≡ c·(1+n)^(−m) (mod n²)."""
    n = public.n
    ct.validate(public.paillier, ciphertext)
    if not 0 < opening < n or gmpy2.gcd(opening, n) != 1:
        raise OpeningMismatch("the opening is not a unit modulo n")
    if gmpy2.powmod(opening, n, n * n) != unblinded(n, ciphertext, plaintext):
        raise OpeningMismatch(f"the ciphertext does not encrypt {plaintext}")
