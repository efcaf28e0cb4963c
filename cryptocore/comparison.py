"""DGK-style secure comparison, one round trip (crypto.md, "Secure comparison").

The value holder A has x, the key holder B has y and the Paillier key; both
are ℓ-bit non-negative integers. Only B learns [x > y]:

1. B → A  `EncryptedBits`: Enc(y_0) … Enc(y_{ℓ−1}).
2. A → B  `MaskedDifferences`: for each i, Enc(r_i · c_i) with
   c_i = x_i − y_i − 1 + 3·Σ_{j>i}(x_j ⊕ y_j) and r_i uniform in Z_n^*,
   re-randomised with ρ^n (ρ uniform in Z_n^*, never B's h_s: B chooses it, and
   knows p and q) and shuffled. A validates B's key first (size, h_s, key id).
3. B decrypts: some c_i is zero iff x > y (at the highest differing bit,
   x_i = 1 and y_i = 0; every other c_i is −1 or at least 1).

A's work must not depend on x: B sees how long A takes to answer. So every position gets the same two
exponentiations (r_i, and ρ^n, which may have been prepared while idle: `nth_powers`), even where x_i = 0 and
c_i can never be zero. (Sending a fresh encryption of a random unit there would give B the same view and save
half of the r_i, but the answer's time would then count x's one bits, and B knows d = z + 2^M + ρ′.)

The messages are plain objects holding wire-form ciphertexts, so a transport
can carry them unchanged.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import gmpy2

from cryptocore import ciphertext as ct
from cryptocore.errors import CryptoError, ProtocolStateError
from cryptocore.key_checks import SMALL_FACTOR_BOUND, check_key_id
from cryptocore.paillier import KeyPair, PublicKey


@dataclass(frozen=True)
class EncryptedBits:
    """Step 1, B → A: B's bits y_0 (least significant) … y_{ℓ−1}, encrypted."""

    key_id: bytes
    ciphertexts: tuple[bytes, ...]


@dataclass(frozen=True)
class MaskedDifferences:
    """Step 2, A → B: the blinded, shuffled Enc(r_i · c_i)."""

    key_id: bytes
    ciphertexts: tuple[bytes, ...]


def _check_operand(value: int, bits: int) -> None:
    if not 1 <= bits or 3 * bits + 2 >= SMALL_FACTOR_BOUND:  # every non-zero c_i must be a unit mod n
        raise ValueError(f"comparison width must lie in [1, {(SMALL_FACTOR_BOUND - 3) // 3}]")
    if not 0 <= value < 1 << bits:
        raise CryptoError(f"comparison operand outside [0, 2^{bits})")


def _decode_all(public: PublicKey, key_id: bytes, ciphertexts: tuple[bytes, ...], bits: int) -> list[int]:
    check_key_id(public.key_id, key_id)
    if len(ciphertexts) != bits:
        raise CryptoError(f"expected {bits} ciphertexts, got {len(ciphertexts)}")
    return [ct.from_bytes(public.paillier, data) for data in ciphertexts]


class ComparisonKeyHolder:
    """Role B: holds y and the private key; learns [x > y]."""

    def __init__(self, keypair: KeyPair, y: int, bits: int):
        _check_operand(y, bits)
        self._keypair = keypair
        self._y = y
        self.bits = bits
        self._sent = False
        self.result: bool | None = None

    def encrypted_bits(self) -> EncryptedBits:
        if self._sent:
            raise ProtocolStateError("the encrypted bits were already sent")
        public = self._keypair.public
        ciphertexts = tuple(
            ct.to_bytes(public.paillier, public.encryptor.encrypt((self._y >> i) & 1)) for i in range(self.bits)
        )
        self._sent = True
        return EncryptedBits(public.key_id, ciphertexts)

    def receive(self, message: MaskedDifferences) -> bool:
        """Decide [x > y] from A's answer."""
        if not self._sent or self.result is not None:
            raise ProtocolStateError("masked differences arrive once, after the encrypted bits")
        values = _decode_all(self._keypair.public, message.key_id, message.ciphertexts, self.bits)
        self.result = any(self._keypair.zero_flags(values))  # every value tested: the time shows no position
        return self.result


