"""Shared test keys: 1024-bit, generated once per test session (the benchmarks use 2048)."""

import os
import signal
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from mpdp.cryptocore.paillier.keypair import generate_keypair
from mpdp.cryptocore.paillier.threshold import generate_threshold_key
from mpdp.wire.fork_handling import disable_grpc_fork_handlers

# The tests run role servers in this process and start children beside them, as a role's process does: the same
# gRPC setting, made before any test module imports grpc.
disable_grpc_fork_handlers()

TEST_KEY_BITS = 1024

# Where a party in test mode finds the misbehaving sides a `fault` names (party/behaviours.py), in this process and in
# every role process a test starts (they inherit the environment); product launches never set it.
os.environ.setdefault("MPDP_TEST_BEHAVIOURS", str(Path(__file__).resolve().with_name("malicious_parties.py")))

settings.register_profile(
    "crypto",
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.load_profile("crypto")


def pytest_configure(config):
    """SIGTERM and SIGINT end a run through every fixture's teardown (the deployments' `down`, a CLI child's kill),
    instead of leaving what the run started to outlive it. Both raise KeyboardInterrupt at once, wherever the main
    thread is: under Python's default SIGINT handler `asyncio.run` takes SIGINT as a request to cancel its task,
    and a session that runs to its end through that cancellation absorbs it; the test then waits on, interrupted
    by nothing (seen once in CI: `tests/test_interrupted_runs.py` waited out its 600 s)."""
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, _interrupted)
    for name in _protocols():  # `pytest -m pathak`: every test module named after the protocol
        config.addinivalue_line("markers", f"{name}: tests of the {name} protocol (test modules named after it)")


def _interrupted(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.fixture(scope="session")
def keypair():
    return generate_keypair(TEST_KEY_BITS)


@pytest.fixture(scope="session")
def other_keypair():
    return generate_keypair(TEST_KEY_BITS)


@pytest.fixture(scope="session")
def threshold_key():
    """(public key, shares) with t = 3 of ℓ = 5."""
    return generate_threshold_key(TEST_KEY_BITS, threshold=3, holders=5)


@pytest.fixture(scope="session")
def pool(tmp_path_factory):
    """Multi-process deployments shared by the DPPP and Pathak tests; all stopped at the end."""
    from tests.deployment import DeploymentPool

    deployments = DeploymentPool(tmp_path_factory.mktemp("deployments"))
    try:
        yield deployments
    finally:
        deployments.close()


def _protocols() -> list[str]:
    from launcher.registry import PROTOCOLS

    return list(PROTOCOLS)


# Modules whose tests start real role processes (or the CLI): marked `network`, so that
# `pytest -m "not network"` is the fast inner loop. CI runs everything. Each registered protocol's
# `test_<protocol>_network` is one of them too.
NETWORK_MODULES = {"test_authorization", "test_cli_bench", "test_cli_demo", "test_compose", "test_concurrency",
                   "test_hardening", "test_interrupted_runs", "test_logical_parties", "test_tls"}
SLOW_MODULES = {"test_cli_bench", "test_cli_demo", "test_compose", "test_concurrency", "test_hardening",
                "test_interrupted_runs"}


def pytest_collection_modifyitems(config, items):
    protocols = set(_protocols())
    for item in items:
        module = item.module.__name__.rsplit(".", 1)[-1]
        named = protocols.intersection(module.split("_")[1:])
        for protocol in named:
            item.add_marker(getattr(pytest.mark, protocol))
        network = {f"test_{protocol}_network" for protocol in named}
        if module in NETWORK_MODULES | network or "pool" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.network)
        if module in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
