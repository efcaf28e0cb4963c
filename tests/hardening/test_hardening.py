"""The hardening suite: a hostile client against a deployment of real processes. Marked
`hardening`: `.ci/run` runs it after the default suite; `mpdp bench hardening` prints the full figures."""

import asyncio
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from launcher.bench import attacks as hardening
from launcher.deployment import processes
from launcher.protocols.dppp import client as dppp_client
from launcher.protocols.hamm.client import run_hamm_session, session_parameters
from launcher.protocols.pathak.client import run_pathak_session
from mpdp.sessions.identity import AGGREGATOR, CURATOR, party

pytestmark = pytest.mark.hardening
BITS, PARTIES, DEADLINE = 1024, 3, 10.0
# Honest sessions' deadlines bound failures only: a teacher's first round trains its model, slow under load.
HONEST_DEADLINE = 300.0


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("hardening") / "run"
    run, topology, client_data, parameters = hardening.start_target(run_dir, PARTIES, BITS, 3, DEADLINE)
    try:
        yield run, topology, client_data, parameters
    finally:
        processes.down(run_dir)


def _pathak(target, session_id):
    run, topology, client_data, parameters = target
    return asyncio.run(run_pathak_session(topology, client_data, parameters, session_id=session_id))


def _dppp(target, session_id):
    run, topology, client_data, _ = target
    return asyncio.run(dppp_client.run_dppp_session(topology, client_data, 5.0, 1e-5, 6, deadline_s=HONEST_DEADLINE,
                                               session_id=session_id))


def _hamm(target, session_id):
    run, topology, client_data, _ = target
    parameters = session_parameters(topology, client_data, "soft", 1.0, 1e-5, 0.01)
    return asyncio.run(run_hamm_session(topology, client_data, parameters, deadline_s=HONEST_DEADLINE,
                                        session_id=session_id))


SESSIONS = (_pathak, _dppp, _hamm)


@pytest.fixture(scope="module")
def fuzz_context(target):
    run, topology, _, parameters = target
    _pathak(target, "finished")
    hardening.open_session_ids(topology, run, "opened", parameters)
    return hardening.FuzzContext(session_ids=["finished", "opened", "unknown", "x" * 129, ""], finished_ids=["finished"],
                                 ciphertext_bytes=2 * BITS // 8, parties=PARTIES)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_fuzzed_rpcs_get_defined_statuses_without_crash_or_hang(target, fuzz_context, seed):
    run, topology, _, _ = target
    result = hardening.fuzz(topology, run, fuzz_context, 1, random.Random(seed))
    assert result["crashes"] == 0 and result["hangs"] == 0, result
    assert result["undefined_statuses"] == 0, {k: v for k, v in result["per_rpc"].items() if v["undefined"]}


def test_sessions_succeed_after_the_fuzzing(target, fuzz_context):
    assert _pathak(target, "after-fuzz")["result"]["w"]
    assert _dppp(target, "after-fuzz-dppp")["result"]["labels"]
    assert _hamm(target, "after-fuzz-hamm")["result"]["voters"] == PARTIES


def test_resources_do_not_grow_over_sequential_sessions(target):
    run = target[0]
    for index in range(6):  # warm-up: caches, tables, channels
        SESSIONS[index % 3](target, f"warm-{index}")
    before = hardening.resources(run)
    for index in range(21):
        SESSIONS[index % 3](target, f"growth-{index}")
    growth = hardening.growth(before, hardening.resources(run))
    for role, delta in growth.items():
        assert delta["threads"] <= 4 and delta["fds"] <= 8, (role, delta)
        assert delta["rss_mb"] < 40, (role, delta)  # finished sessions are kept, bounded, for reports


@pytest.mark.parametrize("protocol, role, fault", [
    ("pathak", party(2), "SIGKILL"), ("pathak", CURATOR, "SIGSTOP"),
    ("pathak", party(1), "kill-on:Step/pathak/compare_request"), ("pathak", CURATOR, "stop-on:Step/pathak/stage1_element"),
    ("pathak", party(3), "drop:Step/pathak/selected_noise"), ("pathak", party(3), "delay:Step/pathak/routed_share:2"),
    ("pathak", party(3), "stop-on:Step/pathak/share"),  # the others finish first: their shares must be withdrawn
    ("dppp", party(3), "SIGKILL"), ("dppp", AGGREGATOR, "kill-on:Step/dppp/votes"),
    ("dppp", party(3), "drop:Step/dppp/partial_decryptions"), ("dppp", AGGREGATOR, "delay:Step/dppp/queries:2"),
    ("hamm", party(3), "SIGKILL"),
    ("hamm", party(3), "kill-on:Step/hamm/queries"),  # a party killed mid-round, before it votes
    ("hamm", party(1), "kill-on:Step/hamm/decryption_request"),  # a key holder killed mid-decryption
    ("hamm", party(3), "drop:Step/hamm/votes"),  # a dropout: M′ = 2 after the deadline
    ("hamm", AGGREGATOR, "kill-on:Step/hamm/votes"), ("hamm", CURATOR, "kill-on:Step/hamm/aggregate"),
    ("hamm", party(2), "delay:Step/hamm/partial_decryptions:2"),
    ("du", party(3), "kill-on:Step/du/model"),  # a holder dies mid-run: with t = 3 of 3 the run must fail
    ("du", AGGREGATOR, "kill-on:Step/du/upload"), ("du", party(2), "delay:Step/du/upload:2"),
])
def test_faults_fail_or_complete_publish_nothing_and_the_next_session_succeeds(target, protocol, role, fault):
    run, topology, client_data, parameters = target
    [row] = hardening.fault_matrix(run.path, topology, client_data, parameters, [(protocol, role, fault)])
    assert row["as_expected"], row
