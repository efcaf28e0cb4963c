"""The `[observe]` extra's interceptors, in process (no socket): one span per RPC on each side joined into one
trace, attributes that carry sizes and kinds but no payload, Prometheus counts equal to the traffic log's."""

from __future__ import annotations

import asyncio

import grpc
import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("prometheus_client")

from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import SpanKind  # noqa: E402
from prometheus_client import generate_latest  # noqa: E402

from mpdp.observe.metrics import MetricsInterceptor, RoleMetrics  # noqa: E402
from mpdp.observe.spans import ClientSpanInterceptor, ServerSpanInterceptor  # noqa: E402
from mpdp.proto.v1 import common_pb2, dppp_pb2, role_pb2  # noqa: E402
from mpdp.wire.identity import SENDER_METADATA_KEY, Principal  # noqa: E402
from mpdp.wire.traffic import ServerTrafficInterceptor, TrafficLog  # noqa: E402

STEP = "/mpdp.proto.v1.Role/Step"
SECRET = 0.123456789  # a feature value: it must appear in no span attribute


class Context:
    """What an interceptor reads of a grpc.aio servicer context."""

    def __init__(self, metadata):
        self._metadata = tuple(metadata)
        self._code = None

    def invocation_metadata(self):
        return self._metadata

    def auth_context(self):
        return {}

    def code(self):
        return self._code

    async def abort(self, code, details):
        self._code = code
        raise grpc.aio.AbortError(details)


class Details:
    def __init__(self, method):
        self.method = method


def envelope(session: str, refuse: bool = False) -> role_pb2.Envelope:
    matrix = common_pb2.Matrix(rows=1, columns=3, values=[SECRET, 2.0, -1.0 if refuse else 1.0])
    return role_pb2.Envelope(session_id=session, sender="aggregator/0", receiver="party/2",
                             dppp=dppp_pb2.DpppMessage(queries=dppp_pb2.DpppQueries(features=matrix)))


async def answer(request, context):
    if request.dppp.queries.features.values[2] < 0:
        await context.abort(grpc.StatusCode.PERMISSION_DENIED, "refused")
    return common_pb2.Empty()


async def server_chain(interceptors):
    """The servicer wrapped by `interceptors` as grpc.aio does: the first is outermost."""

    async def innermost(_details):
        return grpc.unary_unary_rpc_method_handler(answer, role_pb2.Envelope.FromString,
                                                   common_pb2.Empty.SerializeToString)

    continuation = innermost
    for interceptor in reversed(interceptors):
        continuation = (lambda inner, outer: (lambda details: outer.intercept_service(inner, details)))(
            continuation, interceptor)
    return await continuation(Details(STEP))


class Call:
    """What a client interceptor's continuation returns: an awaitable call."""

    def __init__(self, coroutine):
        self._task = asyncio.ensure_future(coroutine)

    def __await__(self):
        return self._task.__await__()


def calls(requests, exporter_provider, metrics, log, server_provider=None):
    """Each request from the aggregator's client span interceptor to party/2's server chain, metadata and all
    (party/2's spans to `server_provider` if given)."""
    client = ClientSpanInterceptor("aggregator/0", exporter_provider)

    async def go():
        handler = await server_chain([ServerTrafficInterceptor(log, Principal.parse("party/2")),
                                      ServerSpanInterceptor("party/2", server_provider or exporter_provider),
                                      MetricsInterceptor(metrics)])
        outcomes = []
        for request in requests:
            async def send(details, message):
                context = Context(list(details.metadata) + [(SENDER_METADATA_KEY, "aggregator/0")])
                wire = role_pb2.Envelope.FromString(message.SerializeToString())

                async def run():
                    try:
                        return await handler.unary_unary(wire, context)
                    except grpc.aio.AbortError:
                        raise grpc.aio.AioRpcError(context.code(), grpc.aio.Metadata(), grpc.aio.Metadata(),
                                                   "refused") from None

                return Call(run())

            details = grpc.aio.ClientCallDetails(STEP, None, grpc.aio.Metadata(), None, None)
            try:
                await (await client.intercept_unary_unary(send, details, request))
                outcomes.append("OK")
            except grpc.aio.AioRpcError as error:
                outcomes.append(error.code().name)
        return outcomes

    return asyncio.run(go())


@pytest.fixture
def observed():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter, provider, RoleMetrics("party/2"), TrafficLog()


