"""`mpdp bench`: the benchmarks of launcher/bench/ and each protocol's own (its registry entry's `Bench`)."""

from __future__ import annotations

from pathlib import Path

from launcher.common.options import DEFAULT_KEY_BITS, key_bits, warn_small_key, write_json


def add_command(commands) -> None:
    """`mpdp bench`: the cryptography, each protocol's own bench, scale, startup, hardening and the rest."""
    from launcher.registry import PROTOCOLS

    bench = commands.add_parser("bench", help="measure costs and print figures")
    targets = bench.add_subparsers(dest="target", required=True)
    crypto = targets.add_parser("crypto", help="the cryptographic core")
    crypto.add_argument("--bits", type=key_bits, default=DEFAULT_KEY_BITS, help="modulus size (default 2048)")
    crypto.add_argument("--repeat", type=int, default=20, help="calls per timed operation")
    crypto.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    crypto.set_defaults(handler=_bench)

    hardening = targets.add_parser("hardening", help="fuzzing, faults, concurrent sessions, resource growth")
    deployment = hardening.add_argument_group("deployment (started for the bench)")
    measured = hardening.add_argument_group("what is measured")
    deployment.add_argument("--bits", type=key_bits, default=DEFAULT_KEY_BITS, help="modulus size (default 2048)")
    deployment.add_argument("--parties", type=int, default=3)
    measured.add_argument("--cases", type=int, default=200, help="fuzz cases per RPC of every role")
    measured.add_argument("--sessions", type=int, default=100, help="sequential sessions for resource growth")
    measured.add_argument("--seed", type=int, default=1)
    measured.add_argument("--faults", choices=["basic", "full"], default="basic",
                          help="basic: SIGKILL/SIGSTOP of each role mid-session; full: also at every step it takes "
                               "part in, and every message it sends dropped or delayed (about 30 minutes)")
    hardening.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    hardening.set_defaults(handler=_bench_hardening)

    dkg = targets.add_parser("dkg", help="the key holders' own key generation against the dealer, in one process")
    dkg.add_argument("--bits", type=key_bits, nargs="+", default=[1024, 2048])
    dkg.add_argument("--holders", type=int, nargs="+", default=[3, 5, 10])
    dkg.add_argument("--sieve-bound", type=int, nargs="+", default=[0],
                     help="largest prime of the sieving modulus (default: the ceremony's own)")
    dkg.add_argument("--batch", type=int, help="candidate pairs per attempt (default: the ceremony's own)")
    dkg.add_argument("--runs", type=int, default=1, help="ceremonies per configuration")
    dkg.add_argument("--one-attempt", action="store_true", help="CPU per candidate pair over one attempt, by bound")
    dkg.set_defaults(handler=lambda args: _bench_module("bench.dkg", [
        "--bits", *map(str, args.bits), "--holders", *map(str, args.holders),
        "--sieve-bound", *map(str, args.sieve_bound), "--runs", str(args.runs),
        *(["--batch", str(args.batch)] if args.batch else []), *(["--one-attempt"] if args.one_attempt else [])]))

    stress = targets.add_parser("up-stress", help="`mpdp up` at its defaults again and again: how many in a row "
                                                  "succeed, quiet or with every core busy")
    stress.add_argument("--runs", type=int, default=50)
    stress.add_argument("--parties", type=int, default=5)
    stress.add_argument("--bits", type=key_bits, default=1024)
    stress.add_argument("--load", action="store_true", help="one busy loop per core meanwhile")
    stress.add_argument("--max-minutes", type=float, default=60.0, help="start no run after this (default 60)")
    stress.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    layout = stress.add_argument_group("passed on to `mpdp up`")
    layout.add_argument("--parties-per-process", type=int)
    layout.add_argument("--single-operator", action="store_true")
    layout.add_argument("--dataset", help="a data set name; MPDP_DATA_DIR as for `up`")
    layout.add_argument("--keygen", choices=("dealer", "distributed"), help="default: `up`'s own default")
    stress.set_defaults(handler=lambda args: _bench_module("bench.up_stress", [
        "--runs", str(args.runs), "--parties", str(args.parties), "--bits", str(args.bits),
        "--max-minutes", str(args.max_minutes), *(["--load"] if args.load else []),
        *(["--json", str(args.json)] if args.json else []), *up_stress_options(args)]))

    from launcher.bench import observe_command

    observe_command.add_parser(targets)

    networks = targets.add_parser("networks", help="every protocol under network profiles: measured wall time "
                                                   "beside `mpdp predict`'s (docs/networks.md)")
    networks.add_argument("--parties", type=int, nargs="+", default=[5])
    networks.add_argument("--profiles", nargs="+", default=["lan", "wan"])
    networks.add_argument("--bits", type=key_bits, default=DEFAULT_KEY_BITS, help="modulus size (default 2048)")
    networks.add_argument("--out", type=Path, default=Path("docs/results/networks"))
    networks.set_defaults(handler=lambda args: _bench_module("bench.networks", [
        "--parties", *map(str, args.parties), "--profiles", *args.profiles, "--bits", str(args.bits),
        "--out", str(args.out)]))

    for protocol in PROTOCOLS.values():
        for measure in (*filter(None, [protocol.bench]), *protocol.more_benches):
            measured = targets.add_parser(measure.target or protocol.name, help=measure.help)
            for option in measure.options():
                option.add_to(measured)
            measured.set_defaults(handler=measure.run)

    startup = targets.add_parser("startup", help="each role's memory at rest and the CPU of one `mpdp health`, "
                                                 "beside the floors of the same run")
    startup.add_argument("--parties", type=int, default=5, help="default 5")
    startup.add_argument("--bits", type=key_bits, default=DEFAULT_KEY_BITS, help="modulus size (default 2048)")
    startup.add_argument("--calls", type=int, default=10, help="health calls, each beside its floors (default 10)")
    _add_bench_dataset_options(startup, "breast-cancer", "the demo's (default) or a9a with --data-dir")
    startup.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    startup.set_defaults(handler=_bench_startup)

    scale = targets.add_parser("scale", help="cost growth with the number of parties, with fitted exponents")
    scaled = {protocol.name: protocol.scale for protocol in PROTOCOLS.values() if protocol.scale is not None}
    sizes = scale.add_argument_group("protocols and their sizes")
    sizes.add_argument("--protocols", default=",".join(scaled), help=f"comma-separated, of {', '.join(scaled)}")
    for name, measured_scale in scaled.items():
        sizes.add_argument(f"--{name}-sizes", help=f"parties, comma-separated (default "
                                                   f"{','.join(map(str, measured_scale.sizes))})")
    scale.add_argument("--bits", type=key_bits, default=DEFAULT_KEY_BITS, help="modulus size (default 2048)")
    scale.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    scale.set_defaults(handler=_bench_scale)


