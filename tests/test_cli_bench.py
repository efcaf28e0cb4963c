import json
import subprocess
import sys


def _mpdp(*args):
    return subprocess.run([sys.executable, "-m", "launcher.cli", *args], capture_output=True, text=True, timeout=300)


def test_bench_crypto_prints_and_writes_every_figure(tmp_path):
    report_path = tmp_path / "crypto.json"
    result = _mpdp("bench", "crypto", "--bits", "1024", "--repeat", "2", "--json", str(report_path))
    assert result.returncode == 0, result.stderr
    assert "tests and quick demos only" in result.stderr
    assert "fast vs phe raw_encrypt" in result.stdout
    report = json.loads(report_path.read_text())
    assert report["key_bits"] == 1024
    encryption = report["encryption"]
    assert encryption["fast_vs_phe_raw_encrypt_ratio"] == encryption["phe_raw_encrypt"]["mean_s"] / encryption["fast_encrypt"]["mean_s"]
    for threshold in ("t=3", "t=11"):
        assert report["threshold"][threshold]["combine"]["mean_s"] > 0
    for name in ("partial_decrypt_without_proof", "partial_decrypt_with_proof", "verify_proof"):
        assert report["threshold"]["t=3"][name]["runs"] == 2
    assert report["packing"]["value_bits"] == 10 and report["packing"]["slots_per_ciphertext"] == 73
    assert report["comparison"]["bits"] == 36
    assert report["keygen"]["threshold_safe_primes"]["runs"] == 3


def test_small_keys_are_refused():
    result = _mpdp("bench", "crypto", "--bits", "512")
    assert result.returncode != 0 and "key size" in result.stderr
