"""`mpdp demo`: one deployment for the protocols that learn with a handful of parties, and one of many logical
parties on this host for a protocol that needs them (Hamm: its noise falls as 1/M), each session beside its
baselines; every process stopped at the end."""

from __future__ import annotations

import contextlib
import tempfile
import time
from pathlib import Path


def _value(option, value) -> str:
    if option.keywords.get("action") == "store_true":
        return "on" if value else "off"
    return f"{value:g}" if isinstance(value, float) else str(value)


def settings_lines(args, protocols) -> list[str]:
    """Where the demo's session options differ from `mpdp run`'s defaults: the values in force and why."""
    from launcher.protocol import protocol_arguments

    lines = []
    for protocol in protocols:
        if protocol.demo_settings is None:
            continue
        options = {option.destination: option for option in protocol.options()}
        seen = protocol_arguments(args, protocol)
        changed = [(options[dest], value) for dest, value in protocol.demo_settings.options.items()
                   if getattr(seen, dest) == value != options[dest].keywords.get("default")]  # not the user's own
        if changed:
            stated = ", ".join(f"--{protocol.name}-{option.name} {_value(option, value)} (`mpdp run {protocol.name}`: "
                               f"{_value(option, option.keywords.get('default'))})" for option, value in changed)
            lines.append(f"  {protocol.name}: {stated}: {protocol.demo_settings.why}")
    return ["the demo's settings where `mpdp run`'s defaults would not learn on this data:", *lines] if lines else []


def protocols_for(dataset) -> tuple[list, list[str]]:
    """The demo's protocols that can run on `dataset`, in registry order, and a line for each that cannot."""
    from launcher.registry import PROTOCOLS

    chosen, skipped = [], []
    for protocol in (p for p in PROTOCOLS.values() if p.in_demo):
        if protocol.binary_only and dataset.classes != 2:
            skipped.append(f"{protocol.name}: not run: it takes two classes and {dataset.name} has {dataset.classes}")
        else:
            chosen.append(protocol)
    return chosen, skipped


def _session(run_dir: Path, args, protocol, run_session, options: dict | None = None) -> None:
    from launcher.protocol import protocol_arguments

    session_args = protocol_arguments(args, protocol)
    session_args.run_dir, session_args.topology, session_args.client_data = run_dir, None, None
    session_args.parties = None  # the deployment in run_dir is the one to use, whatever its size
    # Throw-away deployments with unlimited budgets: the check before spending warns and the demo shows the result
    session_args.anyway = True
    for name, value in (options or {}).items():
        setattr(session_args, name, value)
    run_session(protocol, session_args)


def _holds_a_quorum(parties: int, per_process: int) -> bool:
    """Whether no threshold keeps one decryptable sum per slot against the shares one process would hold
    (2t > ℓ + c for no t ≤ ℓ): only then is the deployment one operator's simulation (`--single-operator`);
    otherwise each process is a data owner and the noise is calibrated against one."""
    from launcher.deployment.keygen import committee_size
    from launcher.deployment.processes import party_hosts
    from mpdp.sessions.identity import party
    from mpdp.threshold_sum import quorums

    committee = committee_size(parties)
    hosts = party_hosts(parties, per_process)
    colluding = quorums.most_shares([hosts[party(number)] for number in range(1, committee + 1)])
    return quorums.smallest_threshold(committee, colluding) > committee


