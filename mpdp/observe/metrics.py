"""A role's Prometheus endpoint (`mpdp serve … --metrics-port P`): the calls it answered, their bytes and
latencies by kind and calling role, the sessions it took part in by protocol and, for a party host, the privacy
budget spent on each of its data sets.

Labels are bounded: roles (not ids), kinds, protocols and status codes; never a session id. The budget gauge is
each party's composed ε over its whole ledger, the figure `mpdp budget` prints: a public aggregate of what was
released, not of the data. Needs the `[observe]` extra."""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

import grpc
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.core import GaugeMetricFamily

from mpdp.observe.calls import role_of, served_call_of
from mpdp.observe.switch import SWITCH, Switch
from mpdp.wire.identity import principal_of

# Seconds from a call's arrival to its answer: Step returns at once, AwaitResult waits for a session's end.
LATENCY_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, float("inf"))
SESSIONS_REMEMBERED = 4096  # session ids kept to count each session once (oldest forgotten first)


class RoleMetrics:
    def __init__(self, me: str, registry: CollectorRegistry | None = None, switch: Switch = SWITCH):
        self.registry = registry if registry is not None else CollectorRegistry()
        self.me = me
        self.switch = switch
        # Read at scrape time: whether this role's interceptors are counting and spanning now (switch.py).
        Gauge("mpdp_observe_on", "1 while this role's observe interceptors are on, 0 while switched off",
              ("role",), registry=self.registry).labels(me).set_function(lambda: float(switch.on))
        labels = ("role", "caller", "kind", "status")
        self.calls = Counter("mpdp_rpc_calls", "RPCs this role answered", labels, registry=self.registry)
        self.request_bytes = Counter("mpdp_rpc_request_bytes", "serialized request bytes this role received",
                                     labels, registry=self.registry)
        self.response_bytes = Counter("mpdp_rpc_response_bytes", "serialized response bytes this role sent",
                                      labels, registry=self.registry)
        self.latency = Histogram("mpdp_rpc_seconds", "time from a call's arrival to its answer",
                                 ("role", "kind"), buckets=LATENCY_BUCKETS, registry=self.registry)
        self.sessions = Counter("mpdp_sessions", "sessions this role took part in (first message seen)",
                                ("role", "protocol"), registry=self.registry)
        self._seen: OrderedDict[str, None] = OrderedDict()
        # Labelled children by label values: prometheus_client checks and joins the labels on every .labels()
        # call, the main cost of a counted call; the set is bounded (roles × kinds × codes), so kept.
        self._counted: dict[tuple[str, ...], tuple] = {}
        self._timed: dict[str, Any] = {}

    def count(self, labels: tuple[str, str, str, str], request_bytes: int, response_bytes: int, seconds: float) -> None:
        """One call answered: its count, its bytes and its latency, in the series its labels name."""
        children = self._counted.get(labels)
        if children is None:
            children = self._counted[labels] = (self.calls.labels(*labels), self.request_bytes.labels(*labels),
                                                self.response_bytes.labels(*labels))
        children[0].inc()
        children[1].inc(request_bytes)
        children[2].inc(response_bytes)
        timed = self._timed.get(labels[2])
        if timed is None:
            timed = self._timed[labels[2]] = self.latency.labels(self.me, labels[2])
        timed.observe(seconds)

    def seen(self, session_id: str, protocol: str) -> None:
        if not session_id or not protocol or session_id in self._seen:
            return
        self._seen[session_id] = None
        if len(self._seen) > SESSIONS_REMEMBERED:
            self._seen.popitem(last=False)
        self.sessions.labels(self.me, protocol).inc()

    def watch_ledgers(self, ledgers: dict[int, object]) -> None:
        """Export each hosted party's spent budget (read from its ledger at scrape time)."""
        self.registry.register(_BudgetCollector(self.me, ledgers))


class _BudgetCollector:
    """ε and δ spent per party, composed as the party's own budget check composes them; recomputed only when its
    ledger has grown (composition may call the accountant)."""

    def __init__(self, me: str, ledgers: dict[int, object]):
        self._me = me
        self._ledgers = ledgers
        self._cache: dict[int, tuple[int, float, float]] = {}

    def describe(self):
        return []

    def collect(self):
        epsilon = GaugeMetricFamily("mpdp_budget_epsilon_spent", "ε a party has spent on its data set "
                                    "(composed over its ledger; NaN: a release without a finite bound)",
                                    labels=("role", "party"))
        delta = GaugeMetricFamily("mpdp_budget_delta_spent", "δ a party has spent on its data set",
                                  labels=("role", "party"))
        releases = GaugeMetricFamily("mpdp_budget_releases", "charges in a party's ledger", labels=("role", "party"))
        for number, ledger in sorted(self._ledgers.items()):
            try:
                entries = ledger.entries()
                cached = self._cache.get(number)
                if cached is None or cached[0] != len(entries):
                    total = ledger.total()
                    cached = (len(entries), float("nan") if total.epsilon is None else total.epsilon, total.delta)
                    self._cache[number] = cached
            except Exception:  # a tampered or unreadable ledger: the party refuses to serve; the gauge stays silent
                continue
            epsilon.add_metric([self._me, str(number)], cached[1])
            delta.add_metric([self._me, str(number)], cached[2])
            releases.add_metric([self._me, str(number)], cached[0])
        yield from (epsilon, delta, releases)


class MetricsInterceptor(grpc.aio.ServerInterceptor):
    def __init__(self, metrics: RoleMetrics):
        self._metrics = metrics
        self._switch = metrics.switch

    async def intercept_service(self, continuation, handler_call_details):
        handler = await continuation(handler_call_details)
        # Switched off (switch.py): the handler as it is, the call not counted.
        if not self._switch.on or handler is None or handler.unary_unary is None:
            return handler
        inner, metrics, full_method = handler.unary_unary, self._metrics, handler_call_details.method

        async def counted(request, context):
            call = served_call_of(full_method, request)
            caller = principal_of(context)
            started = time.perf_counter()
            response, status = None, "OK"
            try:
                response = await inner(request, context)
                return response
            except BaseException:
                code = context.code()
                status = code.name if isinstance(code, grpc.StatusCode) else "UNKNOWN"
                raise
            finally:
                labels = (metrics.me, caller.role if caller is not None else role_of(call.sender), call.kind, status)
                metrics.count(labels, call.request_bytes, response.ByteSize() if response is not None else 0,
                              time.perf_counter() - started)
                if status == "OK":
                    metrics.seen(call.session_id, call.protocol)

        return grpc.unary_unary_rpc_method_handler(counted, request_deserializer=handler.request_deserializer,
                                                   response_serializer=handler.response_serializer)


def serve_endpoint(metrics: RoleMetrics, port: int, address: str = "0.0.0.0"):
    """The /metrics endpoint on its own thread; plain HTTP (it carries only the aggregates above)."""
    return start_http_server(port, addr=address, registry=metrics.registry)
