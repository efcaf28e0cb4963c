"""Threshold Paillier with verifiable partial decryption (Shoup / Damgård–Jurik, s = 1).

crypto.md, "Threshold Paillier": a trusted dealer splits d (d ≡ 0 mod m,
d ≡ 1 mod n) with a degree t−1 polynomial over Z_{nm}; holder i partially
decrypts with c^(2Δ·s_i) and proves it with a Chaum–Pedersen proof against
its public verification key v_i = v^(Δ·s_i); any t verified shares combine.
"""

from __future__ import annotations

import hashlib
import math
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import gmpy2
from phe import PaillierPublicKey

from mpdp.cryptocore.arithmetic.fixed_base import FixedBaseTable
from mpdp.cryptocore.arithmetic.multi_exponent import multi_powmod
from mpdp.cryptocore.arithmetic.primes import distinct_prime_pair, safe_prime
from mpdp.cryptocore.errors import CryptoError, InvalidCiphertext, InvalidKey, InvalidShare, NotEnoughShares
from mpdp.cryptocore.keys.key_checks import check_group_element, check_modulus, fingerprint, length_prefixed_digest
from mpdp.cryptocore.paillier import ciphertext as ct
from mpdp.cryptocore.paillier.fast_encryption import generate_hs
from mpdp.cryptocore.paillier.keypair import PublicKey, check_key_bits, modulus_from_primes

PROOF_DOMAIN_TAG = b"mpdp/threshold-paillier/partial-decryption/v1"
KEY_ID_TAG = b"mpdp/threshold-paillier/public-key/v1"
CHALLENGE_BITS = 128
BATCH_DOMAIN_TAG = b"mpdp/threshold-paillier/batch-coefficients/v1"
BATCH_COEFFICIENT_BITS = 128
MAX_HOLDERS = 64  # Δ = ℓ! grows fast; the launcher's committees have at most 16
# A dealer's share is below n·m < n²; a share dealt by the key holders themselves (integer secret sharing,
# docs/distributed-keygen.md) is below n²·2^SHARE_SLACK_BITS, and the proof's randomness covers that too.
COMBINE_WINDOW_BITS = 3  # t ≈ 7 shares raised to 2λ_i of ~25 bits: 6 table entries a share pay off
SHARE_SLACK_BITS = 320


