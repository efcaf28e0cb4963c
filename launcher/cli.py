"""The `mpdp` command line."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path

from launcher.common import run_config
from launcher.common.options import DEFAULT_RUN_DIR, key_bits, print_summary, show_defaults, warn_small_key, write_json
from mpdp.cryptocore.keys.key_sizes import DEFAULT_KEY_BITS


def _faults(values: list[str]) -> dict[int, str]:
    faults = {}
    for value in values or []:
        number, _, fault = value.partition("=")
        faults[int(number)] = fault
    return faults


def _budget(text: str):
    from mpdp.privacy.ledger import Budget

    try:
        return Budget.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _add_budget_option(parser) -> None:
    parser.add_argument("--budget", type=_budget, metavar="ε,δ",
                        help="each party's privacy budget for its data set, composed over every session it takes "
                             "part in (its ledger is a file next to the data); a session that would exceed it is "
                             "refused. Default: 20,2e-5; `inf` for no limit (spending still recorded)")
    parser.add_argument("--allow-unproven", action="store_true",
                        help="the parties take mechanisms without a proven ε (Du's OFPA/OFAA, Pathak's "
                             "laplace-paper, non-private runs); refused otherwise")


def _serve(args) -> int:
    from launcher.deployment import role_logs, serve

    role_logs.rotate(args.log_level)  # a size-capped, rotated file when `up` gave the role one
    serve.run(args.role, args.topology, args.id, args.test_mode, args.fault, args.max_message_bytes, args.insecure,
              args.budget, args.allow_unproven, keygen_only=args.keygen_only, once=args.once,
              metrics_port=args.metrics_port)
    return 0


def _keygen_method(args) -> str:
    """--keygen, or the default for this many parties (launcher.deployment.keygen.default_method)."""
    from launcher.deployment.keygen import default_method

    return args.keygen or default_method(args.parties)


def _keygen(args) -> int:
    from launcher.deployment import bundles, certs
    from launcher.deployment.keygen import ceremony
    from mpdp.sessions.identity import AGGREGATOR, CLIENT, CURATOR, party

    warn_small_key(args.bits)
    started = time.perf_counter()
    paths, threshold, holders = ceremony(args.parties, args.out, args.bits, args.threshold, overwrite=args.force,
                                         method=args.keygen)
    print(f"threshold key: {holders} holders, t = {threshold}, {args.bits} bits, {time.perf_counter() - started:.1f} s")
    identities = [AGGREGATOR, CURATOR, CLIENT] + [party(j) for j in range(1, args.parties + 1)]
    paths += certs.issue(args.out / "certs", identities, overwrite=args.force)
    bundles.seal(args.out)  # the dealer's directory: hand each holder its own files only
    print(f"certificates: a CA and {len(identities)} role identities")
    for path in paths:
        print(f"  {path}")
    return 0


def _load_dataset(args):
    from mpdp.learning import datasets, private_statistics

    dataset = datasets.load(args.dataset, label=args.label, data_dir=args.data_dir, scaling=args.scaling,
                            intercept=args.intercept, max_levels=args.max_levels, schema=args.schema,
                            statistics=private_statistics.options(getattr(args, "statistics_epsilon", None)))
    from launcher.common.data_report import print_lines

    print_lines(dataset)
    return dataset


def _teacher_as_model(args) -> None:
    """`--teacher MODULE:CLASS`: every party's local model (DPPP's and Hamm's teachers) is that classifier,
    checked here (it imports and is a classifier) before any key is made."""
    if args.teacher is None:
        return
    if args.model:
        raise SystemExit("mpdp: error: give --teacher or --model, not both")
    from mpdp.learning.models import own_classifier

    try:
        own_classifier(args.teacher)
    except ValueError as error:
        raise SystemExit(f"mpdp: error: {error}") from None
    args.model = args.teacher


def _up(args) -> int:
    from launcher.deployment import processes
    from mpdp.deployments.topology import Topology

    _teacher_as_model(args)
    if args.topology:
        from launcher.common.data_report import missing_topology_files

        missing = missing_topology_files(args.topology)
        if missing:
            raise FileNotFoundError(missing)
        topology = Topology.load(args.topology)
        processes.wait_healthy(topology, timeout=args.startup_timeout)
        print(f"attached: {len(topology.roles)} roles in {args.topology} are serving")
        return 0
    from launcher.common.data_report import check_parties

    check_parties(args.parties)
    from launcher.common.teacher_layout import logical_parties

    owners = args.parties
    args.parties, args.parties_per_process = logical_parties(owners, args.teachers_per_party,
                                                             args.parties_per_process, args.split)
    if args.teachers_per_party > 1:
        print(f"{owners} data owners, {args.teachers_per_party} teachers each on disjoint parts of its rows: "
              f"{args.parties} logical parties in {owners} processes")
    if args.ray is not None and (args.network or args.latency or args.bandwidth or args.loss):
        print("mpdp: error: --network is for processes on this machine, not --ray", file=sys.stderr)
        return 2
    if args.ray is not None:
        from launcher.deployment import ray_hosts

        try:
            ray_hosts.require_ray()
        except ray_hosts.RayMissing as missing:
            print(f"mpdp: error: {missing}", file=sys.stderr)
            return 2
    warn_small_key(args.bits)
    if args.insecure:
        print("warning: --insecure: plaintext channels, senders are not authenticated", file=sys.stderr)
    from launcher.deployment import metrics_targets

    metrics_targets.ask(args.metrics_port, args.ray is not None)
    if args.ray is not None:
        topology = ray_hosts.up(args.run_dir, args.ray or None, args.parties, args.parties_per_process, args.bits,
                                _load_dataset(args), args.seed, args.model, args.test_mode, _faults(args.fault),
                                split=args.split, insecure=args.insecure, startup_timeout=args.startup_timeout,
                                aux_fraction=args.aux_fraction, budget=args.budget, allow_unproven=args.allow_unproven,
                                keygen=_keygen_method(args), host_cpus=args.ray_cpus, host_memory_mb=args.ray_memory,
                                single_operator=args.single_operator)
        for entry in topology.host_entries:
            print(f"  {str(entry.principal):<14} {entry.address}")
        print(f"up: {len(topology.host_entries)} Ray actors for {len(topology.roles)} roles; "
              f"topology {processes.RunDirectory(args.run_dir).topology}")
        return 0
    from launcher.deployment import network

    topology = network.up(args.run_dir, network.profile_of(args), args.parties, args.bits, _load_dataset(args),
                          args.seed, args.model, args.test_mode, _faults(args.fault), split=args.split,
                          insecure=args.insecure, startup_timeout=args.startup_timeout,
                          parties_per_process=args.parties_per_process, aux_fraction=args.aux_fraction,
                          budget=args.budget, allow_unproven=args.allow_unproven, keygen=_keygen_method(args),
                          single_operator=args.single_operator)
    for entry in topology.host_entries:
        print(f"  {str(entry.principal):<14} {entry.address}")
    for line in metrics_targets.announce(topology, processes.RunDirectory(args.run_dir).path, args.metrics_port):
        print(line)
    print(f"up: {len(topology.host_entries)} processes for {len(topology.roles)} roles; "
          f"topology {processes.RunDirectory(args.run_dir).topology}")
    return 0


def _addresses(values: list[str]) -> dict:
    from mpdp.sessions.identity import Identity

    addresses = {}
    for value in values or []:
        identity, _, address = value.partition("=")
        if not address:
            raise SystemExit(f"mpdp: error: --address takes ROLE/ID=HOST:PORT, not {value!r}")
        addresses[Identity.parse(identity)] = address
    return addresses


def _owners(values: list[str] | None, parties: int) -> dict[str, int]:
    """`--owner BUNDLE=UID`: checked before any work."""
    names = {"aggregator", "curator", "client", *(f"party-{j}" for j in range(1, parties + 1))}
    owners = {}
    for value in values or []:
        name, _, uid = value.partition("=")
        if name not in names or not uid.isdigit():
            raise SystemExit(f"mpdp: error: --owner takes BUNDLE=UID with BUNDLE one of {', '.join(sorted(names))}, not {value!r}")
        owners[name] = int(uid)
    if owners and os.getuid() != 0:
        raise SystemExit("mpdp: error: --owner needs root (it hands each bundle to its role's uid)")
    return owners


def _prepare(args) -> int:
    from launcher.deployment import bundles, processes
    from mpdp.sessions.identity import AGGREGATOR, CURATOR, party

    _teacher_as_model(args)
    warn_small_key(args.bits)
    addresses = _addresses(args.address)
    expected = {AGGREGATOR, CURATOR, *(party(j) for j in range(1, args.parties + 1))}
    if set(addresses) != expected:
        raise SystemExit(f"mpdp: error: --address must name exactly: {', '.join(sorted(map(str, expected)))}")
    owners = _owners(args.owner, args.parties)
    if args.keep_existing and args.force:
        raise ValueError("--keep-existing and --force contradict each other")
    if args.keep_existing and processes.prepared(args.out, list(addresses)):
        print(f"kept {args.out}: it already holds a deployment (its keys are never replaced here; "
              "`docker compose down -v` removes a compose deployment's volumes, and with them its keys)")
        return 0
    topology = processes.prepare(args.out, args.parties, args.bits, _load_dataset(args), addresses, args.seed,
                                 args.model, split=args.split, insecure=args.insecure, listen_host=args.listen_host,
                                 overwrite=args.force, aux_fraction=args.aux_fraction, keygen=_keygen_method(args))
    run = processes.RunDirectory(args.out)
    for name, uid in owners.items():
        bundles.give(run.path / name, uid)
    names = sorted(path.name for path in run.path.iterdir() if path.is_dir())
    key = "no key yet (the key holders make it)" if _keygen_method(args) == "deferred" else "threshold key"
    print(f"prepared {args.out}: {key}, {'no certificates (insecure)' if topology.insecure else 'CA and certificates'}, "
          f"{len(topology.parties)} party data files; one bundle per role (copy each to its host only): "
          f"{', '.join(names)}")
    return 0


def _health(args) -> int:
    from launcher.deployment.health import is_serving
    from mpdp.deployments.topology import Topology
    from mpdp.sessions.identity import Identity

    serving = is_serving(Topology.load(args.topology), Identity(args.role, args.id), timeout=args.timeout)
    print("SERVING" if serving else "NOT SERVING")
    return 0 if serving else 1


def _compose(args) -> int:
    from launcher.deployment.compose import render

    text = render(args.parties, _keygen_method(args), args.bits)
    if args.out:
        args.out.write_text(text)
        print(f"wrote {args.out}")
    else:
        print(text, end="")
    return 0


def _open_keygen(args) -> int:
    from launcher.deployment.distributed_keygen import open_at_holders
    from mpdp.deployments.topology import Topology

    if args.public_out and all(path.is_file() for path in args.public_out):
        print("kept the existing public key: the key holders made it earlier (their shares exist)")
        return 0
    figures = open_at_holders(Topology.load(args.topology), args.bits, args.public_out, args.startup_timeout)
    print(f"distributed key generation: {figures}")
    return 0


def _down(args) -> int:
    from launcher.deployment import processes

    if args.all:
        stopped = processes.stop(processes.running_servers())
    else:
        from launcher.deployment import network

        stopped = network.down(args.run_dir)  # the roles, and the link relays of `up --network`
    if not args.all and (processes.RunDirectory(args.run_dir).path / "ray.json").exists():
        from launcher.deployment import ray_hosts

        actors = ray_hosts.down(args.run_dir)
        print(f"down: ended {len(actors)} Ray actors and their servers" if actors else "down: no Ray actor was left")
        return 0
    print(f"down: stopped {len(stopped)} processes" if stopped else "nothing to stop")
    return 0


def _ps(args) -> int:
    from launcher.deployment import processes

    servers = processes.running_servers()
    for command, pid in sorted(servers.items(), key=lambda item: item[1]):
        print(f"{pid:>8}  {command}")
    print(f"{len(servers)} mpdp role servers of yours running" + ("; `mpdp down --all` stops them" if servers else ""))
    args.json_report = {"servers": [{"pid": pid, "command": command} for command, pid in sorted(servers.items(),
                                                                                              key=lambda item: item[1])]}
    if (processes.RunDirectory(args.run_dir).path / "ray.json").exists():
        from launcher.deployment import ray_hosts

        actors = ray_hosts.describe(args.run_dir)
        args.json_report["ray_actors"] = actors
        for actor in actors:
            memory = f"{actor['rss_kb'] / 1024:.0f} MiB (peak {actor['peak_kb'] / 1024:.0f})" if "rss_kb" in actor else ""
            print(f"  {actor['principal']:<14} {'running' if actor['running'] else 'NOT RUNNING':<12} "
                  f"{actor.get('address') or '':<22} {memory}")
        print(f"{sum(a['running'] for a in actors)}/{len(actors)} Ray actors of {args.run_dir} running")
    return 0


def _resolve_run(args):
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


def _run_session(protocol, args) -> dict:
    from launcher.common import session_report
    from launcher.common.summary import session_summary
    from launcher.deployment import network

    exporting = getattr(args, "export", None)
    if exporting is not None:
        from launcher.commands import export

        export.check_out(exporting)
    with network.active(args.run_dir):  # through the link relays of `up --network`, if it has them
        topology, client_data = _resolve_run(args)
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


def _run(args) -> int:
    from launcher.registry import PROTOCOLS

    args.json_report = _run_session(PROTOCOLS[args.protocol], args)
    return 0


@contextlib.contextmanager
def _stop_on_signals():
    """SIGTERM (and SIGINT, as ever) end a foreground run through its `finally`, which stops every role it started;
    a SIGKILL is covered by the roles' parent-death signal."""
    import signal

    def interrupted(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _demo(args) -> int:
    from launcher.commands import demo
    from launcher.common.data_report import check_parties

    check_parties(args.parties)
    warn_small_key(args.bits)
    reports: dict[str, dict] = {}

    def run_session(protocol, session_args) -> dict:
        reports[protocol.name] = _run_session(protocol, session_args)
        return reports[protocol.name]

    code = demo.run(args, _load_dataset(args), run_session, _stop_on_signals)
    args.json_report = {"reports": reports}  # `--format json`: every session's report
    return code


def _add_dataset_options(parser) -> None:
    parser.add_argument("--dataset", default="breast-cancer",
                        help="breast-cancer, digits, mnist-5k, har (mpdp[experiments]), a9a, or a path to a CSV (with --label) or LIBSVM file")
    parser.add_argument("--label", help="label column of a CSV data set")
    parser.add_argument("--max-levels", type=int, default=100, metavar="N",
                        help="a categorical CSV column with more distinct values is an error")
    parser.add_argument("--intercept", action=argparse.BooleanOptionalAction, default=True,
                        help="a constant feature inside the unit ball, so every linear model (which fits none of its "
                             "own) gets an intercept; stated in the reports")
    parser.add_argument("--schema", type=Path, help="public per-column bounds of a CSV table (JSON; see "
                                                    "docs/data-and-metrics.md)")
    parser.add_argument("--statistics-epsilon", type=float, metavar="E",
                        help="ε of the statistics read from a CSV table's columns without a schema entry, under DP "
                             "and charged to every party's ledger (default 1; docs/data-and-metrics.md)")
    parser.add_argument("--data-dir", help="directory holding a9a (default: $MPDP_DATA_DIR)")
    parser.add_argument("--scaling", choices=["public", "standardise", "unit-rows"], default="public",
                        help="into the unit ball: public per-column bounds and each row on its own; or the papers' "
                             "standardised columns and one common factor, or each row to norm 1")
    parser.add_argument("--seed", type=int, help="seed of the data split (the split only; noise is always CSPRNG)")
    parser.add_argument("--split", default="even",
                        help="party data sizes: even, 15, 10 (Pathak's splits) or comma-separated sizes; or "
                             "label-skew:α, a non-IID split (each class shared among the parties by a seeded "
                             "Dirichlet(α)); or column:NAME, a cross-silo split (each party the rows of one value or "
                             "range of the column; docs/data-and-metrics.md)")
    parser.add_argument("--aux-fraction", type=float, metavar="F",
                        help="Hamm's setting: this fraction of the training rows becomes Charlie's public X_aux, the "
                             "rest goes to the parties, the remaining third to the test set (default: a third of the "
                             "rows, halved into public and test rows)")


def _add_deployment_options(parser) -> None:
    """Which running deployment a session uses, and what it must hold."""
    parser.add_argument("--run-dir", type=Path, default=DEFAULT_RUN_DIR)
    parser.add_argument("--topology", type=Path, help="default: the run directory's")
    parser.add_argument("--client-data", type=Path, help="public and test data (default: the run directory's)")
    parser.add_argument("--dataset", help="must name the data set the topology was started with")
    parser.add_argument("--split", help="must name the split the topology was started with")
    parser.add_argument("--parties", "--teachers", dest="parties", type=int,
                        help="must equal the topology's number of parties")


def _add_serve_command(commands) -> None:
    serve = commands.add_parser("serve", help="run one role's gRPC server (used by `up` and compose)")
    serve.add_argument("role", choices=["party", "curator", "aggregator"])
    serve.add_argument("--topology", type=Path, required=True)
    serve.add_argument("--id", type=int, default=0, help="party number (1..K)")
    serve.add_argument("--test-mode", action="store_true",
                       help="TESTS ONLY: expose drawn votes and noise, allow fault injection")
    serve.add_argument("--fault", help=argparse.SUPPRESS)  # test mode only: a party fault, or kill-on:/stop-on:/drop:/delay:
    serve.add_argument("--log-level", default="INFO")
    serve.add_argument("--max-message-bytes", type=int, default=64 * 1024 * 1024,
                       help="largest message this server sends or accepts")
    serve.add_argument("--insecure", action="store_true", help="serve plaintext (the topology must say so too)")
    serve.add_argument("--keygen-only", action="store_true",
                       help="a key holder before the key exists: serve only the distributed key generation")
    serve.add_argument("--once", action="store_true",
                       help="with --keygen-only: write the public key beside the share and exit after one "
                            "ceremony (compose's key holders)")
    serve.add_argument("--metrics-port", type=int, metavar="PORT",
                       help="a Prometheus endpoint on this port of the role's host (needs mpdp[observe]; "
                            "docs/observe.md); spans follow the OTEL_* variables")
    _add_budget_option(serve)
    serve.set_defaults(handler=_serve)


def _add_keygen_command(commands) -> None:
    keygen = commands.add_parser("keygen", help="threshold key ceremony: one file per key holder + the public key")
    keygen.add_argument("--parties", type=int, required=True)
    keygen.add_argument("--out", type=Path, required=True)
    keygen.add_argument("--bits", type=key_bits, default=DEFAULT_KEY_BITS)
    keygen.add_argument("--threshold", type=int, help="t (default ⌊2ℓ/3⌋ + 1; at least the smallest t with 2t > ℓ + 1)")
    keygen.add_argument("--force", action="store_true", help="replace existing key files (atomically)")
    _add_keygen_method_option(keygen, default="dealer")
    keygen.set_defaults(handler=_keygen)


def _add_keygen_method_option(parser, deferred: bool = False, default: str | None = None) -> None:
    from launcher.deployment.keygen import DEFERRED, METHODS

    parser.add_argument("--keygen", choices=METHODS + ((DEFERRED,) if deferred else ()), default=default,
                        help="distributed: the key holders generate the key among themselves and no process ever "
                             "holds it (about a minute of CPU at 2048 bits among 5; docs/distributed-keygen.md); "
                             "dealer: one process deals the shares (seconds; tests). "
                             + ("default: dealer" if default else "default: distributed with 3 or more parties, "
                                "dealer with 2")
                             + ("; deferred: no key yet, the holders' own `serve party --keygen-only --once` "
                                "processes make it (compose)" if deferred else ""))


def _add_up_command(commands) -> None:
    up = commands.add_parser("up", help="start every role as its own process on loopback")
    parties = up.add_argument_group("parties (data owners, their processes and teachers)")
    deployment = up.add_argument_group("deployment (where the roles run and how they start)")
    keys = up.add_argument_group("keys and privacy budget")
    models = up.add_argument_group("the parties' local models")
    ray = up.add_argument_group("Ray (role hosts as actors on a cluster; docs/ray.md)")
    data = up.add_argument_group("data (the set, its columns and scaling)")
    parties.add_argument("--parties", type=int, default=5)
    parties.add_argument("--parties-per-process", type=int, default=1, metavar="P",
                         help="logical parties hosted by one process (default 1: a process per party)")
    parties.add_argument("--teachers-per-party", type=int, default=1, metavar="T",
                         help="each of the --parties data owners splits its rows among T teachers (logical parties in "
                              "its process): DPPP's vote margin grows with the teachers, its noise does not "
                              "(docs/data-and-metrics.md)")
    parties.add_argument("--single-operator", action="store_true",
                         help="one operator runs all parties (a simulation): allow a process to hold t key shares")
    deployment.add_argument("--topology", type=Path, help="attach to the roles this file names instead of starting them")
    deployment.add_argument("--run-dir", type=Path, default=DEFAULT_RUN_DIR)
    keys.add_argument("--bits", type=key_bits, default=DEFAULT_KEY_BITS)
    models.add_argument("--model", "--models", dest="model",
                        help="the parties' local models: logistic-balanced (default), svm-rbf (the DPPP paper's), logistic, "
                             "random-forest, knn, or several "
                             "comma-separated (assigned round-robin)")
    models.add_argument("--teacher", metavar="MODULE:CLASS",
                        help="the parties' local model (DPPP's and Hamm's teachers) is this scikit-learn classifier, "
                             "e.g. sklearn.ensemble:RandomForestClassifier: each party imports it and fits it with its "
                             "defaults on its own rows (docs/data-and-metrics.md)")
    deployment.add_argument("--insecure", action="store_true", help="plaintext channels, no mutual TLS (never for real data)")
    deployment.add_argument("--startup-timeout", type=float, default=120.0, metavar="S",
                            help="seconds to wait for every role to serve (default 120)")
    deployment.add_argument("--metrics-port", type=int, metavar="BASE",
                            help="each role host serves Prometheus metrics on BASE + its offset (needs mpdp[observe]; "
                                 "docs/observe.md)")
    _add_keygen_method_option(keys)
    _add_budget_option(keys)
    ray.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                     help="every role host as an actor on this Ray cluster (none: start a local one); docs/ray.md")
    ray.add_argument("--ray-cpus", type=float, default=0.05, metavar="C", help="CPUs Ray reserves per role host")
    ray.add_argument("--ray-memory", type=int, default=256, metavar="MB", help="memory Ray reserves per role host")
    up.add_argument("--test-mode", action="store_true", help=argparse.SUPPRESS)
    up.add_argument("--fault", action="append", help=argparse.SUPPRESS)  # ID=FAULT, test mode only
    _add_dataset_options(data)
    run_config.add_option(up)
    from launcher.deployment.network import add_options

    add_options(up)
    up.set_defaults(handler=_up)


