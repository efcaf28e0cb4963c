"""OpenTelemetry spans, one per RPC on each side: a server span in the role that answers, a client span in the
role that calls, joined into one trace by W3C trace context in the call's metadata.

Span names are the gRPC method (`mpdp.proto.v1.Role/Step`); attributes are those of `calls.Call` (session id,
kind, logical sender and receiver, bytes) and this process's principal, never a payload. Needs the `[observe]`
extra; `exporting.tracer_provider()` builds the exporter the standard OTEL_* variables ask for."""

from __future__ import annotations

import time

import grpc
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from mpdp.observe.calls import Call, call_of

INSTRUMENTATION = "mpdp.observe"


def _attributes(call: Call, me: str) -> dict:
    """Few on purpose: the SDK's cost per span grows with them. The side is the span's kind (SERVER, CLIENT), the
    service and method are its name, the protocol is the kind's first step (`Step/dppp/votes`)."""
    return {"rpc.system": "grpc", "mpdp.role": me, "mpdp.session_id": call.session_id, "mpdp.kind": call.kind,
            "mpdp.sender": call.sender, "mpdp.receiver": call.receiver, "mpdp.request_bytes": call.request_bytes}


def _size(message) -> int:
    return message.ByteSize() if hasattr(message, "ByteSize") else 0


class _Getter:
    """Reads trace context from gRPC's invocation metadata (a sequence of key/value pairs)."""

    def get(self, carrier, key):
        values = [value for name, value in carrier if name == key]
        return values or None

    def keys(self, carrier):
        return [name for name, _ in carrier]


class ServerSpanInterceptor(grpc.aio.ServerInterceptor):
    def __init__(self, me: str, provider=None):
        self._me = me
        self._tracer = (provider or trace.get_tracer_provider()).get_tracer(INSTRUMENTATION)

    async def intercept_service(self, continuation, handler_call_details):
        handler = await continuation(handler_call_details)
        if handler is None or handler.unary_unary is None:
            return handler
        inner, tracer, me, full_method = handler.unary_unary, self._tracer, self._me, handler_call_details.method

        async def traced(request, context):
            call = call_of(full_method, request)
            parent = propagate.extract(tuple(context.invocation_metadata() or ()), getter=_Getter())
            with tracer.start_as_current_span(call.span_name, context=parent, kind=SpanKind.SERVER,
                                              attributes=_attributes(call, me),
                                              record_exception=False, set_status_on_exception=False) as span:
                try:
                    response = await inner(request, context)
                except BaseException:
                    code = context.code()
                    name = code.name if isinstance(code, grpc.StatusCode) else "UNKNOWN"
                    span.set_attribute("rpc.grpc.status_code", name)
                    span.set_status(Status(StatusCode.ERROR, name))  # the code only: details may quote a request
                    raise
                span.set_attribute("mpdp.response_bytes", _size(response))
                span.set_attribute("rpc.grpc.status_code", "OK")
                return response

        return grpc.unary_unary_rpc_method_handler(traced, request_deserializer=handler.request_deserializer,
                                                   response_serializer=handler.response_serializer)


class ClientSpanInterceptor(grpc.aio.UnaryUnaryClientInterceptor):
    def __init__(self, me: str, provider=None):
        self._me = me
        self._tracer = (provider or trace.get_tracer_provider()).get_tracer(INSTRUMENTATION)

    async def intercept_unary_unary(self, continuation, client_call_details, request):
        call = call_of(client_call_details.method, request)
        span = self._tracer.start_span(call.span_name, kind=SpanKind.CLIENT,
                                       attributes=_attributes(call, self._me), start_time=time.time_ns())
        carrier: dict[str, str] = {}
        propagate.inject(carrier, context=trace.set_span_in_context(span))
        metadata = list(client_call_details.metadata or ()) + sorted(carrier.items())
        details = client_call_details._replace(metadata=grpc.aio.Metadata(*metadata))
        try:
            rpc = await continuation(details, request)
            response = await rpc
        except grpc.aio.AioRpcError as error:
            span.set_attribute("rpc.grpc.status_code", error.code().name)
            span.set_status(Status(StatusCode.ERROR, error.code().name))
            span.end()
            raise
        except BaseException:
            span.set_status(Status(StatusCode.ERROR, "cancelled"))
            span.end()
            raise
        span.set_attribute("mpdp.response_bytes", _size(response))
        span.set_attribute("rpc.grpc.status_code", "OK")
        span.end()
        return rpc
