"""`mpdp demo`'s settings learn on its data: no demo protocol's pre-run noise check warns at them, and through the
in-process references its networked sessions equal (launcher/commands/demo_reference.py) Pathak, Hamm and Du each beat the
majority class on 20 random splits with their own noise draws. The 1 000-draw distributions are in docs/demo.md."""

from __future__ import annotations

import pytest

from launcher.commands import demo
from launcher.commands.demo_reference import demo_arguments, deployment, distribution, load_dataset, protocols
from launcher.common import noise_check
from launcher.protocol import protocol_arguments
from launcher.registry import PROTOCOLS

CHECKED = protocols()

DRAWS = 20


@pytest.fixture(scope="module")
def breast_cancer():
    args = demo_arguments(["--bits", "1024"])
    return args, load_dataset(args)


def _warnings(name: str, args, dataset, seed: int) -> list[str]:
    protocol = PROTOCOLS[name]
    _, client_data, topology = deployment(protocol, args, dataset, seed)
    return noise_check.estimate(name, protocol_arguments(args, protocol), topology, client_data)["warnings"]


def test_no_demo_setting_is_one_the_noise_check_warns_about(breast_cancer):
    args, dataset = breast_cancer
    chosen, skipped = demo.protocols_for(dataset)
    assert not skipped and {p.name for p in chosen} == {p.name for p in PROTOCOLS.values() if p.in_demo}
    for protocol in chosen:
        for seed in range(3):  # the party sizes move with the split
            assert _warnings(protocol.name, args, dataset, seed) == [], protocol.name


@pytest.mark.parametrize("name, runs_defaults", [("pathak", ["--pathak-lambda", "0.01"]),
                                                 ("du", ["--du-rounds", "5", "--du-epsilon", "1"])])
def test_at_runs_defaults_the_same_check_warns(breast_cancer, name, runs_defaults):
    """What the check above would catch: `mpdp run`'s defaults on the demo's data."""
    _, dataset = breast_cancer
    assert _warnings(name, demo_arguments(runs_defaults), dataset, 0)


@pytest.mark.parametrize("name", CHECKED)
def test_the_demo_settings_beat_the_majority_class_on_every_draw(breast_cancer, name):
    args, dataset = breast_cancer
    figures = distribution(name, args, dataset, DRAWS)
    assert figures["beats_majority"] == 1.0, figures
    assert figures["margin_p5"] > 0.05, figures  # a margin, not a tie


def test_pathak_at_runs_default_lambda_falls_below_the_majority_class_on_some_draws(breast_cancer):
    """The failure the demo's λ removes, on the same 20 splits and draws."""
    _, dataset = breast_cancer
    figures = distribution("pathak", demo_arguments(["--pathak-lambda", "0.01"]), dataset, DRAWS)
    assert figures["beats_majority"] < 0.95, figures


def test_the_demo_states_each_setting_that_differs_from_runs_default():
    lines = demo.settings_lines(demo_arguments(), PROTOCOLS.values())
    text = "\n".join(lines)
    assert "--pathak-lambda 0.3 (`mpdp run pathak`: 0.01)" in text
    assert "--hamm-lambda 0.01 (`mpdp run hamm`: 0.0001)" in text and "--hamm-noisy-counts on" in text
    assert "--du-epsilon 6 (`mpdp run du`: 1)" in text and "composed ε of 6" in text
    assert all(PROTOCOLS[name].demo_settings.why in text for name in CHECKED if PROTOCOLS[name].demo_settings)
    # a value the user chose is theirs: not stated as the demo's
    mine = "\n".join(demo.settings_lines(demo_arguments(["--pathak-lambda", "0.05"]), PROTOCOLS.values()))
    assert "pathak" not in mine and "--du-rounds 1" in mine
    assert demo_arguments(["--pathak-lambda", "0.05"]).pathak__regularization == 0.05


def test_a_two_class_protocol_is_skipped_on_more_classes_and_says_so():
    digits = load_dataset(demo_arguments(["--dataset", "digits"]))
    chosen, skipped = demo.protocols_for(digits)
    assert "du" not in {p.name for p in chosen} and {"dppp", "pathak", "hamm"} <= {p.name for p in chosen}
    assert skipped == ["du: not run: it takes two classes and digits has 10"]


def test_the_same_model_baseline_is_cut_as_the_release_is(breast_cancer, tmp_path):
    """At the demo's Pathak λ = 0.3 the scores sit near the intercept: cut at 0, the non-private model reads near the
    majority class while the release, cut on the public rows, does not; the baseline is cut by the same rule."""
    from mpdp.learning import datasets, evaluation

    args, dataset = breast_cancer
    split, client_data, _ = deployment(PROTOCOLS["pathak"], args, dataset, 0)
    files = []
    for number, (x, y) in enumerate(split.teacher_parts, start=1):
        datasets.save_part(tmp_path / f"party_{number}.npz", x, y, 2)
        files.append(tmp_path / f"party_{number}.npz")
    cut = evaluation.baselines(files, client_data, regularization=0.3)
    at_zero = evaluation.baselines(files, {**client_data, "public_features": client_data["public_features"][:0]},
                                   regularization=0.3)
    assert "cut on the public rows" in cut["same_model"]["model"] and "cut" not in at_zero["same_model"]["model"]
    assert cut["same_model"]["auc"] == at_zero["same_model"]["auc"]  # the same model; only the cut differs
    assert cut["same_model"]["accuracy"] > cut["majority_class_rate"] + 0.15
    assert cut["same_model"]["balanced_accuracy"] > at_zero["same_model"]["balanced_accuracy"] + 0.1


def test_hamms_noisy_counts_are_checked_before_running_and_the_fix_named(breast_cancer):
    """The count noise's std per soft target falls as 1/M; Charlie's fit keeps √(d/N) of it. At the demo's M = 60
    it is below the ½ margin; at M = 20 (91 % of reference draws above the majority class, docs/demo.md) the check
    says one draw decides and names M."""
    from types import SimpleNamespace

    from launcher.deployment.processes import split_data

    args, dataset = breast_cancer
    seen = protocol_arguments(args, PROTOCOLS["hamm"])
    found = {}
    for parties in (20, 60):
        _, client_data = split_data(dataset, parties, 0, "even", None)
        found[parties] = noise_check.estimate("hamm", seen, SimpleNamespace(parties=[None] * parties, colluding=1),
                                              client_data)
    assert found[60]["ratio"] < 1 and not found[60]["warnings"]
    assert 1 < found[20]["ratio"] < 3.5 and "raise M" in found[20]["warnings"][0]
    assert 2.5 < found[20]["ratio"] / found[60]["ratio"] < 3.5  # 1/M


@pytest.mark.parametrize("argv", [[], ["--pathak-noise-source", "distributed", "--pathak-mechanism", "gaussian"]])
def test_the_reference_builds_pathaks_parameters_as_run_does(argv):
    from launcher.protocols.pathak.commands import parameters
    from launcher.protocols.pathak.demo_reference import reference_parameters

    seen = protocol_arguments(demo_arguments(argv), PROTOCOLS["pathak"])
    assert reference_parameters(seen, 5, 31) == parameters(seen, 5, 31)