def _add_prepare_command(commands) -> None:
    prepare = commands.add_parser("prepare", help="key ceremony, certificates, data split and topology for roles "
                                                  "that run elsewhere (compose, other hosts)")
    prepare.add_argument("--parties", type=int, required=True)
    prepare.add_argument("--out", type=Path, required=True)
    prepare.add_argument("--address", action="append", help="ROLE/ID=HOST:PORT, once per role (peers dial it)")
    prepare.add_argument("--listen-host", help="servers bind this host (e.g. 0.0.0.0 in containers) on their port")
    prepare.add_argument("--bits", type=key_bits, default=DEFAULT_KEY_BITS)
    prepare.add_argument("--model", help="teachers' model")
    prepare.add_argument("--teacher", metavar="MODULE:CLASS",
                    help="the parties' local model (DPPP's and Hamm's teachers) is this scikit-learn classifier, "
                         "e.g. sklearn.ensemble:RandomForestClassifier: each party imports it and fits it with its "
                         "defaults on its own rows (docs/data-and-metrics.md)")
    prepare.add_argument("--insecure", action="store_true", help="no certificates: plaintext deployment")
    prepare.add_argument("--force", action="store_true", help="replace existing key files (atomically)")
    prepare.add_argument("--keep-existing", action="store_true",
                         help="if --out already holds a deployment (every bundle's topology), keep it and exit 0: a "
                              "one-shot that runs again (compose) never replaces the keys under running roles")
    prepare.add_argument("--owner", action="append", metavar="BUNDLE=UID",
                         help="give a bundle (aggregator, curator, client, party-J) to this uid (root only; compose)")
    _add_keygen_method_option(prepare, deferred=True)
    _add_dataset_options(prepare)
    prepare.set_defaults(handler=_prepare)