def run(args, dataset, run_session, stop_on_signals) -> int:
    from launcher.common.noise_check import demo_lines
    from launcher.deployment import processes
    from mpdp.privacy.ledger import UNLIMITED

    started = time.perf_counter()
    chosen, skipped = protocols_for(dataset)
    for stated in skipped:
        print(stated)
    shared = [p for p in chosen if p.demo_deployment is None]
    own = [p for p in chosen if p.demo_deployment is not None]
    for stated in settings_lines(args, chosen):
        print(stated, flush=True)
    # Throw-away deployments on a public data set that run every protocol: no budget to keep; the roles die
    # with this process.
    with tempfile.TemporaryDirectory(prefix="mpdp-demo-") as root, stop_on_signals():
        run_dir = Path(root) / "shared"
        print(f"starting {args.parties} parties, the curator and the aggregator as separate processes "
              f"({args.bits}-bit keys) …", flush=True)
        topology = processes.up(run_dir, args.parties, args.bits, dataset, args.seed, split=args.split,
                                aux_fraction=args.aux_fraction, budget=UNLIMITED, foreground=True)
        try:
            print("\n".join(demo_lines(args, topology, processes.RunDirectory(run_dir).client_data, shared)),
                  flush=True)
            for protocol in shared:
                print()
                _session(run_dir, args, protocol, run_session)
        finally:
            processes.down(run_dir)
        for protocol in own:
            plan = protocol.demo_deployment
            own_dir = Path(root) / protocol.name
            print(f"\nstarting {plan.parties} logical parties of {protocol.name} in "
                  f"{-(-plan.parties // plan.parties_per_process)} processes ({plan.why}) …", flush=True)
            own_topology = processes.up(own_dir, plan.parties, args.bits, dataset, args.seed, model=plan.model,
                                        parties_per_process=plan.parties_per_process, split=args.split,
                                        aux_fraction=args.aux_fraction, budget=UNLIMITED, foreground=True,
                                        single_operator=_holds_a_quorum(plan.parties, plan.parties_per_process))
            try:
                print("\n".join(demo_lines(args, own_topology, processes.RunDirectory(own_dir).client_data,
                                            [protocol])), flush=True)
                _session(own_dir, args, protocol, run_session, plan.options)
            finally:
                processes.down(own_dir)
    print(f"demo finished in {time.perf_counter() - started:.1f} s; every process stopped")
    return 0


@contextlib.contextmanager
def stop_on_signals():
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


def command(args) -> int:
    from launcher.commands.run import run_session as run_one
    from launcher.common.data_report import check_parties
    from launcher.common.dataset_options import load_dataset
    from launcher.common.options import warn_small_key

    check_parties(args.parties)
    warn_small_key(args.bits)
    reports: dict[str, dict] = {}

    def run_session(protocol, session_args) -> dict:
        reports[protocol.name] = run_one(protocol, session_args)
        return reports[protocol.name]

    code = run(args, load_dataset(args), run_session, stop_on_signals)
    args.json_report = {"reports": reports}  # `--format json`: every session's report
    return code


def add_command(commands) -> None:
    from launcher.common import run_config
    from launcher.common.dataset_options import add_dataset_options
    from launcher.common.options import key_bits
    from launcher.protocol import Option
    from launcher.registry import PROTOCOLS
    from mpdp.cryptocore.keys.key_sizes import DEFAULT_KEY_BITS

    demo = commands.add_parser("demo", help="up, run " + " and ".join(p.name for p in PROTOCOLS.values() if p.in_demo)
                               + " (options prefixed by the protocol), print summaries, down")
    deployment = demo.add_argument_group("deployment (started for the demo, stopped at its end)")
    deployment.add_argument("--parties", type=int, default=5)
    deployment.add_argument("--bits", type=key_bits, default=DEFAULT_KEY_BITS)
    add_dataset_options(demo.add_argument_group("data (the set, its columns and scaling)"))
    for protocol in PROTOCOLS.values():
        if protocol.in_demo:
            own = demo.add_argument_group(f"{protocol.name} (`mpdp run {protocol.name}`'s options, prefixed "
                                          f"--{protocol.name}-)")
            Option("report", {"type": Path, "help": f"write {protocol.name}'s JSON report here"}).add_to(own, protocol.name)
            for option in protocol.options():
                option.add_to(own, protocol.name)
            if protocol.demo_settings is not None:  # the demo's own defaults; each flag still overrides its own
                demo.set_defaults(**{f"{protocol.name}__{dest}": value
                                     for dest, value in protocol.demo_settings.options.items()})
    run_config.add_option(demo)
    demo.set_defaults(handler=command)
