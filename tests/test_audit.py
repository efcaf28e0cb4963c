"""Empirical audits: honest mechanisms stay below their claims, broken ones are caught far above them, and the
bounds follow from Clopper–Pearson."""

import json
import subprocess
import sys

import numpy as np
import pytest

from launcher import audit
from privacy.audit import clopper_pearson, epsilon_lower_bound


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


@pytest.mark.parametrize("protocol, noise", [("dppp", "binomial"), ("dppp", "skellam"), ("hamm", "binomial"),
                                             ("hamm", "skellam")])
def test_honest_mechanisms_stay_within_their_claims(protocol, noise):
    report = audit.run(protocol, noise, 1.0, 1e-5, 4000, None)
    assert 0 <= report["epsilon_lower_bound"] <= 1.0 and not report["exceeds_claim"]


@pytest.mark.parametrize("protocol, broken", [("dppp", "no-noise"), ("dppp", "coarse-grid"), ("hamm", "coarse-grid")])
def test_broken_mechanisms_are_caught_far_above_the_claim(protocol, broken):
    """The coarse grid (every share ×K, as Pathak's first release) has all the noise, yet the sum mod K is a
    function of the data: the residue test separates the neighbours every time."""
    report = audit.run(protocol, "binomial", 1.0, 1e-5, 4000, broken)
    assert report["exceeds_claim"] and report["epsilon_lower_bound"] > 5


def test_the_command_fails_when_the_bound_exceeds_the_claim(tmp_path):
    path = tmp_path / "audit.json"
    run = lambda *extra: subprocess.run([sys.executable, "-m", "launcher.cli", "audit", "dppp", "--trials", "2000",  # noqa: E731
                                         "--json", str(path), *extra], capture_output=True, text=True, timeout=120)
    honest = run()
    assert honest.returncode == 0, honest.stderr
    assert "within the claim" in honest.stdout and json.loads(path.read_text())["claimed_epsilon"] == 1.0
    broken = run("--broken", "coarse-grid")
    assert broken.returncode == 1 and "EXCEEDS the claim" in broken.stdout and "Traceback" not in broken.stderr


def test_pathaks_paper_calibration_is_caught_above_its_nominal_epsilon():
    """`laplace-paper` puts i.i.d. Laplace scaled to an L2 sensitivity on each coordinate: at d = 4 (tight) it
    really gives 2ε, and the audit's L1 likelihood-ratio test shows more than the nominal ε."""
    report = audit.run("pathak", "laplace-paper", 1.0, 1e-5, 20_000, None)
    assert report["noise"]["epsilon_effective"] == pytest.approx(2.0, rel=1e-3)
    assert report["exceeds_claim"] and 1.0 < report["epsilon_lower_bound"] <= 2.0


def test_pathaks_l2_laplace_stays_within_and_its_coarse_grid_bug_is_caught():
    honest = audit.run("pathak", "l2-laplace", 1.0, 1e-5, 4000, None)
    assert not honest["exceeds_claim"]
    broken = audit.run("pathak", "l2-laplace", 1.0, 1e-5, 2000, "coarse-grid")
    assert broken["exceeds_claim"] and broken["epsilon_lower_bound"] > 5 and "mod" in broken["test"]


def test_du_functional_stays_within_and_ofpa_without_noise_on_alpha_is_caught():
    """OFPA (the paper's Algorithm 2) adds no noise to the intercept α: a label flip moves α deterministically."""
    assert not audit.run("du", "functional", 1.0, 1e-5, 1000, None)["exceeds_claim"]
    ofpa = audit.run("du", "ofpa", 1.0, 1e-5, 1000, None)
    assert ofpa["exceeds_claim"] and ofpa["noise"]["epsilon_effective"] is None


def test_an_audit_names_the_mechanisms_it_takes():
    with pytest.raises(ValueError, match="laplace-paper"):
        audit.run("pathak", "binomial", 1.0, 1e-5, 1000, None)


@pytest.mark.network
@pytest.mark.parametrize("protocol, noise", [("dppp", "skellam"), ("pathak", "distributed")])
def test_the_wire_sample_equals_the_audited_reference(protocol, noise):
    """The audit samples the in-process reference; real processes must release exactly what it computes."""
    from launcher.audit_wire import wire_sample

    sample = wire_sample(protocol, noise, 1.0, 1e-5, 1, 1024)
    assert sample["matches"] and sample["sessions"] == 1