def _add_health_command(commands) -> None:
    health = commands.add_parser("health", help="exit 0 if a role's health service says SERVING (over mTLS)")
    health.add_argument("--topology", type=Path, required=True)
    health.add_argument("--role", required=True, choices=["party", "curator", "aggregator"])
    health.add_argument("--id", type=int, default=0)
    health.add_argument("--timeout", type=float, default=5.0)
    health.set_defaults(handler=_health)


def _add_compose_command(commands) -> None:
    compose = commands.add_parser("compose", help="write the docker-compose file for K parties")
    compose.add_argument("--parties", type=int, default=5)
    compose.add_argument("--out", type=Path, help="default: standard output")
    compose.add_argument("--keygen", choices=("dealer", "distributed"),
                         help="distributed: each key holder's container runs the key generation and writes only "
                              "its own share (default with 3 or more parties); dealer: the one-shot prepare service "
                              "deals the key (default with 2)")
    compose.add_argument("--bits", type=key_bits, help="key size (default: prepare's)")
    compose.set_defaults(handler=_compose)


def _add_open_keygen_command(commands) -> None:
    opened = commands.add_parser("open-keygen", help="open the distributed key generation at a deployment's key "
                                                     "holders and write the public key they agree on (compose)")
    opened.add_argument("--topology", type=Path, required=True, help="the client's topology")
    opened.add_argument("--bits", type=key_bits, default=DEFAULT_KEY_BITS)
    opened.add_argument("--public-out", type=Path, action="append", required=True,
                        help="where public_key.json goes (repeat: one per bundle that needs it)")
    opened.add_argument("--startup-timeout", type=float, default=300.0, metavar="S")
    opened.set_defaults(handler=_open_keygen)


