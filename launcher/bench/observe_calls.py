"""The `[observe]` extra's cost per call, in process: the same Step envelope through a role's server and client
interceptor chains, as grpc.aio runs them, without the interceptors of the extra, with them (spans batched and
encoded as the OTLP exporter encodes them, then dropped rather than sent; metrics counted), and with them
installed but switched off (switch.py: each reads its flag and hands the call on). CPU time of this process only,
so the figure is the interceptors' own, steadier on a loaded machine than a session's wall time; the transport's
cost is not in it."""

from __future__ import annotations

import asyncio
import statistics
import time

import grpc

from mpdp.proto.v1 import common_pb2, role_pb2
from mpdp.wire.identity import SENDER_METADATA_KEY, Principal
from mpdp.wire.traffic import ClientTrafficInterceptor, ServerTrafficInterceptor, TrafficLog

STEP = "/mpdp.proto.v1.Role/Step"
WARM_UP = 200


class _Context:
    """What the interceptors read of a servicer context."""

    def __init__(self, metadata):
        self._metadata = tuple(metadata)

    def invocation_metadata(self):
        return self._metadata

    def auth_context(self):
        return {}

    def code(self):
        return None


class _Details:
    def __init__(self, method):
        self.method = method


async def _answer(request, context):
    return common_pb2.Empty()


def _provider():
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class Dropped(SpanExporter):
        """The OTLP exporter's work but the send: its request built and serialized."""

        def export(self, spans):
            encode_spans(spans).SerializeToString()
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Dropped()))  # as a role exports: batched, off the call's path
    return provider


PARTS = {"off": (), "metrics": ("metrics",), "spans": ("spans",), "on": ("spans", "metrics"),
         "switched_off": ("spans", "metrics", "switched off")}


async def _per_call(calls: int, parts: tuple[str, ...], kind) -> float:
    """CPU seconds per call from the client's interceptors to the servicer and back."""
    from mpdp.observe.switch import Switch

    me, peer = Principal.parse("aggregator/0"), Principal.parse("party/2")
    servers: list = [ServerTrafficInterceptor(TrafficLog(), peer)]
    clients: list = [ClientTrafficInterceptor(TrafficLog(), me, peer)]
    switch = Switch(on="switched off" not in parts)  # this measurement's own, not the process's
    provider = None
    if "spans" in parts:
        from mpdp.observe.spans import ClientSpanInterceptor, ServerSpanInterceptor

        provider = _provider()
        servers.append(ServerSpanInterceptor(str(peer), provider, switch))
        clients.append(ClientSpanInterceptor(str(me), provider, switch))
    if "metrics" in parts:
        from mpdp.observe.metrics import MetricsInterceptor, RoleMetrics

        servers.append(MetricsInterceptor(RoleMetrics(str(peer), switch=switch)))

    async def innermost(_details):
        return grpc.unary_unary_rpc_method_handler(_answer, role_pb2.Envelope.FromString,
                                                   common_pb2.Empty.SerializeToString)

    continuation = innermost
    for interceptor in reversed(servers):  # the first is outermost, as grpc.aio chains them
        continuation = (lambda inner, outer: (lambda details: outer.intercept_service(inner, details)))(
            continuation, interceptor)
    request = role_pb2.Envelope(session_id="s-1", sender=str(me), receiver=str(peer))
    _sample_message(request, kind)

    async def send(details, message):
        context = _Context([*details.metadata, (SENDER_METADATA_KEY, str(me))])
        handler = await continuation(_Details(STEP))  # grpc.aio runs the interceptors' lookup on every call
        return asyncio.ensure_future(handler.unary_unary(role_pb2.Envelope.FromString(message.SerializeToString()),
                                                         context))

    async def through(index, details, message):
        if index == len(clients):
            return await send(details, message)
        return await clients[index].intercept_unary_unary(
            lambda d, m: through(index + 1, d, m), details, message)

    async def one():
        await (await through(0, grpc.aio.ClientCallDetails(STEP, None, grpc.aio.Metadata(), None, None), request))

    for _ in range(WARM_UP):
        await one()
    if provider is not None:
        provider.force_flush()  # the warm-up's spans encoded before the count starts
    started = time.process_time()  # this process's threads: the batch processor's included
    for _ in range(calls):
        await one()
    if provider is not None:
        provider.shutdown()  # the last batch encoded inside the count
    return (time.process_time() - started) / calls


