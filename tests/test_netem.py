"""Every protocol under emulated links (mpdp.wire.relay): one shared K = 3 deployment whose relays are switched
between profiles, so each protocol's sessions run side by side on the same processes and channels.

Under 20 ms added per link the session takes at least its critical path's sequential one-way trips × 20 ms
longer than with the relays adding nothing — the loopback run, through the same relays (the trips counted by
`mpdp predict` from the delayed session's transcript: the path it ran) —, the message counts are the same, and
`mpdp predict` from the undelayed session is within 25 % of the measured wall time under two profiles. A seeded
Pathak, Hamm or Du session gives the same counts and result through 10 ms, 5 Mbit/s links as through none (DPPP's
parties draw their noise from the system's randomness: its counts alone are compared).

The sessions are small so that the links' delay, not the machine's other load, decides the comparisons: the data
are four of breast cancer's columns (Du's range proofs and Pathak's shares grow with the dimension; at all 30 a Du
session took 5–15 s of CPU-bound work against the 0.2 s its ten trips add). Each profile's fastest session counts
(launcher.bench.networks.measure_protocol: the least disturbed by other load), of three turns, and of up to
eight while a check does not hold yet: more turns bring each profile's fastest closer to its undisturbed time,
which settles a comparison a burst of load upset and cannot settle one the relays' delay does not."""

from __future__ import annotations

import asyncio
import json
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

REPEATS = 3  # turns of one session per profile, the fastest kept
MOST = 8  # turns in all while a check does not hold
COLUMNS = ("mean radius", "mean texture", "mean smoothness", "mean concave points")
DELAYED = NetworkProfile("20 ms per link", latency_ms=20)
NARROW = NetworkProfile("10 ms per link, 5 Mbit/s", latency_ms=10, bandwidth_mbit=5)
TOLERANCE = 0.25


@pytest.fixture(scope="module")
def relayed(tmp_path_factory):
    from sklearn.datasets import load_breast_cancer

    directory = tmp_path_factory.mktemp("netem")
    table = load_breast_cancer(as_frame=True).frame[[*COLUMNS, "target"]]
    table.to_csv(directory / "breast-cancer-4.csv", index=False)
    run_dir = directory / "run"
    data = datasets.load(str(directory / "breast-cancer-4.csv"), label="target")
    topology = network.up(run_dir, DELAYED, 3, TEST_BITS, data, seed=7, model=TEST_MODEL,
                          test_mode=True, budget=UNLIMITED, foreground=True)
    try:
        yield run_dir, topology, load_client_data(run_dir / "client" / "client.npz")
    finally:
        network.down(run_dir)
    assert not (run_dir / network.RELAY_PID_FILE).exists()


SEED = 11  # the noise seed of the sessions whose results are compared


async def _pathak(topology, client_data: dict, session_id: str) -> dict:
    from launcher.protocols.pathak.client import run_pathak_session
    from mpdp.protocols.pathak.parameters import PathakParameters

    parameters = PathakParameters(epsilon=1.0, delta=1e-5, regularization=0.01, mechanism="l2-laplace",
                                  calibration="tight", parties=len(topology.parties),
                                  dimension=client_data["test_features"].shape[1], noise_seed=SEED)
    return await run_pathak_session(topology, client_data, parameters, session_id=session_id)


async def _hamm(topology, client_data: dict, session_id: str) -> dict:
    from launcher.protocols.hamm import client

    parameters = client.session_parameters(topology, client_data, "soft", 1.0, 1e-5, 0.01)
    return await client.run_hamm_session(topology, client_data, parameters, session_id=session_id, noise_seed=SEED)


async def _du(topology, client_data: dict, session_id: str) -> dict:
    from launcher.protocols.du import client

    parameters = client.session_parameters(topology, client_data, "functional", 1.0, 2, True, local_epochs=5)
    return await client.run_du_session(topology, client_data, parameters, session_id=session_id, noise_seed=SEED)


