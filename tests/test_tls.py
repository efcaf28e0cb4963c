"""Mutual TLS: who may talk to a role, and how a refusal looks."""

import grpc
import pytest

from launcher.deployment import certs
from mpdp.proto.v1 import common_pb2, dppp_pb2
from mpdp.proto.v1.role_pb2_grpc import RoleStub
from mpdp.sessions.identity import AGGREGATOR, CLIENT, party
from mpdp.wire.tls import TlsFiles
from tests.deployment import envelope


def _refusal(action) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as raised:
        action()
    return raised.value


def _log(d, identity) -> str:
    return d.run.log_file(identity).read_text()


def test_a_client_without_a_certificate_is_refused_and_logged(pool):
    d = pool.get(3)
    before = _log(d, AGGREGATOR).count("Handshake failed")
    error = _refusal(lambda: d.call(AGGREGATOR, RoleStub, "GetStatus",
                                    common_pb2.Empty(), None))
    assert error.code() == grpc.StatusCode.UNAVAILABLE
    assert _log(d, AGGREGATOR).count("Handshake failed") > before
    assert "PEER_DID_NOT_RETURN_A_CERTIFICATE" in _log(d, AGGREGATOR)


def test_a_certificate_from_another_ca_is_refused_and_logged(pool, tmp_path):
    d = pool.get(3)
    certs.issue(tmp_path, [CLIENT], ca_name="someone else's CA")
    cert, key = certs.certificate_files(tmp_path, CLIENT)
    # It trusts the real CA (so it would accept the server), but presents a foreign certificate.
    foreign = TlsFiles(d.topology.ca_certificate, cert, key).channel_credentials()
    before = _log(d, AGGREGATOR).count("Handshake failed")
    error = _refusal(lambda: d.call(AGGREGATOR, RoleStub, "GetStatus",
                                    common_pb2.Empty(), None, credentials=foreign))
    assert error.code() == grpc.StatusCode.UNAVAILABLE
    assert _log(d, AGGREGATOR).count("Handshake failed") > before


def test_a_valid_certificate_claiming_another_identity_is_refused_and_logged(pool):
    d = pool.get(3)
    # party/2's certificate calling the client's RPC, with a metadata claim to be the client (TLS ignores it).
    error = _refusal(lambda: d.call(AGGREGATOR, RoleStub, "AwaitResult",
                                    envelope("s-claim", AGGREGATOR, dppp=dppp_pb2.DpppMessage(
                                        open=dppp_pb2.DpppRoundRequest())), party(2), declare=CLIENT))
    assert error.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "party/2 may not call this" in error.details()
    assert "AwaitResult refused" in _log(d, AGGREGATOR) and "PERMISSION_DENIED" in _log(d, AGGREGATOR)


def test_the_server_is_verified_as_the_role_the_client_meant(pool):
    """Dialling the curator's address while expecting the aggregator fails: its certificate names another role."""
    d = pool.get(3)
    from mpdp.sessions.identity import CURATOR
    from mpdp.wire.tls import target_options

    tls = d.topology.tls_for(CLIENT)
    with grpc.secure_channel(d.topology.entry(CURATOR).address, tls.channel_credentials(),
                             options=target_options(AGGREGATOR)) as channel:
        error = _refusal(lambda: RoleStub(channel).GetStatus(common_pb2.Empty(), timeout=10))
    assert error.code() == grpc.StatusCode.UNAVAILABLE
