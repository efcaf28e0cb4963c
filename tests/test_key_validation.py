"""Keys and key files as an attacker would try them."""

import dataclasses
import json
import os
import stat

import gmpy2
import pytest

from mpdp.cryptocore.errors import CryptoError, InvalidKey, InvalidShare, NotEnoughShares
from mpdp.cryptocore.keys import secret_files
from mpdp.cryptocore.paillier import keyfiles
from mpdp.cryptocore.paillier.keypair import PublicKey
from mpdp.cryptocore.paillier.threshold import (
    PartialDecryption,
    SafePrimes,
    ThresholdPublicKey,
    combine,
    deal,
    decrypt,
    lagrange_coefficient,
    verify,
)

CONTEXT = b"session/0"


def _forged(public: ThresholdPublicKey, **changes) -> dict:
    return {**keyfiles.public_key_to_dict(public), **changes}


def test_a_forged_key_with_unit_verification_keys_is_refused(threshold_key):
    """With v = v_i = 1 any 'share' would verify; the key must not load."""
    public, _ = threshold_key
    forged = _forged(public, v="0x1", verification_keys=["0x1"] * public.holders)
    with pytest.raises(InvalidKey):
        keyfiles.public_key_from_dict(forged)
    with pytest.raises(InvalidKey):
        dataclasses.replace(public, verification_base=1, verification_keys=(1,) * public.holders)
    minus_one = public.paillier.nsquare - 1
    for field, value in (("verification_base", minus_one), ("hs", 1), ("hs", minus_one), ("hs", public.n)):
        with pytest.raises(InvalidKey):
            dataclasses.replace(public, **{field: value})


def test_verification_keys_must_match_the_declared_threshold(threshold_key):
    """A key whose v_i do not lie on one degree t−1 polynomial (here: one v_i replaced) is refused, and so is
    the honest key declared with another t."""
    public, _ = threshold_key
    nsquare = public.paillier.nsquare
    keys = list(public.verification_keys)
    keys[-1] = keys[-1] * public.verification_base % nsquare  # v_5 = v^{Δ·s_5 + 1}: a share of nothing
    with pytest.raises(InvalidKey, match="threshold"):
        dataclasses.replace(public, verification_keys=tuple(keys))
    with pytest.raises(InvalidKey, match="threshold"):
        dataclasses.replace(public, threshold=public.threshold - 1)


def test_key_id_covers_every_public_parameter(threshold_key):
    public, _ = threshold_key
    other_hs = dataclasses.replace(public, hs=public.encryptor.rerandomise(public.hs))
    assert other_hs.key_id != public.key_id
    with pytest.raises(InvalidKey, match="key id"):  # a file whose id was computed over n alone
        keyfiles.public_key_from_dict(_forged(other_hs, key_id=public.key_id.hex()))


def test_plain_public_keys_are_validated(keypair):
    n = keypair.public.n
    for hs in (1, n * n - 1, 0, n):
        with pytest.raises(InvalidKey):
            PublicKey.from_integers(n, hs)
    with pytest.raises(InvalidKey):
        PublicKey.from_integers(n + 1, keypair.public.hs)  # even
    with pytest.raises(InvalidKey):
        PublicKey.from_integers(n, keypair.public.hs, bits=2048)  # not the session's size
    with pytest.raises(InvalidKey):
        PublicKey.from_integers(2**511 + 187, 3)  # too small


def test_combine_checks_its_result_and_t_minus_one_shares_never_decrypt(threshold_key):
    public, shares = threshold_key
    c = public.encryptor.encrypt(31337)
    partials = [share.partial_decrypt(c, CONTEXT) for share in shares]
    t = public.threshold
    with pytest.raises(NotEnoughShares):
        decrypt(public, c, partials[: t - 1], CONTEXT)
    with pytest.raises(CryptoError):
        combine(public, partials[: t - 1])
    # Interpolating through t − 1 points (Lagrange over them, as combine would) gives c′ ≢ 1 mod n.
    nsquare, holders = public.paillier.nsquare, [p.holder for p in partials[: t - 1]]
    c_prime = 1
    for partial in partials[: t - 1]:
        exponent = 2 * lagrange_coefficient(public.delta, holders, partial.holder)
        c_prime = c_prime * gmpy2.powmod(partial.value, exponent, nsquare) % nsquare
    assert c_prime % public.n != 1
    # An unverified wrong share fails the same way instead of yielding garbage.
    bad = PartialDecryption(partials[0].holder, partials[0].value * partials[0].value % public.paillier.nsquare)
    with pytest.raises(CryptoError, match="c′"):
        combine(public, [bad, *partials[1:t]])
    assert combine(public, partials[:t]) == 31337


