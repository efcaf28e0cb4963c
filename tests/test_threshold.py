import itertools
import json
import math
import stat
from dataclasses import replace

import gmpy2
import pytest
from hypothesis import given
from hypothesis import strategies as st
from phe import PaillierPublicKey

from mpdp.cryptocore.errors import InvalidShare, NotEnoughShares
from mpdp.cryptocore.paillier import keyfiles
from mpdp.cryptocore.paillier.threshold import (
    PartialDecryption,
    SafePrimes,
    combine,
    deal,
    decrypt,
    verify,
    verify_batch,
)

SIGNED = st.integers(min_value=-(2**300), max_value=2**300)
CONTEXT = b"session-1/query-0"


def test_public_key_shape(threshold_key):
    public, shares = threshold_key
    assert public.threshold == 3 and public.holders == 5 and len(shares) == 5
    assert public.delta == math.factorial(5)
    assert public.n.bit_length() == 1024


@given(SIGNED)
def test_every_t_subset_combines_to_the_plaintext(threshold_key, value):
    public, shares = threshold_key
    c = public.encryptor.encrypt(value)
    partials = [share.partial_decrypt(c, CONTEXT) for share in shares]
    for partial in partials:
        verify(public, c, partial, CONTEXT)
    residues = {combine(public, list(subset)) for subset in itertools.combinations(partials, public.threshold)}
    assert residues == {value % public.n}


def test_phe_ciphertext_decrypts_through_threshold_shares(threshold_key):
    public, shares = threshold_key
    phe_key = PaillierPublicKey(public.n)  # plain phe, knowing only n
    for value in (0, 1, -1, 123456789, -(2**100)):
        c = phe_key.encrypt(value).ciphertext()
        partials = [share.partial_decrypt(c, CONTEXT) for share in shares[2:]]
        assert decrypt(public, c, partials, CONTEXT) == (value, {})


def _tamperings(public, partial):
    nsquare = public.paillier.nsquare
    yield "value times g", PartialDecryption(partial.holder, partial.value * (public.n + 1) % nsquare, partial.challenge, partial.response)
    yield "value squared", PartialDecryption(partial.holder, partial.value**2 % nsquare, partial.challenge, partial.response)
    yield "response + 1", PartialDecryption(partial.holder, partial.value, partial.challenge, partial.response + 1)
    yield "challenge + 1", PartialDecryption(partial.holder, partial.value, partial.challenge + 1, partial.response)
    yield "claims another holder", PartialDecryption(partial.holder % public.holders + 1, partial.value, partial.challenge, partial.response)


@given(SIGNED, st.integers(min_value=0, max_value=4))
def test_tampered_share_is_rejected_by_its_proof(threshold_key, value, holder):
    public, shares = threshold_key
    c = public.encryptor.encrypt(value)
    honest = shares[holder].partial_decrypt(c, CONTEXT)
    verify(public, c, honest, CONTEXT)
    for _, bad in _tamperings(public, honest):
        with pytest.raises(InvalidShare):
            verify(public, c, bad, CONTEXT)


def test_proof_is_bound_to_ciphertext_and_context(threshold_key):
    public, shares = threshold_key
    c = public.encryptor.encrypt(5)
    partial = shares[0].partial_decrypt(c, CONTEXT)
    with pytest.raises(InvalidShare):
        verify(public, c, partial, b"another session")
    with pytest.raises(InvalidShare):
        verify(public, public.encryptor.rerandomise(c), partial, CONTEXT)


def test_unproven_share_is_rejected(threshold_key):
    public, shares = threshold_key
    c = public.encryptor.encrypt(5)
    with pytest.raises(InvalidShare):
        verify(public, c, PartialDecryption(1, shares[0].decryption_share(c)), CONTEXT)


