"""Bytes and round trips per round of mpdp's workflow and of Flower's SecAgg+, measured in one run on the same
federation (the demo's, over the in-process twin: the counts are of serialised message contents, so they do not
depend on the transport), at each client count asked for.

    python -m mpdp.flower.bench --clients 10 100 --out docs/results/flower-bench.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

from flwr.app import Context, RecordDict

from mpdp.flower import demo, runner
from mpdp.flower.client import MpdpMod
from mpdp.flower.measure import CountedWorkflow
from mpdp.flower.twin import RUN_ID, InProcessGrid
from mpdp.flower.workflow import MpdpWorkflow
from mpdp.threshold_sum.quorums import default_threshold


def _context() -> Context:
    return Context(run_id=RUN_ID, node_id=0, node_config={}, state=RecordDict(), run_config={})


def measure(clients: int, rounds: int, committee: int, bits: int) -> dict:
    from flwr.client.mod import secaggplus_mod
    from flwr.server.workflow import SecAggPlusWorkflow

    threshold = default_threshold(committee)
    figures: dict = {"clients": clients, "rounds": rounds, "parameters": demo.FEATURES + 1}
    # Every client a neighbour of every other up to 10 clients (SecAgg); beyond, 21 neighbours (SecAgg+'s
    # logarithmic graphs), half of them needed to unmask.
    shares = clients if clients <= 10 else 21
    secagg = CountedWorkflow(SecAggPlusWorkflow(num_shares=shares, reconstruction_threshold=shares // 2 + 1))
    started = time.perf_counter()
    demo.run(InProcessGrid(demo.client_app([secaggplus_mod]), clients), _context(), rounds, clients, secagg)
    figures["secaggplus"] = {"per_round": secagg.grid.report() if secagg.grid else [],
                             "seconds": round(time.perf_counter() - started, 2),
                             "settings": f"SecAggPlusWorkflow(num_shares={shares}, reconstruction_threshold={shares // 2 + 1})"}
    with tempfile.TemporaryDirectory() as directory:
        root = runner.bundles_for(Path(directory), clients, committee, threshold, bits, dealt=True)
        workflow = CountedWorkflow(MpdpWorkflow(committee, threshold))
        started = time.perf_counter()
        demo.run(InProcessGrid(demo.client_app([MpdpMod(root, committee)]), clients), _context(), rounds, clients,
                 workflow)
        figures["mpdp"] = {"per_round": workflow.grid.report() if workflow.grid else [],
                           "seconds": round(time.perf_counter() - started, 2),
                           "settings": f"MpdpWorkflow(committee={committee}, threshold={threshold}), {bits}-bit key "
                                       "(provisioned; round 0 is the once-per-run setup)"}
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--committee", type=int, default=5)
    parser.add_argument("--bits", type=int, default=2048)
    parser.add_argument("--features", type=int, default=demo.FEATURES)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    runner.quiet()
    demo.FEATURES = args.features
    results: dict = {"command": "python -m mpdp.flower.bench " + " ".join(sys.argv[1:] if argv is None else argv),
               "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
               "machine": f"{platform.machine()}, {__import__('os').cpu_count()} cores, Python {platform.python_version()}",
               "runs": [measure(n, args.rounds, args.committee, args.bits) for n in args.clients]}
    print(f"{'clients':>7} {'workflow':>10} {'round':>5} {'round trips':>11} {'bytes to clients':>16} {'bytes from clients':>18}")
    for run in results["runs"]:
        for name in ("secaggplus", "mpdp"):
            for cost in run[name]["per_round"]:
                print(f"{run['clients']:>7} {name:>10} {cost['round']:>5} {cost['round_trips']:>11} "
                      f"{cost['bytes_to_clients']:>16} {cost['bytes_from_clients']:>18}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