def test_no_secret_in_any_repr(threshold_key, keypair):
    public, shares = threshold_key
    primes = SafePrimes(p=1000003, q=1000033)
    assert "1000003" not in repr(primes) and "1000033" not in repr(primes)
    assert hex(shares[0].secret)[2:] not in repr(shares[0]) and str(shares[0].secret) not in repr(shares[0])
    assert str(keypair.private.p) not in repr(keypair) and str(keypair.private.q) not in repr(keypair)


def test_share_files_are_private_from_the_first_byte_and_never_follow_symlinks(threshold_key, tmp_path):
    public, shares = threshold_key
    share_path = tmp_path / keyfiles.share_file_name(1)
    share_path.write_text("old")
    os.chmod(share_path, 0o644)
    with pytest.raises(FileExistsError):  # refuses to overwrite unless asked
        keyfiles.write_key_files(tmp_path, public, shares)
    assert share_path.read_text() == "old"
    keyfiles.write_key_files(tmp_path, public, shares, overwrite=True)
    for share in shares:
        mode = stat.S_IMODE(os.lstat(tmp_path / keyfiles.share_file_name(share.index)).st_mode)
        assert mode == 0o600, oct(mode)  # replaced, not rewritten in place: the old 0644 does not survive
    assert keyfiles.load_key_share(share_path).secret == shares[0].secret

    # A planted symlink is replaced, never written through.
    target = tmp_path / "victim"
    target.write_text("untouched")
    planted = tmp_path / "planted" / keyfiles.share_file_name(1)
    planted.parent.mkdir()
    planted.symlink_to(target)
    with pytest.raises(FileExistsError):
        keyfiles.write_key_files(planted.parent, public, shares)
    keyfiles.write_key_files(planted.parent, public, shares, overwrite=True)
    assert target.read_text() == "untouched" and not planted.is_symlink()
    assert not list(tmp_path.glob(".*.tmp")) and not list(planted.parent.glob(".*.tmp"))


def test_secret_files_are_created_exclusively(tmp_path):
    path = secret_files.write_file(tmp_path / "k", b"secret")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with pytest.raises(FileExistsError):
        secret_files.write_file(path, b"other")
    assert path.read_bytes() == b"secret"


def test_a_share_file_of_another_key_is_refused(threshold_key, tmp_path):
    public, shares = threshold_key
    keyfiles.write_key_files(tmp_path, public, shares)
    data = json.loads((tmp_path / keyfiles.share_file_name(2)).read_text())
    data["secret"] = hex(int(data["secret"], 16) + 1)
    with pytest.raises(ValueError, match="verification key"):
        keyfiles.key_share_from_dict(data)


def test_verify_rejects_a_share_proven_under_a_forged_key(threshold_key):
    """Even a correctly formed proof only verifies against the real v, v_i (taken from the key, never the message)."""
    public, shares = threshold_key
    c = public.encryptor.encrypt(5)
    honest = shares[0].partial_decrypt(c, CONTEXT)
    forged_value = PartialDecryption(honest.holder, gmpy2.powmod(c, 2, public.paillier.nsquare), honest.challenge,
                                     honest.response)
    with pytest.raises(InvalidShare):
        verify(public, c, forged_value, CONTEXT)


