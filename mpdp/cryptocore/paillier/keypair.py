"""Plain Paillier key pairs (the parties' ξ and Charlie's ζ) on `phe` key objects.

p ≡ q ≡ 3 (mod 4), which `phe`'s own generator does not guarantee and the
fast encryption needs, so the primes are generated here and wrapped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import gmpy2
from phe import PaillierPrivateKey, PaillierPublicKey

from mpdp.cryptocore.arithmetic.primes import blum_prime, distinct_prime_pair
from mpdp.cryptocore.arithmetic.shared_exponent import powmod_all
from mpdp.cryptocore.errors import InvalidKey
from mpdp.cryptocore.keys.key_checks import check_group_element, check_modulus, fingerprint
from mpdp.cryptocore.keys.key_sizes import DEFAULT_KEY_BITS, MIN_KEY_BITS
from mpdp.cryptocore.paillier import ciphertext as ct
from mpdp.cryptocore.paillier.fast_encryption import FastEncryptor, generate_hs

KEY_ID_TAG = b"mpdp/paillier/public-key/v1"


def check_key_bits(bits: int) -> None:
    if bits < MIN_KEY_BITS or bits % 2:
        raise ValueError(f"key size must be an even number of bits ≥ {MIN_KEY_BITS}, got {bits}")


def modulus_from_primes(p: int, q: int, bits: int) -> int:
    n = p * q
    if n.bit_length() != bits:
        raise ValueError("primes do not give a modulus of the requested size")
    return n


@lru_cache(maxsize=32)
def shared_encryptor(n: int, hs: int) -> FastEncryptor:
    """One encryptor (and table) per key in a process, however many objects name the key."""
    return FastEncryptor(PaillierPublicKey(n), hs)


@dataclass(frozen=True)
class PublicKey:
    """What a Paillier public key publishes: n and h_s, validated on construction; its id covers both."""

    paillier: PaillierPublicKey
    hs: int

    def __post_init__(self):
        check_modulus(self.paillier.n)
        check_group_element(self.paillier.n, self.hs, "h_s")

    @property
    def n(self) -> int:
        return self.paillier.n

    @cached_property
    def key_id(self) -> bytes:
        return fingerprint(KEY_ID_TAG, self.n, self.hs)

    def require_bits(self, bits: int) -> "PublicKey":
        """The key, if its modulus has the session's size."""
        check_modulus(self.n, bits)
        return self

    @classmethod
    def from_integers(cls, n: int, hs: int, bits: int | None = None) -> "PublicKey":
        """A key received from a file or the wire: validated before anything uses it."""
        check_modulus(n, bits)
        return cls(PaillierPublicKey(n), hs)

    @property
    def encryptor(self) -> FastEncryptor:
        return shared_encryptor(self.n, self.hs)

    def to_dict(self) -> dict:
        return {"n": hex(self.n), "hs": hex(self.hs), "key_id": self.key_id.hex()}

    @classmethod
    def from_dict(cls, data: dict) -> "PublicKey":
        key = cls.from_integers(int(data["n"], 16), int(data["hs"], 16))
        if "key_id" in data and bytes.fromhex(data["key_id"]) != key.key_id:
            raise InvalidKey("public key id does not match its parameters")
        return key


@dataclass(frozen=True)
class KeyPair:
    public: PublicKey
    private: PaillierPrivateKey = field(repr=False)

    def decrypt(self, ciphertext: int) -> int:
        """Signed plaintext of a validated ciphertext."""
        ct.validate(self.public.paillier, ciphertext)
        return ct.decode_signed(self.public.paillier, self.private.raw_decrypt(ciphertext))

    def is_zero(self, ciphertext: int) -> bool:
        """Whether the plaintext is 0 mod p, from the p-half of CRT alone.

        c = (1+n)^m r^n gives c^(p−1) ≡ 1 + (p−1)·m·n (mod p²), which is 1
        exactly when p | m. Callers make m ≢ 0 mod p unless m = 0.
        """
        p = self.private.p
        return gmpy2.powmod(ciphertext, p - 1, self.private.psquare) == 1

    def zero_flags(self, ciphertexts: list[int]) -> list[bool]:
        """`is_zero` for every ciphertext, always all of them (a count of zeros must not show in the time), the
        exponentiations spread over the cores."""
        p = self.private.p
        return [value == 1 for value in powmod_all(ciphertexts, p - 1, self.private.psquare)]


def generate_keypair(bits: int = DEFAULT_KEY_BITS) -> KeyPair:
    check_key_bits(bits)
    p, q = distinct_prime_pair(bits // 2, blum_prime)
    paillier = PaillierPublicKey(modulus_from_primes(p, q, bits))
    return KeyPair(PublicKey(paillier, generate_hs(paillier)), PaillierPrivateKey(paillier, p, q))
