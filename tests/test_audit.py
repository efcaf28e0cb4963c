"""Audits that can fail: the exact check of the sampled noise catches each planted bug, honest mechanisms pass it,
the empirical bounds follow from Clopper–Pearson, and the histogram estimator and the stated resolution do what
they say."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from launcher.audit import counts
from launcher.commands import audit
from mpdp.privacy.audit import clopper_pearson, epsilon_lower_bound, histogram_statistic, hockey_stick, resolution
from mpdp.privacy.exact_audit import (
    binomial_log_pmf,
    gaussian_epsilon,
    lattice_epsilon,
    moments_agree,
    skellam_log_pmf,
)

TRIALS = 300  # the exact check decides the planted bugs; the empirical attack needs no power here


def test_clopper_pearson_matches_known_values():
    low, high = clopper_pearson(0, 100, 0.975)
    assert low == 0.0 and high == pytest.approx(0.0362, abs=2e-4)  # 1 − 0.025^(1/100)
    low, high = clopper_pearson(50, 100, 0.975)
    assert low == pytest.approx(0.3983, abs=2e-3) and high == pytest.approx(0.6017, abs=2e-3)


def test_identical_distributions_give_no_privacy_loss():
    rng = np.random.default_rng(0)
    same = {"x": rng.normal(size=4000)}
    other = {"x": rng.normal(size=4000)}
    assert epsilon_lower_bound(same, other, 1e-5).epsilon_lower_bound < 0.2


def test_the_exact_lattice_accountant_agrees_with_the_calibrations_own():
    """Two implementations of the Binomial and Skellam PLDs (the calibration's and the audit's, written apart)
    give the same ε for the same noise."""
    from mpdp.privacy import binomial, skellam

    assert lattice_epsilon(binomial_log_pmf(116), math.sqrt(116) / 2, 1, [1, -1], 1e-5) == pytest.approx(
        binomial.epsilon_for_shifts(116, 1e-5, 2), abs=2e-4)
    assert lattice_epsilon(skellam_log_pmf(40.0), math.sqrt(40.0), 1, [1] * 3, 1e-5) == pytest.approx(
        skellam.epsilon_for(40.0, 1e-5, 3), abs=3e-4)


def test_noise_off_the_neighbours_lattice_has_no_finite_epsilon():
    assert lattice_epsilon(binomial_log_pmf(100), 5.0, 10, [1, -1], 1e-5) == math.inf
    assert lattice_epsilon(binomial_log_pmf(100), 5.0, 10, [10, -10], 1e-5) < math.inf


def test_the_gaussian_accountant_matches_the_analytic_gaussian_mechanism():
    from mpdp.privacy.mechanisms import analytic_gaussian_epsilon

    assert gaussian_epsilon(1.0, 3.0, 1e-5) == pytest.approx(analytic_gaussian_epsilon(1.0, 3.0, 1e-5), abs=2e-4)


def test_draws_that_do_not_match_the_declared_variance_are_refused():
    rng = np.random.default_rng(1)
    draws = rng.normal(0, 2.0, size=4000)
    assert moments_agree(draws, 0.0, 4.0)
    assert not moments_agree(draws, 0.0, 16.0) and not moments_agree(draws, 0.0, 1.0)


def test_the_histogram_estimator_finds_a_residue_no_half_line_separates():
    """Releases 10k on D and 10k + 1 on D′ (noise on 10·ℤ): no threshold on the value separates them, the
    histogram's likelihood ratio does."""
    rng = np.random.default_rng(2)
    on_d = 10 * rng.integers(-500, 500, size=4000)
    on_d_prime = 10 * rng.integers(-500, 500, size=4000) + 1
    plain = epsilon_lower_bound({"value": on_d}, {"value": on_d_prime}, 1e-5)
    ratio_d, ratio_d_prime = histogram_statistic(on_d, on_d_prime)
    histogram = epsilon_lower_bound({"histogram": ratio_d}, {"histogram": ratio_d_prime}, 1e-5)
    assert plain.epsilon_lower_bound < 0.3 and histogram.epsilon_lower_bound > 5
    assert hockey_stick(on_d, on_d_prime, 1.0) == pytest.approx(1.0)
    assert hockey_stick(on_d, on_d, 1.0) == 0.0


def test_the_resolution_says_what_a_bound_below_the_claim_cannot_show():
    rng = np.random.default_rng(3)
    result = epsilon_lower_bound({"x": rng.normal(size=20_000)}, {"x": rng.normal(0.1, size=20_000)}, 1e-5)
    assert result.epsilon_lower_bound < 1 < resolution(result, 1.0, 1e-5) < math.inf
    small = epsilon_lower_bound({"x": rng.normal(size=20)}, {"x": rng.normal(0.1, size=20)}, 1e-5)
    assert resolution(small, 1.0, 1e-5) == math.inf