def _add_down_command(commands) -> None:
    down = commands.add_parser("down", help="stop the processes `up` started")
    down.add_argument("--run-dir", type=Path, default=DEFAULT_RUN_DIR)
    down.add_argument("--all", action="store_true",
                      help="stop every mpdp role server of yours on this machine (e.g. after their run directory was "
                           "deleted); other users' stay")
    down.set_defaults(handler=_down)


def _add_predict_command(commands) -> None:
    from launcher.commands import predict

    predict.add_command(commands)


def _add_ps_command(commands) -> None:
    ps = commands.add_parser("ps", help="list your mpdp role servers running on this machine, and a run directory's "
                                        "Ray actors")
    ps.add_argument("--run-dir", type=Path, default=DEFAULT_RUN_DIR)
    ps.set_defaults(handler=_ps)


def _add_run_command(commands) -> None:
    """A session of any registered protocol (building it imports the protocols' packages)."""
    from launcher.registry import PROTOCOLS

    run = commands.add_parser("run", help="run a protocol session against a running topology")
    protocols = run.add_subparsers(dest="protocol", required=True)
    for protocol in PROTOCOLS.values():
        session = protocols.add_parser(protocol.name, help=protocol.help)
        _add_deployment_options(session)
        session.add_argument("--report", type=Path, help="write the JSON report here (`-`: standard output, the "
                                                         "summary then goes to standard error)")
        if protocol.release is not None:
            session.add_argument("--export", type=Path, metavar="MODEL",
                                 help="also write the released model (the first session's) as a scikit-learn "
                                      "Pipeline on raw rows, model.joblib or model.pkl (as `mpdp export`)")
        session.add_argument("--html", type=Path, metavar="FILE",
                             help="also write the session's report as one self-contained HTML page here")
        session.add_argument("--repeat", type=int, default=1, metavar="R",
                             help="run R sessions; the summary gives mean ± std beside the baselines")
        session.add_argument("--anyway", action="store_true",
                             help="run even where the check before spending says it will not learn (the same model "
                                  "non-private cannot rank the test rows, or the noise decides)")
        for option in protocol.options():
            option.add_to(session)
        run_config.add_option(session)
        session.set_defaults(handler=_run)


