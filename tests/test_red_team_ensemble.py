"""Attacks on DPPP's ensemble ballot and the key holders' checks of it, as an active aggregator (or a client
whose parameters the aggregator forwards) would mount them (spec README, threat model; docs/red-team.md)."""

from __future__ import annotations

import numpy as np
import pytest

from aggregator.registry import protocols as aggregator_protocols
from mpdp.proto.v1 import dppp_pb2
from mpdp.protocols.dppp.parameters import DpppParameters
from mpdp.sessions.errors import Kind, ProtocolError
from mpdp.sessions.identity import AGGREGATOR, CLIENT, party
from mpdp.sessions.matrices import matrix_to_proto
from mpdp.vote_proofs import well_formed
from mpdp.vote_proofs.assurance import Assurance
from party.registry import protocols as party_protocols
from party.resources import PartyResources

TEACHERS, QUERIES, CLASSES, T = 5, 500, 10, 10


class _Untouchable:
    """A teacher's models: the attack must be refused before any of them is trained or asked."""

    def ensemble(self, size: int) -> list:
        raise AssertionError("a refused session trained or asked the teacher's models")


def test_a_proven_ensemble_session_whose_holders_request_cannot_travel_is_refused_at_the_start(threshold_key):
    """Proven votes, K = 5, Q = 500, C = 10, T = 10: the holders' request carries K·Q·T proven votes (T per query),
    about 10 times what Q votes would. Q·T·C stays within one teacher's message, but counting Q votes would let
    each teacher prove 5 000 ballots and spend its budget on a round whose decryption request can never reach a
    holder. Every role counts T proven votes per query and refuses the session before any work."""
    public, shares = threshold_key
    parameters = DpppParameters.with_minimal_noise(8.0, 1e-5, QUERIES, CLASSES, TEACHERS, 2 / 3, True, public.key_id,
                                                   assurance=Assurance.PROVEN_VOTES, ensemble=T)
    well_formed.check_size(public, TEACHERS, QUERIES, CLASSES, 0, False)  # one vote per query would fit
    with pytest.raises(ProtocolError):  # T per query does not
        well_formed.check_size(public, TEACHERS, parameters.proven_rows, CLASSES, 0, False)

    features = np.zeros((QUERIES, 4))
    aggregator = aggregator_protocols(public, list(range(1, TEACHERS + 1)), list(range(1, TEACHERS + 1)))["dppp"]
    with pytest.raises(ProtocolError, match="key holders' request would carry") as refused:
        aggregator.open("s", AGGREGATOR, CLIENT, "open", dppp_pb2.DpppRoundRequest(
            parameters=parameters.to_proto(), features=matrix_to_proto(features), deadline_seconds=60))
    assert refused.value.kind is Kind.INVALID_ARGUMENT

    spent: list = []
    own = PartyResources(1, public, shares[0], _Untouchable(), np.zeros((100, 4)), np.zeros(100), test_mode=True)
    own.spend = lambda *args: spent.append(args)  # type: ignore[method-assign]
    teacher = party_protocols(lambda identity: own)["dppp"]
    with pytest.raises(ProtocolError, match="key holders' request would carry") as refused:
        teacher.open("s", party(1), AGGREGATOR, "queries", dppp_pb2.DpppQueries(
            parameters=parameters.to_proto(), features=matrix_to_proto(features), deadline_seconds=60))
    assert refused.value.kind is Kind.INVALID_ARGUMENT
    assert spent == []  # no budget spent on it


