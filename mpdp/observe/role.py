"""What a role server adds when observed: its interceptors (spans when OTEL_TRACES_EXPORTER asks for them, counts
when a metrics port is given), the endpoint, the signals that switch the interceptors off and on (switch.py), and
a flush of buffered spans when it stops. With neither asked for, nothing of the extra is imported, no signal is
taken and the role runs as without it."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any

from mpdp.observe import ExtraMissing, metrics_available
from mpdp.observe.exporting import requested

log = logging.getLogger(__name__)


@dataclass
class Observed:
    server_interceptors: tuple = ()
    client_interceptors: tuple = ()
    metrics: Any = None  # a RoleMetrics when a port was given
    _provider: Any = field(default=None, repr=False)  # an SDK TracerProvider when spans are exported

    def shutdown(self) -> None:
        """Export what the batch processor still holds (a session's last spans) before the process exits."""
        if self._provider is not None:
            self._provider.shutdown()


PORT_VARIABLE = "MPDP_METRICS_PORT"  # one role per host (compose): every role's endpoint on this port
BASE_VARIABLE = "MPDP_METRICS_PORT_BASE"  # many roles on one host (`mpdp up --metrics-port BASE`): an offset each


def offset(principal: str) -> int:
    """A role host's place after BASE: the aggregator 0, the curator 1, the host of parties f… 1 + f."""
    role, _, numbers = principal.partition("/")
    if role == "aggregator":
        return 0
    if role == "curator":
        return 1
    return 1 + int(numbers.partition("-")[0])


def metrics_port_of(principal: str, given: int | None, environ=os.environ) -> int | None:
    """The port `--metrics-port` gives, else the one MPDP_METRICS_PORT or MPDP_METRICS_PORT_BASE give, else none."""
    if given is not None:
        return given
    if environ.get(PORT_VARIABLE):
        return int(environ[PORT_VARIABLE])
    if environ.get(BASE_VARIABLE):
        return int(environ[BASE_VARIABLE]) + offset(principal)
    return None


def check_metrics_port(port: int | None) -> None:
    """Before anything starts: `--metrics-port` without the extra is refused in one line."""
    if port is not None and not metrics_available():
        raise ExtraMissing("--metrics-port")


def observe(me: str, metrics_port: int | None = None, metrics_host: str = "127.0.0.1", environ=os.environ) -> Observed:
    check_metrics_port(metrics_port)
    observed = Observed()
    if requested(environ):
        from mpdp.observe.exporting import tracer_provider
        from mpdp.observe.spans import ClientSpanInterceptor, ServerSpanInterceptor

        provider = tracer_provider(f"mpdp-{me.replace('/', '-')}", environ)
        observed._provider = provider
        observed.server_interceptors += (ServerSpanInterceptor(me, provider),)
        observed.client_interceptors += (ClientSpanInterceptor(me, provider),)
        log.info("%s: spans exported to %s", me, environ.get("OTEL_TRACES_EXPORTER"))
    if metrics_port is not None:
        from mpdp.observe.metrics import MetricsInterceptor, RoleMetrics, serve_endpoint

        observed.metrics = RoleMetrics(me)
        observed.server_interceptors += (MetricsInterceptor(observed.metrics),)
        serve_endpoint(observed.metrics, metrics_port, metrics_host)
        log.info("%s: Prometheus metrics on http://%s:%d/metrics", me, metrics_host, metrics_port)
    if observed.server_interceptors:
        from mpdp.observe.switch import listen

        if listen():
            log.info("%s: observe interceptors on; SIGUSR2 switches them off, SIGUSR1 on", me)
    return observed


def observe_client(me: str = "client/0", environ=os.environ) -> bool:
    """A launcher process's own calls (`mpdp run`, `demo`) as client spans, when OTEL_TRACES_EXPORTER asks: the
    root of each message's trace. Spans still buffered are exported when the process exits."""
    if not requested(environ):
        return False
    import atexit

    from mpdp.observe.exporting import tracer_provider
    from mpdp.observe.spans import ClientSpanInterceptor
    from mpdp.wire import channels

    provider = tracer_provider(f"mpdp-{me.replace('/', '-')}", environ)
    channels.PROCESS_INTERCEPTORS.append(ClientSpanInterceptor(me, provider))
    atexit.register(provider.shutdown)
    return True
