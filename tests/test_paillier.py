import secrets

import gmpy2
import pytest
from hypothesis import given
from hypothesis import strategies as st
from phe import EncryptedNumber

from mpdp.cryptocore.arithmetic.fixed_base import FixedBaseTable
from mpdp.cryptocore.errors import InvalidCiphertext, KeyMismatch
from mpdp.cryptocore.keys.key_checks import check_key_id
from mpdp.cryptocore.paillier import ciphertext as ct
from mpdp.cryptocore.paillier.fast_encryption import FastEncryptor
from mpdp.cryptocore.paillier.keypair import PublicKey, generate_keypair

SIGNED = st.integers(min_value=-(2**200), max_value=2**200)


def test_primes_are_blum_and_modulus_exact(keypair):
    assert keypair.private.p % 4 == 3 and keypair.private.q % 4 == 3
    assert keypair.public.n.bit_length() == 1024


def test_key_size_limits():
    with pytest.raises(ValueError):
        generate_keypair(512)
    with pytest.raises(ValueError):
        generate_keypair(1025)


@given(SIGNED)
def test_fast_encryption_decrypts_with_phe(keypair, value):
    c = keypair.public.encryptor.encrypt(value)
    assert keypair.decrypt(c) == value
    # phe's own objects decrypt it too (g = n + 1, exponent 0).
    assert keypair.private.decrypt(EncryptedNumber(keypair.public.paillier, c, 0)) == value


@given(SIGNED, SIGNED)
def test_phe_and_fast_ciphertexts_mix(keypair, a, b):
    phe_ciphertext = keypair.public.paillier.encrypt(a).ciphertext()
    fast_ciphertext = keypair.public.encryptor.encrypt(b)
    ct.validate(keypair.public.paillier, phe_ciphertext)
    assert keypair.decrypt(ct.add(keypair.public.paillier, phe_ciphertext, fast_ciphertext)) == a + b


@given(SIGNED, st.integers(min_value=-(2**100), max_value=2**100))
def test_scalar_multiply_and_add_plain(keypair, value, scalar):
    paillier = keypair.public.paillier
    c = keypair.public.encryptor.encrypt(value)
    assert keypair.decrypt(ct.scalar_multiply(paillier, c, scalar)) == value * scalar
    assert keypair.decrypt(ct.add_plain(paillier, c, scalar)) == value + scalar


@given(st.lists(SIGNED, min_size=1, max_size=30))
def test_sum_of_many(keypair, values):
    ciphertexts = [keypair.public.encryptor.encrypt(v) for v in values]
    assert keypair.decrypt(ct.add(keypair.public.paillier, *ciphertexts)) == sum(values)


def test_rerandomise_changes_ciphertext_not_plaintext(keypair):
    c = keypair.public.encryptor.encrypt(42)
    fresh = keypair.public.encryptor.rerandomise(c)
    assert fresh != c and keypair.decrypt(fresh) == 42


def test_rerandomising_for_the_key_owner_uses_each_prepared_power_once_and_keeps_plaintexts(keypair):
    """The prepared ρ^n go first, each once; the rest are made together. The owner sees unlinkable ciphertexts."""
    from mpdp.cryptocore.paillier import nth_powers

    public = keypair.public.paillier
    pool = nth_powers.pool_for(public.n)
    pool.clear()
    prepared = [nth_powers.fresh(public.n) for _ in range(2)]
    pool.add(list(prepared))
    values = [keypair.public.encryptor.encrypt(m) for m in (5, 6, 7, 8)]
    out = nth_powers.rerandomise_all_for_key_owner(public, values)
    assert [keypair.private.raw_decrypt(c) for c in out] == [5, 6, 7, 8]
    assert [c * pow(v, -1, public.nsquare) % public.nsquare for c, v in zip(out[:2], values[:2])] == prepared
    assert len(pool) == 0 and len(set(out) | set(values)) == 8


def test_re_randomisers_prepared_while_idle_are_nth_powers(keypair):
    import time

    from mpdp.cryptocore.paillier import nth_powers

    n = keypair.public.n
    pool = nth_powers.pool_for(n)
    pool.clear()
    nth_powers.prepare_while_idle(n, 5)
    deadline = time.monotonic() + 30
    while len(pool) < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    values = list(pool)
    phi = (keypair.private.p - 1) * (keypair.private.q - 1)
    assert len(set(values)) == 5 and all(pow(v, phi, n * n) == 1 for v in values)  # order divides φ: n-th residues
    nth_powers.prepare_while_idle(n, 5)  # full: nothing more
    assert len(pool) == 5
    pool.clear()


def test_encryption_is_randomised(keypair):
    e = keypair.public.encryptor
    assert len({e.encrypt(7) for _ in range(5)}) == 5


