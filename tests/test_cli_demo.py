"""The launcher's commands as a user types them; real processes, nothing left running."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mpdp.learning import datasets
from tests.waiting import eventually

# a9a is not shipped: its tests run where $MPDP_DATA_DIR names a directory holding it, and skip elsewhere.
A9A_DIR = os.environ.get(datasets.DATA_DIR_ENV, "")


def _mpdp(*args, timeout=1800):  # a guard against a hang, not a speed check: a loaded machine is slow
    return subprocess.run([sys.executable, "-m", "launcher.cli", *args], capture_output=True, text=True, timeout=timeout)


def _serving_processes(marker: str) -> list[str]:
    listing = subprocess.run(["ps", "-ww", "-eo", "args"], capture_output=True, text=True).stdout
    return [line for line in listing.splitlines() if "launcher.cli serve" in line and marker in line]


def test_up_run_down_leaves_no_process(tmp_path):
    run_dir = tmp_path / "run"
    # The explicitly plaintext path (senders declared in metadata); the demo test covers mutual TLS.
    up = _mpdp("up", "--parties", "3", "--bits", "1024", "--run-dir", str(run_dir), "--model", "logistic", "--insecure",
               "--keygen", "dealer",  # speed: the holders' own ceremony runs in test_keygen_network
               "--budget", "20,1e-4")  # DPPP's default ε = 10 and Pathak's ε = 5 below
    assert up.returncode == 0, up.stderr
    assert "1024-bit keys are for tests and quick demos only" in up.stderr
    assert "--insecure: plaintext channels" in up.stderr
    assert "insecure = true" in (run_dir / "topology.toml").read_text()
    try:
        assert len(_serving_processes(str(run_dir))) == 5
        report_path = tmp_path / "report.json"
        run = _mpdp("run", "dppp", "--run-dir", str(run_dir), "--queries", "6", "--report", str(report_path))
        assert run.returncode == 0, run.stderr
        assert "student (logistic) test accuracy" in run.stdout
        pathak = _mpdp("run", "pathak", "--run-dir", str(run_dir), "--epsilon", "5")
        assert pathak.returncode == 0, pathak.stderr
        assert "Step/pathak/commitment" in pathak.stdout
        report = json.loads(report_path.read_text())
        assert report["protocol"] == "dppp" and len(report["result"]["labels"]) == 6
        wrong = _mpdp("run", "dppp", "--run-dir", str(run_dir), "--dataset", "digits")
        assert wrong.returncode != 0 and "breast-cancer" in wrong.stderr
    finally:
        down = _mpdp("down", "--run-dir", str(run_dir))
    assert down.returncode == 0 and "stopped 5 processes" in down.stdout
    assert _serving_processes(str(run_dir)) == []


def test_demo_runs_and_stops_everything():
    demo = _mpdp("demo", "--bits", "1024", "--parties", "3", "--dppp-queries", "5")
    assert demo.returncode == 0, demo.stderr
    assert "every process stopped" in demo.stdout
    # every protocol: its settings stated where they are the demo's own, its check before running (none warns), its
    # result beside the three baselines with one draw's spread
    assert "the demo's settings where `mpdp run`'s defaults would not learn" in demo.stdout
    assert "--pathak-lambda 0.3" in demo.stdout and "--du-epsilon 6" in demo.stdout
    assert "WARNING (before running)" not in demo.stderr and "CANNOT learn" not in demo.stdout
    for title in ("DPPP on breast-cancer", "Pathak–Rane–Raj on breast-cancer", "Hamm–Cao–Belkin on breast-cancer",
                  "Du–Li–Li on breast-cancer"):
        assert title in demo.stdout
    rows = [line.strip() for line in demo.stdout.splitlines()]
    for row in ("always the majority class ", "same model, non-private ", "tuned, non-private ", "one draw's spread "):
        assert sum(line.startswith(row) for line in rows) == 4, row
    assert _serving_processes("mpdp-demo-") == []


def test_experiment_writes_json_and_plots(tmp_path):
    result = _mpdp("experiment", "dppp", "--out", str(tmp_path), "--datasets", "breast-cancer", "--runs", "2",
                   "--epsilons", "1", "20", "--queries", "20")
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "dppp_report.json").read_text())
    (dataset,) = report["datasets"]
    assert dataset["teachers"] == 20 and [p["epsilon"] for p in dataset["points"]] == [1, 20]
    assert (tmp_path / dataset["plot"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert dataset["points"][0]["distributed-non-private"]["mean"] > 0.8
    assert dataset["points"][1]["tosses_per_teacher"] < dataset["points"][0]["tosses_per_teacher"]
    for point in dataset["points"]:  # Skellam beside Binomial at the same (ε, δ), both reported
        std = point["noise_std"]  # no more noise than the Binomial (whose N_i rounds up to an even integer)
        assert 0 < std["dppp-skellam"] <= 1.1 * std["dppp"]
        assert set(point["label_agreement_with_plain_vote"]) == {"dppp", "dppp-skellam"}
        assert len(point["dppp-skellam"]["runs"]) == 2


def test_csv_dataset_with_categorical_columns(tmp_path):
    path = tmp_path / "people.csv"
    path.write_text("age,colour,label\n" + "30,red,yes\n40,blue,no\n50,red,yes\n20,green,no\n" * 2)
    # a large statistics ε: the reading is under test, not the private statistics (a level needs ≥ 2 rows at any ε)
    data = datasets.load(str(path), label="label", statistics={"epsilon": 1e6})
    assert data.features.shape == (8, 4)  # age + three colours
    assert np.all(np.linalg.norm(data.features, axis=1) <= 1 + 1e-12)
    assert data.class_names == ("no", "yes") and data.labels.tolist() == [1, 0, 1, 0] * 2
    with pytest.raises(ValueError):
        datasets.load(str(path))


def test_libsvm_file(tmp_path):
    path = tmp_path / "tiny.libsvm"
    path.write_text("+1 1:0.5 3:1\n-1 2:1\n+1 1:1 2:0.2\n")
    data = datasets.load(str(path))
    assert data.features.shape == (3, 3) and data.classes == 2


def test_a9a_from_data_directory():
    if not A9A_DIR:
        pytest.skip(f"${datasets.DATA_DIR_ENV} is not set")
    try:
        data = datasets.load("a9a", data_dir=A9A_DIR)
    except FileNotFoundError:
        pytest.skip(f"a9a is not available under {A9A_DIR}")
    assert data.features.shape == (48841, 123) and data.classes == 2


def test_pathak_experiment_on_a9a(tmp_path):
    if not A9A_DIR or not (Path(A9A_DIR) / "a9a" / "a9a").exists():
        pytest.skip(f"a9a is not available under ${datasets.DATA_DIR_ENV}")
    result = _mpdp("experiment", "pathak", "--out", str(tmp_path), "--data-dir", A9A_DIR, "--runs", "5",
                   "--epsilons", "0.1", "10", "--lambdas", "0.001", "--wire-samples", "1", "--bits", "1024")
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "pathak_report.json").read_text())
    assert len(report["results"]) == 3 * 2 * 2  # mechanisms × calibrations × ε
    for row in report["results"]:
        assert set(row["splits"]) == {"even", "15", "10"}
        assert 0.1 < row["w_star"] < 0.2  # λ = 0.001 gives a non-trivial classifier
        if row["epsilon"] == 10:
            assert row["splits"]["even"]["mean"] < 0.2
    assert (tmp_path / "pathak_lambda_0.001.png").read_bytes()[:4] == b"\x89PNG"
    (check,) = report["wire_checks"]  # one sampled point re-run by real processes over mTLS
    assert check["matches"] and check["max_abs_difference"] <= 2**-20


def test_hamm_experiment_reports_every_method_and_matches_the_wire(tmp_path):
    result = _mpdp("experiment", "hamm", "--out", str(tmp_path), "--datasets", "digits", "--parties", "20",
                   "--trials", "3", "--inverse-epsilons", "0", "1", "--wire-samples", "1", "--bits", "1024",
                   "--parties-per-process", "10")
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "hamm_report.json").read_text())
    (digits,) = report["datasets"]
    assert digits["parties"] == 20 and digits["classes"] == 10
    exact, private = digits["points"]
    assert exact["soft"]["trials"] == 1 and private["soft"]["trials"] == 3
    # Non-private: the ensemble beats the local classifiers and stays below pooled training.
    assert digits["indiv"]["mean"] < exact["soft"]["mean"] <= digits["batch"] + 0.02
    # At ε = 1, M = 20, λ = 1e-4 the noise dwarfs the model (the report says by how much): near chance.
    assert digits["expected_noise_norm_at_epsilon_1"]["soft"] > 100 * digits["model_norms"]["soft"]
    assert private["soft"]["mean"] < 0.3
    (check,) = report["wire_checks"]  # one sampled point re-run by real processes over mTLS
    assert check["matches"] and check["voters"] == 20
    assert (tmp_path / report["plot"]).read_bytes()[:4] == b"\x89PNG"
    assert "paper (activity recognition" in result.stdout


def test_du_experiment_reports_every_method_and_the_sweeps(tmp_path):
    result = _mpdp("experiment", "du", "--out", str(tmp_path), "--datasets", "breast-cancer", "--trials", "2",
                   "--epsilons", "0.1", "3.2", "--rounds", "2", "--local-epochs", "60")
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "du_report.json").read_text())
    (cancer,) = report["datasets"]
    assert cancer["party_rows"] == [228, 171, 57] or sum(cancer["party_rows"]) + cancer["test_rows"] == 569
    low, high = cancer["epsilon_sweep"]
    assert low["none"]["mean"] < 0.15 and low["none"]["trials"] == 1  # LR_NoPrivacy learns
    assert low["ofaa"]["epsilon_composed_basic"] == pytest.approx(2 * 0.1 * 4 / 3)  # R rounds, 4ε/3 each
    assert low["ofpa"]["epsilon_composed_basic"] == pytest.approx(2 * 0.1)  # the nominal: no finite ε holds
    assert len(cancer["cardinality_sweep"]) == 4 and cancer["dimensionality_sweep"][-1]["dimension"] == 30
    assert (tmp_path / report["plots"][0]).read_bytes()[:4] == b"\x89PNG"
    assert "objective" in result.stdout and "paper" not in report["datasets"][0]["stand_in"]


def test_up_from_another_directory_with_a_relative_run_dir(tmp_path):
    """A newcomer's first `mpdp up`: relative paths are resolved before the children start elsewhere."""
    elsewhere = tmp_path / "somewhere"
    elsewhere.mkdir()
    command = [sys.executable, "-m", "launcher.cli"]
    up = subprocess.run([*command, "up", "--parties", "2", "--bits", "1024", "--run-dir", "rel-run", "--model",
                         "logistic", "--startup-timeout", "90"], cwd=elsewhere, capture_output=True, text=True,
                        timeout=300)
    try:
        assert up.returncode == 0, up.stderr[-3000:]
        assert (elsewhere / "rel-run" / "topology.toml").exists()
        run = subprocess.run([*command, "run", "pathak", "--run-dir", "rel-run", "--lambda", "0.3"], cwd=elsewhere,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-3000:]
    finally:
        down = subprocess.run([*command, "down", "--run-dir", "rel-run"], cwd=elsewhere, capture_output=True, text=True,
                              timeout=600)
    assert down.returncode == 0 and "stopped 4 processes" in down.stdout
    assert _serving_processes("rel-run") == []


