"""A DPPP noise-pool fill starts on the client's word (mpdp/protocols/dppp/pool_opening.py), in process: a teacher
holding a CA-issued verifier makes nothing — no bits, no proofs, no precomputed pairs, no change to its pool —
for a fill the client did not sign: unsigned, signed by the aggregator, or carrying the client's signature on
another fill (another session, more bits, more pairs). The client's own fill, forwarded by the real aggregator
side, is taken and answered."""

from __future__ import annotations

import dataclasses

import pytest

from aggregator.dppp_pool import DpppPoolAggregatorSide
from launcher.deployment import certs
from mpdp.proto.v1 import dppp_pb2
from mpdp.protocols.dppp import pool_opening
from mpdp.protocols.dppp.pool_opening import PoolFill
from mpdp.sessions.errors import Kind, ProtocolError
from mpdp.sessions.identity import AGGREGATOR, CLIENT, party
from mpdp.vote_proofs.noise_pool import Pools
from party.dppp_pool import DpppPoolTeacherSide
from tests.hostile_aggregator import client_signature_from
from tests.test_client_opening import _party, _signed_by

BITS = 4


@pytest.fixture(scope="module")
def issued(tmp_path_factory):
    directory = tmp_path_factory.mktemp("pool-opening-certs")
    certs.issue(directory, [party(1), AGGREGATOR, CLIENT])
    return directory


def _request(fill: PoolFill, signature) -> dppp_pb2.DpppPoolRequest:
    message = dppp_pb2.DpppPoolRequest(key_id=fill.key_id, first=0, count=fill.bits,
                                       randomness_powers=fill.randomness_powers, mask_powers=fill.mask_powers)
    if signature is not None:
        message.client_signature.CopyFrom(signature)
    return message


def test_a_fill_the_client_did_not_sign_makes_nothing_and_is_refused(tmp_path, issued, threshold_key, monkeypatch):
    from party import dppp

    made = []

    class Counted(DpppPoolTeacherSide):
        def __init__(self, *args):
            made.append(args[0])
            super().__init__(*args)

    monkeypatch.setattr(dppp, "DpppPoolTeacherSide", Counted)
    own = _party(tmp_path, issued, threshold_key)
    opener = dppp.protocol(lambda me: own)
    fill = PoolFill(own.public_key.key_id, BITS, 2, 4)
    protocol = pool_opening.PROTOCOL
    cases = [
        ("unsigned", None),
        ("signed by the aggregator", _signed_by(issued, AGGREGATOR, protocol, "s", fill)),
        ("the client's, of another session", client_signature_from(issued, protocol, "t", fill)),
        ("the client's, of a DPPP round", client_signature_from(issued, "dppp", "s", fill)),
        ("the client's, of fewer bits", client_signature_from(issued, protocol, "s",
                                                              dataclasses.replace(fill, bits=1))),
        ("the client's, of fewer pairs", client_signature_from(issued, protocol, "s",
                                                               dataclasses.replace(fill, mask_powers=0))),
    ]
    for wrong, signature in cases:
        with pytest.raises(ProtocolError) as refused:
            opener.open("s", party(1), AGGREGATOR, "pool_request", _request(fill, signature))
        assert refused.value.kind is Kind.PERMISSION_DENIED, wrong
        assert "client" in str(refused.value), wrong
        assert made == [], f"{wrong}: the teacher began a fill the client did not order"

    # The client's fill as the aggregator relays it: the signature travels with each teacher's request.
    signed = client_signature_from(issued, protocol, "s", fill)
    fill_message = dppp_pb2.DpppPoolFill(key_id=fill.key_id, bits=BITS, deadline_seconds=60,
                                         randomness_powers=2, mask_powers=4, client_signature=signed)
    aggregator = DpppPoolAggregatorSide("s", fill_message, own.public_key, [1], Pools())
    [outbound] = aggregator.ask_teachers(CLIENT, fill_message)
    side = opener.open("s", party(1), AGGREGATOR, "pool_request", outbound.body)
    assert len(made) == 1
    [answer] = side.fill(AGGREGATOR, outbound.body)
    assert answer.kind == "pool_bits" and len(answer.body.bits.ciphertexts.values) == BITS
