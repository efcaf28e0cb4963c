"""`mpdp bench up-stress`: `mpdp up` at its defaults, again and again, as a newcomer types it: how many in a row
succeed, on a quiet machine or while other processes keep every core busy (`--load`).

Each run is the real command in its own process (`mpdp up --parties P --bits B --run-dir D`, the key holders'
own ceremony included where it is the default, with any of `up`'s layout, data and key options given here:
`--parties-per-process`, `--single-operator`, `--dataset`, `--keygen`), then `mpdp down`; a run counts as a success when `up` exits 0 and every role serves.
Bounded in time: runs stop at `--max-minutes`. The load is one busy loop per core, niced as this command is,
dying with it. Prints one line per run (seconds, or the failure's last line, and the 1-minute load average as the
run ended: other processes' load counts as much as `--load`'s), the count and the successful runs' median; with `--json`, the figures, loads,
date, machine and the command.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from mpdp.platform.lifetime import die_with_parent

ROOT = Path(__file__).resolve().parent.parent.parent
BUSY_LOOP = "while True: pass"


def _mpdp(*arguments: str, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "launcher.cli", *arguments], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def _load(cores: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", BUSY_LOOP], preexec_fn=lambda: die_with_parent(signal.SIGKILL))
            for _ in range(cores)]


def one_run(parties: int, bits: int, timeout: float, options: tuple[str, ...] = ()) -> dict:
    run_dir = Path(tempfile.mkdtemp(prefix="mpdp-up-stress-"))
    started = time.perf_counter()
    try:
        try:
            up = _mpdp("up", "--parties", str(parties), "--bits", str(bits), "--run-dir", str(run_dir), *options,
                       timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"ok": False, "seconds": round(time.perf_counter() - started, 1),
                    "error": f"up still running after {timeout:.0f} s"}
        seconds = round(time.perf_counter() - started, 1)
        lines = [line for line in up.stderr.splitlines() if line.strip()]
        if up.returncode != 0:
            return {"ok": False, "seconds": seconds, "error": lines[-1] if lines else f"exit {up.returncode}",
                    "traceback": "Traceback" in up.stderr}
        return {"ok": True, "seconds": seconds}
    finally:
        _mpdp("down", "--run-dir", str(run_dir), timeout=120)
        shutil.rmtree(run_dir, ignore_errors=True)


def up_options(args) -> tuple[str, ...]:
    """The options of `up` this bench passes on, as `up` takes them."""
    return ((("--parties-per-process", str(args.parties_per_process)) if args.parties_per_process else ())
            + (("--single-operator",) if args.single_operator else ())
            + (("--dataset", args.dataset) if args.dataset else ())
            + (("--keygen", args.keygen) if args.keygen else ()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mpdp bench up-stress", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--parties", type=int, default=5)
    parser.add_argument("--bits", type=int, default=1024)
    parser.add_argument("--load", action="store_true", help="keep every core busy meanwhile")
    parser.add_argument("--max-minutes", type=float, default=60.0, help="stop starting runs after this")
    parser.add_argument("--run-timeout", type=float, default=600.0, help="one `up` at most (seconds)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--parties-per-process", type=int)
    parser.add_argument("--single-operator", action="store_true")
    parser.add_argument("--dataset")
    parser.add_argument("--keygen", choices=("dealer", "distributed"))
    args = parser.parse_args(argv)
    options = up_options(args)
    load = _load(os.cpu_count() or 1) if args.load else []
    results = []
    limit = time.monotonic() + args.max_minutes * 60
    try:
        for number in range(1, args.runs + 1):
            if time.monotonic() > limit:
                print(f"stopped after {args.max_minutes:g} minutes", flush=True)
                break
            result = one_run(args.parties, args.bits, args.run_timeout, options)
            result["load"] = round(os.getloadavg()[0], 2)
            results.append(result)
            detail = f"{result['seconds']} s" if result["ok"] else f"FAILED after {result['seconds']} s: {result['error']}"
            print(f"run {number}: {detail} (load average {result['load']:g})", flush=True)
    finally:
        for process in load:
            process.kill()
            process.wait()
    succeeded = sum(result["ok"] for result in results)
    streak = next((index for index, result in enumerate(results) if not result["ok"]), len(results))
    loads = sorted(result["load"] for result in results) or [0.0]
    seconds = sorted(result["seconds"] for result in results if result["ok"])
    median = f"; median {statistics.median(seconds):g} s ({seconds[0]:g}–{seconds[-1]:g})" if seconds else ""
    print(f"up --parties {args.parties} --bits {args.bits}{''.join(' ' + o for o in options)}"
          f"{' under load' if args.load else ''}: {succeeded}/{len(results)} succeeded, the first {streak} in a row"
          f"{median}; load average {loads[0]:g}–{loads[-1]:g} (median {loads[len(loads) // 2]:g})")
    if args.json:
        args.json.write_text(json.dumps({
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": platform.node(),
            "cpus": os.cpu_count(), "command": "mpdp bench up-stress " + " ".join(argv or sys.argv[1:]),
            "load": args.load, "runs": results, "succeeded": succeeded,
            "median_seconds": statistics.median(seconds) if seconds else None}, indent=2))
    return 0 if succeeded == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
