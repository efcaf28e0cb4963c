"""The compose file's `observe` profile (launcher/deployment/compose_observe.py), read as YAML: nothing started."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
COMPOSE_FILE = ROOT / "docker-compose.yml"


def test_the_observe_profile_scrapes_every_role_and_its_dashboard_reads_what_roles_export():
    """`docker compose --profile observe up`: Prometheus, Grafana and Jaeger only under the profile; every role
    answers to the alias Prometheus resolves and serves metrics on the port it scrapes; each dashboard query
    names a series a role's endpoint exports (mpdp.observe.metrics)."""
    import json
    import re

    from launcher.deployment import compose_observe

    compose = yaml.safe_load(COMPOSE_FILE.read_text())
    services = compose["services"]
    observers = {name for name, service in services.items() if "profiles" in service}
    assert observers == {"prometheus", "grafana", "jaeger"}
    assert all(services[name]["profiles"] == ["observe"] for name in observers)
    roles = [name for name in services if name.startswith("party-") or name in ("aggregator", "curator")]
    assert all(services[name]["networks"]["mpdp"]["aliases"] == [compose_observe.ALIAS] for name in roles)
    assert compose["x-mpdp"]["environment"]["MPDP_METRICS_PORT"] == str(compose_observe.METRICS_PORT)
    scrape = yaml.safe_load((ROOT / "deploy/prometheus/prometheus.yml").read_text())["scrape_configs"][0]
    assert scrape["dns_sd_configs"][0] == {"names": [compose_observe.ALIAS], "type": "A",
                                           "port": compose_observe.METRICS_PORT, "refresh_interval": "15s"}
    for mount in services["prometheus"]["volumes"] + services["grafana"]["volumes"]:
        assert (ROOT / mount.split(":")[0]).exists(), mount
    exported = {"mpdp_rpc_calls_total", "mpdp_rpc_request_bytes_total", "mpdp_rpc_response_bytes_total",
                "mpdp_rpc_seconds_bucket", "mpdp_sessions_total", "mpdp_budget_epsilon_spent",
                "mpdp_budget_delta_spent", "mpdp_budget_releases"}
    dashboard = json.loads((ROOT / "deploy/grafana/mpdp-dashboard.json").read_text())
    named = {name for panel in dashboard["panels"] for target in panel["targets"]
             for name in re.findall(r"mpdp_\w+", target["expr"])}
    assert named and named <= exported, named - exported
