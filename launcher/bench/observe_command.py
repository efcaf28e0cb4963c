"""`mpdp bench observe`'s options: kept apart from the benchmark so that building `mpdp bench`'s parser imports
none of what the benchmark needs (launcher/bench/observe.py)."""

from __future__ import annotations


def add_parser(targets) -> None:
    """`mpdp bench observe` under `mpdp bench`."""
    from pathlib import Path

    from launcher.common.options import key_bits
    from mpdp.cryptocore.keys.key_sizes import DEFAULT_KEY_BITS

    bench = targets.add_parser("observe", help="a session's wall time with the [observe] extra on vs off (same "
                                               "run), and its counts against the report")
    from launcher.registry import PROTOCOLS

    names = list(PROTOCOLS)
    bench.add_argument("--protocol", choices=names, default=names[0], help=f"one of {', '.join(names)} (default {names[0]})")
    bench.add_argument("--parties", type=int, default=5)
    bench.add_argument("--bits", type=key_bits, default=DEFAULT_KEY_BITS, help="modulus size (default 2048)")
    bench.add_argument("--sessions", type=int, default=10, help="measured sessions each way (default 10)")
    bench.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    bench.set_defaults(handler=_handle)


def _handle(args) -> int:
    from launcher.common.options import warn_small_key, write_json
    from mpdp.observe import ExtraMissing, metrics_available, tracing_available

    if not (tracing_available() and metrics_available()):
        raise ExtraMissing("mpdp bench observe")
    warn_small_key(args.bits)
    from launcher.bench import observe  # numpy, scikit-learn, the protocols: only when it runs

    report = observe.run(args.protocol, args.parties, args.bits, args.sessions)
    print(observe.summary(report))
    write_json(args.json, report)
    args.json_report = report
    return 0 if report["all_match"] else 1