# The protocols whose noise a session's seed fixes (DPPP's parties draw theirs from the system's randomness).
SEEDED = {"pathak": _pathak, "hamm": _hamm, "du": _du}


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


def _delay_shortfall(best: dict[str, dict]) -> tuple[float, float, dict] | None:
    """(time added, time the critical path's trips need, the prediction that counted them) when the delayed
    session's fastest was not slower than the loopback's fastest by its sequential one-way trips × 20 ms."""
    delayed, undelayed = best[DELAYED.name], best[UNDELAYED.name]
    ran = predict(delayed, DELAYED)  # the sequential one-way trips on the critical path the delayed session ran
    added = measured_wall(delayed) - measured_wall(undelayed)
    needed = ran.sequential_trips * DELAYED.latency_s
    return None if added >= needed else (added, needed, ran.to_json())


def _prediction_misses(best: dict[str, dict]) -> list[tuple[str, float, float]]:
    """(profile, predicted, measured) for each profile where `mpdp predict` from the loopback session's transcript
    is more than 25 % off the measured wall time."""
    misses = []
    for profile in (DELAYED, NARROW):
        predicted = predict(best[UNDELAYED.name], profile).predicted_wall_s
        measured = measured_wall(best[profile.name])
        if abs(predicted - measured) > TOLERANCE * measured:
            misses.append((profile.name, predicted, measured))
    return misses


def _settled(best: dict[str, dict]) -> bool:
    return _delay_shortfall(best) is None and not _prediction_misses(best)


@pytest.mark.parametrize("name", [name for name, p in PROTOCOLS.items() if p.faults is not None])
def test_delay_costs_the_critical_path_and_predict_matches(relayed, name):
    run_dir, topology, client_data = relayed
    best = measure_protocol(run_dir, topology, client_data, PROTOCOLS[name], [DELAYED, NARROW], REPEATS, _settled,
                            MOST)
    undelayed, delayed, narrow = best[UNDELAYED.name], best[DELAYED.name], best[NARROW.name]
    for report in (undelayed, delayed, narrow):
        assert report["network"]["emulator"].startswith("relay")
    assert delayed["network"]["profile"]["latency_ms"] == 20
    assert _counts(delayed) == _counts(undelayed) == _counts(narrow)

    assert predict(delayed, DELAYED).sequential_trips >= 2  # at least the client's open and its answer
    walls = {profile: [round(wall, 3) for wall in report["walls_s"]] for profile, report in best.items()}
    predicted = {profile.name: round(predict(undelayed, profile).predicted_wall_s, 3) for profile in (DELAYED, NARROW)}
    print(f"{name}: {len(walls[UNDELAYED.name])} turns, wall times {walls}, predicted {predicted}, "
          f"{predict(delayed, DELAYED).sequential_trips} trips")  # shown by pytest -rP
    assert _delay_shortfall(best) is None, (_delay_shortfall(best), walls)
    assert not _prediction_misses(best), (_prediction_misses(best), walls)


def _outcome(value):
    """A result without its timings (`seconds`: how long a round took), which no two sessions share."""
    if isinstance(value, dict):
        return {key: _outcome(item) for key, item in value.items() if key != "seconds"}
    if isinstance(value, list):
        return [_outcome(item) for item in value]
    return value


@pytest.mark.parametrize("name", SEEDED)
def test_a_profile_changes_neither_counts_nor_results_of_a_seeded_session(relayed, name):
    run_dir, topology, client_data = relayed
    reports = []
    for profile in (UNDELAYED, NARROW):
        network.reshape(run_dir, profile)
        with network.active(run_dir):
            reports.append(asyncio.run(SEEDED[name](topology, client_data, f"netem-seeded-{name}-{len(reports)}")))
    loopback, narrow = reports
    assert _counts(loopback) == _counts(narrow)
    assert json.dumps(_outcome(loopback["result"]), sort_keys=True, default=str) == \
        json.dumps(_outcome(narrow["result"]), sort_keys=True, default=str)