def _add_demo_command(commands) -> None:
    from launcher.protocol import Option
    from launcher.registry import PROTOCOLS

    demo = commands.add_parser("demo", help="up, run " + " and ".join(p.name for p in PROTOCOLS.values() if p.in_demo)
                               + " (options prefixed by the protocol), print summaries, down")
    demo.add_argument("--parties", type=int, default=5)
    demo.add_argument("--bits", type=key_bits, default=DEFAULT_KEY_BITS)
    _add_dataset_options(demo)
    for protocol in PROTOCOLS.values():
        if protocol.in_demo:
            Option("report", {"type": Path, "help": f"write {protocol.name}'s JSON report here"}).add_to(demo, protocol.name)
            for option in protocol.options():
                option.add_to(demo, protocol.name)
            if protocol.demo_settings is not None:  # the demo's own defaults; each flag still overrides its own
                demo.set_defaults(**{f"{protocol.name}__{dest}": value
                                     for dest, value in protocol.demo_settings.options.items()})
    run_config.add_option(demo)
    demo.set_defaults(handler=_demo)


def _add_experiment_command(commands) -> None:
    from launcher.commands import experiment

    experiment.add_command(commands)


def _add_audit_command(commands) -> None:
    from launcher.commands import audit

    audit.add_command(commands)


