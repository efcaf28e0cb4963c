"""Pairs (x, h_s^x) made offline (mpdp/cryptocore/proofs/precomputed_powers.py): proofs cast from them verify, each pair
is used once, a dry pool falls back to exponentiations on the spot, and the pool is bounded."""

import pytest

from mpdp.cryptocore.proofs import membership_proof as mp
from mpdp.cryptocore.proofs.precomputed_powers import PowerPool
from mpdp.vote_proofs import votes as vote_proofs


def test_proofs_from_precomputed_pairs_verify_and_spend_each_pair_once(threshold_key):
    public, _ = threshold_key
    key = vote_proofs.proof_key(public)
    pool = PowerPool(key, capacity=8)
    pool.fill(2, 6)
    assert pool.levels == (2, 6)
    choices, picks = [[0, 1, 2]] * 2, [1, 2]
    ciphertexts, proofs = mp.encrypt_and_prove(key, choices, picks, b"ctx", powers=pool)
    mp.verify(key, ciphertexts, choices, proofs, b"ctx")
    assert pool.levels == (0, 0)
    # Dry: made on the spot, the same proof.
    ciphertexts, proofs = mp.encrypt_and_prove(key, choices, picks, b"ctx", powers=pool)
    mp.verify(key, ciphertexts, choices, proofs, b"ctx")
    with pytest.raises(ValueError):
        pool.fill(9, 0)


def test_no_pair_is_handed_out_twice(threshold_key):
    public, _ = threshold_key
    pool = PowerPool(vote_proofs.proof_key(public), capacity=6)
    pool.fill(3, 3)
    taken = [pool.randomness() for _ in range(3)] + [pool.mask() for _ in range(3)]
    assert len({x for x, _ in taken}) == 6
