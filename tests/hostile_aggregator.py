"""An active aggregator for attack tests: the real aggregator process is stopped and this server takes its
address and certificate. It opens DPPP and Hamm sessions at the parties — with the client's signature on the
opening, as if the client had asked for them (`client_signed`) — keeps every contribution they send it, and asks
key holders to decrypt whatever it likes."""

from __future__ import annotations

import threading
import time
from concurrent import futures

import grpc

from mpdp.proto.v1 import common_pb2, role_pb2, role_pb2_grpc
from mpdp.sessions.identity import AGGREGATOR, Identity, party
from tests.waiting import PATIENCE_S

WAIT_S = PATIENCE_S  # events, not times: the limit is only for one that never comes


class _Recorder(role_pb2_grpc.RoleServicer):
    def __init__(self):
        self.received: list[role_pb2.Envelope] = []
        self.changed = threading.Condition()

    def Step(self, request, context):
        with self.changed:
            self.received.append(request)
            self.changed.notify_all()
        return common_pb2.Empty()

    def AbortSession(self, request, context):
        return common_pb2.Empty()


class HostileAggregator:
    def __init__(self, deployment):
        self.deployment = deployment
        self.recorder = _Recorder()
        self.server: grpc.Server | None = None

    def _serve(self) -> grpc.Server:
        topology = self.deployment.topology
        tls = topology.tls_for(AGGREGATOR)  # the operator's topology names every bundle's files
        assert tls is not None
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        role_pb2_grpc.add_RoleServicer_to_server(self.recorder, server)
        server.add_secure_port(topology.entry(AGGREGATOR).bind_address, tls.server_credentials())
        server.start()
        return server

    def __enter__(self) -> "HostileAggregator":
        self.deployment.kill(AGGREGATOR)
        deadline = time.monotonic() + WAIT_S
        while True:  # the address is free once the killed process is gone
            try:
                self.server = self._serve()
                return self
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def __exit__(self, *exc) -> None:
        if self.server is not None:
            self.server.stop(grace=None)
        self.deployment.restart(AGGREGATOR)  # the real one, for the honest session after the attacks

    def step(self, to: Identity, session_id: str, **body) -> None:
        """One Step to a party, with the aggregator's certificate (raises grpc.RpcError if refused)."""
        from tests.deployment import envelope

        self.deployment.call(to, role_pb2_grpc.RoleStub, "Step", envelope(session_id, to, AGGREGATOR, **body), AGGREGATOR)

    def received(self, session_id: str, kind: str) -> dict[int, object]:
        """What the parties sent in `session_id`: sender id → the protocol message's `kind` body."""
        out = {}
        with self.recorder.changed:
            for envelope in self.recorder.received:
                if envelope.session_id == session_id:
                    message = getattr(envelope, envelope.WhichOneof("body"))
                    if message.WhichOneof("body") == kind:
                        out[Identity.parse(envelope.sender).id] = getattr(message, kind)
        return out

    def counts(self, session_id: str, kind: str) -> dict[int, int]:
        """How many `kind` messages each party sent in `session_id` (`received` keeps the last of each)."""
        out: dict[int, int] = {}
        with self.recorder.changed:
            for envelope in self.recorder.received:
                if envelope.session_id == session_id:
                    message = getattr(envelope, envelope.WhichOneof("body"))
                    if message.WhichOneof("body") == kind:
                        sender = Identity.parse(envelope.sender).id
                        out[sender] = out.get(sender, 0) + 1
        return out

    def heard_after(self, queries, parties: list[int], holders: list[int]) -> None:
        """Returns once every holder sent this aggregator a message made after everything it was asked before:
        a fresh DPPP session (`queries`, unproven) opened at `parties`, its honest sum asked of each holder, each
        holder's partial decryption received. A partial decryption an earlier accepted Step made would have
        left before it (made earlier, to the same address over the same channel): whatever has not arrived by
        now was never sent."""
        from mpdp.proto.v1 import dppp_pb2, threshold_sum_pb2

        self.probes = getattr(self, "probes", 0) + 1
        session = f"probe-{self.probes}"
        votes = self.open(session, "dppp", queries, parties)
        request = threshold_sum_pb2.DecryptionRequest(contributions=[
            threshold_sum_pb2.Contribution(sender=sender, ciphertexts=body.votes, signature=body.signature)
            for sender, body in votes.items()])
        for holder in holders:
            self.step(party(holder), session, dppp=dppp_pb2.DpppMessage(decryption_request=request))
        self.wait_for(session, "partial_decryptions", holders)

    def wait_for(self, session_id: str, kind: str, senders: list[int]) -> dict[int, object]:
        deadline = time.monotonic() + WAIT_S
        while True:
            got = self.received(session_id, kind)
            if set(senders) <= set(got):
                return got
            with self.recorder.changed:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{kind} from {sorted(set(senders) - set(got))} never arrived in {session_id}")
                self.recorder.changed.wait(0.5)

    def client_signed(self, session_id: str, protocol: str, queries):
        return client_signed(self.deployment.topology, session_id, protocol, queries)

    def open(self, session_id: str, protocol: str, queries, parties: list[int]) -> dict[int, object]:
        """Step 1 of DPPP or Hamm at `parties`, signed by the client; returns their signed votes."""
        from mpdp.proto.v1 import dppp_pb2, hamm_pb2

        message_type = {"dppp": dppp_pb2.DpppMessage, "hamm": hamm_pb2.HammMessage}[protocol]
        queries = self.client_signed(session_id, protocol, queries)
        for number in parties:
            self.step(party(number), session_id, **{protocol: message_type(queries=queries)})
        return self.wait_for(session_id, "votes", parties)


def client_signed(topology, session_id: str, protocol: str, queries):
    """A copy of DPPP's or Hamm's `queries` with the client's signature on this session's opening (the test plays
    the client, which asked for it)."""
    from launcher.common.client import opening_signature
    from mpdp.protocols.dppp.parameters import DpppParameters
    from mpdp.protocols.hamm.parameters import HammParameters

    signed = type(queries)()
    signed.CopyFrom(queries)
    if protocol == "dppp":
        signature = opening_signature(topology, "dppp", session_id, DpppParameters.from_proto(queries.parameters),
                                      queries.features.SerializeToString(deterministic=True))
    else:
        signature = opening_signature(topology, "hamm", session_id, HammParameters.from_proto(queries.parameters))
    signed.client_signature.CopyFrom(signature)
    return signed


def client_signature_from(directory, protocol: str, session_id: str, parameters, public_inputs: bytes = b""):
    """The client's signature on an opening, with the client certificate `certs.issue` made in `directory`
    (in-process twins that check signatures)."""
    from launcher.deployment import certs
    from mpdp.cryptocore.keys.contribution_signature import ContributionSigner
    from mpdp.sessions import opening
    from mpdp.sessions.identity import CLIENT

    certificate, key = certs.certificate_files(directory, CLIENT)
    return opening.sign(ContributionSigner.from_files(key, certificate), protocol, session_id, parameters,
                        public_inputs)
