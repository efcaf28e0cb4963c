"""The one gRPC service every role exposes (role.proto): thin, it hands each call to the role's host."""

from __future__ import annotations

from dataclasses import dataclass

from mpdp.proto.v1 import common_pb2, role_pb2_grpc
from mpdp.sessions.identity import CLIENT
from mpdp.wire.host import RoleHost
from mpdp.wire.identity import require_sender
from mpdp.wire.status import translate_errors
from mpdp.wire.traffic import TrafficLog, traffic_reply

SERVICE_NAME = "mpdp.v1.Role"


@dataclass(frozen=True)
class RoleStatus:
    role: str
    id: int
    key_id_hex: str


class RoleServicer(role_pb2_grpc.RoleServicer):
    def __init__(self, host: RoleHost, traffic: TrafficLog, status: RoleStatus):
        self.host = host
        self._traffic = traffic
        self._status = status

    @translate_errors
    async def Step(self, request, context):
        await self.host.step(context, request)
        return common_pb2.Empty()

    @translate_errors
    async def AwaitResult(self, request, context):
        return await self.host.await_result(context, request)

    @translate_errors
    async def GetTestRecord(self, request, context):
        return self.host.test_record(context, request)

    @translate_errors
    async def AbortSession(self, request, context):
        await self.host.abort_from_peer(context, request)
        return common_pb2.Empty()

    @translate_errors
    async def GetStatus(self, request, context):
        require_sender(context, CLIENT)  # open session ids are the operator's business
        return common_pb2.StatusReply(role=self._status.role, id=self._status.id, open_sessions=self.host.open_ids(),
                                      key_id_hex=self._status.key_id_hex)

    @translate_errors
    async def GetTraffic(self, request, context):
        require_sender(context, CLIENT)  # the log spells out who sent what (π1 in Pathak): the operator's only
        return traffic_reply(self._traffic, request.session)

    async def close(self) -> None:
        await self.host.close()

    def add_to(self, server) -> None:
        role_pb2_grpc.add_RoleServicer_to_server(self, server)
