"""DGK-style secure comparison, one round trip (crypto.md, "Secure comparison"), under the key holder's
exponential-ElGamal key in the public comparison group (`elgamal`; docs/protocols/pathak-comparison-key.md).

The value holder A has x, the key holder B has y and the key; both are ℓ-bit non-negative integers. Only B
learns [x > y]:

1. B → A  `EncryptedBits`: Enc(y_0) … Enc(y_{ℓ−1}), each with a proof that it encrypts 0 or 1
   (`elgamal_bit_proof`, bound to the comparison's context).
2. A → B  `MaskedDifferences`: for each i, Enc(r_i · c_i) with
   c_i = x_i − y_i − 1 + 3·Σ_{j>i}(x_j ⊕ y_j) and r_i uniform in Z_q^*, re-randomised with a fresh (g^s, h^s)
   and shuffled. A first checks B's key, that every component B sent lies in the group of order q, and every
   bit proof: with non-bits B could make each c_i an affine test of x's bits.
3. B checks the same of A's answer and tests every plaintext for zero: a zero appears iff x > y (at the highest
   differing bit, x_i = 1 and y_i = 0; every other c_i is −1 or at least 1, and |c_i| ≤ 3ℓ + 2 < q).

A's work must not depend on x: B sees how long A takes to answer. So every position gets the same
exponentiations, and x's bits only choose between operands computed either way.

The messages are plain objects holding wire-form ciphertexts, so a transport can carry them unchanged.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import gmpy2

from mpdp.cryptocore.arithmetic.shared_exponent import threads
from mpdp.cryptocore.comparison import elgamal_bit_proof
from mpdp.cryptocore.comparison.elgamal import (
    Ciphertext,
    ElGamalKeyPair,
    ElGamalPublicKey,
    all_members,
    random_multiplier,
)
from mpdp.cryptocore.comparison.group import P
from mpdp.cryptocore.errors import CryptoError, ProtocolStateError
from mpdp.cryptocore.keys.key_checks import check_key_id

MAX_BITS = 1024  # bounds a request's cost; Pathak compares 33 + κ bits


@dataclass(frozen=True)
class EncryptedBits:
    """Step 1, B → A: B's bits y_0 (least significant) … y_{ℓ−1}, encrypted, with a bit proof each."""

    key_id: bytes
    ciphertexts: tuple[bytes, ...]
    proofs: tuple[bytes, ...] = ()


@dataclass(frozen=True)
class MaskedDifferences:
    """Step 2, A → B: the blinded, shuffled Enc(r_i · c_i)."""

    key_id: bytes
    ciphertexts: tuple[bytes, ...]


def _check_operand(value: int, bits: int) -> None:
    if not 1 <= bits <= MAX_BITS:
        raise ValueError(f"comparison width must lie in [1, {MAX_BITS}]")
    if not 0 <= value < 1 << bits:
        raise CryptoError(f"comparison operand outside [0, 2^{bits})")


def decode_shapes(public: ElGamalPublicKey, key_id: bytes, ciphertexts: tuple[bytes, ...], bits: int) -> list[Ciphertext]:
    """The message's ciphertexts, refused unless there are `bits` of them under this key, each of the right
    length and range: cheap checks, no exponentiation."""
    check_key_id(public.key_id, key_id)
    if len(ciphertexts) != bits:
        raise CryptoError(f"expected {bits} ciphertexts, got {len(ciphertexts)}")
    return [Ciphertext.from_bytes(bytes(data)) for data in ciphertexts]


def check_members(decoded: list[Ciphertext]) -> None:
    """Every component in the group of order q (an exponentiation each)."""
    if not all_members(decoded):
        raise CryptoError("a comparison ciphertext lies outside the comparison group's subgroup of order q")


class ComparisonKeyHolder:
    """Role B: holds y and the private key; learns [x > y]."""

    def __init__(self, keypair: ElGamalKeyPair, y: int, bits: int, context: bytes = b""):
        _check_operand(y, bits)
        self._keypair = keypair
        self._context = context
        self._y = y
        self.bits = bits
        self._sent = False
        self.result: bool | None = None

    def encrypted_bits(self) -> EncryptedBits:
        if self._sent:
            raise ProtocolStateError("the encrypted bits were already sent")
        public = self._keypair.public
        ciphertexts, proofs = [], []
        for i in range(self.bits):
            ciphertext, proof = elgamal_bit_proof.encrypt_and_prove(public, (self._y >> i) & 1, self._context)
            ciphertexts.append(ciphertext.to_bytes())
            proofs.append(proof.to_bytes())
        self._sent = True
        return EncryptedBits(public.key_id, tuple(ciphertexts), tuple(proofs))

    def check_shapes(self, message: MaskedDifferences) -> list[Ciphertext]:
        """The cheap checks of A's answer (state, key id, count, lengths, ranges), before any exponentiation."""
        if not self._sent or self.result is not None:
            raise ProtocolStateError("masked differences arrive once, after the encrypted bits")
        return decode_shapes(self._keypair.public, message.key_id, message.ciphertexts, self.bits)

    def receive(self, message: MaskedDifferences) -> bool:
        """Decide [x > y] from A's answer. Its components must lie in the group: an element with a small-order
        part would make the zero test reveal the key modulo that order."""
        values = self.check_shapes(message)
        check_members(values)
        self.result = any(self._keypair.zero_flags(values))  # every value tested: the time shows no position
        return self.result