@dataclass(frozen=True)
class ThresholdPublicKey:
    """Public part of a threshold key: n, t, ℓ, v, v_1..v_ℓ and h_s. No m, p′, q′."""

    n: int
    threshold: int
    verification_base: int  # v
    verification_keys: tuple[int, ...]  # v_1..v_ℓ
    hs: int

    def __post_init__(self):
        """Validated on construction (crypto.md): sizes, ranges, no degenerate v, v_i or h_s, and
        v_1..v_ℓ consistent with a polynomial of degree t − 1."""
        if not 1 <= self.holders <= MAX_HOLDERS:
            raise InvalidKey(f"a threshold key has 1 to {MAX_HOLDERS} key holders")
        if not 1 <= self.threshold <= self.holders:
            raise InvalidKey("threshold must be between 1 and the number of key holders")
        check_modulus(self.n)
        check_group_element(self.n, self.verification_base, "v")
        check_group_element(self.n, self.hs, "h_s")
        for holder, key in enumerate(self.verification_keys, start=1):
            check_group_element(self.n, key, f"v_{holder}", generator=False)
        self._check_degree()

    def _check_degree(self) -> None:
        """v_j^Δ = Π_{i≤t} v_i^{Δ·L_i(j)} for every j > t: the v_i lie on one polynomial of degree t − 1
        in the exponent, so the key is the t-of-ℓ key it declares."""
        nsquare = self.n * self.n
        first = list(range(1, self.threshold + 1))
        for j in range(self.threshold + 1, self.holders + 1):
            interpolated = gmpy2.mpz(1)
            for i in first:
                exponent = lagrange_coefficient(self.delta, first, i, at=j)
                interpolated = interpolated * gmpy2.powmod(self.verification_keys[i - 1], exponent, nsquare) % nsquare
            if gmpy2.powmod(self.verification_keys[j - 1], self.delta, nsquare) != interpolated:
                raise InvalidKey(f"verification keys are not consistent with threshold t = {self.threshold}")

    @property
    def holders(self) -> int:
        return len(self.verification_keys)

    @cached_property
    def paillier(self) -> PaillierPublicKey:
        return PaillierPublicKey(self.n)

    @cached_property
    def encryption_key(self) -> PublicKey:
        return PublicKey(self.paillier, self.hs)

    @cached_property
    def key_id(self) -> bytes:
        """SHA-256 over every public parameter: n, h_s, t, ℓ, v, v_1..v_ℓ."""
        return fingerprint(KEY_ID_TAG, self.n, self.hs, self.threshold, self.holders, self.verification_base,
                           *self.verification_keys)

    @property
    def encryptor(self):
        return self.encryption_key.encryptor

    @cached_property
    def delta(self) -> int:
        return math.factorial(self.holders)

    def verification_key(self, holder: int) -> int:
        if not 1 <= holder <= self.holders:
            raise InvalidShare(holder, "no such key holder")
        return self.verification_keys[holder - 1]

    @cached_property
    def proof_randomness_bits(self) -> int:
        # r must hide e·Δ·s_i (≤ |n²| + SHARE_SLACK_BITS + 128 + log₂Δ bits) statistically.
        return self.paillier.nsquare.bit_length() + SHARE_SLACK_BITS + (self.delta - 1).bit_length() + 256

    @cached_property
    def share_bound(self) -> int:
        """Every key share lies in (0, share_bound)."""
        return self.paillier.nsquare << SHARE_SLACK_BITS

    @cached_property
    def _verification_base_table(self) -> FixedBaseTable:
        # Every proof raises v to its r (holder) or z (verifier), both below 2^(proof_randomness_bits + 1):
        # windows of 3 bits hold 6 MB at 2048 bits (a role at rest stays under 120 MB) and take a third of a
        # powmod's time (4 bits: 9 MB, a quarter).
        return FixedBaseTable(self.verification_base, self.paillier.nsquare, self.proof_randomness_bits + 1,
                              window_bits=3)

    def verification_base_power(self, exponent: int) -> int:
        """v^exponent mod n² for 0 ≤ exponent < 2^(proof_randomness_bits + 1)."""
        return int(self._verification_base_table.pow(exponent))


@dataclass(frozen=True)
class PartialDecryption:
    """Holder i's share c_i = c^(2Δ·s_i) with its proof (e, z); e = 0, z = 0 when unproven."""

    holder: int
    value: int
    challenge: int = 0
    response: int = 0


