"""Checking every key holder's partial-decryption proof at once (docs/client-checks.md, "Batch verification").

Each holder's answer proves, with commitments (a_i, b_i), challenge e_i = H(…, c4_i, ci2_i, a_i, b_i) and
response z_i, that (c4_i)^z_i = a_i·(ci2_i)^e_i and v^z_i = b_i·v_i^e_i, where c4_i and ci2_i are the fourth and
second powers of its random linear combinations of the ciphertexts and of its shares (`threshold.verify_batch`).
Checked one by one that is t exponentiations of c4_i to a ~4 700-bit z_i. Here the hash of each proof is
recomputed from its commitments, and the 2t equations are folded into two with fresh random 128-bit
exponents δ_i chosen by the verifier (from `secrets`, after every answer is fixed):

    Π (c4_i)^(2δ_i·z_i)  =  Π a_i^(2δ_i) · (ci2_i)^(2δ_i·e_i)
    v^(Σ 2δ_i·z_i)       =  Π b_i^(2δ_i) · v_i^(2δ_i·e_i)

one simultaneous multi-exponentiation with sliding windows for the long exponents (computed, with the c4_i, in
`offload`'s worker process when the caller started one, beside the rest), one fixed-base power of v, and short
ones. When the folded equations fail, each proof is checked alone, which names the holders whose proofs fail.

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

from mpdp.cryptocore.arithmetic import offload
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
    checked one by one. With `offload.start()` called, the C_i and the long product run in a second process
    meanwhile (`_long_side`); the verdicts are the same."""
    ciphertexts = list(ciphertexts)
    batches = list(batches)
    nsquare = public.paillier.nsquare
    rejected: dict[int, str] = {}
    admitted: list[tuple[BatchPartialDecryption, list[int]]] = []
    for batch in batches:
        try:
            if batch.commitments is None:
                verify_batch(public, ciphertexts, batch, context)
            else:
                admitted.append((batch, _admitted(public, ciphertexts, batch, context)))
        except InvalidShare as error:
            rejected[batch.holder] = error.reason
    if not admitted:
        return rejected
    # δ_i, drawn here after every answer is fixed; they never leave this process and its worker
    weights = [2 * (secrets.randbits(FOLD_EXPONENT_BITS) | 1) for _ in admitted]  # odd δ: never 0
    long_arguments = (ciphertexts, [coefficients for _, coefficients in admitted],
                      [w * batch.response for w, (batch, _) in zip(weights, admitted)], nsquare)
    pending = offload.submit(_long_side, *long_arguments)
    shares = [gmpy2.powmod(sliding_multi_powmod(batch.values, coefficients, nsquare, SHARES_WINDOW_BITS), 2, nsquare)
              for batch, coefficients in admitted]
    sides = _short_sides(public, [batch for batch, _ in admitted], shares, weights)
    c4s, long = offload.run(pending, _long_side, *long_arguments)
    proofs: list[tuple[BatchPartialDecryption, _Proof, int]] = []
    for (batch, _), c4, ci2, weight in zip(admitted, c4s, shares, weights):
        assert batch.commitments is not None
        a, b = batch.commitments
        if _challenge(public, batch.holder, context, c4, ci2, a, b) != batch.challenge:
            rejected[batch.holder] = "proof of correct decryption does not verify"
        else:
            proofs.append((batch, _Proof(batch.holder, int(c4), int(ci2), a, b, batch.challenge, batch.response),
                           weight))
    if len(proofs) < len(admitted) and proofs:  # a hash failed: that holder's terms leave both sides
        kept = [w for _, _, w in proofs]
        long = sliding_multi_powmod([p.c4 for _, p, _ in proofs], [w * p.response for _, p, w in proofs], nsquare)
        sides = _short_sides(public, [batch for batch, _, _ in proofs], [p.ci2 for _, p, _ in proofs], kept)
    if proofs and not _fold_holds(long, sides):
        rejected.update(verify_one_by_one(public, ciphertexts, [batch for batch, _, _ in proofs], context))
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


def _admitted(public: ThresholdPublicKey, ciphertexts: list[int], batch: BatchPartialDecryption,
              context: bytes) -> list[int]:
    """The cheap checks of one answer (sizes, ranges, commitments) and its coefficients ρ."""
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
    for name, element in zip("ab", batch.commitments):
        try:
            ct.validate(public.paillier, element)
        except InvalidCiphertext as error:
            raise InvalidShare(holder, f"commitment {name} invalid: {error}") from None
    return batch_coefficients(public, holder, context, ciphertexts, batch.values)


def _long_side(ciphertexts: list[int], coefficients: list[list[int]], exponents: list[int],
               nsquare: int) -> tuple[list[int], int]:
    """([C_i⁴], Π (C_i⁴)^exponents_i): every holder's combination of the same ciphertexts (their digit tables built
    once) and the folded equation's long product. Public values only: it may run in `offload`'s worker."""
    shared = SharedBases(ciphertexts, nsquare)
    c4s = [int(gmpy2.powmod(shared.power(row), 4, nsquare)) for row in coefficients]
    return c4s, int(sliding_multi_powmod(c4s, exponents, nsquare))


@dataclass(frozen=True)
class _ShortSides:
    short: int  # Π a_i^(2δ_i)·(V_i²)^(2δ_i e_i)
    base: int  # v^(Σ 2δ_i z_i)
    keys: int  # Π b_i^(2δ_i)·v_i^(2δ_i e_i)


def _short_sides(public: ThresholdPublicKey, batches: list[BatchPartialDecryption], shares: list,
                 weights: list[int]) -> _ShortSides:
    """The folded equations' sides other than the long product, from the answers and V_i² (`shares`)."""
    nsquare = public.paillier.nsquare
    commitments = [batch.commitments for batch in batches]
    assert all(c is not None for c in commitments)
    short = multi_powmod([c[0] for c in commitments if c] + list(shares),
                         weights + [w * batch.challenge for w, batch in zip(weights, batches)], nsquare)
    base = _verification_base_power(public, sum(w * batch.response for w, batch in zip(weights, batches)))
    keys = multi_powmod([c[1] for c in commitments if c] + [public.verification_key(b.holder) for b in batches],
                        weights + [w * batch.challenge for w, batch in zip(weights, batches)], nsquare)
    return _ShortSides(int(short), int(base), int(keys))


def _fold_holds(long: int, sides: _ShortSides) -> bool:
    """Π (C_i⁴)^(2δ_i z_i) = Π a_i^(2δ_i)·(V_i²)^(2δ_i e_i) and v^(Σ 2δ_i z_i) = Π b_i^(2δ_i)·v_i^(2δ_i e_i)."""
    return long == sides.short and sides.base == sides.keys


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