def _bench_hardening(args) -> int:
    from launcher.bench import hardening as bench_hardening

    warn_small_key(args.bits)
    report = bench_hardening.run(args.bits, args.parties, args.cases, args.sessions, args.seed,
                                 full_faults=args.faults == "full")
    print(bench_hardening.summary(report))
    write_json(args.json, report)
    args.json_report = report
    return 0


def _bench_startup(args) -> int:
    from launcher.bench import startup as bench_startup

    warn_small_key(args.bits)
    report = bench_startup.run(args.parties, args.bits, args.calls, args.dataset, args.data_dir)
    print(bench_startup.summary(report))
    write_json(args.json, report)
    args.json_report = report
    return 0


def _bench_scale(args) -> int:
    from launcher.bench import scale as bench_scale
    from launcher.registry import PROTOCOLS

    warn_small_key(args.bits)
    sizes = {}
    for name, protocol in PROTOCOLS.items():
        value = getattr(args, f"{name.replace('-', '_')}_sizes", None) if protocol.scale else None
        if value:
            sizes[name] = [int(k) for k in value.split(",")]
    report = bench_scale.run(args.protocols.split(","), sizes, args.bits)
    print(bench_scale.summary(report))
    write_json(args.json, report)
    args.json_report = report
    return 0


def up_stress_options(args) -> list[str]:
    """`up`'s options that `mpdp bench up-stress` passes on: its module takes them under `up`'s own names."""
    from launcher.bench.up_stress import up_options

    return list(up_options(args))


def _bench_module(name: str, argv: list[str]) -> int:
    import importlib

    return importlib.import_module(f"launcher.{name}").main(argv)


def _bench(args) -> int:
    from launcher.bench import crypto as bench_crypto

    warn_small_key(args.bits)
    report = bench_crypto.run(args.bits, args.repeat)
    print(bench_crypto.summary(report))
    write_json(args.json, report)
    args.json_report = report
    return 0


def _add_bench_dataset_options(parser, default: str, help_text: str) -> None:
    parser.add_argument("--dataset", default=default, help=help_text)
    parser.add_argument("--data-dir", help="directory holding a9a (default: $MPDP_DATA_DIR)")