def test_bad_share_is_named_and_excluded(threshold_key):
    public, shares = threshold_key
    c = public.encryptor.encrypt(-77)
    partials = [share.partial_decrypt(c, CONTEXT) for share in shares[:4]]
    partials[1] = next(_tamperings(public, partials[1]))[1]
    value, rejected = decrypt(public, c, partials, CONTEXT)
    assert value == -77
    assert list(rejected) == [2]


def test_too_few_valid_shares_name_the_bad_ones(threshold_key):
    public, shares = threshold_key
    c = public.encryptor.encrypt(3)
    partials = [share.partial_decrypt(c, CONTEXT) for share in shares[:3]]
    partials[0] = next(_tamperings(public, partials[0]))[1]
    with pytest.raises(NotEnoughShares) as raised:
        decrypt(public, c, partials, CONTEXT)
    assert raised.value.valid == 2 and list(raised.value.rejected) == [1]
    with pytest.raises(NotEnoughShares):
        decrypt(public, c, partials[1:], CONTEXT)


def test_duplicate_holder_is_not_counted_twice(threshold_key):
    public, shares = threshold_key
    c = public.encryptor.encrypt(3)
    partials = [shares[0].partial_decrypt(c, CONTEXT)] * 2 + [shares[1].partial_decrypt(c, CONTEXT)]
    with pytest.raises(NotEnoughShares):
        decrypt(public, c, partials, CONTEXT)


def test_unknown_holder_is_rejected(threshold_key):
    public, shares = threshold_key
    c = public.encryptor.encrypt(3)
    partial = shares[0].partial_decrypt(c, CONTEXT)
    with pytest.raises(InvalidShare):
        verify(public, c, PartialDecryption(9, partial.value, partial.challenge, partial.response), CONTEXT)


def test_public_key_reveals_no_factorisation_secret(threshold_key, tmp_path):
    public, shares = threshold_key
    keyfiles.write_key_files(tmp_path, public, shares)
    published = json.loads((tmp_path / keyfiles.PUBLIC_KEY_FILE).read_text())
    assert set(published) == {"format", "version", "key_id", "n", "threshold", "holders", "hs", "v", "verification_keys"}
    # Every published group element is a unit, and n is the only number tied to p, q.
    for name in ("hs", "v"):
        assert gmpy2.gcd(int(published[name], 16), public.n) == 1


