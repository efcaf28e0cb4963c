"""The compose file's `observe` profile: Prometheus, Grafana and Jaeger beside the roles, started only by
`docker compose --profile observe up` (docs/observe.md).

Every role serves /metrics on METRICS_PORT inside the compose network (never published) and answers to the
alias `role-metrics`, which Prometheus resolves to every role container (deploy/prometheus/prometheus.yml),
so the same configuration serves any number of parties. Spans go to Jaeger's OTLP port when the operator sets
OTEL_TRACES_EXPORTER=otlp; otherwise none are made."""

from __future__ import annotations

METRICS_PORT = 9464
ALIAS = "role-metrics"
PROFILE = "observe"
# Pinned; no registry is reachable on the development machines, so these are checked by `docker compose
# config`, not pulled (docs/observe.md).
PROMETHEUS_IMAGE = "prom/prometheus:v2.53.0"
GRAFANA_IMAGE = "grafana/grafana-oss:11.1.0"
JAEGER_IMAGE = "jaegertracing/all-in-one:1.58"


def environment() -> list[str]:
    """Lines under x-mpdp's `environment:` (every service): metrics on, spans as the operator's shell says."""
    return [
        f'    MPDP_METRICS_PORT: "{METRICS_PORT}"',
        "    OTEL_TRACES_EXPORTER: ${OTEL_TRACES_EXPORTER:-none}",
        "    OTEL_EXPORTER_OTLP_ENDPOINT: ${OTEL_EXPORTER_OTLP_ENDPOINT:-http://jaeger:4317}",
        '    OTEL_EXPORTER_OTLP_INSECURE: "true"',
    ]


def role_network() -> list[str]:
    """A role service's network, with the alias Prometheus looks up."""
    return ["    networks:", "      mpdp:", f"        aliases: [{ALIAS}]"]


def services() -> list[str]:
    profile = f"    profiles: [{PROFILE}]"
    return [
        "  prometheus:",
        f"    image: {PROMETHEUS_IMAGE}",
        profile,
        "    volumes:",
        "      - ./deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro",
        '    ports: ["127.0.0.1:9090:9090"]',
        "    networks: [mpdp]",
        "  grafana:",
        f"    image: {GRAFANA_IMAGE}",
        profile,
        "    environment:",
        '      GF_AUTH_ANONYMOUS_ENABLED: "true"',
        "      GF_AUTH_ANONYMOUS_ORG_ROLE: Viewer",
        "      GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH: /var/lib/grafana/dashboards/mpdp-dashboard.json",
        "    volumes:",
        "      - ./deploy/grafana/provisioning:/etc/grafana/provisioning:ro",
        "      - ./deploy/grafana/mpdp-dashboard.json:/var/lib/grafana/dashboards/mpdp-dashboard.json:ro",
        '    ports: ["127.0.0.1:3000:3000"]',
        "    depends_on: [prometheus]",
        "    networks: [mpdp]",
        "  jaeger:",
        f"    image: {JAEGER_IMAGE}",
        profile,
        "    environment:",
        '      COLLECTOR_OTLP_ENABLED: "true"',
        '    ports: ["127.0.0.1:16686:16686"]',
        "    networks: [mpdp]",
    ]