@pytest.mark.parametrize("protocol, noise", [("dppp", "binomial"), ("dppp", "skellam"), ("hamm", "binomial"),
                                             ("hamm", "skellam"), ("pathak", "l2-laplace"), ("pathak", "gaussian"),
                                             ("pathak", "distributed"), ("du", "functional"), ("du", "objective")])
def test_honest_mechanisms_pass_both_checks(protocol, noise):
    report = audit.run(protocol, noise, 1.0, 1e-5, TRIALS, None)
    exact = report["exact"]
    assert exact["draws_agree"] and 0 < exact["epsilon"] <= 1.0 + exact["tolerance"]
    assert not exact["sensitivity"].get("spec_exceeded", False)
    assert not report["exceeds_claim"] and report["epsilon_lower_bound"] <= 1.0


@pytest.mark.parametrize("protocol, noise, broken, true_epsilon", [
    ("dppp", "binomial", "quarter-tosses", 2.67), ("hamm", "binomial", "quarter-tosses", 2.25),
    ("dppp", "skellam", "quarter-tosses", 1.98),
    ("dppp", "binomial", "claim-mismatch", 2.67), ("hamm", "skellam", "claim-mismatch", 3.98),
    ("pathak", "l2-laplace", "claim-mismatch", 4.0), ("du", "functional", "claim-mismatch", 4.0),
    ("pathak", "l2-laplace", "half-sensitivity", 2.0), ("pathak", "gaussian", "half-sensitivity", 2.15),
    ("pathak", "distributed", "half-sensitivity", 2.14), ("dppp", "binomial", "half-sensitivity", 1.31),
])
def test_each_planted_bug_is_caught_by_the_exact_check(protocol, noise, broken, true_epsilon):
    """The exact check reads the noise the sampler really draws (a quarter of the tosses, the 4ε calibration, the
    halved scale) and a sensitivity derived apart from the calibration, so it sees the true ε."""
    report = audit.run(protocol, noise, 1.0, 1e-5, TRIALS, broken)
    assert report["exact"]["exceeds_claim"] and report["exceeds_claim"]
    assert report["exact"]["epsilon"] == pytest.approx(true_epsilon, abs=0.01)


@pytest.mark.parametrize("protocol, unknown, true_epsilon", [("dppp", 6, 1.035), ("hamm", 13, 1.039)])
def test_a_calibration_that_forgets_the_colluding_share_is_caught(monkeypatch, protocol, unknown, true_epsilon):
    """N divided among all m shares of the fewest decryptable sum (N/m each) instead of the m − c the malicious
    principal does not know: the sum the adversary sees less its own share carries (m − 1)·N/m tosses, short of
    N. The exact check counts the shares from the worst sum's transcript, not from the calibration's collusion
    arithmetic, so it sees the true ε (DPPP at K = 10: 1.035 where counting with the calibration read 0.949)."""
    from mpdp.privacy import binomial, collusion

    def all_shares(min_contributors, colluding=1):
        return collusion.decryptable_minimum(min_contributors)

    for module in (binomial, counts):  # DPPP's calibration, and the audit's copy of Hamm's N_i
        monkeypatch.setattr(module, "calibrated_contributors", all_shares)
    report = audit.run(protocol, "binomial", 1.0, 1e-5, 100, None)  # the exact check decides; the fewest trials
    assert report["exact"]["exceeds_claim"] and report["exceeds_claim"]
    assert report["exact"]["epsilon"] == pytest.approx(true_epsilon, abs=0.005)
    assert report["setting"]["contributors"] == unknown  # ⌈τK⌉ of K = 10 teachers (M = 20 parties), less one


@pytest.mark.parametrize("protocol, broken", [("dppp", "no-noise"), ("dppp", "coarse-grid"), ("hamm", "coarse-grid")])
def test_broken_mechanisms_are_caught_far_above_the_claim(protocol, broken):
    """The coarse grid (every share ×K, as Pathak's first release) has all the noise, yet the sum mod K is a
    function of the data: the residue test separates the neighbours every time, and no finite ε exists."""
    report = audit.run(protocol, "binomial", 1.0, 1e-5, 4000, broken)
    assert report["empirical_exceeds_claim"] and report["epsilon_lower_bound"] > 5
    assert report["exact"]["epsilon"] is None


