"""The death of the role that releases a session's result (DPPP's and Du's aggregator, Hamm's curator) ends the
session at every participant at once: the client, which awaited that role's result, aborts it everywhere, and no
participant waits out its deadline (a key holder never asked to decrypt, a party waiting for the next model).
Five parties, so that some holders are still waiting when the releasing role dies."""

import pytest

from launcher.bench import attacks as hardening
from launcher.deployment import processes
from mpdp.sessions.identity import AGGREGATOR, CURATOR

pytestmark = [pytest.mark.hardening, pytest.mark.network, pytest.mark.slow]
BITS, PARTIES, DEADLINE = 1024, 5, 20.0


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("releasing") / "run"
    run, topology, client_data, parameters = hardening.start_target(run_dir, PARTIES, BITS, 3, DEADLINE)
    try:
        yield run, topology, client_data, parameters
    finally:
        processes.down(run_dir)


@pytest.mark.parametrize("protocol, role, fault", [
    ("dppp", AGGREGATOR, "kill-on:Step/dppp/partial_decryptions"),  # holders 4 and 5 were never asked
    ("hamm", CURATOR, "kill-on:Step/hamm/aggregate"),  # the holders wait for the curator's decryption request
    ("du", AGGREGATOR, "kill-on:Step/du/upload"),  # the parties wait for the next model
])
def test_the_releasing_roles_death_ends_the_session_everywhere_at_once(target, protocol, role, fault):
    run, topology, client_data, parameters = target
    [row] = hardening.fault_matrix(run.path, topology, client_data, parameters, [(protocol, role, fault)])
    assert row["observed"] != "completed" and row["still_open_at"] == [], row
    assert row["as_expected"], row