def _add_verify_command(commands) -> None:
    from launcher.commands import verify

    verify.add_command(commands)


def _add_export_command(commands) -> None:
    from launcher.commands import export

    export.add_command(commands)


def _add_budget_command(commands) -> None:
    from launcher.commands import budget

    budget.add_command(commands)


def _add_trace_command(commands) -> None:
    from launcher.commands import trace

    trace.add_command(commands)


def _add_report_command(commands) -> None:
    from launcher.commands import html_report

    html_report.add_command(commands)


def _add_bench_command(commands) -> None:
    from launcher.commands import bench

    bench.add_command(commands)


COMMANDS = {
    "run": _add_run_command, "demo": _add_demo_command, "up": _add_up_command, "down": _add_down_command,
    "ps": _add_ps_command, "prepare": _add_prepare_command, "serve": _add_serve_command,
    "health": _add_health_command, "compose": _add_compose_command, "open-keygen": _add_open_keygen_command, "keygen": _add_keygen_command,
    "budget": _add_budget_command, "trace": _add_trace_command, "report": _add_report_command, "audit": _add_audit_command,
    "verify": _add_verify_command, "export": _add_export_command,
    "experiment": _add_experiment_command, "bench": _add_bench_command, "predict": _add_predict_command,
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of `command` alone when it names one, else (`mpdp --help`, a mistyped command) every
    command's. One command's parser is all a call needs: `mpdp health`, run every 10 s by each container's
    health check, neither builds the others nor imports the protocols' packages, which run, demo and
    experiment do."""
    from launcher.common import json_output

    parser = json_output.Parser(prog="mpdp", description="Privacy-preserving multiparty learning over gRPC")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, add_command in COMMANDS.items():
        if command not in COMMANDS or command == name:
            add_command(commands)
    json_output.add_option(parser)
    show_defaults(parser)
    return parser


def _user_error(error: Exception) -> str | None:
    """The one line a user's mistake deserves, or None for a bug (which keeps its traceback)."""
    from launcher.common.errors import CeremonyError, StartupError
    from mpdp.cryptocore.errors import CryptoError
    from mpdp.sessions.errors import ProtocolError

    grpc = sys.modules.get("grpc")
    if grpc is not None and isinstance(error, grpc.RpcError) and hasattr(error, "code"):
        from party.resources import REFUSED

        hint = " (are the roles running? `mpdp ps` lists them, `mpdp up` starts them)" \
            if error.code() == grpc.StatusCode.UNAVAILABLE else ""
        if REFUSED in (error.details() or ""):
            # A party tells the opener nothing more; its operator can see why.
            hint = (" (a party refuses a session over its privacy budget, or a mechanism it does not accept; "
                    "`mpdp budget` shows what each has spent, its log says why)")
        return f"{error.code().name}: {error.details()}{hint}"
    if isinstance(error, (OSError, CryptoError, StartupError, CeremonyError, ProtocolError, ValueError)):
        return str(error)
    return None


def main(argv: list[str] | None = None) -> int:
    from launcher.common import json_output

    argv = sys.argv[1:] if argv is None else argv
    os.umask(0o077)  # every file a role or the launcher writes (logs, ledgers, reports) is its owner's alone
    command = json_output.command_of(argv)
    try:
        args = run_config.parse(build_parser(command), argv)
    except (json_output.Refused, run_config.ConfigError) as refused:
        if isinstance(refused, run_config.ConfigError):  # one line: a usage would hide which setting is wrong
            print(f"mpdp: error: {refused}", file=sys.stderr)
        return json_output.refusal(str(refused)) if json_output.wanted(argv) else 2
    if command in ("run", "demo") and os.environ.get("OTEL_TRACES_EXPORTER"):
        from mpdp.observe.role import observe_client

        try:
            observe_client()  # the client's calls as the root spans of their traces (docs/observe.md)
        except ValueError as error:
            print(f"mpdp: error: {error}", file=sys.stderr)
            return 2
    if args.format == "json":
        return json_output.run(args.handler, args, _user_error)
    try:
        return args.handler(args)
    except KeyboardInterrupt:  # SIGINT, or SIGTERM in a foreground run: what it started is already stopped
        print("mpdp: interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        message = _user_error(error)
        if message is None or os.environ.get("MPDP_DEBUG"):
            raise
        hint = "; pass --force to replace them" if isinstance(error, FileExistsError) and hasattr(args, "force") else ""
        print(f"mpdp: error: {message}{hint}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
