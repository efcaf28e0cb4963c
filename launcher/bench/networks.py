"""`mpdp bench networks`: every registered protocol under named network profiles, measured and predicted.

One deployment per K, its links through the relays (mpdp.wire.relay), switched between profiles
(`network.reshape`), so every protocol's sessions under every profile run side by side on the same processes.
Each protocol runs the session its fault matrix runs (the registry's `faults.session`: a full report with the
transcript). The relays adding nothing stand for loopback; `mpdp predict` from that session gives each
profile's wall time, set beside the measured one. Writes JSON and a Markdown table (with the command, date,
machine and load) to --out.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from launcher.bench.deployment import CpuMeter, wait_until_idle
from launcher.commands.predict import measured_wall, predict
from launcher.common.client import load_client_data
from launcher.common.progress import progress
from launcher.deployment import network
from launcher.registry import PROTOCOLS
from mpdp.learning import datasets
from mpdp.privacy.ledger import UNLIMITED
from mpdp.wire import links
from mpdp.wire.profiles import PROFILES, NetworkProfile

UNDELAYED = NetworkProfile("relays, no delay")
IDLE_LIMIT_S = 30.0


def _session(run_dir: Path, topology, client_data: dict, protocol, profile: NetworkProfile, label: str) -> dict:
    network.reshape(run_dir, profile)
    with network.active(run_dir):
        report = asyncio.run(protocol.faults.session(topology, client_data, 300.0,
                                                     f"bench-networks-{protocol.name}-{label}"))
        report["network"] = links.describe()
    return report


def _meter(run_dir: Path) -> CpuMeter:
    pids = json.loads((run_dir / "processes.json").read_text())
    pids["network/relay"] = int((run_dir / network.RELAY_PID_FILE).read_text())
    return CpuMeter(pids)


def measure_protocol(run_dir: Path, topology, client_data: dict, protocol, profiles: list[NetworkProfile],
                     repeats: int = 1, settled: Callable[[dict[str, dict]], bool] | None = None,
                     most: int | None = None) -> dict[str, dict]:
    """The protocol's session under no delay and under each profile, `repeats` turns of one session each in turn,
    each once the roles are idle (a session's background work, e.g. refilling a pool, is not the next one's), after
    one first session that pays once for what later ones reuse (models, calibrations, the roles' channels).
    Returns each profile's fastest session's report (its "walls_s": every session's wall time): the least disturbed
    by the machine's other load. With `settled`, further turns (up to `most` in all) while it answers False on the
    fastest so far: each profile's fastest session only comes closer to its undisturbed time with more turns, so
    they can settle a comparison a burst of other load upset, never one the sessions' own times decide."""
    meter = _meter(run_dir)
    wait_until_idle(meter, limit_s=IDLE_LIMIT_S)
    _session(run_dir, topology, client_data, protocol, UNDELAYED, "first")
    best: dict[str, dict] = {}
    turn = 0
    while turn < repeats or (settled is not None and turn < (most or repeats) and not settled(best)):
        for profile in (UNDELAYED, *profiles):
            wait_until_idle(meter, limit_s=IDLE_LIMIT_S)
            report = _session(run_dir, topology, client_data, protocol, profile, f"{profile.name}-{turn}")
            kept = best.get(profile.name)
            walls = [*(kept or {}).get("walls_s", []), measured_wall(report)]
            if kept is None or (measured_wall(report) or 0.0) < (measured_wall(kept) or 0.0):
                best[profile.name] = report
            best[profile.name]["walls_s"] = walls
        turn += 1
    return best


def measure(sizes: list[int], profiles: list[str], bits: int, repeats: int, protocols: list[str] | None = None,
            reports: Path | None = None) -> dict:
    rows: list[dict] = []
    load = [os.getloadavg()[0]]
    for parties in sizes:
        run_dir = Path(tempfile.mkdtemp(prefix=f"mpdp-networks-k{parties}-"))
        progress(f"K = {parties}: up, links through relays")
        topology = network.up(run_dir, PROFILES[profiles[-1]], parties, bits, datasets.load("breast-cancer"), seed=7,
                              test_mode=True, budget=UNLIMITED, foreground=True)
        try:
            client_data = load_client_data(run_dir / "client" / "client.npz")
            for protocol in PROTOCOLS.values():
                if protocol.faults is None or (protocols and protocol.name not in protocols):
                    continue
                best = measure_protocol(run_dir, topology, client_data, protocol, [PROFILES[n] for n in profiles],
                                        repeats)
                load.append(os.getloadavg()[0])
                base = best[UNDELAYED.name]
                for name in profiles:
                    predicted = predict(base, PROFILES[name])
                    rows.append({"protocol": protocol.name, "parties": parties, "profile": name,
                                 "undelayed_s": round(measured_wall(base) or 0.0, 3),
                                 "measured_s": round(measured_wall(best[name]) or 0.0, 3),
                                 "predicted_s": round(predicted.predicted_wall_s, 3),
                                 "sequential_one_way_trips": predicted.sequential_trips,
                                 "undelayed_walls_s": base["walls_s"], "measured_walls_s": best[name]["walls_s"]})
                    if reports is not None:
                        reports.mkdir(parents=True, exist_ok=True)
                        for label, report in ((UNDELAYED.name, base), (name, best[name])):
                            path = reports / f"{protocol.name}-k{parties}-{label.replace(' ', '').replace(',', '-')}.json"
                            path.write_text(json.dumps(report, default=str))
                    progress(f"{protocol.name} K={parties} {name}: measured {rows[-1]['measured_s']} s, "
                             f"predicted {rows[-1]['predicted_s']} s")
        finally:
            network.down(run_dir)
            shutil.rmtree(run_dir, ignore_errors=True)
    return {"rows": rows, "bits": bits, "repeats": repeats,
            "profiles": {name: PROFILES[name].describe() for name in profiles},
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Linux {platform.release()}",
            "load_average": {"min": round(min(load), 1), "max": round(max(load), 1)},
            "emulator": "relay (user-space; tc netem: " + network.netem_status()[1] + ")"}


def table(report: dict, command: str) -> str:
    lines = [f"Measured {report['date']} on {report['machine']}, shared with other jobs (1-minute load average "
             f"{report['load_average']['min']}–{report['load_average']['max']} during the run), "
             f"{report['bits']}-bit keys, breast-cancer, the fastest of {report['repeats']} sessions per cell, by "
             f"`{command}`. Links: {report['emulator']}.", ""]
    lines += [f"- {text}" for text in report["profiles"].values()] + [""]
    lines += ["| protocol | K | profile | relays, no delay (s) | measured (s) | predicted (s) | error | "
              "sequential one-way trips |", "|---|---|---|---|---|---|---|---|"]
    for row in report["rows"]:
        error = (row["predicted_s"] - row["measured_s"]) / row["measured_s"] if row["measured_s"] else 0.0
        lines.append(f"| {row['protocol']} | {row['parties']} | {row['profile']} | {row['undelayed_s']:.2f} | "
                     f"{row['measured_s']:.2f} | {row['predicted_s']:.2f} | {100 * error:+.0f} % | "
                     f"{row['sequential_one_way_trips']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mpdp bench networks")
    parser.add_argument("--parties", type=int, nargs="+", default=[5])
    parser.add_argument("--profiles", nargs="+", default=["lan", "wan"], choices=[p for p in PROFILES if p != "loopback"])
    parser.add_argument("--bits", type=int, default=2048)
    parser.add_argument("--repeats", type=int, default=2, help="sessions per profile; the fastest is kept")
    parser.add_argument("--protocols", nargs="+", choices=list(PROTOCOLS), help="default: every registered one")
    parser.add_argument("--reports", type=Path, help="also keep each cell's session reports here")
    parser.add_argument("--out", type=Path, default=Path("docs/results/networks"))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    report = measure(args.parties, args.profiles, args.bits, args.repeats, args.protocols, args.reports)
    command = "mpdp bench networks " + " ".join(argv if argv is not None else sys.argv[1:])
    report["command"] = command
    (args.out / "networks.json").write_text(json.dumps(report, indent=1) + "\n")
    (args.out / "table.md").write_text(table(report, command))
    print(table(report, command))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
