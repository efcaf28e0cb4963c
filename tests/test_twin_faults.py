"""Retries are not replays, for every protocol and the key ceremony, in the in-process twin: the network
duplicates (a lost answer, the message sent again under its call id), delays and drops messages of every kind.
With duplicates and delays every session completes as it does on a reliable network, each retry answered as its
first attempt and none refused as a replay; with drops, every side ends (completed, or aborted at every
participant once a deadline passes) and nothing a failed session computed is published."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest

from aggregator.registry import protocols as aggregator_protocols
from mpdp.proto.v1 import common_pb2, dppp_pb2, du_pb2, hamm_pb2, keygen_pb2
from mpdp.protocols.dppp.parameters import DpppParameters
from mpdp.protocols.keygen.protocol import NAME as KEYGEN
from mpdp.sessions.identity import AGGREGATOR, CLIENT, CURATOR, party
from mpdp.sessions.matrices import matrix_to_proto
from mpdp.wire.twin import InProcessNetwork, TwinFaults
from party.registry import protocols as party_protocols
from tests import test_du_sessions, test_hamm_sessions, test_keygen_protocol, test_pathak_sessions
from tests.pathak_router import network as pathak_network
from tests.test_dkg import plant_primes
from tests.test_dppp_sessions import _resources as dppp_resources

# Du with secure aggregation (its decryption messages too) proves 30 ranges per upload: 17 s, the slow suite's.
PROTOCOLS = ["dppp", "du", pytest.param("du-secure", marks=pytest.mark.slow), "hamm", "pathak", "keygen"]
DUPLICATES_AND_DELAYS = dict(duplicate=0.3, delay=0.3)


def _dppp(threshold_key, faults):
    public, shares = threshold_key
    teachers = 5
    parameters = DpppParameters.with_minimal_noise(8.0, 1e-5, 4, 3, teachers, 2 / 3, True, public.key_id, "binomial")
    own = {party(i): dppp_resources(public, shares, i) for i in range(1, teachers + 1)}
    registries = {identity: party_protocols(own.__getitem__) for identity in own}
    registries[AGGREGATOR] = aggregator_protocols(public, list(range(1, teachers + 1)), list(range(1, 6)))
    net = InProcessNetwork("dppp", registries, random.Random(3), faults)
    net.send(CLIENT, AGGREGATOR, "dppp", "open", dppp_pb2.DpppRoundRequest(
        parameters=parameters.to_proto(), features=matrix_to_proto(np.random.default_rng(1).normal(size=(4, 4))),
        deadline_seconds=30))
    return net, [AGGREGATOR]


def _du(threshold_key, faults, secure=False):
    parts = test_du_sessions.parts.__wrapped__()
    public, _ = threshold_key
    net = test_du_sessions._network(threshold_key, parts)
    net.faults = faults
    parameters = test_du_sessions._parameters(public, "ofaa", secure=secure, rounds=1)
    net.send(CLIENT, AGGREGATOR, "du", "open", du_pb2.DuOpen(parameters=parameters.to_proto(),
                                                              round_deadline_seconds=30, noise_seed=5))
    return net, [AGGREGATOR]


def _hamm(threshold_key, faults):
    public, _ = threshold_key
    net, _ = test_hamm_sessions._network(threshold_key, 5, 2, test_hamm_sessions._aux())
    net.faults = faults
    parameters = test_hamm_sessions._parameters(public, 5, 2)
    net.send(CLIENT, CURATOR, "hamm", "open", hamm_pb2.HammOpen(parameters=parameters.to_proto(), deadline_seconds=30,
                                                                noise_seed=11))
    return net, [CURATOR]


def _pathak(keypair, faults):
    parts = test_pathak_sessions.parts.__wrapped__()
    net = pathak_network(test_pathak_sessions._parameters(), parts, keypair, random.Random(5))
    net.faults = faults
    for identity in list(net.registries):
        net.send(CLIENT, identity, "pathak", "start", common_pb2.Empty())
    return net, [CURATOR, *(identity for identity in net.registries if identity.role == "party")]


def _keygen(monkeypatch, faults):
    plant_primes(monkeypatch, test_keygen_protocol.BITS, test_keygen_protocol.HOLDERS, test_keygen_protocol.BATCH)
    stored: dict = {}
    net = test_keygen_protocol._network(stored)
    net.faults = faults
    net.stored = stored  # type: ignore[attr-defined]
    for j in range(1, test_keygen_protocol.HOLDERS + 1):
        net.send(CLIENT, party(j), KEYGEN, "open", keygen_pb2.KeygenOpen(
            bits=test_keygen_protocol.BITS, holders=test_keygen_protocol.HOLDERS,
            threshold=test_keygen_protocol.THRESHOLD, batch=test_keygen_protocol.BATCH))
    return net, list(net.registries)


def _build(protocol, request, faults):
    if protocol == "pathak":
        return _pathak(request.getfixturevalue("keypair"), faults)
    if protocol == "keygen":
        return _keygen(request.getfixturevalue("monkeypatch"), faults)
    if protocol == "du-secure":
        return _du(request.getfixturevalue("threshold_key"), faults, secure=True)
    return {"dppp": _dppp, "du": _du, "hamm": _hamm}[protocol](request.getfixturevalue("threshold_key"), faults)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_retried_messages_are_answered_as_their_first_attempt(protocol, request):
    """Every message kind may be sent twice under one call id and overtaken: the session completes at every
    side, the side took each message once (nothing refused, no replay), and retries did happen."""
    faults = TwinFaults(random.Random(7), **DUPLICATES_AND_DELAYS)
    net, releasing = _build(protocol, request, faults)
    net.run()
    assert not net.refused, net.refused[:3]
    assert not any(side.state.name == "ABORTED" for side in net.sides.values()), \
        {str(i): (s.state.name, getattr(s, "abort_reason", "")) for i, s in net.sides.items()}
    assert all(net.sides[identity].result() is not None for identity in releasing)
    assert sum(net.retried.values()) > 0 and faults.seen["delay"] > 0
    if protocol == "keygen":  # and the commit, its own session: every commit sent twice, every share written once
        digest = net.sides[party(1)].result()[1].digest
        commit = InProcessNetwork("keygen-1-commit", net.registries, random.Random(1),
                                  TwinFaults(random.Random(2), duplicate=1.0))
        for identity in net.registries:
            commit.send(CLIENT, identity, KEYGEN, "commit", keygen_pb2.KeygenCommit(ceremony=net.session_id,
                                                                                     digest=digest))
        commit.run()
        assert not commit.refused and all(s.state.name == "DONE" for s in commit.sides.values())
        assert sum(commit.retried.values()) == len(net.registries)
        assert sorted(net.stored) == [identity.id for identity in sorted(net.registries)]  # type: ignore[attr-defined]


def test_a_retry_with_another_message_under_the_same_call_id_is_refused(threshold_key):
    """A call id names one message: another envelope under an answered call id is not taken."""
    net, _ = _dppp(threshold_key, None)
    net.run(stop_when=lambda n: AGGREGATOR in n.sides)
    first = net.sides[AGGREGATOR]
    from mpdp.proto.v1 import role_pb2
    from mpdp.wire.envelope import wrap

    envelope = wrap("dppp", CLIENT, AGGREGATOR, net.registries[AGGREGATOR]["dppp"], "open",
                    dppp_pb2.DpppRoundRequest(deadline_seconds=31))
    call_id = "c0ffee"
    net.deliver(role_pb2.Envelope.FromString(envelope.SerializeToString()), call_id)
    refused = len(net.refused)
    other = wrap("dppp", CLIENT, AGGREGATOR, net.registries[AGGREGATOR]["dppp"], "open",
                 dppp_pb2.DpppRoundRequest(deadline_seconds=32))
    with pytest.raises(Exception, match="already used for another message"):
        net.deliver(other, call_id)
    assert len(net.refused) == refused and net.sides[AGGREGATOR] is first


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_dropped_messages_end_every_side_and_publish_nothing_partial(protocol, request, monkeypatch):
    """Some messages of every kind never arrive (undeliverable after every retry): each side completes or
    aborts, once the deadlines pass at the latest, and a releasing side that aborted publishes nothing."""
    clock = [time.monotonic()]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    faults = TwinFaults(random.Random(11), drop=0.03, **DUPLICATES_AND_DELAYS)
    net, releasing = _build(protocol, request, faults)
    net.run()
    for _ in range(6):  # a robust step may outlast one deadline (a decryption widened to every holder)
        if all(side.finished for side in net.sides.values()):
            break
        clock[0] += 3600.0  # every deadline passes
        net.expire()
    assert all(side.finished for side in net.sides.values()), {str(i): s.state.name for i, s in net.sides.items()}
    assert not [r for r in net.refused if "replay" in r[3]], net.refused
    assert faults.seen["drop"] > 0
    for identity in releasing:
        side = net.sides.get(identity)
        assert side is None or side.state.name == "DONE" or side.result() is None