def test_a_role_that_dies_during_start_up_is_reported_at_once(tmp_path):
    """Not after the start-up timeout, and not as a zombie that counts as alive: the role and its log's end."""
    from launcher.deployment import processes

    child = subprocess.Popen([sys.executable, "-c", "import sys; print('boom: no data'); sys.exit(3)"])
    child.wait()  # reaped here; a second, unreaped one is the zombie case
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    pid = zombie.pid
    del zombie
    assert eventually(lambda: not processes._running(pid)), "an exited child still counts as running"

    run_dir = tmp_path / "run"
    up = _mpdp("up", "--parties", "2", "--bits", "1024", "--run-dir", str(run_dir), "--dataset", "breast-cancer",
               "--model", "logistic", "--startup-timeout", "100")
    assert up.returncode == 0, up.stderr[-2000:]
    try:
        (run_dir / "party-2" / "party_2.npz").write_bytes(b"not a data file")
        subprocess.run(["kill", "-9", str(json.loads((run_dir / "processes.json").read_text())["party/2"])])
        restart = subprocess.run([sys.executable, "-c", f"from launcher.deployment import processes; from mpdp.sessions.identity import party; "
                                  f"processes.restart({str(run_dir)!r}, party(2))"], capture_output=True, text=True,
                                 timeout=600)
        assert restart.returncode != 0
        # Its exit was seen ("exited during start-up"), not the start-up timeout ("not serving after").
        assert "party/2 exited during start-up" in restart.stderr and "the end of its log" in restart.stderr
    finally:
        _mpdp("down", "--run-dir", str(run_dir))


