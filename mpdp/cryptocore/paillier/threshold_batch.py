"""Checking every key holder's partial-decryption proof at once (docs/client-checks.md, "Batch verification").

Each holder's answer proves, with commitments (a_i, b_i), challenge e_i = H(…, c4_i, ci2_i, a_i, b_i) and
response z_i, that (c4_i)^z_i = a_i·(ci2_i)^e_i and v^z_i = b_i·v_i^e_i, where c4_i and ci2_i are the fourth and
second powers of its random linear combinations of the ciphertexts and of its shares (`threshold.verify_batch`).
Checked one by one that is t exponentiations of c4_i to a ~4 700-bit z_i. Here the hash of each proof is
recomputed from its commitments, and the 2t equations are folded into two with fresh random 128-bit
exponents δ_i chosen by the verifier (from `secrets`, after every answer is fixed):

    Π (c4_i)^(2δ_i·z_i)  =  Π a_i^(2δ_i) · (ci2_i)^(2δ_i·e_i)
    v^(Σ 2δ_i·z_i)       =  Π b_i^(2δ_i) · v_i^(2δ_i·e_i)

one simultaneous multi-exponentiation for the long exponents, one fixed-base power of v, and short ones.
When the folded equations fail, each proof is checked alone, which names the holders whose proofs fail.

Soundness, argued in `docs/client-checks.md`: if some holder's equation is off by X_k with X_k² ≠ 1, the folded
one holds for at most one value of δ_k mod ord(X_k²) given the others (small-exponent test, Bellare–Garay–Rabin):
δ_k is one of 2^127 odd values, so with probability at most 2^-127. The factor 2 maps every X_i into the squares,
where no element of order below 2^128 exists for safe primes (or, for keys made without a dealer, none can be
found without the factors); what remains unchecked is an X_i with X_i² = 1, which moves a share by at most an element
of order 4, and `threshold.combine` raises on any such deviation (its c′ ≡ 1 mod n check). The caller falls
back to the proofs one by one whenever the combination fails.
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import gmpy2

from mpdp.cryptocore.arithmetic.multi_exponent import SharedBases, multi_powmod, sliding_multi_powmod
from mpdp.cryptocore.errors import InvalidCiphertext, InvalidShare
from mpdp.cryptocore.paillier import ciphertext as ct
from mpdp.cryptocore.paillier.threshold import (
    CHALLENGE_BITS,
    BatchPartialDecryption,
    ThresholdPublicKey,
    _challenge,
    _check_share_value,
    batch_coefficients,
    verify_batch,
)

FOLD_EXPONENT_BITS = 128  # δ_i, odd: a wrong proof passes the folded check with probability at most 2^-127
SHARES_WINDOW_BITS = 4  # V_i over one holder's P ≈ 11 shares, 128-bit ρ: 8 odd powers a share, no table reuse


@dataclass(frozen=True)
class _Proof:
    holder: int
    c4: int
    ci2: int
    a: int
    b: int
    challenge: int
    response: int


def verify_holders(public: ThresholdPublicKey, ciphertexts: Sequence[int],
                   batches: Iterable[BatchPartialDecryption], context: bytes) -> dict[int, str]:
    """{holder: reason} for every answer whose proof fails; every other answer's proof holds (up to the
    order-2 slack the module's docstring states, which `combine` catches). Answers without commitments are
    checked one by one."""
    ciphertexts = list(ciphertexts)
    batches = list(batches)
    rejected: dict[int, str] = {}
    folded: list[tuple[BatchPartialDecryption, _Proof]] = []
    # every holder combines the same ciphertexts (with its own coefficients): their digit tables are built once
    shared = SharedBases(ciphertexts, public.paillier.nsquare) if len(batches) > 1 and ciphertexts else None
    for batch in batches:
        try:
            if batch.commitments is None:
                verify_batch(public, ciphertexts, batch, context)
            else:
                folded.append((batch, _opened(public, ciphertexts, batch, context, shared)))
        except InvalidShare as error:
            rejected[batch.holder] = error.reason
    if folded and not _fold_holds(public, [proof for _, proof in folded]):
        rejected.update(verify_one_by_one(public, ciphertexts, [batch for batch, _ in folded], context))
    return rejected


def verify_one_by_one(public: ThresholdPublicKey, ciphertexts: Sequence[int],
                      batches: Iterable[BatchPartialDecryption], context: bytes) -> dict[int, str]:
    """{holder: reason} from each proof checked alone (`threshold.verify_batch`): the verdict that names."""
    rejected: dict[int, str] = {}
    for batch in batches:
        try:
            verify_batch(public, list(ciphertexts), batch, context)
        except InvalidShare as error:
            rejected[batch.holder] = error.reason
    return rejected


def _opened(public: ThresholdPublicKey, ciphertexts: list[int], batch: BatchPartialDecryption,
            context: bytes, shared: SharedBases | None = None) -> _Proof:
    """The cheap part of one proof's check: sizes, ranges, its combinations and its hash."""
    holder = batch.holder
    if len(batch.values) != len(ciphertexts) or not ciphertexts:
        raise InvalidShare(holder, f"{len(batch.values)} shares for {len(ciphertexts)} ciphertexts")
    for value in batch.values:
        _check_share_value(public, holder, value)
    if not 0 <= batch.challenge < 1 << CHALLENGE_BITS:
        raise InvalidShare(holder, "challenge out of range")
    max_response = (1 << public.proof_randomness_bits) + (1 << CHALLENGE_BITS) * public.delta * public.share_bound
    if not 0 <= batch.response < max_response:
        raise InvalidShare(holder, "response out of range")
    assert batch.commitments is not None
    a, b = batch.commitments
    for name, element in (("a", a), ("b", b)):
        try:
            ct.validate(public.paillier, element)
        except InvalidCiphertext as error:
            raise InvalidShare(holder, f"commitment {name} invalid: {error}") from None
    nsquare = public.paillier.nsquare
    coefficients = batch_coefficients(public, holder, context, ciphertexts, batch.values)
    combined = shared.power(coefficients) if shared is not None else multi_powmod(ciphertexts, coefficients, nsquare)
    c4 = gmpy2.powmod(combined, 4, nsquare)
    ci2 = gmpy2.powmod(sliding_multi_powmod(batch.values, coefficients, nsquare, SHARES_WINDOW_BITS), 2, nsquare)
    if _challenge(public, holder, context, c4, ci2, a, b) != batch.challenge:
        raise InvalidShare(holder, "proof of correct decryption does not verify")
    return _Proof(holder, int(c4), int(ci2), a, b, batch.challenge, batch.response)


