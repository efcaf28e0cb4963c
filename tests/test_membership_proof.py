"""Membership proofs: honest ones verify and decrypt to the picked value; a ciphertext of a value off the list
cannot be proven (the sender's best effort, hashed over the honest list, fails the combined check); a proof does
not move to another ciphertext, context, list or key."""

import dataclasses

import pytest

from mpdp.cryptocore import membership_proof as mp
from mpdp.cryptocore.threshold import decrypt

SLOT = 20
LIST = [1 << (SLOT * c) for c in range(4)]  # a one-hot vote over 4 classes at packed positions 0..3


def _key(public) -> mp.ProofKey:
    return mp.ProofKey(public.n, public.hs, public.key_id)


def _forged(key, claimed_list, plaintext, monkeypatch):
    """A sender that encrypts `plaintext` and proves it as if the list held it, hashing over the honest list."""
    honest = mp._challenge
    monkeypatch.setattr(mp, "_challenge", lambda k, ctx, i, c, values, a: honest(k, ctx, i, c, claimed_list, a))
    forged_list = [plaintext, *claimed_list[1:]]
    ciphertexts, proofs = mp.encrypt_and_prove(key, [forged_list], [0], b"ctx")
    monkeypatch.setattr(mp, "_challenge", honest)
    return ciphertexts, proofs


def test_honest_proofs_verify_and_decrypt(threshold_key):
    public, shares = threshold_key
    key = _key(public)
    picks = [0, 3, 1, 2, 2]
    ciphertexts, proofs = mp.encrypt_and_prove(key, [LIST] * len(picks), picks, b"ctx")
    mp.verify(key, ciphertexts, [LIST] * len(picks), proofs, b"ctx")
    assert [decrypt(public, c, [s.partial_decrypt(c) for s in shares[:3]])[0] for c in ciphertexts] == \
        [LIST[p] for p in picks]
    bits = [[0, 1 << 40]] * 3  # a binary vote: 0 or a 1 at slot 2
    ciphertexts, proofs = mp.encrypt_and_prove(key, bits, [1, 0, 1], b"ctx")
    mp.verify(key, ciphertexts, bits, proofs, b"ctx")


@pytest.mark.parametrize("plaintext", [2 * LIST[0], LIST[0] + LIST[1], LIST[2] - LIST[0], 5 * LIST[3], 0])
def test_a_value_off_the_list_cannot_be_proven(threshold_key, monkeypatch, plaintext):
    key = _key(threshold_key[0])
    ciphertexts, proofs = _forged(key, LIST, plaintext, monkeypatch)
    with pytest.raises(mp.MembershipProofInvalid, match="not shown"):
        mp.verify(key, ciphertexts, [LIST], proofs, b"ctx")


def test_one_bad_proof_among_honest_ones_fails_the_batch(threshold_key, monkeypatch):
    key = _key(threshold_key[0])
    honest, honest_proofs = mp.encrypt_and_prove(key, [LIST] * 3, [0, 1, 2], b"ctx")
    forged, forged_proofs = _forged(key, LIST, LIST[0] + LIST[1], monkeypatch)
    with pytest.raises(mp.MembershipProofInvalid):  # the forged one sits at index 0, its hash bound to index 0
        mp.verify(key, forged + honest[1:], [LIST] * 3, forged_proofs + honest_proofs[1:], b"ctx")


def test_a_proof_is_bound_to_its_ciphertext_context_list_index_and_key(threshold_key, other_keypair):
    key = _key(threshold_key[0])
    ciphertexts, proofs = mp.encrypt_and_prove(key, [LIST, LIST], [1, 2], b"ctx")
    other_list = [LIST[0], LIST[1], LIST[2], 1 << 70]
    for args in ((ciphertexts[::-1], [LIST, LIST], proofs), (ciphertexts, [LIST, other_list], proofs),
                 (ciphertexts, [LIST, LIST], proofs[::-1]), (ciphertexts[:1], [LIST], proofs)):
        with pytest.raises(mp.MembershipProofInvalid):
            mp.verify(key, *args, b"ctx")
    with pytest.raises(mp.MembershipProofInvalid):
        mp.verify(key, ciphertexts, [LIST, LIST], proofs, b"other")
    with pytest.raises(mp.MembershipProofInvalid):
        mp.verify(_key(other_keypair.public), ciphertexts, [LIST, LIST], proofs, b"ctx")


def test_out_of_range_numbers_are_refused_before_any_exponentiation(threshold_key):
    key = _key(threshold_key[0])
    ciphertexts, proofs = mp.encrypt_and_prove(key, [LIST], [1], b"ctx")
    proof = proofs[0]
    for bad in (dataclasses.replace(proof, challenges=(2**128, *proof.challenges[1:])),
                dataclasses.replace(proof, responses=(1 << key.response_bits, *proof.responses[1:])),
                dataclasses.replace(proof, commitments=proof.commitments[:3])):
        with pytest.raises(mp.MembershipProofInvalid, match="range|one commitment"):
            mp.verify(key, ciphertexts, [LIST], [bad], b"ctx")
