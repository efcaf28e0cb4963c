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
from party.registry import protocols as party_protocols
from party.resources import PartyResources

TEACHERS, QUERIES, CLASSES, T = 5, 500, 10, 10


class _Untouchable:
    """A teacher's models: the attack must be refused before any of them is trained or asked."""

    def ensemble(self, size: int) -> list:
        raise AssertionError("a refused session trained or asked the teacher's models")


def test_a_proven_ensemble_session_whose_holders_request_cannot_travel_is_refused_at_the_start(threshold_key):
    """Proven votes, K = 5, Q = 500, C = 10, T = 10: the holders' request carries K·Q·T proven votes (T per query),
    about 10 times what Q votes would. Q·T·C stays within one teacher's message, so every role used to accept the
    session, and each teacher proved 5 000 ballots and spent its budget on a round whose decryption request could
    never reach a holder. Every role now counts T proven votes per query and refuses it before any work."""
    public, shares = threshold_key
    parameters = DpppParameters.with_minimal_noise(8.0, 1e-5, QUERIES, CLASSES, TEACHERS, 2 / 3, True, public.key_id,
                                                   proven_votes=True, ensemble=T)
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
