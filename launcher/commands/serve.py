"""`mpdp serve ROLE`: one role's gRPC server (what `up` and compose start)."""

from __future__ import annotations

import argparse
from pathlib import Path

from launcher.common.deployment_options import add_budget_option


def command(args) -> int:
    from launcher.deployment import role_logs, serve

    role_logs.rotate(args.log_level)  # a size-capped, rotated file when `up` gave the role one
    serve.run(args.role, args.topology, args.id, args.test_mode, args.fault, args.max_message_bytes, args.insecure,
              args.budget, args.allow_unproven, keygen_only=args.keygen_only, once=args.once,
              metrics_port=args.metrics_port)
    return 0


def add_command(commands) -> None:
    serve = commands.add_parser("serve", help="run one role's gRPC server (used by `up` and compose)")
    serve.add_argument("role", choices=["party", "curator", "aggregator"])
    role = serve.add_argument_group("role (which one of the topology this process serves)")
    server = serve.add_argument_group("server (its channel, messages, logs and metrics)")
    keys = serve.add_argument_group("key generation (a key holder before the key exists)")
    budget = serve.add_argument_group("privacy budget (a party's)")
    role.add_argument("--topology", type=Path, required=True)
    role.add_argument("--id", type=int, default=0, help="party number (1..K)")
    serve.add_argument("--test-mode", action="store_true",
                       help="TESTS ONLY: expose drawn votes and noise, allow fault injection")
    serve.add_argument("--fault", help=argparse.SUPPRESS)  # test mode only: a party fault, or kill-on:/stop-on:/drop:/delay:
    server.add_argument("--log-level", default="INFO")
    server.add_argument("--max-message-bytes", type=int, default=64 * 1024 * 1024,
                        help="largest message this server sends or accepts")
    server.add_argument("--insecure", action="store_true", help="serve plaintext (the topology must say so too)")
    keys.add_argument("--keygen-only", action="store_true",
                      help="a key holder before the key exists: serve only the distributed key generation")
    keys.add_argument("--once", action="store_true",
                      help="with --keygen-only: write the public key beside the share and exit after one "
                           "ceremony (compose's key holders)")
    server.add_argument("--metrics-port", type=int, metavar="PORT",
                        help="a Prometheus endpoint on this port of the role's host (needs mpdp[observe]; "
                             "docs/observe.md); spans follow the OTEL_* variables")
    add_budget_option(budget)
    serve.set_defaults(handler=command)
