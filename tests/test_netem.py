"""Every protocol under emulated links (mpdp.wire.relay): one shared K = 3 deployment whose relays are switched
between profiles, so each protocol's sessions run side by side on the same processes and channels.

Under 20 ms added per link the session takes at least its critical path's sequential one-way trips × 20 ms
longer than with the relays adding nothing — the loopback run, through the same relays (the trips counted by
`mpdp predict` from the delayed session's transcript: the path it ran) —, the message counts are the same, and `mpdp predict` from the undelayed
session is within 25 % of the measured wall time under two profiles. Each profile's fastest of two sessions
counts (launcher.bench.networks.measure_protocol): the least disturbed by the machine's other load."""

from __future__ import annotations

from collections import Counter

import pytest

from launcher.bench.networks import UNDELAYED, measure_protocol
from launcher.commands.predict import measured_wall, predict
from launcher.common.client import load_client_data
from launcher.deployment import network
from launcher.registry import PROTOCOLS
from mpdp.learning import datasets
from mpdp.privacy.ledger import UNLIMITED
from mpdp.wire.profiles import NetworkProfile
from tests.deployment import TEST_BITS, TEST_MODEL

pytestmark = pytest.mark.netem

REPEATS = 2  # sessions per profile, the fastest kept
DELAYED = NetworkProfile("20 ms per link", latency_ms=20)
NARROW = NetworkProfile("10 ms per link, 5 Mbit/s", latency_ms=10, bandwidth_mbit=5)
TOLERANCE = 0.25


@pytest.fixture(scope="module")
def relayed(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("netem") / "run"
    topology = network.up(run_dir, DELAYED, 3, TEST_BITS, datasets.load("breast-cancer"), seed=7, model=TEST_MODEL,
                          test_mode=True, budget=UNLIMITED, foreground=True)
    try:
        yield run_dir, topology, load_client_data(run_dir / "client" / "client.npz")
    finally:
        network.down(run_dir)
    assert not (run_dir / network.RELAY_PID_FILE).exists()


def _counts(report: dict) -> Counter:
    """Messages per (sender's role, receiver's role, kind), a role's deliveries to itself included: which party
    a message goes to may change from session to session (Pathak's secret choices), how many of each kind
    cross between roles may not."""
    view = report.get("evaluator_view", {})
    rows = view.get("traffic_detail", report.get("traffic_detail"))
    counts = Counter((row["from_role"], row["to_role"], row["rpc"].rsplit("/", 1)[-1]) for row in rows)
    for identity, kinds in view.get("self_deliveries", {}).items():
        role = identity.split("/")[0]
        counts.update({(role, role, kind): count for kind, count in kinds.items()})
    return counts


@pytest.mark.parametrize("name", [name for name, p in PROTOCOLS.items() if p.faults is not None])
def test_delay_costs_the_critical_path_and_predict_matches(relayed, name):
    run_dir, topology, client_data = relayed
    best = measure_protocol(run_dir, topology, client_data, PROTOCOLS[name], [DELAYED, NARROW], REPEATS)
    undelayed, delayed, narrow = best[UNDELAYED.name], best[DELAYED.name], best[NARROW.name]
    for report in (undelayed, delayed, narrow):
        assert report["network"]["emulator"].startswith("relay")
    assert delayed["network"]["profile"]["latency_ms"] == 20
    assert _counts(delayed) == _counts(undelayed) == _counts(narrow)

    # The sequential one-way trips on the critical path the delayed session ran (from its transcript)
    ran = predict(delayed, DELAYED)
    assert ran.sequential_trips >= 2  # at least the client's open and its answer
    added = measured_wall(delayed) - measured_wall(undelayed)
    assert added >= ran.sequential_trips * DELAYED.latency_s, (added, ran.to_json())

    for profile, measured in ((DELAYED, delayed), (NARROW, narrow)):
        predicted = predict(undelayed, profile).predicted_wall_s
        assert abs(predicted - measured_wall(measured)) <= TOLERANCE * measured_wall(measured), \
            (profile.name, predicted, measured_wall(measured))
