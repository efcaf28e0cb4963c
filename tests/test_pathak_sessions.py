"""Pathak's state machines in one process (random delivery order), and their building blocks."""

import math
import random
from collections import Counter

import numpy as np
import pytest
from scipy.stats import chi2_contingency, chisquare

from learning import datasets
from pathak import permutation, ring
from pathak.parameters import PathakParameters
from pathak.reference import perturbed_average, smallest_party
from privacy.mechanisms import OutputPerturbation, analytic_gaussian_delta
from tests.pathak_router import reconstruct, run
from wire.identity import party

SIZES = [70, 40, 90, 60]  # party 2 is the smallest


@pytest.fixture(scope="module")
def parts():
    data = datasets.load("breast-cancer")
    bounds = np.cumsum([0] + SIZES)
    return [(data.features[a:b], data.labels[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


def _parameters(**overrides):
    options = dict(epsilon=1.0, delta=1e-5, regularization=0.05, mechanism="l2-laplace", calibration="tight",
                   parties=len(SIZES), dimension=30, noise_seed=11)
    options.update(overrides)
    return PathakParameters(**options)


def test_random_delivery_order_gives_the_reference_result(parts, keypair):
    parameters = _parameters()
    parties, curator = run(parameters, parts, keypair, random.Random(5))
    assert curator.state.name == "DONE" and all(p.state.name == "DONE" for p in parties.values())
    w = reconstruct([*parties.values(), curator], parameters)
    expected = perturbed_average([p.model for p in parties.values()], [p.noise for p in parties.values()], SIZES, 32)
    assert np.array_equal(w, expected)
    # Charlie's comparison output is K − 1 bits, and the bracket's winner is the smallest party's position.
    assert len(curator.comparison_bits_seen) == len(SIZES) - 1 and not curator.pending
    smallest = smallest_party(SIZES)
    assert curator.pi2[parties[party(smallest)].pi1[smallest - 1] - 1] == curator.winner


def _charlie_guesses(parts, keypair, sessions: int, smallest: int, rng: random.Random):
    """π1-positions of the smallest party, and what guesses built from Charlie's log name."""
    k = len(parts)
    positions, guesses = Counter(), {name: Counter() for name in GUESSES}
    for _ in range(sessions):
        parties, curator = run(_parameters(), parts, keypair, rng, stop_when=lambda c: "blind" in c.done_steps)
        positions[parties[party(smallest)].pi1[smallest - 1]] += 1
        arrivals = [(at, sender) for at, sender, kind in curator.log if kind == "stage1_element"]
        assert sorted(s for _, s in arrivals) == [str(party(j)) for j in range(1, k + 1)]  # one per index holder
        gaps = [later[0] - earlier[0] for earlier, later in zip(arrivals, arrivals[1:])]
        named = {"first to arrive": arrivals[0][1], "last to arrive": arrivals[-1][1],
                 "after the longest pause": arrivals[1 + int(np.argmax(gaps))][1]}
        for name, guess in named.items():
            guesses[name][int(guess.split("/")[1])] += 1
    return positions, guesses


GUESSES = ("first to arrive", "last to arrive", "after the longest pause")


def test_charlie_cannot_tell_which_party_is_smallest(parts, keypair):
    """200 sessions with party 2 smallest: its π1-position is uniform, and every guess Charlie can build
    from its log (peer identities, arrival order, timing) behaves as in 100 sessions where party 3 is
    smallest instead — the log does not depend on who is smallest, so no guess beats chance.

    (A guess's own distribution need not be uniform: the leader's element, for instance, comes first.)"""
    k = len(SIZES)
    rng = random.Random(2026)
    positions, guesses = _charlie_guesses(parts, keypair, 200, smallest=2, rng=rng)
    assert chisquare([positions[p] for p in range(1, k + 1)]).pvalue > 1e-3
    swapped = [parts[0], parts[2], parts[1], parts[3]]  # now party 3 is smallest
    _, guesses_swapped = _charlie_guesses(swapped, keypair, 100, smallest=3, rng=rng)
    for name in GUESSES:
        table = [[guesses[name][j] for j in range(1, k + 1)], [guesses_swapped[name][j] for j in range(1, k + 1)]]
        table = [[a, b] for a, b in zip(*table) if a + b]  # drop parties a guess never names
        assert chi2_contingency(np.array(table).T).pvalue > 1e-3, (name, table)


def test_commit_reveal_permutation():
    seeds = [permutation.new_seed()[0] for _ in range(5)]
    pi = permutation.permutation(seeds, 5)
    assert sorted(pi) == [1, 2, 3, 4, 5] and permutation.permutation(seeds, 5) == pi
    assert permutation.inverse(pi)[pi[0] - 1] == 1
    seed, nonce = permutation.new_seed()
    assert permutation.opens(permutation.commitment(seed, nonce), seed, nonce)
    assert not permutation.opens(permutation.commitment(seed, nonce), seed, bytes(32))
    counts = Counter(tuple(permutation.permutation([permutation.new_seed()[0]], 3)) for _ in range(1200))
    assert len(counts) == 6 and chisquare(list(counts.values())).pvalue > 1e-3


def test_ring_shares_reconstruct_signed_vectors():
    values = [5, -7, 2**100, -(2**100), 0]
    shares = ring.split(values, 6)
    assert ring.decode_signed(ring.add(shares)) == values
    assert ring.from_bytes(ring.to_bytes(shares[0]), 5) == shares[0]
    with pytest.raises(Exception):
        ring.from_bytes(ring.to_bytes(shares[0])[:-1], 5)


def test_ranges():
    assert _parameters(parties=5).comparison_bits == 118 and _parameters(parties=8).comparison_bits == 118
    assert _parameters(parties=3).comparison_bits == 117
    assert _parameters().tie_broken(2, 40) == 40 * 4 + 1
    with pytest.raises(Exception):
        _parameters().tie_broken(1, 2**32)
    with pytest.raises(Exception):
        _parameters(mechanism="laplace")


@pytest.mark.parametrize("mechanism", ["laplace-paper", "l2-laplace", "gaussian"])
def test_noise_on_the_grid_is_clamped_and_scaled(mechanism):
    noise = OutputPerturbation(mechanism, "tight", 1.0, 1e-5, 0.05, 4, 30)
    draws = np.array([noise.sample(40, random.Random(seed)) for seed in range(60)]) / 2**32
    assert np.all(np.abs(draws) <= noise.clamp_bound)
    expected_norm = {"laplace-paper": math.sqrt(2 * 30) * noise.scale(40),
                     "l2-laplace": 30 * noise.scale(40),
                     "gaussian": math.sqrt(30) * noise.scale(40)}[mechanism]
    assert 0.8 < np.linalg.norm(draws, axis=1).mean() / expected_norm < 1.2


def test_calibrations_and_reported_epsilon():
    paper = OutputPerturbation("laplace-paper", "paper", 1.0, 1e-5, 1.0, 5, 123)
    tight = OutputPerturbation("laplace-paper", "tight", 1.0, 1e-5, 1.0, 5, 123)
    assert tight.scale(100) == pytest.approx(paper.scale(100) / 5)
    assert paper.report()["epsilon_effective"] == pytest.approx(math.sqrt(123) / 5)  # ≈ 2.2 ε
    gaussian = OutputPerturbation("gaussian", "tight", 1.0, 1e-5, 1.0, 5, 123)
    sigma = gaussian.scale(100)
    assert analytic_gaussian_delta(gaussian.sensitivity(100), sigma, 1.0) == pytest.approx(1e-5, rel=1e-3)
    assert gaussian.report(100)["epsilon_effective"] == pytest.approx(1.0, rel=1e-3)