def test_plaintext_magnitude_limit(keypair):
    with pytest.raises(ValueError):
        keypair.public.encryptor.encrypt(keypair.public.n // 2)


def test_validation_rejects_out_of_group(keypair):
    paillier = keypair.public.paillier
    for bad in (0, paillier.nsquare, paillier.nsquare + 5, -3, keypair.private.p * 12345):
        with pytest.raises(InvalidCiphertext):
            ct.validate(paillier, bad)


def test_wire_form_is_fixed_length_and_checked(keypair):
    paillier = keypair.public.paillier
    c = keypair.public.encryptor.encrypt(1)
    data = ct.to_bytes(paillier, c)
    assert len(data) == 2 * 128 == ct.ciphertext_length(paillier)
    assert ct.from_bytes(paillier, data) == c
    with pytest.raises(InvalidCiphertext):
        ct.from_bytes(paillier, data[1:])
    with pytest.raises(InvalidCiphertext):
        ct.from_bytes(paillier, b"\x00" * len(data))
    with pytest.raises(InvalidCiphertext):
        ct.from_bytes(paillier, b"\xff" * len(data))  # ≥ n²


def test_key_id_covers_every_public_parameter_and_is_checked(keypair, other_keypair):
    same_n_other_hs = PublicKey(keypair.public.paillier, keypair.public.encryptor.rerandomise(keypair.public.hs))
    assert same_n_other_hs.key_id != keypair.public.key_id  # h_s is part of the id, not only n
    assert len(keypair.public.key_id) == 32
    check_key_id(keypair.public.key_id, keypair.public.key_id)
    with pytest.raises(KeyMismatch):
        check_key_id(keypair.public.key_id, other_keypair.public.key_id)
    with pytest.raises(KeyMismatch):
        check_key_id(keypair.public.key_id, same_n_other_hs.key_id)


def test_public_key_round_trip_and_tamper(keypair):
    data = keypair.public.to_dict()
    restored = PublicKey.from_dict(data)
    assert restored.n == keypair.public.n and restored.hs == keypair.public.hs
    assert keypair.decrypt(restored.encryptor.encrypt(-9)) == -9
    with pytest.raises(ValueError):
        PublicKey.from_dict({**data, "key_id": "00" * 32})


def test_zero_test_uses_crt_half(keypair):
    e = keypair.public.encryptor
    assert keypair.is_zero(e.encrypt(0))
    assert not keypair.is_zero(e.encrypt(1))
    assert not keypair.is_zero(e.encrypt(-1))


@given(st.integers(min_value=0, max_value=2**512 - 1))
def test_fixed_base_table_matches_powmod(keypair, exponent):
    modulus = keypair.public.paillier.nsquare
    table = FixedBaseTable(keypair.public.hs, modulus, 512, window_bits=5)
    assert table.pow(exponent) == gmpy2.powmod(keypair.public.hs, exponent, modulus)


def test_fixed_base_table_rejects_long_exponent(keypair):
    table = FixedBaseTable(3, keypair.public.paillier.nsquare, 64)
    with pytest.raises(ValueError):
        table.pow(1 << 64)
    assert table.pow(secrets.randbits(64) | 1) != 1


def _short_exponent(base: int, target: int, modulus: int, bits: int) -> int | None:
    """Baby-step giant-step: r < 2^bits with base^r ≡ target (mod modulus), if there is one."""
    step = 1 << (bits // 2)
    table, value = {}, gmpy2.mpz(1)
    for j in range(step):
        table.setdefault(int(value), j)
        value = value * base % modulus
    giant = gmpy2.invert(gmpy2.powmod(base, step, modulus), modulus)
    value = gmpy2.mpz(target)
    for i in range(step):
        if int(value) in table:
            return i * step + table[int(value)]
        value = value * giant % modulus
    return None


def test_fast_encryption_exponent_is_not_brute_forceable(keypair):
    """Anyone (no key needed) can test c ≡ h_s^r (mod n) for short r and so read m: the DJN exponent must have
    ⌈k/2⌉ bits, far beyond a 2^32 search."""
    public = keypair.public
    encryptor = FastEncryptor(public.paillier, public.hs)
    assert encryptor.randomness_bits >= (public.n.bit_length() + 1) // 2
    for plaintext in (0, 42):
        c = encryptor.encrypt(plaintext)
        # c = (1 + m·n)·h_s^r ≡ h_s^r (mod n)
        assert _short_exponent(public.hs % public.n, c % public.n, public.n, 32) is None


def test_encryptions_of_zero_prepared_while_idle_are_fresh_and_taken_once(keypair):
    import time

    encryptor = FastEncryptor(keypair.public.paillier, keypair.public.hs)
    encryptor.precompute_while_idle(zeros=12)
    deadline = time.monotonic() + 30
    while encryptor.prepared < 12 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert encryptor.prepared == 12
    ciphertexts = [encryptor.encrypt(value) for value in range(-6, 6)]
    assert encryptor.prepared == 0
    assert [keypair.decrypt(c) for c in ciphertexts] == list(range(-6, 6))
    randomness = [c * gmpy2.invert(1 + (value % keypair.public.n) * keypair.public.n, keypair.public.paillier.nsquare)
                  % keypair.public.paillier.nsquare for c, value in zip(ciphertexts, range(-6, 6))]
    assert len(set(randomness)) == 12  # no encryption of zero used twice
    assert keypair.decrypt(encryptor.encrypt(7)) == 7  # and made on the spot once they are gone


@given(st.integers(min_value=-2**64, max_value=2**64))
def test_an_opening_shows_the_plaintext_and_no_other(keypair, value):
    from mpdp.cryptocore.proofs.plaintext_opening import OpeningMismatch, check_opening, open_ciphertext

    public = keypair.public
    ciphertext = public.encryptor.encrypt(value)
    opening = open_ciphertext(keypair, ciphertext, value)
    check_opening(public, ciphertext, value, opening)
    for wrong_plaintext, wrong_opening in ((value + 1, opening), (value, opening * 2 % public.n), (value, 0),
                                           (value, public.n)):
        with pytest.raises(OpeningMismatch):
            check_opening(public, ciphertext, wrong_plaintext, wrong_opening)
