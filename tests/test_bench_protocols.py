"""The protocol benchmarks end to end at small sizes: they start real processes, print their figures and write
JSON whose derived figures follow from the measured ones. No time is asserted."""

import json
import math
import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.network, pytest.mark.slow]


def _mpdp(*args, timeout=600, env=None):
    return subprocess.run([sys.executable, "-m", "launcher.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def test_bench_dppp_reports_labels_per_second_beside_the_paper_layout_and_the_floor(tmp_path):
    path = tmp_path / "dppp.json"
    result = _mpdp("bench", "dppp", "--teachers", "3", "--classes", "3", "--queries", "20", "--bits", "1024",
                   "--rounds", "2", "--warmup", "1", "--paper-queries", "2", "--paper-rounds", "1", "--proven-rounds", "0",
                   "--verifiable-queries", "4", "--verifiable-rounds", "1", "--observe-pairs", "1", "--json", str(path),
                   env={**os.environ, "OTEL_BSP_SCHEDULE_DELAY": "200"})  # spans exported, and rounds read, sooner
    assert result.returncode == 0, result.stderr
    assert "packed layout" in result.stdout and "floor, one core" in result.stdout
    assert "verifiable noise" in result.stdout
    report = json.loads(path.read_text())
    packed, paper, floor = report["packed"], report["paper_layout"], report["floor"]
    assert len(packed["rounds"]) == 2 and len(report["warmup"]) == 1 and len(paper["rounds"]) == 1
    assert packed["labels_per_s"] == pytest.approx(20 / packed["median_wall_s"])
    assert report["ratios"]["packed_vs_paper"] == pytest.approx(packed["labels_per_s"] / paper["labels_per_s"])
    assert "the client's checks" in result.stdout and packed["median_client_checks_s"] > 0
    assert report["ratios"]["client_checks_vs_round"] == pytest.approx(
        packed["median_client_checks_s"] / packed["median_wall_s"])
    assert 0 < packed["median_client_checks_cpu_s"] and report["ratios"]["client_checks_cpu_vs_round"] == pytest.approx(
        packed["median_client_checks_cpu_s"] / packed["median_wall_s"])
    # The holders' agreement step, timed on each round's own request: t = 3 holders took it, its ratio follows.
    assert "the holders' agreement" in result.stdout
    assert all(r["holders_agreement"]["holders"] == 3 and r["holders_agreement"]["wall_s"] > 0 for r in packed["rounds"])
    assert report["ratios"]["holders_agreement_vs_round"] == pytest.approx(
        packed["median_holders_agreement_s"] / packed["median_wall_s"])
    shares = sorted(r["stages_s"]["client_checks"] / r["wall_s"] for r in packed["rounds"])
    assert packed["median_client_checks_share"] == pytest.approx((shares[0] + shares[1]) / 2)  # two rounds
    # t = 3 of 3 holders: every one decrypts each of the teachers' ciphertexts (one each at Q·C = 60 slots).
    assert report["setup"]["threshold"] == 3 and floor["ciphertexts_per_teacher"] == 1
    assert floor["seconds_per_round_one_core"] == pytest.approx(
        3 * floor["fixed_base_encryption_s"] + 3 * floor["partial_decryption_exponentiation_s"])
    for round_ in packed["rounds"]:
        assert set(round_["cpu_s_by_role"]) >= {"aggregator", "party"} and round_["bytes"] > 0
    verifiable = report["verifiable_noise"]  # the four at one Q, side by side
    for name in ("packed", "proven_votes", "verifiable_noise", "verifiable_pooled"):
        assert verifiable[name]["queries"] == 4 and len(verifiable[name]["rounds"]) == 1
    assert verifiable["ratios"]["verifiable_noise_vs_packed"] == pytest.approx(
        verifiable["verifiable_noise"]["labels_per_s"] / verifiable["packed"]["labels_per_s"])
    assert verifiable["verifiable_noise"]["rounds"][0]["bytes"] > verifiable["proven_votes"]["rounds"][0]["bytes"]
    # The pooled round carries no bit proofs; the fill carries them. Both rounds send the t = 3 holders every bit's
    # ciphertext (docs/malicious-party.md, "Checked where it is decrypted"): per bit about 3 ciphertexts pooled
    # against 3 + 3.6 inline (the ciphertext and its proof in the votes).
    assert verifiable["verifiable_pooled"]["rounds"][0]["bytes"] < verifiable["verifiable_noise"]["rounds"][0]["bytes"] * 0.6
    offline = verifiable["offline_fill"]
    assert len(offline["fills"]) == 1 and offline["fills"][0]["bytes"] > verifiable["verifiable_pooled"]["rounds"][0]["bytes"]
    assert "offline fill" in result.stdout
    # A pair of packed rounds in one deployment with the extra, switched off and on by signal: the observed round
    # counted and spanned in full, the one switched off not at all.
    observed = report["observe_overhead"]
    assert observed["cpu"]["median"] == pytest.approx(observed["measured"]["on"]["cpu_s"][0]
                                                      / observed["measured"]["off"]["cpu_s"][0])
    assert f"median of pairs {observed['cpu']['median']:.3f}" in result.stdout and observed["all_match"]
    assert observed["checks"][0]["metric_calls"] == observed["checks"][0]["server_spans"] == \
        observed["checks"][0]["messages"] > 0
    assert observed["off"] == {"rounds": 1, "metric_calls": 0, "sessions_with_spans": 0, "nothing_counted": True}
    assert observed["off_checks"][0]["messages"] == observed["checks"][0]["messages"]


def test_bench_pathak_reports_every_stage(tmp_path):
    path = tmp_path / "pathak.json"
    result = _mpdp("bench", "pathak", "--parties", "3", "--sessions", "1", "--dataset", "breast-cancer", "--bits",
                   "1024", "--json", str(path))
    assert result.returncode == 0, result.stderr
    [entry] = json.loads(path.read_text())["results"]
    stages = entry["median_stages_s"]
    assert entry["comparisons"] == 2 and entry["comparison_bits"] == 35
    assert all(stages[s] > 0 for s in ("stage1_to_blinding", "stage1_tournament", "stage2", "protocol"))
    assert stages["stage1_tournament"] < stages["protocol"]
    # the cold first session, the offline phase the leader ran before the measured one, and a session without it
    assert entry["cold_session"]["stages_s"]["protocol"] > 0 and entry["back_to_back_session"]["messages"] > 0
    assert entry["median_offline_s"] > 0 and entry["median_offline_cpu_s"] >= 0  # (at 1024 bits it may be done already)


def test_bad_bench_arguments_get_one_line():
    result = _mpdp("bench", "pathak", "--parties", "1", "--dataset", "breast-cancer", timeout=600)
    assert result.returncode != 0 and "Traceback" not in result.stderr and "parties" in result.stderr


@pytest.mark.hardening
def test_bench_scale_fits_growth_exponents(tmp_path):
    path = tmp_path / "scale.json"
    result = _mpdp("bench", "scale", "--protocols", "dppp,hamm,du", "--dppp-sizes", "3,6", "--hamm-sizes", "20,40", "--du-sizes", "3,6",
                   "--bits", "1024", "--json", str(path), timeout=900)
    assert result.returncode == 0, result.stderr
    report = json.loads(path.read_text())
    for protocol, sizes in (("dppp", [3, 6]), ("hamm", [20, 40]), ("du", [3, 6])):
        entry = report["protocols"][protocol]
        points = entry["points"]
        assert [p["parties"] for p in points] == sizes
        expected = math.log(points[1]["messages"] / points[0]["messages"]) / math.log(sizes[1] / sizes[0])
        assert entry["growth_exponents"]["messages"] == pytest.approx(expected)
        assert all(p["per_party"]["bytes"] == pytest.approx(p["bytes"] / p["parties"]) for p in points)


@pytest.mark.hardening
def test_bench_startup_reports_memory_at_rest_and_health_beside_its_floors(tmp_path):
    path = tmp_path / "startup.json"
    result = _mpdp("bench", "startup", "--parties", "2", "--bits", "1024", "--calls", "2", "--json", str(path))
    assert result.returncode == 0, result.stderr
    report = json.loads(path.read_text())
    memory, health, busy = report["memory"], report["health_cpu"], report["health_while_busy"]
    assert set(memory["at_rest"]) == {"aggregator/0", "curator/0", "party/1", "party/2"}
    assert memory["largest_role_mb"] == max(e["rss_mb"] + e["children_rss_mb"] for e in memory["at_rest"].values())
    # the accountant's worker served the sessions, then exited and returned its memory
    for name in ("party/1", "party/2"):
        assert memory["at_rest"][name]["children_rss_mb"] < memory["after_sessions"][name]["children_rss_mb"]
    cpu = health["cpu_s"]
    assert all(len(cpu[name]["values"]) == 2 for name in ("interpreter", "health_imports", "mpdp_health"))
    assert health["vs_imports_floor"] == pytest.approx(cpu["mpdp_health"]["median"] / cpu["health_imports"]["median"])
    assert health["target_met"] == (cpu["mpdp_health"]["median"] <= 0.3)
    assert health["bytecode"]["modules"] >= 5 and 0 <= health["bytecode"]["cached"] <= health["bytecode"]["modules"]
    assert busy["calls"] > 0 and busy["failures"] == 0 and set(busy["session_wall_s"]) == {"dppp", "pathak", "hamm", "du"}
    assert "mpdp health is the imports' floor" in result.stdout
