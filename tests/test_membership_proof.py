"""Membership proofs: honest ones verify and decrypt to the picked value; a ciphertext of a value off the list
cannot be proven (the sender's best effort, hashed over the honest list, fails the combined check); a proof does
not move to another ciphertext, context, list or key."""

import dataclasses
import secrets

import gmpy2
import pytest

from mpdp.cryptocore.paillier.threshold import decrypt
from mpdp.cryptocore.proofs import membership_proof as mp

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


# The security level docs/crypto.md and the module state: challenges of 128 bits, masks 128 bits wider than
# e·r. Written out here, not imported, so that a change of the module's constants is a change this test sees.
DOCUMENTED_CHALLENGE_BITS = 128
DOCUMENTED_HIDING_BITS = 128


def test_honest_challenges_sum_to_a_hash_of_the_documented_length(threshold_key):
    """The challenges of each proof add up to a hash of CHALLENGE_BITS: over 16 proofs at least one sum lies in the
    top 2^−8 of the documented range (all 16 missing it: 2^−128)."""
    key = _key(threshold_key[0])
    _, proofs = mp.encrypt_and_prove(key, [LIST[:2]] * 16, [0, 1] * 8, b"ctx")
    sums = [sum(proof.challenges) % 2**DOCUMENTED_CHALLENGE_BITS for proof in proofs]
    assert max(sums) >= 2 ** (DOCUMENTED_CHALLENGE_BITS - 8)


def test_a_forger_grinding_two_to_the_nineteen_hashes_gets_no_false_proof_accepted(threshold_key):
    """Soundness against grinding: a sender encrypts a value off the list, simulates every branch with challenges
    it chose (their sum below 2^16) and re-randomises one commitment (a·h_s, z + 1: still consistent) until the
    hash agrees with that sum in its low 16 bits, about 2^16 tries. With 16-bit challenges that is a proof the
    verifier accepts; with 128-bit ones the full hash still differs."""
    key = _key(threshold_key[0])
    choices, plaintext = LIST[:2], LIST[0] + LIST[1]
    nsquare = key.nsquare
    ciphertext = int(mp._g_power(key, plaintext) * mp._table(key).pow(3) % nsquare)
    challenges = [secrets.randbits(14) for _ in choices]
    responses = [secrets.randbits(key.mask_bits) for _ in choices]
    commitments = [int(gmpy2.powmod(key.hs, z, nsquare) * gmpy2.powmod(ciphertext * mp._g_power(key, -m), -e, nsquare)
                       % nsquare) for m, e, z in zip(choices, challenges, responses)]
    target, hs = sum(challenges), gmpy2.mpz(key.hs)
    for _ in range(1 << 19):
        if mp._challenge(key, b"ctx", 0, ciphertext, choices, commitments) % 2**16 == target:
            break
        commitments[0] = int(commitments[0] * hs % nsquare)
        responses[0] += 1
    forged = mp.MembershipProof(tuple(commitments), tuple(challenges), tuple(responses))
    with pytest.raises(mp.MembershipProofInvalid, match="do not add up"):
        mp.verify(key, [ciphertext], [choices], [forged], b"ctx")


def test_responses_hide_the_randomness_by_the_documented_margin(threshold_key):
    """z = w + e·r with w uniform below 2^(|r| + 128 + 128): the mask w a verifier holding r would recover is spread
    over that whole range (about half of 64 draws in its top half; outside 8..56: < 2^−30), so z's distribution
    is the same for every r up to 2^−128. The largest r (every bit set) makes any shortfall of the mask show."""
    key = _key(threshold_key[0])
    top = key.randomness_bits + DOCUMENTED_CHALLENGE_BITS + DOCUMENTED_HIDING_BITS
    r = (1 << key.randomness_bits) - 1
    picks = [0, 1] * 32
    _, proofs = mp.encrypt_and_prove(key, [LIST[:2]] * len(picks), picks, b"ctx", randomness=[r] * len(picks))
    masks = [proof.responses[pick] - r * proof.challenges[pick] for proof, pick in zip(proofs, picks)]
    assert all(0 <= w < 1 << top for w in masks)
    assert 8 <= sum(w >> (top - 1) for w in masks) <= 56
    assert len(set(masks)) == len(masks)
