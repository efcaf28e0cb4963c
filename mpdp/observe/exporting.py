"""Where spans go, as the standard OpenTelemetry variables say: OTEL_TRACES_EXPORTER (`otlp`, `console`, both
comma-separated, or `none`, the default here: tracing is off unless asked for), OTEL_EXPORTER_OTLP_ENDPOINT and
its siblings (read by the OTLP exporter itself), OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (read by the
SDK's Resource), OTEL_TRACES_SAMPLER, OTEL_BSP_* (the batch processor's), OTEL_SDK_DISABLED."""

from __future__ import annotations

import os
import sys

from mpdp.observe import ExtraMissing, tracing_available

EXPORTERS = ("otlp", "console")


def requested(environ=os.environ) -> list[str]:
    """The exporters the environment asks for; [] when tracing is off."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    names = [name.strip().lower() for name in environ.get("OTEL_TRACES_EXPORTER", "none").split(",")]
    names = [name for name in names if name and name != "none"]
    unknown = sorted(set(names) - set(EXPORTERS))
    if unknown:
        raise ValueError(f"OTEL_TRACES_EXPORTER names {', '.join(unknown)}: mpdp exports spans to "
                         f"{' or '.join(EXPORTERS)} (or none)")
    return names


def tracer_provider(service: str, environ=os.environ):
    """A TracerProvider exporting to what the environment asks for, or None when it asks for nothing."""
    names = requested(environ)
    if not names:
        return None
    if not tracing_available():
        raise ExtraMissing(f"OTEL_TRACES_EXPORTER={environ.get('OTEL_TRACES_EXPORTER')}")
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

    # OTEL_SERVICE_NAME, when set, wins over the role's default name.
    provider = TracerProvider(resource=Resource.create({"service.name": environ.get("OTEL_SERVICE_NAME") or service}))
    for name in names:
        if name == "otlp":
            try:
                from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
            except ImportError:
                raise ExtraMissing("OTEL_TRACES_EXPORTER=otlp (opentelemetry-exporter-otlp-proto-grpc)") from None
            exporter: SpanExporter = OTLPSpanExporter()
        else:
            # Standard error: a launcher's standard output carries its report (`--format json`), a role's both go
            # to its log.
            exporter = ConsoleSpanExporter(out=sys.stderr)
        # Batched, off the RPC's path: a span costs the call its creation, not its export.
        provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider
