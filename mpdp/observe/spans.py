"""OpenTelemetry spans, one per RPC on each side: a server span in the role that answers, a client span in the
role that calls, joined into one trace by W3C trace context in the call's metadata.

Span names are the gRPC method (`mpdp.proto.v1.Role/Step`); attributes are those of `calls.Call` (session id,
kind, logical sender and receiver, bytes) and this process's principal, never a payload. Needs the `[observe]`
extra; `exporting.tracer_provider()` builds the exporter the standard OTEL_* variables ask for."""

from __future__ import annotations

import time

import grpc
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from mpdp.observe.calls import Call, call_of, served_call_of
from mpdp.observe.switch import SWITCH, Switch

INSTRUMENTATION = "mpdp.observe"


def _attributes(call: Call, me: str) -> dict:
    """Few on purpose: the SDK's cost per span grows with them. The side is the span's kind (SERVER, CLIENT), the
    service and method are its name, the protocol is the kind's first step (`Step/dppp/votes`)."""
    return {"rpc.system": "grpc", "mpdp.role": me, "mpdp.session_id": call.session_id, "mpdp.kind": call.kind,
            "mpdp.sender": call.sender, "mpdp.receiver": call.receiver, "mpdp.request_bytes": call.request_bytes}


def _size(message) -> int:
    return message.ByteSize() if hasattr(message, "ByteSize") else 0


class _Spans:
    """Spans of one SDK TracerProvider, built when they end. The SDK's own span (a lock, attributes checked and
    copied on every set, a start and an end hook for every processor) cost about 0.08 ms of CPU each, the bulk of
    the extra's cost per call; a span here is its ids, the provider's sampling decision and a dict of the
    attributes above (strings and ints, nothing to check), handed to the provider's processors as the
    ReadableSpan the SDK's own span would have become. Processors' on_start is not called: the SDK's export
    processors (batch, simple) do nothing there."""

    def __init__(self, provider):
        self.sampler, self.ids, self.resource = provider.sampler, provider.id_generator, provider.resource
        self.processor = provider._active_span_processor  # what the SDK's own spans end into
        self.scope = InstrumentationScope(INSTRUMENTATION)

    def start(self, name: str, kind: SpanKind, parent, attributes: dict) -> _Span:
        current = trace.get_current_span(parent).get_span_context()
        parent_span = current if current.is_valid else None
        trace_id = parent_span.trace_id if parent_span is not None else self.ids.generate_trace_id()
        sampled = self.sampler.should_sample(parent, trace_id, name, kind, attributes)
        flags = TraceFlags(TraceFlags.SAMPLED if sampled.decision.is_sampled() else TraceFlags.DEFAULT)
        context = SpanContext(trace_id, self.ids.generate_span_id(), is_remote=False, trace_flags=flags,
                              trace_state=sampled.trace_state)
        if sampled.attributes:
            attributes = dict(sampled.attributes)
        return _Span(self if sampled.decision.is_recording() else None, name, kind, context, parent_span, attributes)


class _Span:
    __slots__ = ("_spans", "name", "kind", "context", "parent", "attributes", "status", "started")

    def __init__(self, spans: _Spans | None, name, kind, context, parent, attributes):
        self._spans, self.name, self.kind, self.context, self.parent = spans, name, kind, context, parent
        self.attributes, self.status, self.started = attributes, Status(StatusCode.UNSET), time.time_ns()

    def in_context(self, parent=None):
        """`parent` with this span current: what the calls made under it carry."""
        return trace.set_span_in_context(NonRecordingSpan(self.context), parent)

    def failed(self, code: str) -> None:
        self.attributes["rpc.grpc.status_code"] = code
        self.status = Status(StatusCode.ERROR, code)  # the code only: details may quote a request

    def answered(self, response) -> None:
        self.attributes["mpdp.response_bytes"] = _size(response)
        self.attributes["rpc.grpc.status_code"] = "OK"

    def end(self) -> None:
        spans = self._spans
        if spans is None:  # not sampled: its context still went on, so that the callee follows the decision
            return
        spans.processor.on_end(ReadableSpan(
            name=self.name, context=self.context, parent=self.parent, resource=spans.resource,
            attributes=self.attributes, kind=self.kind, status=self.status, start_time=self.started,
            end_time=time.time_ns(), instrumentation_scope=spans.scope))


def _spans_of(provider) -> _Spans | None:
    """An SDK provider's spans; None (no spans) for the API's no-op one, what an unconfigured process has."""
    provider = provider or trace.get_tracer_provider()
    return _Spans(provider) if hasattr(provider, "_active_span_processor") else None


class ServerSpanInterceptor(grpc.aio.ServerInterceptor):
    def __init__(self, me: str, provider=None, switch: Switch = SWITCH):
        self._me = me
        self._spans = _spans_of(provider)
        self._switch = switch

    async def intercept_service(self, continuation, handler_call_details):
        handler = await continuation(handler_call_details)
        # Switched off (switch.py): the handler as it is, the call unread and unspanned.
        if not self._switch.on or handler is None or handler.unary_unary is None or self._spans is None:
            return handler
        inner, spans, me, full_method = handler.unary_unary, self._spans, self._me, handler_call_details.method

        async def traced(request, context):
            call = served_call_of(full_method, request)
            # The metadata as a mapping (the propagators' default getter reads it); a key sent twice keeps its
            # last value, which trace context, sent once, never has.
            parent = propagate.extract(dict(context.invocation_metadata() or ()))
            span = spans.start(call.span_name, SpanKind.SERVER, parent, _attributes(call, me))
            # Current while the servicer runs, so that the calls it makes are this span's children.
            token = otel_context.attach(span.in_context(parent))
            try:
                response = await inner(request, context)
            except BaseException:
                code = context.code()
                span.failed(code.name if isinstance(code, grpc.StatusCode) else "UNKNOWN")
                raise
            else:
                span.answered(response)
                return response
            finally:
                otel_context.detach(token)
                span.end()

        return grpc.unary_unary_rpc_method_handler(traced, request_deserializer=handler.request_deserializer,
                                                   response_serializer=handler.response_serializer)


class ClientSpanInterceptor(grpc.aio.UnaryUnaryClientInterceptor):
    def __init__(self, me: str, provider=None, switch: Switch = SWITCH):
        self._me = me
        self._spans = _spans_of(provider)
        self._switch = switch

    async def intercept_unary_unary(self, continuation, client_call_details, request):
        if not self._switch.on or self._spans is None:  # switched off: no span, no trace context sent
            return await continuation(client_call_details, request)
        call = call_of(client_call_details.method, request)
        # A child of the span current here: the server span of the call this role is answering, if any.
        span = self._spans.start(call.span_name, SpanKind.CLIENT, otel_context.get_current(),
                                 _attributes(call, self._me))
        carrier: dict[str, str] = {}
        propagate.inject(carrier, context=span.in_context())
        metadata = list(client_call_details.metadata or ()) + sorted(carrier.items())
        details = client_call_details._replace(metadata=grpc.aio.Metadata(*metadata))
        try:
            rpc = await continuation(details, request)
            response = await rpc
        except grpc.aio.AioRpcError as error:
            span.failed(error.code().name)
            span.end()
            raise
        except BaseException:
            span.status = Status(StatusCode.ERROR, "cancelled")
            span.end()
            raise
        span.answered(response)
        span.end()
        return rpc
