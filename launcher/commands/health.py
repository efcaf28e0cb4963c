"""`mpdp health`: exit 0 if a role's health service says SERVING (each container's health check)."""

from __future__ import annotations

from pathlib import Path


def command(args) -> int:
    from launcher.deployment.health import is_serving
    from mpdp.deployments.topology import Topology
    from mpdp.sessions.identity import Identity

    serving = is_serving(Topology.load(args.topology), Identity(args.role, args.id), timeout=args.timeout)
    print("SERVING" if serving else "NOT SERVING")
    return 0 if serving else 1


def add_command(commands) -> None:
    health = commands.add_parser("health", help="exit 0 if a role's health service says SERVING (over mTLS)")
    health.add_argument("--topology", type=Path, required=True)
    health.add_argument("--role", required=True, choices=["party", "curator", "aggregator"])
    health.add_argument("--id", type=int, default=0)
    health.add_argument("--timeout", type=float, default=5.0)
    health.set_defaults(handler=command)