@dataclass(frozen=True)
class KeyShare:
    index: int
    secret: int = field(repr=False)
    public: ThresholdPublicKey

    def decryption_share(self, ciphertext: int) -> int:
        """c^(2Δ·s_i) mod n², without a proof."""
        ct.validate(self.public.paillier, ciphertext)
        exponent = 2 * self.public.delta * self.secret
        return int(gmpy2.powmod(ciphertext, exponent, self.public.paillier.nsquare))

    def partial_decrypt(self, ciphertext: int, context: bytes = b"") -> PartialDecryption:
        """Partial decryption with a Chaum–Pedersen proof that log_{c⁴}(c_i²) = log_v(v_i)."""
        value = self.decryption_share(ciphertext)
        challenge, response = self._prove(ciphertext, value, context)
        return PartialDecryption(self.index, value, challenge, response)

    def partial_decrypt_batch(self, ciphertexts: list[int], context: bytes) -> "BatchPartialDecryption":
        """Partial decryptions of a vector with one proof for all of them (`verify_batch`): the proof is
        over Π c_j^ρ_j and Π c_{i,j}^ρ_j with ρ_j derived from every c_j and c_{i,j} (Fiat–Shamir)."""
        if not ciphertexts:
            raise ValueError("a batch holds at least one ciphertext")
        values = tuple(self.decryption_share(c) for c in ciphertexts)
        public = self.public
        coefficients = batch_coefficients(public, self.index, context, ciphertexts, values)
        nsquare = public.paillier.nsquare
        challenge, response, a, b = self._prove_committed(_combination(ciphertexts, coefficients, nsquare),
                                                          _combination(values, coefficients, nsquare), context)
        return BatchPartialDecryption(self.index, values, challenge, response, (a, b))

    def _prove(self, ciphertext: int, value: int, context: bytes) -> tuple[int, int]:
        """(e, z) for log_{c⁴}(value²) = log_v(v_i) = Δ·s_i, with r long enough to hide e·Δ·s_i."""
        challenge, response, _, _ = self._prove_committed(ciphertext, value, context)
        return challenge, response

    def _prove_committed(self, ciphertext: int, value: int, context: bytes) -> tuple[int, int, int, int]:
        """(e, z, a, b): the proof with its commitments, which a verifier of many proofs checks together
        (`threshold_batch`) instead of recomputing each a and b."""
        public = self.public
        nsquare = public.paillier.nsquare
        c4 = gmpy2.powmod(ciphertext, 4, nsquare)
        r = secrets.randbits(public.proof_randomness_bits)
        a = gmpy2.powmod(c4, r, nsquare)
        b = public.verification_base_power(r)
        challenge = _challenge(public, self.index, context, c4, value * value % nsquare, a, b)
        return challenge, int(r + challenge * public.delta * self.secret), int(a), int(b)


@dataclass(frozen=True)
class BatchPartialDecryption:
    """Holder i's shares c_{i,j} = c_j^(2Δ·s_i) of a vector of ciphertexts, with one proof (e, z) for all."""

    holder: int
    values: tuple[int, ...]
    challenge: int
    response: int
    # (a, b), the proof's commitments, which e is the hash of: sent so that the releasing role can check many
    # holders' proofs with one multi-exponentiation; None in answers recorded without them.
    commitments: tuple[int, int] | None = None

    def share(self, index: int) -> PartialDecryption:
        """The index-th share alone, for `combine` (its proof is the batch's)."""
        return PartialDecryption(self.holder, self.values[index])


def _fixed(value: int, width: int) -> bytes:
    return int(value).to_bytes(width, "big")