def test_servers_whose_run_dir_was_deleted_are_found_and_stopped(tmp_path):
    import shutil

    from launcher.deployment import processes

    run_dir = tmp_path / "doomed-run"
    up = _mpdp("up", "--parties", "2", "--bits", "1024", "--run-dir", str(run_dir), "--model", "logistic")
    assert up.returncode == 0, up.stderr[-2000:]
    shutil.rmtree(run_dir)  # `mpdp down --run-dir` can no longer find them
    assert "nothing to stop" in _mpdp("down", "--run-dir", str(run_dir)).stdout
    listing = _mpdp("ps")
    assert listing.returncode == 0 and sum(str(run_dir) in line for line in listing.stdout.splitlines()) == 4
    orphans = {command: pid for command, pid in processes.running_servers().items() if str(run_dir) in command}
    assert len(processes.stop(orphans)) == 4
    assert _serving_processes(str(run_dir)) == []


def test_user_mistakes_get_one_line_and_a_nonzero_exit(tmp_path):
    for args, expected in ((("run", "dppp", "--run-dir", str(tmp_path / "none")), "no deployment"),
                           (("up", "--parties", "900", "--bits", "1024", "--run-dir", str(tmp_path / "r")), "cannot be split"),
                           (("up", "--parties", "2", "--dataset", "a9a", "--data-dir", str(tmp_path)), "a9a"),
                           (("up", "--parties", "2", "--bits", "1000"), "key size")):
        result = _mpdp(*args, timeout=300)
        assert result.returncode != 0 and "Traceback" not in result.stderr, (args, result.stderr[-1500:])
        assert expected in result.stderr.strip().splitlines()[-1], (args, result.stderr[-500:])