def _mpdp_audit(path, *arguments):
    return subprocess.run([sys.executable, "-m", "launcher.cli", "audit", *arguments, "--json", str(path)],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # two audits through the CLI
def test_the_command_fails_when_a_check_exceeds_the_claim(tmp_path):
    path = tmp_path / "audit.json"
    honest = _mpdp_audit(path, "dppp", "--trials", str(TRIALS))
    assert honest.returncode == 0, honest.stderr
    assert "within the claim" in honest.stdout and json.loads(path.read_text())["claimed_epsilon"] == 1.0
    assert "inconclusive" in honest.stdout  # a bound below the claim is never called "within"
    broken = _mpdp_audit(path, "dppp", "--trials", str(TRIALS), "--broken", "quarter-tosses")
    assert broken.returncode == 1 and "EXCEEDS the claim" in broken.stdout and "Traceback" not in broken.stderr
    assert "exact check" in broken.stdout and json.loads(path.read_text())["exact"]["exceeds_claim"]


PLANTED = [("dppp", "--broken", "quarter-tosses"), ("dppp", "--broken", "claim-mismatch"),
           ("pathak", "--noise", "l2-laplace", "--broken", "half-sensitivity")]


@pytest.mark.hardening
@pytest.mark.parametrize("arguments", PLANTED)
def test_the_default_command_catches_the_planted_bugs(tmp_path, arguments):
    """`mpdp audit` at its default 20 000 trials exits 1 on each planted bug (about a minute each)."""
    result = _mpdp_audit(tmp_path / "audit.json", *arguments)
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads((tmp_path / "audit.json").read_text())
    assert report["exact"]["exceeds_claim"] and report["trials_per_data_set"] == 20_000


def test_a_planted_bug_that_does_not_apply_is_refused(tmp_path):
    result = _mpdp_audit(tmp_path / "audit.json", "pathak", "--trials", "200", "--broken", "quarter-tosses")
    assert result.returncode != 0 and "quarter-tosses" in result.stderr and "Traceback" not in result.stderr


def test_pathaks_paper_calibration_is_caught_above_its_nominal_epsilon():
    """`laplace-paper` puts i.i.d. Laplace scaled to an L2 sensitivity on each coordinate: at d = 4 (tight) it
    really gives 2ε; the exact check says so, and the L1-worst change shows more than the nominal ε."""
    report = audit.run("pathak", "laplace-paper", 1.0, 1e-5, 4000, None)
    assert report["noise"]["epsilon_effective"] == pytest.approx(2.0, rel=1e-3)
    assert report["exact"]["epsilon"] == pytest.approx(2.0, rel=1e-6)
    assert report["empirical_exceeds_claim"] and 1.0 < report["epsilon_lower_bound"] <= 2.0


def test_pathaks_coarse_grid_bug_is_caught():
    broken = audit.run("pathak", "l2-laplace", 1.0, 1e-5, 2000, "coarse-grid")
    assert broken["exceeds_claim"] and broken["epsilon_lower_bound"] > 4 and "mod" in broken["test"]
    assert broken["exact"]["epsilon"] is None


def test_pathaks_neighbour_is_a_retrained_model_within_the_spec_bound():
    report = audit.run("pathak", "l2-laplace", 1.0, 1e-5, TRIALS, None)
    sensitivity = report["exact"]["sensitivity"]
    assert 0 < sensitivity["measured_l2"] < sensitivity["spec_l2"] == sensitivity["used_l2"]
    assert 0 < sensitivity["measured_model_change"] <= 2 / (100 * 0.01)


def test_du_ofaa_and_ofpa_fail_their_claims():
    """OFAA (the paper's Algorithm 3 calibration) really gives 4ε/3; OFPA (Algorithm 2) adds no noise to the
    intercept α, so a label flip moves α deterministically."""
    ofaa = audit.run("du", "ofaa", 1.0, 1e-5, TRIALS, None)
    assert ofaa["exact"]["epsilon"] == pytest.approx(4 / 3) and ofaa["exceeds_claim"]
    ofpa = audit.run("du", "ofpa", 1.0, 1e-5, 1000, None)
    assert ofpa["exceeds_claim"] and ofpa["empirical_exceeds_claim"] and ofpa["exact"]["epsilon"] is None


def test_an_audit_names_the_mechanisms_it_takes():
    with pytest.raises(ValueError, match="laplace-paper"):
        audit.run("pathak", "binomial", 1.0, 1e-5, 1000, None)


@pytest.mark.network
@pytest.mark.parametrize("protocol, noise", [("dppp", "skellam"), ("pathak", "distributed")])
def test_the_wire_sample_equals_the_audited_reference(protocol, noise):
    """The audit samples the in-process reference; real processes must release exactly what it computes."""
    from launcher.audit.wire import wire_sample

    sample = wire_sample(protocol, noise, 1.0, 1e-5, 1, 1024)
    assert sample["matches"] and sample["sessions"] == 1
