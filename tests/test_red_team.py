"""Attacks on the roles as an active aggregator, an active curator, a malicious party and a curious
container would mount them (spec README, threat model). Each test documents one attack; one that still
works is marked xfail(strict=True) with what it gains, so the day it stops working the suite says so."""

from __future__ import annotations

import secrets

import pytest

from cryptocore import keyfiles, threshold
from launcher import processes
from learning import datasets
from sessions.identity import party

BITS = 1024


@pytest.mark.xfail(strict=True, reason=(
    "logical hosting: key holders are parties 1..min(K, 16) whatever process hosts them, so with "
    "--parties-per-process P >= t one process (one party's operator) holds t shares and decrypts any "
    "ciphertext under the deployment key alone, bound decryption and t > l/2 notwithstanding"))
def test_no_party_process_holds_a_decrypting_quorum_of_shares(tmp_path):
    """`up --parties 5 --parties-per-process 4`: t = 4 of 5 holders, and party/1-4's bundle holds shares 1..4.
    The attack: that host's operator decrypts party 5's ciphertext with its own files and nobody else."""
    parties, per_process = 5, 4
    hosts = processes.party_hosts(parties, per_process)
    topology = processes.prepare(tmp_path / "run", parties, BITS, datasets.load("breast-cancer"),
                                 processes.loopback_addresses(parties, hosts), seed=3, hosts=hosts)
    public = keyfiles.load_public_key(topology.public_key)
    host_bundle = processes.RunDirectory(tmp_path / "run").bundle(hosts[party(1)])
    shares = [keyfiles.load_key_share(path) for path in sorted(host_bundle.glob("key_share_*"))]
    secret_vote = secrets.randbelow(1 << 32)
    victims_ciphertext = public.encryptor.encrypt(secret_vote)  # what party 5 would send, under the joint key
    if len(shares) >= public.threshold:  # the host alone: no request, no signature, no other holder
        partials = [share.partial_decrypt(victims_ciphertext) for share in shares[:public.threshold]]
        assert threshold.combine(public, partials) == secret_vote
    assert len(shares) < public.threshold, f"one process holds {len(shares)} shares; t = {public.threshold}"


@pytest.mark.xfail(strict=True, reason=(
    "a key holder counts contributors, not honest ones: it decrypts a sum of ⌈τK⌉ contributions, and τ is "
    "the opener's; an active aggregator with the one malicious teacher the threat model allows names K = 10, "
    "τ = 0.2 and decrypts {victim, accomplice}: the accomplice subtracts its own votes and noise, and the "
    "victim's votes carry N_i = N/2 tosses where (ε, δ) needs N. Needs ⌈τK⌉ + 1 contributors per sum or "
    "N_i = N/(⌈τK⌉ − 1): a change to the calibration and the dropout rule, not a local check"))
def test_a_decryptable_dppp_sum_keeps_full_noise_without_one_colluding_teacher():
    from dppp.parameters import DpppParameters
    from mpdp_proto.v1 import common_pb2, threshold_sum_pb2
    from privacy.binomial import minimal_tosses
    from threshold_sum import decryption

    epsilon, delta, queries = 5.0, 1e-5, 10
    parameters = DpppParameters(epsilon, delta, queries, 2, 10, 0.2, True, bytes(32),
                                minimal_tosses(epsilon, delta, queries))
    parameters.calibrate()  # what every teacher checks: N is the smallest for (ε, δ, Q) — it is
    victim, accomplice = 3, 7
    request = threshold_sum_pb2.DecryptionRequest(contributions=[
        threshold_sum_pb2.Contribution(sender=sender, ciphertexts=common_pb2.Ciphertexts(values=[b"\x01"]))
        for sender in (victim, accomplice)])
    accepted = True
    try:  # the holder's checks before its signature checks (both contributions are genuine and signed)
        decryption._check_shape(request, parameters.teachers, parameters.calibration.min_contributors, 1)
    except Exception:  # noqa: BLE001 — any refusal is what the test wants
        accepted = False
    calibration = parameters.calibration
    unknown_to_the_coalition = calibration.guaranteed_tosses(len(request.contributions) - 1) if accepted else None
    assert not accepted or unknown_to_the_coalition >= calibration.total_tosses, (
        f"decrypted with {unknown_to_the_coalition} tosses the coalition does not know; (ε, δ) needs "
        f"{calibration.total_tosses}")