def test_one_span_per_call_on_each_side_joined_into_one_trace(observed):
    exporter, provider, metrics, log = observed
    requests = [envelope("s-1"), envelope("s-1"), envelope("s-2", refuse=True)]
    assert calls(requests, provider, metrics, log) == ["OK", "OK", "PERMISSION_DENIED"]
    spans = exporter.get_finished_spans()
    servers = [s for s in spans if s.kind == SpanKind.SERVER]
    clients = [s for s in spans if s.kind == SpanKind.CLIENT]
    assert len(servers) == len(clients) == len(requests)
    for server, client, request in zip(servers, clients, requests):
        assert server.name == client.name == "mpdp.proto.v1.Role/Step"
        assert server.parent.span_id == client.context.span_id  # trace context crossed in the metadata
        assert server.context.trace_id == client.context.trace_id
        for span, role in ((server, "party/2"), (client, "aggregator/0")):
            assert span.attributes["mpdp.role"] == role
            assert span.attributes["mpdp.kind"] == "Step/dppp/queries"
            assert span.attributes["mpdp.session_id"] == request.session_id
            assert span.attributes["mpdp.request_bytes"] == request.ByteSize()
            assert (span.attributes["mpdp.sender"], span.attributes["mpdp.receiver"]) == ("aggregator/0", "party/2")
            assert not any(repr(SECRET)[:8] in str(value) for value in span.attributes.values())
    assert [s.attributes["rpc.grpc.status_code"] for s in servers] == ["OK", "OK", "PERMISSION_DENIED"]
    assert not servers[2].status.is_ok and servers[0].status.is_ok


def test_prometheus_counts_equal_the_traffic_log(observed):
    exporter, provider, metrics, log = observed
    requests = [envelope("s-1"), envelope("s-1"), envelope("s-2"), envelope("s-3", refuse=True)]
    calls(requests, provider, metrics, log)
    recorded = log.records("s-1") + log.records("s-2")
    value = metrics.registry.get_sample_value
    labels = {"role": "party/2", "caller": "aggregator", "kind": "Step/dppp/queries", "status": "OK"}
    assert value("mpdp_rpc_calls_total", labels) == len(recorded) == 3
    assert value("mpdp_rpc_request_bytes_total", labels) == sum(r.request_bytes for r in recorded)
    assert value("mpdp_rpc_calls_total", {**labels, "status": "PERMISSION_DENIED"}) == 1
    assert value("mpdp_sessions_total", {"role": "party/2", "protocol": "dppp"}) == 2  # a refused one not counted
    assert value("mpdp_rpc_seconds_count", {"role": "party/2", "kind": "Step/dppp/queries"}) == 4
    scraped = generate_latest(metrics.registry).decode()
    assert "s-1" not in scraped and repr(SECRET)[:8] not in scraped  # no session id, no payload as a label


def test_the_callers_sampling_decision_crosses_to_the_server(observed):
    from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

    exporter, provider, metrics, log = observed  # party/2's: parent-based, sampling every root it starts
    caller = TracerProvider(sampler=ALWAYS_OFF)
    dropped = InMemorySpanExporter()
    caller.add_span_processor(SimpleSpanProcessor(dropped))
    assert calls([envelope("s-1"), envelope("s-1")], caller, metrics, log, server_provider=provider) == ["OK", "OK"]
    assert dropped.get_finished_spans() == () and exporter.get_finished_spans() == ()
    calls([envelope("s-2")], provider, metrics, log)  # sampled: both sides recorded
    assert len(exporter.get_finished_spans()) == 2


def test_budget_gauge_reads_each_ledger(tmp_path):
    from mpdp.privacy.composition import Guarantee
    from mpdp.privacy.ledger import Ledger, provision

    data = tmp_path / "part.npz"
    data.write_bytes(b"")
    provision(data, 3)
    ledger = Ledger(data, 3)
    metrics = RoleMetrics("party/3")
    metrics.watch_ledgers({3: ledger})
    labels = {"role": "party/3", "party": "3"}
    assert metrics.registry.get_sample_value("mpdp_budget_releases", labels) == 0
    ledger.spend("s-1", "pathak", Guarantee(0.5, 0.0, "laplace", {"kind": "pure", "epsilon": 0.5, "count": 1}))
    ledger.spend("s-2", "pathak", Guarantee(0.25, 0.0, "laplace", {"kind": "pure", "epsilon": 0.25, "count": 1}))
    assert metrics.registry.get_sample_value("mpdp_budget_releases", labels) == 2
    assert metrics.registry.get_sample_value("mpdp_budget_epsilon_spent", labels) == pytest.approx(0.75, rel=1e-3)


def test_metrics_port_without_the_extra_is_one_line(monkeypatch):
    import mpdp.observe as observe
    from mpdp.observe import role

    monkeypatch.setattr(role, "metrics_available", lambda: False)
    with pytest.raises(observe.ExtraMissing) as refused:
        role.check_metrics_port(9464)
    assert "\n" not in str(refused.value) and "mpdp[observe]" in str(refused.value)
    role.check_metrics_port(None)  # not asked for: nothing needed


