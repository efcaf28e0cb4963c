"""OpenTelemetry spans, one per RPC on each side: a server span in the role that answers, a client span in the
role that calls, joined into one trace by W3C trace context in the call's metadata.

Span names are the gRPC method (`mpdp.proto.v1.Role/Step`); attributes are those of `calls.Call` (session id,
kind, logical sender and receiver, bytes) and this process's principal, never a payload. Needs the `[observe]`
extra; `exporting.tracer_provider()` builds the exporter the standard OTEL_* variables ask for."""

from __future__ import annotations

import grpc
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from mpdp.observe.calls import Call, call_of, served_call_of

INSTRUMENTATION = "mpdp.observe"


def _attributes(call: Call, me: str) -> dict:
    """Few on purpose: the SDK's cost per span grows with them. The side is the span's kind (SERVER, CLIENT), the
    service and method are its name, the protocol is the kind's first step (`Step/dppp/votes`)."""
    return {"rpc.system": "grpc", "mpdp.role": me, "mpdp.session_id": call.session_id, "mpdp.kind": call.kind,
            "mpdp.sender": call.sender, "mpdp.receiver": call.receiver, "mpdp.request_bytes": call.request_bytes}


def _size(message) -> int:
    return message.ByteSize() if hasattr(message, "ByteSize") else 0


def _answered(span, response) -> None:
    # One call, one lock taken in the SDK, rather than one a value.
    span.set_attributes({"mpdp.response_bytes": _size(response), "rpc.grpc.status_code": "OK"})


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
            call = served_call_of(full_method, request)
            # The metadata as a mapping (the propagators' default getter reads it); a key sent twice keeps its
            # last value, which trace context, sent once, never has.
            parent = propagate.extract(dict(context.invocation_metadata() or ()))
            span = tracer.start_span(call.span_name, context=parent, kind=SpanKind.SERVER,
                                     attributes=_attributes(call, me), record_exception=False,
                                     set_status_on_exception=False)
            # Current while the servicer runs, so that the calls it makes are this span's children; attached
            # directly rather than through start_as_current_span's context managers, a cost on every call.
            token = otel_context.attach(trace.set_span_in_context(span, parent))
            try:
                response = await inner(request, context)
            except BaseException:
                code = context.code()
                name = code.name if isinstance(code, grpc.StatusCode) else "UNKNOWN"
                span.set_attribute("rpc.grpc.status_code", name)
                span.set_status(Status(StatusCode.ERROR, name))  # the code only: details may quote a request
                raise
            else:
                _answered(span, response)
                return response
            finally:
                span.end()
                otel_context.detach(token)

        return grpc.unary_unary_rpc_method_handler(traced, request_deserializer=handler.request_deserializer,
                                                   response_serializer=handler.response_serializer)


class ClientSpanInterceptor(grpc.aio.UnaryUnaryClientInterceptor):
    def __init__(self, me: str, provider=None):
        self._me = me
        self._tracer = (provider or trace.get_tracer_provider()).get_tracer(INSTRUMENTATION)

    async def intercept_unary_unary(self, continuation, client_call_details, request):
        call = call_of(client_call_details.method, request)
        span = self._tracer.start_span(call.span_name, kind=SpanKind.CLIENT, attributes=_attributes(call, self._me))
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
        _answered(span, response)
        span.end()
        return rpc