async def _hops(calls: int, switch) -> float:
    """CPU seconds per call of the observe interceptors' own hops, switched off (`switch` False) or absent (None):
    the two server interceptors' handler lookup and the client interceptor's pass-through, around continuations
    that do nothing, so that the flag checks are what differs."""
    from mpdp.observe.metrics import MetricsInterceptor, RoleMetrics
    from mpdp.observe.spans import ClientSpanInterceptor, ServerSpanInterceptor

    handler = grpc.unary_unary_rpc_method_handler(_answer)

    async def innermost(_details):
        return handler

    async def sent(_details, _message):
        return None

    lookup, client, details, provider = innermost, sent, _Details(STEP), None
    if switch is not None:
        provider = _provider()
        servers: list[grpc.aio.ServerInterceptor] = [ServerSpanInterceptor("party/2", provider, switch),
                                                     MetricsInterceptor(RoleMetrics("party/2", switch=switch))]
        for interceptor in reversed(servers):
            lookup = (lambda inner, outer: (lambda d: outer.intercept_service(inner, d)))(lookup, interceptor)
        span_client = ClientSpanInterceptor("aggregator/0", provider, switch)

        def client(d, m):
            return span_client.intercept_unary_unary(sent, d, m)

    started = time.process_time()
    for _ in range(calls):
        await lookup(details)
        await client(details, None)
    spent = time.process_time() - started
    if provider is not None:
        provider.shutdown()  # its batch thread, idle throughout, stopped
    return spent / calls


def flag_checks(calls: int = 50_000, rounds: int = 5) -> dict:
    """What the extra switched off costs a call: its interceptors' hops with the flag off, less no hops at all,
    `rounds` interleaved measurements of `calls` calls; median in µs of CPU."""
    from mpdp.observe.switch import Switch

    measured: dict[str, list[float]] = {"absent": [], "switched_off": []}
    for _ in range(rounds):
        measured["absent"].append(asyncio.run(_hops(calls, None)) * 1e6)
        measured["switched_off"].append(asyncio.run(_hops(calls, Switch(on=False))) * 1e6)
    medians = {name: statistics.median(values) for name, values in measured.items()}
    return {"calls": calls, "rounds": rounds, "us": measured, "median_us": medians,
            "extra_us": medians["switched_off"] - medians["absent"]}


def run(kind, calls: int = 2000, rounds: int = 3) -> dict:
    """`rounds` interleaved measurements of `calls` calls for each set of interceptors (none, metrics only, spans
    only, both, both switched off), each carrying a small message of the protocol whose message type is `kind`; medians in ms of CPU
    per call, and each one's extra over none."""
    measured: dict[str, list[float]] = {name: [] for name in PARTS}
    for _ in range(rounds):
        for name, parts in PARTS.items():
            measured[name].append(asyncio.run(_per_call(calls, parts, kind)) * 1e3)
    medians = {name: statistics.median(values) for name, values in measured.items()}
    return {"calls": calls, "rounds": rounds, "ms": measured, "median_ms": medians,
            "extra_ms": {name: medians[name] - medians["off"] for name in PARTS if name != "off"},
            "flag_checks": flag_checks()}


def summary(report: dict) -> str:
    median, extra = report["median_ms"], report["extra_ms"]
    return (f"  in process, {report['calls']} calls × {report['rounds']}: CPU per call {median['off']:.3f} ms without "
            f"the extra; + {extra['metrics']:.3f} ms metrics, + {extra['spans']:.3f} ms spans (a server and a "
            f"client span, OTLP encoding included, the send not), + {extra['on']:.3f} ms both"
            + (f"; switched off: {extra['switched_off']:+.4f} ms both, the interceptors' hops alone "
               f"{report['flag_checks']['extra_us']:+.2f} µs" if "flag_checks" in report else ""))


def _sample_message(envelope, kind) -> None:
    """The protocol message type `kind`'s first step that carries a matrix, filled with a 4 × 3 one: a small step of
    a session, whichever protocol it is."""
    field = next(f for f in envelope.DESCRIPTOR.fields if f.message_type is kind.DESCRIPTOR)
    message = getattr(envelope, field.name)
    for step in kind.DESCRIPTOR.fields:
        inner = step.message_type
        matrix = inner and next((f for f in inner.fields if f.message_type is common_pb2.Matrix.DESCRIPTOR), None)
        if matrix is not None:
            getattr(getattr(message, step.name), matrix.name).CopyFrom(
                common_pb2.Matrix(rows=4, columns=3, values=[0.5] * 12))
            return
    message.SetInParent()
