"""Verifiable noise shares (mpdp/vote_proofs/noise_bits.py): committed bits verify, the coin's flips and the fold
(Horner-packed) decrypt to bias + votes + the flipped shares over several plaintexts; a bit of 3 cannot be
proven; the flipped share of all-ones or all-zeros bits is Bin(N_i, ½) over the coin."""

import math

import numpy as np
import pytest

from mpdp.cryptocore.paillier.threshold import decrypt
from mpdp.cryptocore.proofs import membership_proof as mp
from mpdp.protocols.dppp.parameters import DpppParameters
from mpdp.sessions.errors import ProtocolError
from mpdp.vote_proofs import noise_bits
from mpdp.vote_proofs import votes as vote_proofs
from mpdp.vote_proofs.assurance import Assurance
from tests.malicious_parties import tampered_bit

QUERIES, CLASSES = 3, 2


def _setup(public):
    parameters = DpppParameters.with_minimal_noise(10.0, 1e-5, QUERIES, CLASSES, 3, 2 / 3, True, public.key_id,
                                                   assurance=Assurance.VERIFIABLE_NOISE)
    return parameters, parameters.layout(public.n)


def test_flipped_fold_decrypts_to_votes_plus_flipped_shares(threshold_key):
    public, shares = threshold_key
    parameters, layout = _setup(public)
    tosses = parameters.share_range
    rng = np.random.default_rng(3)
    bits = rng.integers(0, 2, size=(parameters.values, tosses))
    votes = np.eye(CLASSES, dtype=int)[[0, 1, 1]]
    proven = vote_proofs.cast(public, layout, votes, b"votes")
    vote_values = vote_proofs.checked(public, layout, QUERIES, CLASSES, proven, b"votes")
    message, _ = noise_bits.commit(public, bits, b"bits")
    bit_values = noise_bits.check(public, bits.size, message, b"bits")
    coins = noise_bits.coin_bits(b"c" * 32, 1, bits.size)
    folded = noise_bits.fold(public, layout, QUERIES, CLASSES, tosses, vote_values, bit_values, coins)
    plaintexts = [decrypt(public, c, [s.partial_decrypt(c) for s in shares[:3]])[0]
                  for c in (int.from_bytes(v, "big") for v in folded.values)]
    counts = layout.unpack(plaintexts, parameters.values, biased_summands=1)
    expected = votes.ravel() + noise_bits.flipped_shares(bits, coins)
    assert counts == expected.tolist()


def test_a_bit_of_two_cannot_be_proven(threshold_key):
    public, _ = threshold_key
    parameters, layout = _setup(public)
    bits = np.zeros((parameters.values, 2), dtype=int)
    message, _ = noise_bits.commit(public, bits, b"bits")
    noise_bits.check(public, bits.size, message, b"bits")
    with pytest.raises(mp.MembershipProofInvalid):
        noise_bits.check(public, bits.size, tampered_bit(public, message), b"bits")
    with pytest.raises(mp.MembershipProofInvalid):  # bound to its sender's context
        noise_bits.check(public, bits.size, message, b"other")
    with pytest.raises(ProtocolError):  # counts before any proof
        noise_bits.check(public, bits.size + 1, message, b"bits")


def test_skewed_bits_give_a_fair_share_over_the_coin():
    """All-ones (share N_i unflipped) and all-zeros (0) bits: over 200 coins each flipped share sum is
    Bin(200·N_i, ½); Hoeffding puts it outside ±6·√(200·N_i) from the mean with probability < 2·e^(−72)."""
    tosses, draws = 14, 200
    for bit in (0, 1):
        bits = np.full((1, tosses), bit)
        total = sum(int(noise_bits.flipped_shares(bits, noise_bits.coin_bits(i.to_bytes(32, "big"), 5, tosses))[0])
                    for i in range(draws))
        assert abs(total - draws * tosses / 2) < 6 * math.sqrt(draws * tosses)


def test_the_fold_packs_slots_across_plaintexts(threshold_key):
    """More slots than one plaintext holds: Horner's packing puts every slot's flipped share in its place."""
    public, shares = threshold_key
    queries, classes = 60, 10
    parameters = DpppParameters.with_minimal_noise(10.0, 1e-5, queries, classes, 3, 2 / 3, True, public.key_id,
                                                   assurance=Assurance.PROVEN_VOTES)  # the layout alone; two bits per slot below
    layout = parameters.layout(public.n)
    assert layout.plaintexts_needed(parameters.values) >= 2
    tosses = 2
    rng = np.random.default_rng(5)
    bits = rng.integers(0, 2, size=(parameters.values, tosses))
    votes = np.eye(classes, dtype=int)[rng.integers(0, classes, size=queries)]
    proven = vote_proofs.cast(public, layout, votes, b"votes")
    vote_values = vote_proofs.checked(public, layout, queries, classes, proven, b"votes")
    _, bit_values = noise_bits.commit(public, bits, b"bits")
    coins = noise_bits.coin_bits(b"d" * 32, 2, bits.size)
    folded = noise_bits.fold(public, layout, queries, classes, tosses, vote_values, bit_values, coins)
    plaintexts = [decrypt(public, c, [s.partial_decrypt(c) for s in shares[:3]])[0]
                  for c in (int.from_bytes(v, "big") for v in folded.values)]
    expected = votes.ravel() + noise_bits.flipped_shares(bits, coins)
    assert layout.unpack(plaintexts, parameters.values, biased_summands=1) == expected.tolist()
