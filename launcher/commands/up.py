"""`mpdp up`: every role as its own process on this host (or as Ray actors), or attach to running roles."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from launcher.common import run_config
from launcher.common.dataset_options import add_dataset_options, load_dataset, teacher_as_model
from launcher.common.deployment_options import (
    add_budget_option,
    add_keygen_method_option,
    faults,
    keygen_method,
)
from launcher.common.options import DEFAULT_RUN_DIR, key_bits, warn_small_key
from mpdp.cryptocore.keys.key_sizes import DEFAULT_KEY_BITS


def command(args) -> int:
    from launcher.deployment import processes
    from mpdp.deployments.topology import Topology

    teacher_as_model(args)
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
                                load_dataset(args), args.seed, args.model, args.test_mode, faults(args.fault),
                                split=args.split, insecure=args.insecure, startup_timeout=args.startup_timeout,
                                aux_fraction=args.aux_fraction, budget=args.budget, allow_unproven=args.allow_unproven,
                                keygen=keygen_method(args), host_cpus=args.ray_cpus, host_memory_mb=args.ray_memory,
                                single_operator=args.single_operator)
        for entry in topology.host_entries:
            print(f"  {str(entry.principal):<14} {entry.address}")
        print(f"up: {len(topology.host_entries)} Ray actors for {len(topology.roles)} roles; "
              f"topology {processes.RunDirectory(args.run_dir).topology}")
        return 0
    from launcher.deployment import network

    keygen = _local_keygen(args)
    topology = network.up(args.run_dir, network.profile_of(args), args.parties, args.bits, load_dataset(args),
                          args.seed, args.model, args.test_mode, faults(args.fault), split=args.split,
                          insecure=args.insecure, startup_timeout=args.startup_timeout,
                          parties_per_process=args.parties_per_process, aux_fraction=args.aux_fraction,
                          budget=args.budget, allow_unproven=args.allow_unproven, keygen=keygen,
                          single_operator=args.single_operator)
    for entry in topology.host_entries:
        print(f"  {str(entry.principal):<14} {entry.address}")
    for line in metrics_targets.announce(topology, processes.RunDirectory(args.run_dir).path, args.metrics_port):
        print(line)
    print(f"up: {len(topology.host_entries)} processes for {len(topology.roles)} roles; "
          f"topology {processes.RunDirectory(args.run_dir).topology}")
    return 0


def _local_keygen(args) -> str:
    """The key's method on this machine: without --keygen, the dealer where one process of a single operator's
    simulation would hold a decrypting quorum of the shares (the ceremony would protect nothing there; said).
    Ray keeps the holders' ceremony: there the launcher's host need not be the parties' (docs/ray.md)."""
    from launcher.deployment.keygen import committee_size, quorum_in_one_host
    from launcher.deployment.processes import party_hosts
    from mpdp.sessions.identity import party
    from mpdp.threshold_sum import quorums

    layout = party_hosts(args.parties, args.parties_per_process)
    holders = [layout[party(number)] for number in range(1, committee_size(args.parties) + 1)]
    alone = args.single_operator and quorum_in_one_host(holders)
    if args.keygen is None and alone:
        print(f"keys: dealt by this launcher, not the holders' ceremony: one process holds "
              f"{quorums.most_shares(holders)} of the {len(holders)} key shares and decrypts alone "
              "however the key is made (--keygen distributed runs the ceremony anyway)")
    return keygen_method(args, alone)


def add_command(commands) -> None:
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
                              "its process): a vote's margin grows with the teachers, its noise does not "
                              "(docs/data-and-metrics.md)")
    parties.add_argument("--single-operator", action="store_true",
                         help="one operator runs all parties (a simulation): allow a process to hold t key shares")
    deployment.add_argument("--topology", type=Path, help="attach to the roles this file names instead of starting them")
    deployment.add_argument("--run-dir", type=Path, default=DEFAULT_RUN_DIR)
    keys.add_argument("--bits", type=key_bits, default=DEFAULT_KEY_BITS)
    models.add_argument("--model", "--models", dest="model",
                        help="the parties' local models: logistic-balanced (default), svm-rbf (a voting paper's), logistic, "
                             "random-forest, knn, or several "
                             "comma-separated (assigned round-robin)")
    models.add_argument("--teacher", metavar="MODULE:CLASS",
                        help="the parties' local model (the voting protocols' teachers) is this scikit-learn classifier, "
                             "e.g. sklearn.ensemble:RandomForestClassifier: each party imports it and fits it with its "
                             "defaults on its own rows (docs/data-and-metrics.md)")
    deployment.add_argument("--insecure", action="store_true", help="plaintext channels, no mutual TLS (never for real data)")
    deployment.add_argument("--startup-timeout", type=float, default=120.0, metavar="S",
                            help="seconds to wait for every role to serve (default 120)")
    deployment.add_argument("--metrics-port", type=int, metavar="BASE",
                            help="each role host serves Prometheus metrics on BASE + its offset (needs mpdp[observe]; "
                                 "docs/observe.md)")
    add_keygen_method_option(keys)
    add_budget_option(keys)
    ray.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                     help="every role host as an actor on this Ray cluster (none: start a local one); docs/ray.md")
    ray.add_argument("--ray-cpus", type=float, default=0.05, metavar="C", help="CPUs Ray reserves per role host")
    ray.add_argument("--ray-memory", type=int, default=256, metavar="MB", help="memory Ray reserves per role host")
    up.add_argument("--test-mode", action="store_true", help=argparse.SUPPRESS)
    up.add_argument("--fault", action="append", help=argparse.SUPPRESS)  # ID=FAULT, test mode only
    add_dataset_options(data)
    run_config.add_option(up)
    from launcher.deployment.network import add_options

    add_options(up)
    up.set_defaults(handler=command)
