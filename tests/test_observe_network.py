"""With the `[observe]` extra on, over real role processes: after a session of each protocol the roles' Prometheus
counters equal the report's traffic and the server spans received over OTLP equal its messages, kind by kind."""

from __future__ import annotations

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("opentelemetry.exporter.otlp.proto.grpc")
pytest.importorskip("prometheus_client")

pytestmark = pytest.mark.network


def test_counters_and_spans_equal_each_protocols_report():
    from launcher.bench import observe

    checks = observe.counts(["dppp", "pathak", "du", "hamm"], parties=3, bits=1024)
    assert set(checks) == {"dppp", "pathak", "du", "hamm"}
    for protocol, check in checks.items():
        assert check["messages"] > 0, protocol
        assert check["metrics_match"] and check["spans_match"], (protocol, check["differences"])
        assert check["metric_calls"] == check["server_spans"] == check["messages"]
        assert check["client_spans"] > 0  # the roles' own calls carry client spans too