def _challenge(public: ThresholdPublicKey, holder: int, context: bytes, c4, ci2, a, b) -> int:
    """Fiat–Shamir challenge; every field length-prefixed, group elements fixed-width."""
    width = ct.ciphertext_length(public.paillier)
    fields = [
        PROOF_DOMAIN_TAG,
        public.key_id,
        _fixed(holder, 4),
        context,
        _fixed(c4, width),
        _fixed(ci2, width),
        _fixed(public.verification_base, width),
        _fixed(public.verification_key(holder), width),
        _fixed(a, width),
        _fixed(b, width),
    ]
    return int.from_bytes(length_prefixed_digest(fields)[: CHALLENGE_BITS // 8], "big")


def verify(public: ThresholdPublicKey, ciphertext: int, partial: PartialDecryption, context: bytes = b"") -> None:
    """Raise InvalidShare unless the partial decryption's proof holds.

    v and v_i come from the public key, never from the message.
    """
    _check_share_value(public, partial.holder, partial.value)
    _check_proof(public, partial.holder, ciphertext, partial.value, partial.challenge, partial.response, context)


def verify_batch(public: ThresholdPublicKey, ciphertexts: list[int], batch: BatchPartialDecryption,
                 context: bytes) -> None:
    """Raise InvalidShare unless every c_{i,j}² = c_j^(4Δ·s_i), checked by one proof on the combination.

    Soundness (small-exponent batch test, Bellare–Garay–Rabin): let D_j = c_{i,j}² / c_j^(4Δ·s_i). Each D_j is
    a square in Z*_{n²}, whose order n·p′·q′ has no prime factor below 2^1000 (safe primes). The proof shows
    Π D_j^ρ_j = 1. If some D_k ≠ 1, then for any fixed other ρ_j at most one ρ_k in [0, 2^128) satisfies
    this (two would give D_k^(ρ−ρ′) = 1 with 0 < |ρ−ρ′| < 2^128 < ord D_k), so a wrong share passes with
    probability at most 2^-128 per hash query: ρ_j come from a hash of every c_j and c_{i,j}, fixed before
    the prover can choose them. A key made without a dealer has random primes, so the order may have small
    factors; soundness then rests on the assumption that no one can find an element of small order without
    the factors (Damgård–Koprowski 2001; docs/distributed-keygen.md, "No safe primes")."""
    holder = batch.holder
    if len(batch.values) != len(ciphertexts) or not ciphertexts:
        raise InvalidShare(holder, f"{len(batch.values)} shares for {len(ciphertexts)} ciphertexts")
    for value in batch.values:
        _check_share_value(public, holder, value)
    coefficients = batch_coefficients(public, holder, context, ciphertexts, batch.values)
    nsquare = public.paillier.nsquare
    _check_proof(public, holder, _combination(ciphertexts, coefficients, nsquare),
                 _combination(batch.values, coefficients, nsquare), batch.challenge, batch.response, context)


def batch_coefficients(public: ThresholdPublicKey, holder: int, context: bytes, ciphertexts, values) -> list[int]:
    """ρ_1..ρ_P, 128 bits each, from SHAKE-256 over the key, holder, context and every c_j and c_{i,j}."""
    width = ct.ciphertext_length(public.paillier)
    seed = hashlib.sha256()
    for item in (BATCH_DOMAIN_TAG, public.key_id, _fixed(holder, 4), context, _fixed(len(ciphertexts), 4)):
        seed.update(len(item).to_bytes(4, "big"))
        seed.update(item)
    for element in (*ciphertexts, *values):
        seed.update(_fixed(element, width))
    size = BATCH_COEFFICIENT_BITS // 8
    stream = hashlib.shake_256(seed.digest()).digest(size * len(ciphertexts))
    return [int.from_bytes(stream[j * size:(j + 1) * size], "big") for j in range(len(ciphertexts))]


def _combination(elements, coefficients: list[int], nsquare) -> int:
    return int(multi_powmod(elements, coefficients, nsquare))


def _check_share_value(public: ThresholdPublicKey, holder: int, value: int) -> None:
    try:
        ct.validate(public.paillier, value)
    except InvalidCiphertext as error:
        raise InvalidShare(holder, f"share value invalid: {error}") from None


def _check_proof(public: ThresholdPublicKey, holder: int, ciphertext: int, value: int, challenge: int, response: int,
                 context: bytes) -> None:
    nsquare = public.paillier.nsquare
    verification_key = public.verification_key(holder)
    if not 0 <= challenge < 1 << CHALLENGE_BITS:
        raise InvalidShare(holder, "challenge out of range")
    max_response = (1 << public.proof_randomness_bits) + (1 << CHALLENGE_BITS) * public.delta * public.share_bound
    if not 0 <= response < max_response:
        raise InvalidShare(holder, "response out of range")
    c4 = gmpy2.powmod(ciphertext, 4, nsquare)
    ci2 = gmpy2.powmod(value, 2, nsquare)
    a = gmpy2.powmod(c4, response, nsquare) * gmpy2.powmod(ci2, -challenge, nsquare) % nsquare
    b = public.verification_base_power(response) * gmpy2.powmod(verification_key, -challenge, nsquare) % nsquare
    if _challenge(public, holder, context, c4, ci2, a, b) != challenge:
        raise InvalidShare(holder, "proof of correct decryption does not verify")


def lagrange_coefficient(delta: int, holders: list[int], holder: int, at: int = 0) -> int:
    """Δ · Π_{j∈S∖{i}} (at − j) / (i − j), an exact integer; at 0 it is λ_{0,i} = Δ · Π j / (j − i)."""
    numerator, denominator = delta, 1
    for other in holders:
        if other != holder:
            numerator *= at - other
            denominator *= holder - other
    quotient, remainder = divmod(numerator, denominator)
    assert remainder == 0, "Δ·Π j/(j−i) is an integer for every set of distinct holders"
    return quotient


def combine(public: ThresholdPublicKey, partials: list[PartialDecryption]) -> int:
    """Plaintext residue in [0, n) from exactly t shares (assumed verified).

    c′ ≡ 1 mod n holds exactly when the shares combine to a decryption; otherwise
    (too few, wrong or unverified shares) this raises instead of returning garbage."""
    if len(partials) != public.threshold:
        raise NotEnoughShares(public.threshold, len(partials), {})
    holders = [partial.holder for partial in partials]
    if len(set(holders)) != len(holders):
        raise ValueError("partial decryptions from the same holder twice")
    n, nsquare = public.n, public.paillier.nsquare
    combined = gmpy2.mpz(1)
    for partial in partials:
        exponent = 2 * lagrange_coefficient(public.delta, holders, partial.holder)
        combined = combined * gmpy2.powmod(partial.value, exponent, nsquare) % nsquare
    if combined % n != 1:
        raise CryptoError("the partial decryptions do not combine to a decryption (c′ ≢ 1 mod n)")
    scale = gmpy2.invert(4 * public.delta * public.delta, n)
    return int((combined - 1) // n * scale % n)


def combine_vector(public: ThresholdPublicKey, shares: dict[int, Sequence[int]]) -> list[int]:
    """`combine` for every ciphertext of a vector, from exactly t holders' shares of each ({holder: shares}): the
    Lagrange coefficients once, and per ciphertext one multi-exponentiation of the shares with positive
    coefficients over one of those with negative ones (one inversion instead of one per negative coefficient).
    Raises as `combine` does when the shares of any ciphertext do not combine to a decryption."""
    if len(shares) != public.threshold:
        raise NotEnoughShares(public.threshold, len(shares), {})
    holders = sorted(shares)
    lengths = {len(values) for values in shares.values()}
    if len(lengths) != 1:
        raise ValueError("the holders' share vectors differ in length")
    n, nsquare = public.n, public.paillier.nsquare
    exponents = {h: 2 * lagrange_coefficient(public.delta, holders, h) for h in holders}
    positive = [h for h in holders if exponents[h] > 0]
    negative = [h for h in holders if exponents[h] < 0]
    scale = gmpy2.invert(4 * public.delta * public.delta, n)
    plaintexts = []
    for index in range(lengths.pop()):
        above = multi_powmod([shares[h][index] for h in positive], [exponents[h] for h in positive], nsquare,
                             window_bits=COMBINE_WINDOW_BITS)
        below = multi_powmod([shares[h][index] for h in negative], [-exponents[h] for h in negative], nsquare,
                             window_bits=COMBINE_WINDOW_BITS)
        try:
            combined = above * gmpy2.invert(below, nsquare) % nsquare
        except ZeroDivisionError:  # a share that is no unit: no decryption either
            raise CryptoError("the partial decryptions do not combine to a decryption (a share is no unit)") from None
        if combined % n != 1:
            raise CryptoError("the partial decryptions do not combine to a decryption (c′ ≢ 1 mod n)")
        plaintexts.append(int((combined - 1) // n * scale % n))
    return plaintexts


def decrypt(
    public: ThresholdPublicKey, ciphertext: int, partials: list[PartialDecryption], context: bytes = b""
) -> tuple[int, dict[int, str]]:
    """Verify every share, drop and name the bad ones, combine t good ones.

    Returns (signed plaintext, {rejected holder: reason}); raises
    NotEnoughShares when fewer than t shares verify.
    """
    ct.validate(public.paillier, ciphertext)
    valid: dict[int, PartialDecryption] = {}
    rejected: dict[int, str] = {}
    for partial in partials:
        if partial.holder in valid or partial.holder in rejected:
            rejected[partial.holder] = "more than one share from this holder"
            valid.pop(partial.holder, None)
            continue
        try:
            verify(public, ciphertext, partial, context)
        except InvalidShare as error:
            rejected[partial.holder] = error.reason
        else:
            valid[partial.holder] = partial
    if len(valid) < public.threshold:
        raise NotEnoughShares(public.threshold, len(valid), rejected)
    chosen = sorted(valid.values(), key=lambda partial: partial.holder)[: public.threshold]
    return ct.decode_signed(public.paillier, combine(public, chosen)), rejected


@dataclass(frozen=True)
class SafePrimes:
    """The dealer's secret: p = 2p′+1, q = 2q′+1. Discarded after dealing; never printed."""

    p: int = field(repr=False)
    q: int = field(repr=False)

    @classmethod
    def generate(cls, bits: int) -> "SafePrimes":
        check_key_bits(bits)
        return cls(*distinct_prime_pair(bits // 2, safe_prime))


def _random_generator_of_squares(primes: SafePrimes, n: int, nsquare: int) -> int:
    """A random square of Z*_{n²} of full order n·m (m = p′q′)."""
    order = n * ((primes.p - 1) // 2) * ((primes.q - 1) // 2)
    factors = (primes.p, primes.q, (primes.p - 1) // 2, (primes.q - 1) // 2)
    while True:
        root = secrets.randbelow(nsquare - 2) + 2
        if gmpy2.gcd(root, n) != 1:
            continue
        v = gmpy2.powmod(root, 2, nsquare)
        if all(gmpy2.powmod(v, order // factor, nsquare) != 1 for factor in factors):
            return int(v)


def deal(primes: SafePrimes, threshold: int, holders: int) -> tuple[ThresholdPublicKey, list[KeyShare]]:
    """Trusted-dealer key generation: the public key and one share per holder."""
    if not 1 <= threshold <= holders:
        raise ValueError("need 1 ≤ threshold ≤ holders")
    bits = 2 * primes.p.bit_length()
    n = modulus_from_primes(primes.p, primes.q, bits)
    nsquare = n * n
    m = ((primes.p - 1) // 2) * ((primes.q - 1) // 2)
    nm = n * m
    d = m * int(gmpy2.invert(m, n))  # d ≡ 0 (mod m), d ≡ 1 (mod n)
    coefficients = [d] + [secrets.randbelow(nm) for _ in range(threshold - 1)]
    secrets_by_holder = [
        sum(coefficient * index**power for power, coefficient in enumerate(coefficients)) % nm
        for index in range(1, holders + 1)
    ]
    del d, coefficients  # the dealer's secrets: no reference outlives the dealing
    delta = math.factorial(holders)
    v = _random_generator_of_squares(primes, n, nsquare)
    del m, nm
    verification_keys = tuple(int(gmpy2.powmod(v, delta * s, nsquare)) for s in secrets_by_holder)
    public = ThresholdPublicKey(
        n=n,
        threshold=threshold,
        verification_base=v,
        verification_keys=verification_keys,
        hs=generate_hs(PaillierPublicKey(n)),
    )
    shares = [KeyShare(index, secret, public) for index, secret in enumerate(secrets_by_holder, start=1)]
    return public, shares


def generate_threshold_key(bits: int, threshold: int, holders: int) -> tuple[ThresholdPublicKey, list[KeyShare]]:
    primes = SafePrimes.generate(bits)
    try:
        return deal(primes, threshold, holders)
    finally:
        del primes  # p and q: this frame keeps no reference, even if dealing fails