class ComparisonValueHolder:
    """Role A: holds x; learns nothing. With `reverse`, B learns [y > x] instead: A compares the complements,
    flipping B's bits homomorphically (so a secret coin can hide which way the comparison went)."""

    def __init__(self, public: ElGamalPublicKey, x: int, bits: int, reverse: bool = False, context: bytes = b""):
        _check_operand(x, bits)
        self._context = context
        if reverse:  # [~x > ~y] = [y > x]
            x = (1 << bits) - 1 - x
        self._reverse = reverse
        self._public = public
        self._x = x
        self.bits = bits
        self._answered = False

    def differences(self, message: EncryptedBits) -> list[Ciphertext]:
        """Enc(x_i − 1 − y_i + 3·Σ_{j>i} x_j ⊕ y_j) for every bit, before blinding: products and inverses only,
        so a caller may blind them elsewhere (`blind`) and hand the results to `finish`. The same operations
        for every x: its bits only choose between operands."""
        encrypted_y, proofs = self.check_shapes(message)
        check_members(encrypted_y)
        self._verify_bits(encrypted_y, proofs)
        if self._reverse:  # Enc(1 − y_i)
            encrypted_y = [c.inverse().plus_constant(1) for c in encrypted_y]
        differences = []
        suffix_xor = Ciphertext(1, 1)  # Enc(Σ_{j>i} x_j ⊕ y_j), starting from an empty sum
        for i in reversed(range(self.bits)):
            x_i = (self._x >> i) & 1
            enc_y = encrypted_y[i]
            enc_minus_y = enc_y.inverse()
            constants = (enc_minus_y.plus_constant(-1), enc_minus_y)  # Enc(x_i − 1 − y_i), either x_i
            differences.append(constants[x_i].times(suffix_xor.cubed()))
            xors = (enc_y, enc_minus_y.plus_constant(1))  # x_i ⊕ y_i: y_i when x_i = 0, 1 − y_i when x_i = 1
            suffix_xor = suffix_xor.times(xors[x_i])
        self._answered = True
        return differences

    def check_shapes(self, message: EncryptedBits) -> tuple[list[Ciphertext], list[elgamal_bit_proof.BitProof]]:
        """The cheap checks of step 1's message (key id, counts, lengths, ranges), before any exponentiation."""
        if self._answered:
            raise ProtocolStateError("this comparison was already answered")
        if len(message.proofs) != self.bits:
            raise CryptoError(f"expected {self.bits} bit proofs, got {len(message.proofs)}")
        proofs = [elgamal_bit_proof.BitProof.from_bytes(bytes(data)) for data in message.proofs]
        return decode_shapes(self._public, message.key_id, message.ciphertexts, self.bits), proofs

    def _verify_bits(self, encrypted_y: list[Ciphertext], proofs: list[elgamal_bit_proof.BitProof]) -> None:
        """Every proof, on every core (their exponentiations release the GIL)."""
        public, context = self._public, self._context

        def verify(index: int) -> None:
            elgamal_bit_proof.verify(public, encrypted_y[index], proofs[index], context)

        list(threads().map(verify, range(len(proofs))))

    def finish(self, blinded: list[Ciphertext]) -> MaskedDifferences:
        """Step 2's message from the blinded differences: shuffled."""
        if len(blinded) != self.bits:
            raise ValueError(f"expected {self.bits} blinded differences")
        blinded = list(blinded)
        secrets.SystemRandom().shuffle(blinded)
        return MaskedDifferences(self._public.key_id, tuple(value.to_bytes() for value in blinded))

    def respond(self, message: EncryptedBits) -> MaskedDifferences:
        return self.finish([blind(self._public, value) for value in self.differences(message)])


def blind(public: ElGamalPublicKey, difference: Ciphertext) -> Ciphertext:
    """Enc(r·c) for r uniform in Z_q^*, re-randomised with a fresh encryption of 0 (the first component then is
    uniform in the group, whatever the owner chose): two 256-bit exponentiations and two fixed-base ones."""
    a, b = gmpy2.powmod_base_list([difference.a, difference.b], random_multiplier(), P)  # releases the GIL
    return Ciphertext(int(a), int(b)).times(public.zero())


def compare(keypair: ElGamalKeyPair, x: int, y: int, bits: int) -> bool:
    """Both roles in one process: [x > y] as B learns it (reference and benchmarks)."""
    key_holder = ComparisonKeyHolder(keypair, y, bits)
    value_holder = ComparisonValueHolder(keypair.public, x, bits)
    return key_holder.receive(value_holder.respond(key_holder.encrypted_bits()))
