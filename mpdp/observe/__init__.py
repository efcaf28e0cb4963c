"""The optional `[observe]` extra: OpenTelemetry spans per RPC and a Prometheus endpoint per role.

Nothing here is imported unless asked for: without the extra every command works, and asking for what it
needs (`--metrics-port`, OTEL_TRACES_EXPORTER) says so in one line. The JSON report stays the source of truth;
these are a live view of the same calls, carrying sizes, kinds and roles, never a message's content."""

from __future__ import annotations

import importlib.util

MISSING = ("{what} needs the observe extra: pip install 'mpdp[observe]' "
           "(opentelemetry-sdk, opentelemetry-exporter-otlp-proto-grpc, prometheus-client)")


def tracing_available() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in ("opentelemetry", "opentelemetry.sdk"))


def metrics_available() -> bool:
    return importlib.util.find_spec("prometheus_client") is not None


class ExtraMissing(ValueError):
    """A feature of the extra was asked for without its packages installed."""

    def __init__(self, what: str):
        super().__init__(MISSING.format(what=what))
