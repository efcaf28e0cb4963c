"""The curator's gRPC servicer. Charlie has no part in DPPP; its Pathak steps come with that protocol."""

from __future__ import annotations

from mpdp_proto.v1 import common_pb2, curator_pb2_grpc
from wire.traffic import TrafficLog, traffic_reply


class CuratorServicer(curator_pb2_grpc.CuratorServicer):
    def __init__(self, traffic: TrafficLog):
        self._traffic = traffic

    async def GetStatus(self, request, context):
        return common_pb2.StatusReply(role="curator", id=0)

    async def GetTraffic(self, request, context):
        return traffic_reply(self._traffic, request.session)