def _fold_holds(public: ThresholdPublicKey, proofs: list[_Proof]) -> bool:
    nsquare = public.paillier.nsquare
    weights = [2 * (secrets.randbits(FOLD_EXPONENT_BITS) | 1) for _ in proofs]  # odd δ: never 0
    long = sliding_multi_powmod([p.c4 for p in proofs], [w * p.response for w, p in zip(weights, proofs)], nsquare)
    short = multi_powmod([p.a for p in proofs] + [p.ci2 for p in proofs],
                         weights + [w * p.challenge for w, p in zip(weights, proofs)], nsquare)
    if long != short:
        return False
    base_side = _verification_base_power(public, sum(w * p.response for w, p in zip(weights, proofs)))
    keys_side = multi_powmod([p.b for p in proofs] + [public.verification_key(p.holder) for p in proofs],
                             weights + [w * p.challenge for w, p in zip(weights, proofs)], nsquare)
    return base_side == keys_side


def _verification_base_power(public: ThresholdPublicKey, exponent: int) -> int:
    """v^exponent for an exponent longer than v's fixed-base table: v^r from the table times (v^(2^L))^q,
    where exponent = q·2^L + r and L the table's length (q is about 140 bits)."""
    length = public.proof_randomness_bits + 1
    high, low = exponent >> length, exponent & ((1 << length) - 1)
    return int(public.verification_base_power(low) * gmpy2.powmod(_shifted_base(public), high,
                                                                  public.paillier.nsquare)
               % public.paillier.nsquare)


@functools.lru_cache(maxsize=8)
def _shifted_base(public: ThresholdPublicKey) -> gmpy2.mpz:
    """v^(2^L) mod n², once per key."""
    return gmpy2.powmod(public.verification_base, 1 << (public.proof_randomness_bits + 1), public.paillier.nsquare)