def test_unsigned_evidence_costs_a_key_holder_no_proof_check(threshold_key, monkeypatch):
    """Proven votes without verifiable noise: what makes a contribution well formed (its vote ciphertexts, their
    proofs, its noise ciphertexts) travels unsigned beside the signed contribution. An active aggregator attaches
    another teacher's evidence to a genuinely signed contribution, to make the holder check every proof of every
    contributor (the whole ensemble's K·Q·T one-hot proofs, and again per contributor to name one) and blame an
    honest party. The holder folds first (products, no exponentiation) and refuses without a proof check."""
    import random

    from mpdp.cryptocore.proofs import membership_proof
    from mpdp.proto.v1 import role_pb2
    from mpdp.wire.envelope import unwrap
    from mpdp.wire.twin import InProcessNetwork
    from tests.test_dppp_ensemble_ballot import QUERIES as Q
    from tests.test_dppp_ensemble_ballot import TEACHERS as K
    from tests.test_dppp_ensemble_ballot import _parameters, _resources

    public, shares = threshold_key
    parameters = _parameters(public, assurance=Assurance.PROVEN_VOTES)
    own = {party(i): _resources(public, shares, i) for i in range(1, K + 1)}
    registries = {identity: party_protocols(own.__getitem__) for identity in own}
    registries[AGGREGATOR] = aggregator_protocols(public, list(range(1, K + 1)), list(range(1, K + 1)))
    net = InProcessNetwork("evidence", registries, random.Random(3))
    net.send(CLIENT, AGGREGATOR, "dppp", "open", dppp_pb2.DpppRoundRequest(
        parameters=parameters.to_proto(), features=matrix_to_proto(np.random.default_rng(1).normal(size=(Q, 4))),
        deadline_seconds=60))
    queue = net._queues[(AGGREGATOR, party(1))]
    net.run(stop_when=lambda n: any(role_pb2.Envelope.FromString(raw).dppp.HasField("decryption_request")
                                    for _, raw in queue))
    raw = next(raw for _, raw in queue if role_pb2.Envelope.FromString(raw).dppp.HasField("decryption_request"))
    _, kind, request = unwrap(role_pb2.Envelope.FromString(raw), registries[party(1)])
    assert kind == "decryption_request" and len(request.contributions) >= 2

    first, second = request.contributions[0], request.contributions[1]
    first.well_formed.CopyFrom(second.well_formed)  # valid proofs, under another sender's context and fold
    checked = []
    real = membership_proof.verify_all
    monkeypatch.setattr(membership_proof, "verify_all", lambda *a, **k: checked.append(1) or real(*a, **k))
    with pytest.raises(ProtocolError, match="not the fold"):
        net.sides[party(1)].receive(AGGREGATOR, "decryption_request", request)
    assert checked == []


@pytest.mark.parametrize("squatter", ["holder", "outsider"])
def test_a_refused_keygen_opener_leaves_no_session_the_client_would_meet(monkeypatch, squatter):
    """A key holder (or any other authenticated role) sends `commit` in the ceremony's session id before the client
    opens it, so that a commit side under that id would meet the client's `open` and fail the ceremony. The opener
    is checked before any side exists: the refusal leaves nothing, and the ceremony and its commit go through."""
    import random

    from mpdp.proto.v1 import keygen_pb2
    from mpdp.protocols.keygen.holder_side import State
    from mpdp.protocols.keygen.protocol import NAME
    from mpdp.sessions.identity import CURATOR
    from mpdp.wire.twin import InProcessNetwork
    from tests.test_dkg import plant_primes
    from tests.test_keygen_protocol import BATCH, BITS, HOLDERS, THRESHOLD, _network, commit

    plant_primes(monkeypatch, BITS, HOLDERS, BATCH)
    stored: dict = {}
    net = _network(stored)
    sender = party(2) if squatter == "holder" else CURATOR
    squat = keygen_pb2.KeygenCommit(ceremony="keygen-other", digest=bytes(32))
    twin = InProcessNetwork(net.session_id, net.registries, random.Random(1))
    twin.sides = net.sides  # the same holders: one host per holder
    twin.send(sender, party(1), NAME, "commit", squat)
    twin.run()
    assert twin.refused and "may not commit" in twin.refused[0][3]
    assert party(1) not in net.sides
    for j in range(1, HOLDERS + 1):
        net.send(CLIENT, party(j), NAME, "open", keygen_pb2.KeygenOpen(bits=BITS, holders=HOLDERS,
                                                                         threshold=THRESHOLD, batch=BATCH))
    net.run()
    assert not net.refused, net.refused
    assert all(net.sides[party(j)].state is State.DONE for j in range(1, HOLDERS + 1))
    assert not commit(net, range(1, HOLDERS + 1)).refused and sorted(stored) == [1, 2, 3]