class ComparisonValueHolder:
    """Role A: holds x; learns nothing. `key_bits` is the modulus size the session requires of B's key.
    With `reverse`, B learns [y > x] instead: A compares the complements, flipping B's bits homomorphically
    (so a secret coin can hide which way the comparison went)."""

    def __init__(self, public: PublicKey, x: int, bits: int, key_bits: int | None = None, reverse: bool = False):
        _check_operand(x, bits)
        if reverse:  # [~x > ~y] = [y > x]
            x = (1 << bits) - 1 - x
        self._reverse = reverse
        if key_bits is not None:
            public.require_bits(key_bits)  # (h_s ∉ {±1} and the rest were checked when the key was built)
        self._public = public
        self._x = x
        self.bits = bits
        self._answered = False

    def differences(self, message: EncryptedBits) -> list[int]:
        """Enc(x_i − 1 − y_i + 3·Σ_{j>i} x_j ⊕ y_j) for every bit, before blinding: inverses and products only,
        so a caller may blind them elsewhere (`blind`) and hand the results to `finish`. The same operations
        for every x: its bits only choose between operands."""
        if self._answered:
            raise ProtocolStateError("this comparison was already answered")
        public = self._public
        paillier = public.paillier
        n, nsquare = paillier.n, paillier.nsquare
        encrypted_y = _decode_all(public, message.key_id, message.ciphertexts, self.bits)
        if self._reverse:  # Enc(1 − y_i)
            encrypted_y = [int((1 + n) * gmpy2.invert(c, nsquare) % nsquare) for c in encrypted_y]
        differences = []
        suffix_xor = gmpy2.mpz(1)  # Enc(Σ_{j>i} x_j ⊕ y_j), starting from an empty sum
        for i in reversed(range(self.bits)):
            x_i = (self._x >> i) & 1
            enc_y = encrypted_y[i]
            enc_minus_y = gmpy2.invert(enc_y, nsquare)
            # Enc(x_i − 1 − y_i + 3·S_i)
            difference = (1 + (x_i - 1) % n * n) * enc_minus_y % nsquare
            differences.append(int(difference * gmpy2.powmod(suffix_xor, 3, nsquare) % nsquare))
            # x_i ⊕ y_i is y_i when x_i = 0 and 1 − y_i when x_i = 1.
            enc_xor = enc_y if x_i == 0 else (1 + n) * enc_minus_y % nsquare
            suffix_xor = suffix_xor * enc_xor % nsquare
        self._answered = True
        return differences

    def finish(self, blinded: list[int]) -> MaskedDifferences:
        """Step 2's message from the blinded differences: shuffled."""
        if len(blinded) != self.bits:
            raise ValueError(f"expected {self.bits} blinded differences")
        blinded = list(blinded)
        secrets.SystemRandom().shuffle(blinded)
        return MaskedDifferences(self._public.key_id,
                                 tuple(ct.to_bytes(self._public.paillier, value) for value in blinded))

    def respond(self, message: EncryptedBits) -> MaskedDifferences:
        return self.finish([blind(self._public.paillier, value) for value in self.differences(message)])


def blind(paillier, difference: int, nth_power: int | None = None) -> int:
    """Enc(r·c) for r uniform in Z_n^*, re-randomised with ρ^n (prepared, or made here): a compared bit's one or
    two full exponentiations (whether ρ^n was prepared depends on the process's history, never on x)."""
    n, nsquare = paillier.n, paillier.nsquare
    blinded = gmpy2.powmod(difference, ct.random_unit(n), nsquare)
    if nth_power is None:
        return ct.rerandomise_for_key_owner(paillier, int(blinded))
    return int(blinded * nth_power % nsquare)


def compare(keypair: KeyPair, x: int, y: int, bits: int) -> bool:
    """Both roles in one process: [x > y] as B learns it (reference and benchmarks)."""
    key_holder = ComparisonKeyHolder(keypair, y, bits)
    value_holder = ComparisonValueHolder(keypair.public, x, bits)
    return key_holder.receive(value_holder.respond(key_holder.encrypted_bits()))