def test_tracing_follows_the_standard_variables():
    from mpdp.observe import exporting
    from mpdp.observe.role import observe

    assert exporting.requested({}) == [] and exporting.requested({"OTEL_TRACES_EXPORTER": "none"}) == []
    assert exporting.requested({"OTEL_TRACES_EXPORTER": "otlp,console"}) == ["otlp", "console"]
    assert exporting.requested({"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}) == []
    with pytest.raises(ValueError, match="zipkin"):
        exporting.requested({"OTEL_TRACES_EXPORTER": "zipkin"})
    assert observe("party/1", environ={}).server_interceptors == ()  # off: nothing added to the role
    on = observe("party/1", environ={"OTEL_TRACES_EXPORTER": "console", "OTEL_SERVICE_NAME": "p1"})
    assert [type(i).__name__ for i in on.server_interceptors] == ["ServerSpanInterceptor"]
    assert on._provider.resource.attributes["service.name"] == "p1"
    on.shutdown()


def test_a_launcher_asking_for_spans_gets_client_spans_on_every_channel(monkeypatch):
    from mpdp.observe.role import observe_client
    from mpdp.observe.spans import ClientSpanInterceptor
    from mpdp.wire import channels

    monkeypatch.setattr(channels, "PROCESS_INTERCEPTORS", [])
    assert observe_client(environ={}) is False and channels.PROCESS_INTERCEPTORS == []
    assert observe_client(environ={"OTEL_TRACES_EXPORTER": "console"}) is True
    assert [type(i) for i in channels.PROCESS_INTERCEPTORS] == [ClientSpanInterceptor]


@pytest.fixture
def switch_by_signal():
    """The process's observe switch listening to its signals, as in a role; both put back afterwards."""
    import signal

    from mpdp.observe import switch

    previous = {signum: signal.getsignal(signum) for signum in (switch.ON_SIGNAL, switch.OFF_SIGNAL)}
    assert switch.listen()
    try:
        yield switch
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        switch.SWITCH.on = True


def _signal(switch, signum, expected: bool) -> None:
    import os
    import time

    os.kill(os.getpid(), signum)
    deadline = time.monotonic() + 5  # Python runs the handler at its next instruction in the main thread
    while switch.SWITCH.on != expected and time.monotonic() < deadline:
        time.sleep(0.001)
    assert switch.SWITCH.on is expected


def test_signals_switch_the_interceptors_off_and_on(observed, switch_by_signal):
    exporter, provider, metrics, log = observed
    switch = switch_by_signal
    value = metrics.registry.get_sample_value
    counted = {"role": "party/2", "caller": "aggregator", "kind": "Step/dppp/queries", "status": "OK"}
    assert value("mpdp_observe_on", {"role": "party/2"}) == 1.0

    _signal(switch, switch.OFF_SIGNAL, False)
    assert value("mpdp_observe_on", {"role": "party/2"}) == 0.0
    assert calls([envelope("s-1"), envelope("s-1")], provider, metrics, log) == ["OK", "OK"]
    assert len(log.records("s-1")) == 2  # the calls went through; the extra saw none of them
    assert exporter.get_finished_spans() == () and value("mpdp_rpc_calls_total", counted) is None

    _signal(switch, switch.ON_SIGNAL, True)
    assert value("mpdp_observe_on", {"role": "party/2"}) == 1.0
    assert calls([envelope("s-2"), envelope("s-2"), envelope("s-2")], provider, metrics, log) == ["OK"] * 3
    spans = exporter.get_finished_spans()
    assert len(spans) == 6 and {s.attributes["mpdp.session_id"] for s in spans} == {"s-2"}  # a server and a client each
    assert value("mpdp_rpc_calls_total", counted) == 3

    _signal(switch, switch.OFF_SIGNAL, False)
    calls([envelope("s-3")], provider, metrics, log)
    assert len(exporter.get_finished_spans()) == 6 and value("mpdp_rpc_calls_total", counted) == 3


def test_an_observed_role_takes_the_signals_and_an_unobserved_one_does_not(switch_by_signal):
    import signal

    from mpdp.observe.role import observe

    switch = switch_by_signal
    for signum in (switch.ON_SIGNAL, switch.OFF_SIGNAL):
        signal.signal(signum, signal.SIG_DFL)
    observe("party/1", environ={})  # nothing observed: the signals keep their default (ending the process)
    assert signal.getsignal(switch.OFF_SIGNAL) == signal.SIG_DFL
    observe("party/1", environ={"OTEL_TRACES_EXPORTER": "console"}).shutdown()
    _signal(switch, switch.OFF_SIGNAL, False)
    _signal(switch, switch.ON_SIGNAL, True)