def test_verification_base_generates_the_squares():
    primes = SafePrimes.generate(1024)
    public, _ = deal(primes, 2, 3)
    p_half, q_half = (primes.p - 1) // 2, (primes.q - 1) // 2
    order = public.n * p_half * q_half
    v, nsquare = public.verification_base, public.paillier.nsquare
    assert gmpy2.powmod(v, order, nsquare) == 1
    for factor in (primes.p, primes.q, p_half, q_half):
        assert gmpy2.powmod(v, order // factor, nsquare) != 1


def test_key_files_round_trip(threshold_key, tmp_path):
    public, shares = threshold_key
    paths = keyfiles.write_key_files(tmp_path, public, shares)
    assert len(paths) == 1 + len(shares)
    loaded_public = keyfiles.load_public_key(tmp_path / keyfiles.PUBLIC_KEY_FILE)
    loaded = [keyfiles.load_key_share(tmp_path / keyfiles.share_file_name(i)) for i in (1, 3, 5)]
    assert loaded_public == public
    assert stat.S_IMODE((tmp_path / keyfiles.share_file_name(1)).stat().st_mode) == 0o600
    c = loaded_public.encryptor.encrypt(-31337)
    assert decrypt(loaded_public, c, [s.partial_decrypt(c) for s in loaded])[0] == -31337


def test_key_files_reject_tampering_and_unknown_versions(threshold_key, tmp_path):
    public, shares = threshold_key
    keyfiles.write_key_files(tmp_path, public, shares)
    share_path = tmp_path / keyfiles.share_file_name(2)
    data = json.loads(share_path.read_text())
    with pytest.raises(ValueError, match="verification key"):
        keyfiles.key_share_from_dict({**data, "secret": hex(int(data["secret"], 16) + 1)})
    with pytest.raises(ValueError, match="version"):
        keyfiles.key_share_from_dict({**data, "version": 99})
    with pytest.raises(ValueError, match="format"):
        keyfiles.public_key_from_dict({**data, "format": "pickle"})
    public_data = keyfiles.public_key_to_dict(public)
    with pytest.raises(ValueError):
        keyfiles.public_key_from_dict({**public_data, "n": hex(public.n + 2)})
    with pytest.raises(ValueError, match="key id"):
        keyfiles.public_key_from_dict({**public_data, "key_id": "00" * 32})


def test_dealer_rejects_bad_thresholds():
    primes = SafePrimes.generate(1024)
    for threshold, holders in ((0, 3), (4, 3)):
        with pytest.raises(ValueError):
            deal(primes, threshold, holders)


def test_threshold_one_of_one():
    public, shares = deal(SafePrimes.generate(1024), 1, 1)
    c = public.encryptor.encrypt(99)
    assert decrypt(public, c, [shares[0].partial_decrypt(c)]) == (99, {})


# --- Tests that guard the security parameters of the proof (each fails for a planted weakening). ---

@pytest.fixture(scope="module")
def known_order_key():
    """A 2-of-3 key whose dealer's primes the test keeps, so it can build exponents ≡ 0 mod the group order."""
    primes = SafePrimes.generate(1024)
    public, shares = deal(primes, 2, 3)
    order = public.n * (primes.p - 1) * (primes.q - 1)  # a multiple of every element's order in Z*_{n²}
    return public, shares, order


def test_proof_randomness_hides_the_key_share(threshold_key):
    """z = r + e·Δ·s_i: if r were short (e.g. 256 bits), ⌊z/(e·Δ)⌋ would be s_i. The attacker's candidate
    must not match the verification key, and z must be as long as r's |n²| + log Δ + 256 bits."""
    public, shares = threshold_key
    nsquare = public.paillier.nsquare
    for value in (1, 2, 3):
        c = public.encryptor.encrypt(value)
        proof = shares[1].partial_decrypt(c, CONTEXT)
        candidate = proof.response // (proof.challenge * public.delta)
        assert gmpy2.powmod(public.verification_base, public.delta * candidate, nsquare) != public.verification_key(2)
        assert proof.response.bit_length() >= nsquare.bit_length() + (public.delta - 1).bit_length() + 200


def test_fiat_shamir_challenge_has_128_bits(threshold_key):
    public, shares = threshold_key
    c = public.encryptor.encrypt(7)
    challenges = [shares[0].partial_decrypt(c, f"context-{i}".encode()).challenge for i in range(8)]
    assert max(e.bit_length() for e in challenges) > 120  # a 16-bit challenge is forged in 2^16 tries
    assert len(set(challenges)) == len(challenges)


def test_responses_out_of_range_are_refused_even_when_they_verify(known_order_key):
    """z ± M·ord passes the algebra; only the range check refuses it."""
    public, shares, order = known_order_key
    c = public.encryptor.encrypt(11)
    proof = shares[0].partial_decrypt(c, CONTEXT)
    big = order << (public.proof_randomness_bits + 256 - order.bit_length() + 8)
    for response in (proof.response + big, proof.response - big):
        forged = PartialDecryption(proof.holder, proof.value, proof.challenge, response)
        with pytest.raises(InvalidShare, match="response"):
            verify(public, c, forged, CONTEXT)


def test_share_values_are_validated(threshold_key):
    """value + n² has the same residue (so the proof's algebra holds) but is not an element of Z*_{n²}."""
    public, shares = threshold_key
    nsquare = public.paillier.nsquare
    c = public.encryptor.encrypt(11)
    proof = shares[0].partial_decrypt(c, CONTEXT)
    for value in (proof.value + nsquare, 0, public.n):
        with pytest.raises(InvalidShare, match="share value"):
            verify(public, c, PartialDecryption(proof.holder, value, proof.challenge, proof.response), CONTEXT)


def _batch(threshold_key, values=(5, -7, 0, 2**200)):
    public, shares = threshold_key
    ciphertexts = [public.encryptor.encrypt(v) for v in values]
    return public, shares, ciphertexts, [share.partial_decrypt_batch(ciphertexts, CONTEXT) for share in shares]


def test_batch_partial_decryptions_verify_and_combine(threshold_key):
    public, shares, ciphertexts, batches = _batch(threshold_key)
    for batch in batches:
        verify_batch(public, ciphertexts, batch, CONTEXT)
    chosen = batches[1:1 + public.threshold]
    residues = [combine(public, [b.share(j) for b in chosen]) for j in range(len(ciphertexts))]
    assert residues == [v % public.n for v in (5, -7, 0, 2**200)]


def test_batch_rejects_any_single_wrong_share(threshold_key):
    public, _, ciphertexts, batches = _batch(threshold_key)
    honest = batches[2]
    nsquare = public.paillier.nsquare
    for index in range(len(ciphertexts)):
        values = list(honest.values)
        values[index] = values[index] * (public.n + 1) % nsquare  # shifts the decryption by one
        with pytest.raises(InvalidShare, match="does not verify"):
            verify_batch(public, ciphertexts, replace(honest, values=tuple(values)), CONTEXT)


def test_batch_rejects_errors_that_cancel_in_a_plain_product(threshold_key):
    """The attacker's batch: shares off by g and by g⁻¹ leave Π c_{i,j} unchanged. Random ρ_j catch it;
    swapping two shares (right values, wrong positions) is caught the same way."""
    public, _, ciphertexts, batches = _batch(threshold_key)
    honest = batches[0]
    nsquare = public.paillier.nsquare
    g = public.n + 1
    values = list(honest.values)
    values[0] = values[0] * g % nsquare
    values[1] = values[1] * int(gmpy2.invert(g, nsquare)) % nsquare
    assert math.prod(values) % nsquare == math.prod(honest.values) % nsquare
    swapped = list(honest.values)
    swapped[0], swapped[1] = swapped[1], swapped[0]
    for forged in (values, swapped):
        with pytest.raises(InvalidShare):
            verify_batch(public, ciphertexts, replace(honest, values=tuple(forged)), CONTEXT)


def test_batch_is_bound_to_context_holder_ciphertexts_and_count(threshold_key):
    public, _, ciphertexts, batches = _batch(threshold_key)
    honest = batches[0]
    with pytest.raises(InvalidShare):
        verify_batch(public, ciphertexts, honest, b"another session")
    with pytest.raises(InvalidShare):
        verify_batch(public, ciphertexts, replace(honest, holder=2), CONTEXT)
    with pytest.raises(InvalidShare):
        verify_batch(public, ciphertexts[::-1], honest, CONTEXT)
    with pytest.raises(InvalidShare, match="shares for"):
        verify_batch(public, ciphertexts[:-1], honest, CONTEXT)
    with pytest.raises(InvalidShare, match="share value"):
        verify_batch(public, ciphertexts, replace(honest, values=(0, *honest.values[1:])), CONTEXT)


def test_the_verification_base_table_matches_powmod_over_the_proofs_range(threshold_key):
    """v^r (holder) and v^z (verifier) come from a fixed-base table; it must agree with powmod up to the
    largest in-range response and refuse anything longer rather than answer wrongly."""
    public, _ = threshold_key
    v, nsquare, top = public.verification_base, public.paillier.nsquare, public.proof_randomness_bits + 1
    largest_response = (1 << public.proof_randomness_bits) + (1 << 128) * public.delta * public.share_bound - 1
    assert largest_response.bit_length() <= top
    for exponent in (0, 1, 2**64 + 3, (1 << (top - 1)) + 12345, (1 << top) - 1):
        assert public.verification_base_power(exponent) == gmpy2.powmod(v, exponent, nsquare)
    with pytest.raises(ValueError):
        public.verification_base_power(1 << top)