def test_keygen_refuses_to_overwrite_without_force(tmp_path, capsys):
    from launcher.cli import main

    out = tmp_path / "keys"
    assert main(["keygen", "--parties", "3", "--out", str(out), "--bits", "1024"]) == 0
    first = (out / keyfiles.PUBLIC_KEY_FILE).read_text()
    capsys.readouterr()
    assert main(["keygen", "--parties", "3", "--out", str(out), "--bits", "1024"]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("mpdp: error:") and "--force" in error
    assert (out / keyfiles.PUBLIC_KEY_FILE).read_text() == first
    assert main(["keygen", "--parties", "3", "--out", str(out), "--bits", "1024", "--force"]) == 0
    assert (out / keyfiles.PUBLIC_KEY_FILE).read_text() != first
    assert stat.S_IMODE(os.stat(out / keyfiles.share_file_name(1)).st_mode) == 0o600


def test_a_partys_configuration_prints_no_private_data(threshold_key):
    import numpy as np

    from party.resources import PartyResources

    public, shares = threshold_key
    marker = 314159265358979323  # far too long to turn up by chance among the public key's digits
    config = PartyResources(1, public, shares[0], "model-object", np.full((2, 2), 0.5), np.array([marker]))
    text = repr(config) + str(config)
    assert str(marker) not in text and "model-object" not in text and "array(" not in text
    assert hex(shares[0].secret)[2:] not in text


# --- Kept from the mutation run over cryptocore (mutants that survived the suite and matter). ---

def test_a_dealt_key_needs_t_shares(known_primes):
    """The dealer's polynomial has degree exactly t − 1: t − 1 shares interpolate to nothing."""
    public, shares = deal(known_primes, 3, 5)
    c = public.encryptor.encrypt(424242)
    nsquare = public.paillier.nsquare
    for subset in ([0, 1], [1, 3], [2, 4]):
        partials = [shares[i].partial_decrypt(c, CONTEXT) for i in subset]
        holders = [p.holder for p in partials]
        c_prime = 1
        for partial in partials:
            c_prime = c_prime * gmpy2.powmod(partial.value, 2 * lagrange_coefficient(public.delta, holders, partial.holder),
                                             nsquare) % nsquare
        assert c_prime % public.n != 1, subset
    assert decrypt(public, c, [shares[i].partial_decrypt(c, CONTEXT) for i in (0, 2, 4)], CONTEXT)[0] == 424242


def test_the_degree_check_covers_every_verification_key(threshold_key):
    public, _ = threshold_key
    for replaced in range(public.threshold, public.holders):  # v_{t+1} … v_ℓ, one at a time
        keys = list(public.verification_keys)
        keys[replaced] = keys[replaced] * public.verification_base % public.paillier.nsquare
        with pytest.raises(InvalidKey, match="threshold"):
            dataclasses.replace(public, verification_keys=tuple(keys))


def test_h_s_comes_from_minus_a_square(keypair):
    """h = −x² is a non-residue modulo p and q (p ≡ q ≡ 3 mod 4), as the DJN encryption requires."""
    p, q, n = keypair.private.p, keypair.private.q, keypair.public.n
    h = gmpy2.powmod(keypair.public.hs % n, gmpy2.invert(n, (p - 1) * (q - 1)), n)  # h_s = h^n: take the n-th root
    assert gmpy2.legendre(h, p) == -1 and gmpy2.legendre(h, q) == -1


def test_secret_files_never_open_a_planted_temporary_name_and_set_their_mode_at_creation(tmp_path, monkeypatch):
    monkeypatch.setattr(secret_files.secrets, "token_hex", lambda _: "predictable")
    target = tmp_path / "victim"
    target.write_text("untouched")
    (tmp_path / ".k.predictable.tmp").symlink_to(target)
    with pytest.raises(FileExistsError):  # O_EXCL (and O_NOFOLLOW): the planted name is not followed
        secret_files.write_file(tmp_path / "k", b"secret")
    assert target.read_text() == "untouched"
    (tmp_path / ".k.predictable.tmp").unlink()
    monkeypatch.setattr(secret_files.os, "fchmod", lambda fd, mode: None)  # the mode must come from os.open
    path = secret_files.write_file(tmp_path / "k", b"secret")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_key_sizes_are_even_and_large_enough():
    from mpdp.cryptocore.paillier.keypair import check_key_bits

    for bits in (1025, 1023, 512, 2047):
        with pytest.raises(ValueError):
            check_key_bits(bits)
    check_key_bits(1024)
    check_key_bits(2048)


@pytest.fixture(scope="module")
def known_primes():
    return SafePrimes.generate(1024)


def test_moduli_that_are_even_square_or_prime_are_refused(keypair):
    from mpdp.cryptocore.keys.key_checks import check_modulus

    p = keypair.private.p
    prime = int(gmpy2.next_prime(2**1023 + 2**1000))
    for n in (keypair.public.n + 1, p * p, prime, 2**1024 - 2):
        with pytest.raises(InvalidKey):
            check_modulus(n)
    check_modulus(keypair.public.n, 1024)


def test_a_duplicate_share_rejects_its_holder_but_not_the_rest(threshold_key):
    public, shares = threshold_key
    c = public.encryptor.encrypt(77)
    partials = [share.partial_decrypt(c, CONTEXT) for share in shares]
    value, rejected = decrypt(public, c, [partials[0], partials[0], *partials[1:]], CONTEXT)
    assert value == 77 and set(rejected) == {1} and "more than one" in rejected[1]
