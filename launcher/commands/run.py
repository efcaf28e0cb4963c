"""`mpdp run PROTOCOL`: one session (or R) of a registered protocol against a running deployment, its summary and reports."""

from __future__ import annotations

from pathlib import Path

from launcher.common import run_config
from launcher.common.deployment_options import add_deployment_options
from launcher.common.options import print_summary, write_json


def resolve_run(args):
    from launcher.common import client
    from launcher.deployment import processes
    from mpdp.deployments.topology import Topology

    run = processes.RunDirectory(args.run_dir)
    if not args.topology and not run.topology.exists():
        raise SystemExit(f"mpdp: error: no deployment in {run.path}: start one with `mpdp up --run-dir {args.run_dir}`")
    topology = Topology.load(args.topology or run.topology)
    client_data = client.load_client_data(args.client_data or run.client_data)
    expected = {"dataset": str(client_data["dataset"]), "split": str(client_data["split"])}
    for option, held in expected.items():
        asked = getattr(args, option, None)
        if asked and asked != held:
            raise SystemExit(f"mpdp: error: the running topology's {option} is {held!r}, not {asked!r}; "
                             f"restart it with `mpdp up --{option} …`")
    if args.parties and args.parties != len(topology.parties):
        raise SystemExit(f"mpdp: error: the running topology has {len(topology.parties)} parties, not {args.parties}")
    return topology, client_data


def run_session(protocol, args) -> dict:
    from launcher.common import session_report
    from launcher.common.summary import session_summary
    from launcher.deployment import network

    exporting = getattr(args, "export", None)
    if exporting is not None:
        from launcher.commands import export

        export.check_out(exporting)
    with network.active(args.run_dir):  # through the link relays of `up --network`, if it has them
        topology, client_data = resolve_run(args)
        report = session_report.run(protocol, args, topology, client_data)
    report["config"] = run_config.record(args)
    print_summary(session_summary(protocol.summary(report), report), args.report)
    write_json(args.report, report)
    if exporting is not None:
        print_summary(export.write(report, client_data, exporting), args.report)
    if getattr(args, "html", None) is not None:
        from launcher.commands import html_report

        html_report.write(report, args.html, f"mpdp run {protocol.name} … --html {args.html}")
        print_summary(f"session page: {args.html}", args.report)
    return report


def command(args) -> int:
    from launcher.registry import PROTOCOLS

    args.json_report = run_session(PROTOCOLS[args.protocol], args)
    return 0


def add_command(commands) -> None:
    """A session of any registered protocol (building it imports the protocols' packages)."""
    from launcher.registry import PROTOCOLS

    run = commands.add_parser("run", help="run a protocol session against a running topology")
    protocols = run.add_subparsers(dest="protocol", required=True)
    for protocol in PROTOCOLS.values():
        session = protocols.add_parser(protocol.name, help=protocol.help)
        deployment = session.add_argument_group("deployment (the running one the session uses, and what it must hold)")
        reports = session.add_argument_group("reports (the summary is always printed)")
        sessions = session.add_argument_group("sessions (how many, and the check before spending)")
        own = session.add_argument_group(f"{protocol.name} (the protocol's own options)")
        add_deployment_options(deployment)
        reports.add_argument("--report", type=Path, help="write the JSON report here (`-`: standard output, the "
                                                         "summary then goes to standard error)")
        if protocol.release is not None:
            reports.add_argument("--export", type=Path, metavar="MODEL",
                                 help="also write the released model (the first session's) as a scikit-learn "
                                      "Pipeline on raw rows, model.joblib or model.pkl (as `mpdp export`)")
        reports.add_argument("--html", type=Path, metavar="FILE",
                             help="also write the session's report as one self-contained HTML page here")
        sessions.add_argument("--repeat", type=int, default=1, metavar="R",
                              help="run R sessions; the summary gives mean ± std beside the baselines")
        sessions.add_argument("--anyway", action="store_true",
                              help="run even where the check before spending says it will not learn (the same model "
                                   "non-private cannot rank the test rows, or the noise decides)")
        for option in protocol.options():
            option.add_to(own)
        run_config.add_option(session)
        session.set_defaults(handler=command)
