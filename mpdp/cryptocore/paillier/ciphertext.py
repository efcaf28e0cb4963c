"""Paillier ciphertexts as integers: validation, wire bytes, homomorphic operations.

Every function takes a `phe.PaillierPublicKey`; ciphertexts are plain ints in
Z*_{n²}, so ciphertexts from `phe` and from the fast encryptor mix freely.
"""

from __future__ import annotations

import secrets

import gmpy2
from phe import PaillierPublicKey

from mpdp.cryptocore.errors import InvalidCiphertext


def modulus_bytes(public_key: PaillierPublicKey) -> int:
    return (public_key.n.bit_length() + 7) // 8


def ciphertext_length(public_key: PaillierPublicKey) -> int:
    return 2 * modulus_bytes(public_key)


def validate(public_key: PaillierPublicKey, ciphertext: int) -> int:
    """Return the ciphertext if 0 < c < n² and gcd(c, n) = 1, else raise."""
    if not 0 < ciphertext < public_key.nsquare:
        raise InvalidCiphertext("ciphertext outside (0, n²)")
    if gmpy2.gcd(ciphertext, public_key.n) != 1:
        raise InvalidCiphertext("ciphertext shares a factor with n")
    return ciphertext


def to_bytes(public_key: PaillierPublicKey, ciphertext: int) -> bytes:
    return int(ciphertext).to_bytes(ciphertext_length(public_key), "big")


def from_bytes(public_key: PaillierPublicKey, data: bytes) -> int:
    """Parse and validate a ciphertext received from another process."""
    if len(data) != ciphertext_length(public_key):
        raise InvalidCiphertext(
            f"ciphertext has {len(data)} bytes, expected {ciphertext_length(public_key)}"
        )
    return validate(public_key, int.from_bytes(data, "big"))


def add(public_key: PaillierPublicKey, *ciphertexts: int) -> int:
    """Encryption of the sum of the plaintexts."""
    total = gmpy2.mpz(1)
    for ciphertext in ciphertexts:
        total = total * ciphertext % public_key.nsquare
    return int(total)


def scalar_multiply(public_key: PaillierPublicKey, ciphertext: int, scalar: int) -> int:
    """Encryption of scalar · plaintext; a negative scalar inverts the ciphertext."""
    if scalar < 0:
        ciphertext = gmpy2.invert(ciphertext, public_key.nsquare)
        scalar = -scalar
    return int(gmpy2.powmod(ciphertext, scalar, public_key.nsquare))


def add_plain(public_key: PaillierPublicKey, ciphertext: int, plaintext: int) -> int:
    """Encryption of plaintext + m, with (1 + n)^x = 1 + x·n mod n²."""
    return int((1 + (plaintext % public_key.n) * public_key.n) * ciphertext % public_key.nsquare)


def encode_signed(public_key: PaillierPublicKey, value: int) -> int:
    """Residue of a signed plaintext; |value| must be below n/2."""
    if abs(value) >= public_key.n // 2:
        raise ValueError("plaintext magnitude must be below n/2")
    return value % public_key.n


def decode_signed(public_key: PaillierPublicKey, residue: int) -> int:
    """Signed plaintext of a residue: values above n/2 are negative."""
    return int(residue) - public_key.n if residue > public_key.n // 2 else int(residue)


def random_unit(n: int) -> int:
    """ρ uniform in Z_n^*."""
    while True:
        candidate = secrets.randbelow(n)
        if candidate and gmpy2.gcd(candidate, n) == 1:
            return candidate
