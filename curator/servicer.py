"""The curator's gRPC servicer: Charlie's Pathak steps, hosted per session."""

from __future__ import annotations

from cryptocore.paillier import KeyPair
from curator.pathak_session import PathakCuratorSession
from mpdp_proto.v1 import common_pb2, curator_pb2_grpc
from pathak.parameters import PathakParameters
from wire.channels import PeerChannels
from wire.identity import CLIENT, CURATOR, require_sender, sender_of
from wire.pathak_host import PathakHost, PathakRpcs
from wire.status import translate_errors
from wire.traffic import TrafficLog, traffic_reply


class CuratorServicer(PathakRpcs, curator_pb2_grpc.CuratorServicer):
    def __init__(self, zeta: KeyPair, peers: PeerChannels, traffic: TrafficLog):
        self._zeta = zeta
        self._peers = peers
        self._traffic = traffic
        self.pathak = PathakHost(CURATOR, peers, self._new_session)

    def _new_session(self, session_id: str, parameters: PathakParameters) -> PathakCuratorSession:
        return PathakCuratorSession(session_id, parameters, self._zeta)

    @translate_errors
    async def GetStatus(self, request, context):
        require_sender(context, CLIENT)  # open session ids are the operator's business
        return common_pb2.StatusReply(role="curator", id=0, open_sessions=self.pathak.open_ids(),
                                      key_id_hex=self._zeta.public.key_id.hex())

    @translate_errors
    async def GetTraffic(self, request, context):
        require_sender(context, CLIENT)  # the log spells out who sent what: the operator's only
        return traffic_reply(self._traffic, request.session)

    @translate_errors
    async def AbortSession(self, request, context):
        self.pathak.abort_from_peer(request.session_id, sender_of(context), request.reason)
        return common_pb2.Empty()

    async def close(self) -> None:
        await self._peers.close()
