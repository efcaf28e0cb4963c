"""An OTLP/gRPC trace receiver that only counts: what `mpdp bench observe` exports spans to, so that the span
count it checks and the export cost it measures are those of a real OTLP exporter over loopback."""

from __future__ import annotations

import threading
from collections import Counter
from concurrent import futures

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.trace.v1 import trace_pb2

SIDES = {trace_pb2.Span.SPAN_KIND_SERVER: "server", trace_pb2.Span.SPAN_KIND_CLIENT: "client"}


class CountingReceiver(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self):
        self._lock = threading.Lock()
        self.spans: dict[str, Counter[tuple[str, str]]] = {}  # session id → (side, kind) → spans received

    def Export(self, request, context):  # noqa: N802 (the OTLP service's method name)
        with self._lock:
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    for span in scope.spans:
                        attributes = {a.key: a.value.string_value for a in span.attributes}
                        session = self.spans.setdefault(attributes.get("mpdp.session_id", ""), Counter())
                        session[(SIDES.get(span.kind, ""), attributes.get("mpdp.kind", span.name))] += 1
        return trace_service_pb2.ExportTraceServiceResponse()

    def sessions(self) -> dict[str, Counter[tuple[str, str]]]:
        with self._lock:
            return {session: Counter(counts) for session, counts in self.spans.items()}


def start(port: int, host: str = "127.0.0.1") -> tuple[grpc.Server, CountingReceiver]:
    receiver = CountingReceiver()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(receiver, server)
    if server.add_insecure_port(f"{host}:{port}") == 0:
        raise OSError(f"the span receiver cannot listen on {host}:{port}")
    server.start()
    return server, receiver
