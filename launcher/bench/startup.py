"""`mpdp bench startup`: what a role holds at rest and what one health check costs.

One deployment of real processes on the demo's data. Reported: every role's resident memory once the roles
are idle after `up`, and again after one session of each demo protocol; the CPU of one `mpdp health` call,
run as its console script runs it, beside two floors measured in the same run and interleaved with it: the
interpreter's start (`python -c pass`) and the imports no gRPC health check in Python can do without (grpc
and the health service's messages); and the wall time of health checks made while the roles work, against
the timeout the compose health check allows."""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from launcher.bench.deployment import CpuMeter, deployment, descendants, resident_mb, wait_until_idle
from launcher.common.progress import progress
from mpdp.learning import datasets
from mpdp.privacy.accountant_process import IDLE_S

MEMORY_TARGET_MB = 120  # a role process at rest
HEALTH_CPU_TARGET_S = 0.3  # one `mpdp health` call
COMPOSE_CHECK_TIMEOUT_S = 20  # docker-compose.yml runs `mpdp health --timeout 20`

INTERPRETER = "pass"
HEALTH_IMPORTS = "import grpc\nfrom grpc_health.v1 import health_pb2, health_pb2_grpc"
ENTRY_POINT = "import sys\nfrom launcher.cli import main\nsys.exit(main())"  # what pip's console script runs
# Run with -B, so that looking writes nothing: which modules `mpdp health` adds to the floor's imports (the
# standard library's aside), and how many of them have current cached bytecode (else each call compiles them).
BYTECODE_PROBE = """
import importlib.util, os, sys, sysconfig
if len(sys.argv) > 1:  # import from where the console script does: its directory first, not the working one
    sys.path[0] = sys.argv[1]
import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
floor = set(sys.modules)
from launcher import cli
from launcher.deployment import health
cli.build_parser("health")
paths = sysconfig.get_paths()
installed = (paths["purelib"], paths["platlib"])  # may lie under stdlib; where a non-editable install puts us

def stdlib(source):
    return source.startswith(paths["stdlib"]) and not source.startswith(installed)

def current(source):
    try:
        with open(importlib.util.cache_from_source(source), "rb") as cached:
            header = cached.read(16)
    except OSError:
        return False
    if header[:4] != importlib.util.MAGIC_NUMBER:
        return False
    if int.from_bytes(header[4:8], "little"):  # hash-based: the loader checks or trusts it
        return True
    stat = os.stat(source)
    return header[8:16] == ((int(stat.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
                            + (stat.st_size & 0xFFFFFFFF).to_bytes(4, "little"))

added = [module.__file__ for name, module in list(sys.modules.items()) if name not in floor
         and str(getattr(module, "__file__", "")).endswith(".py") and not stdlib(module.__file__)]
print(len(added), sum(map(current, added)))
"""


def console_script() -> Path | None:
    script = Path(sys.executable).parent / "mpdp"
    return script if script.is_file() else None


def health_command(topology: Path, role: str, role_id: int, timeout: float) -> list[str]:
    """The installed `mpdp` script run by this interpreter directly (a version manager's shim in front of it
    costs a shell's start, which is not the command's)."""
    script = console_script()
    entry = [sys.executable, str(script)] if script is not None else [sys.executable, "-c", ENTRY_POINT]
    return [*entry, "health", "--topology", str(topology), "--role", role, "--id", str(role_id),
            "--timeout", str(timeout)]


def run_measured(command: list[str]) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, exit code) of one child process, its CPU from the kernel's accounting."""
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here; Popen must not wait for it again
    return usage.ru_utime + usage.ru_stime, time.perf_counter() - started, child.returncode


def memory_at_rest(pids: dict[str, int]) -> dict[str, dict]:
    """Each role's resident memory, and that of children it keeps alive (the privacy accountant's)."""
    figures = {}
    for name, pid in pids.items():
        children = descendants(pid)
        figures[name] = {"rss_mb": resident_mb(pid), "children": len(children),
                         "children_rss_mb": sum(resident_mb(child) for child in children)}
    return figures


def _is_spawned_worker(pid: int) -> bool:
    try:
        return b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def wait_for_workers_to_exit(pids: dict[str, int], limit_s: float) -> float:
    """Seconds until no role keeps a spawned worker: the accountant's exits `IDLE_S` after its last call
    (multiprocessing's resource tracker, a small process, stays with its role)."""
    started = time.perf_counter()
    while (any(_is_spawned_worker(child) for pid in pids.values() for child in descendants(pid))
           and time.perf_counter() - started < limit_s):
        time.sleep(1.0)
    return time.perf_counter() - started


def _stats(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "values": values}


def health_cpu(topology: Path, calls: int) -> dict:
    """`mpdp health` against the curator beside its floors, interleaved (each round in a rotated order) so the
    machine's drift touches all three alike."""
    commands = {"interpreter": [sys.executable, "-c", INTERPRETER],
                "health_imports": [sys.executable, "-c", HEALTH_IMPORTS],
                "mpdp_health": health_command(topology, "curator", 0, 5.0)}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    wall: list[float] = []
    names = list(commands)
    for call in range(calls):
        for name in names[call % 3:] + names[:call % 3]:
            seconds, elapsed, code = run_measured(commands[name])
            if code != 0:
                raise RuntimeError(f"{' '.join(commands[name])} exited with {code}")
            cpu[name].append(seconds)
            if name == "mpdp_health":
                wall.append(elapsed)
    figures = {name: _stats(values) for name, values in cpu.items()}
    health, floor = figures["mpdp_health"]["median"], figures["health_imports"]["median"]
    return {"command": " ".join(commands["mpdp_health"]), "calls": calls, "cpu_s": figures,
            "wall_s": _stats(wall), "above_imports_floor_s": health - floor, "vs_imports_floor": health / floor,
            "target_s": HEALTH_CPU_TARGET_S, "target_met": health <= HEALTH_CPU_TARGET_S,
            "bytecode": project_bytecode()}


def project_bytecode(env: dict | None = None) -> dict:
    """How many of the modules `mpdp health` adds to its floor's imports had current cached bytecode."""
    script = console_script()
    where = [] if script is None else [str(script.parent)]
    probe = subprocess.run([sys.executable, "-B", "-c", BYTECODE_PROBE, *where], capture_output=True, text=True,
                           check=True, timeout=60, env=env)
    modules, cached = map(int, probe.stdout.split())
    return {"modules": modules, "cached": cached,
            "writes_cache": not sys.flags.dont_write_bytecode}


class HealthWhileBusy:
    """Checks every role in turn, as the compose health check does, until stopped."""

    def __init__(self, topology: Path, roles: list[tuple[str, int]]):
        self.commands = [health_command(topology, role, role_id, COMPOSE_CHECK_TIMEOUT_S) for role, role_id in roles]
        self.walls: list[float] = []
        self.failures = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._check, daemon=True)

    def _check(self) -> None:
        turn = 0
        while True:  # at least one check, however short the sessions
            _, elapsed, code = run_measured(self.commands[turn % len(self.commands)])
            self.walls.append(elapsed)
            self.failures += code != 0
            turn += 1
            if self._stop.is_set():
                return

    def __enter__(self) -> HealthWhileBusy:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def figures(self) -> dict:
        return {"calls": len(self.walls), "failures": self.failures, "wall_s": _stats(self.walls),
                "compose_timeout_s": COMPOSE_CHECK_TIMEOUT_S,
                "target_met": self.failures == 0 and max(self.walls) < COMPOSE_CHECK_TIMEOUT_S}


def _demo_protocols() -> list:
    """The demo's protocols (those `bench scale` can run one session of), in registry order."""
    from launcher.registry import PROTOCOLS

    return [protocol for protocol in PROTOCOLS.values() if protocol.in_demo and protocol.scale is not None]


def run(parties: int = 5, bits: int = 2048, calls: int = 10, dataset_name: str = "breast-cancer",
        data_dir: str | None = None, seed: int = 1) -> dict:
    if parties < 2:
        raise ValueError("--parties must be at least 2")
    if calls < 1:
        raise ValueError("--calls must be at least 1")
    dataset = datasets.load(dataset_name, data_dir=data_dir)
    progress(f"starting {parties} parties, the curator and the aggregator ({bits}-bit keys)")
    with deployment(parties, bits, dataset, seed=seed) as target:
        pids = target.pids()
        meter = CpuMeter(pids)
        idle_s, _ = wait_until_idle(meter)
        after_up = memory_at_rest(pids)
        progress(f"idle {idle_s:.1f} s after up; {calls} rounds of python -c pass, the health imports and mpdp health")
        health = health_cpu(target.run.topology, calls)
        roles = [(name.split("/")[0], int(name.split("/")[1])) for name in pids]
        sessions = {}
        with HealthWhileBusy(target.run.topology, roles) as busy:
            for protocol in _demo_protocols():
                progress(f"a {protocol.name} session while every role is health-checked in turn")
                assert protocol.scale is not None
                report = asyncio.run(protocol.scale.session(target.topology, target.client_data, parties))
                sessions[protocol.name] = report["wall_s"]
        wait_until_idle(meter)
        after_sessions = memory_at_rest(pids)
        progress(f"waiting for the accountant's workers to exit ({IDLE_S:.0f} s after their last call)")
        children_s = wait_for_workers_to_exit(pids, IDLE_S + 60)
        at_rest = memory_at_rest(pids)
    largest = max(entry["rss_mb"] + entry["children_rss_mb"] for entry in at_rest.values())
    return {"bits": bits, "parties": parties, "dataset": dataset.name,
            "memory": {"after_up": after_up, "after_sessions": after_sessions, "at_rest": at_rest,
                       "children_exited_after_s": children_s, "sessions": list(sessions),
                       "largest_role_mb": largest, "target_mb": MEMORY_TARGET_MB,
                       "target_met": largest <= MEMORY_TARGET_MB},
            "health_cpu": health, "health_while_busy": {**busy.figures(), "session_wall_s": sessions}}


def _bytecode_lines(bytecode: dict) -> list[str]:
    if bytecode["cached"] == bytecode["modules"]:
        return []
    why = "" if bytecode["writes_cache"] else " (PYTHONDONTWRITEBYTECODE is set: nothing writes it)"
    return [f"    {bytecode['modules'] - bytecode['cached']} of the {bytecode['modules']} modules mpdp health adds "
            f"to the floor have no current cached bytecode and compile at every call{why}; "
            f"`python -m compileall` on the package directories, or a non-editable install, caches it"]


def summary(report: dict) -> str:
    memory, health, busy = report["memory"], report["health_cpu"], report["health_while_busy"]
    lines = [f"Start-up and memory: {report['parties']} parties, {report['bits']}-bit keys, {report['dataset']}",
             f"  resident memory of each role once idle; at rest = after the accountant's workers exited "
             f"({memory['children_exited_after_s']:.0f} s later); target ≤ {memory['target_mb']} MB at rest: "
             f"{'met' if memory['target_met'] else 'NOT met'}",
             f"    {'role':<14} {'after up':>9} {'after ' + ', '.join(memory['sessions']):>26}  {'(children)':>12} "
             f"{'at rest':>8}"]

    def children(entry: dict) -> str:
        return f"+{entry['children']}: {entry['children_rss_mb']:.0f} MB" if entry["children"] else "-"

    for name, entry in memory["after_sessions"].items():
        rest = memory["at_rest"][name]
        lines.append(f"    {name:<14} {memory['after_up'][name]['rss_mb']:>6.0f} MB {entry['rss_mb']:>23.0f} MB  "
                     f"{children(entry):>12} {rest['rss_mb']:>5.0f} MB"
                     + (f" {children(rest)}" if rest["children"] else ""))
    cpu = health["cpu_s"]
    lines += [f"  CPU of one call, median of {health['calls']} (min–max), interleaved:",
              *(f"    {label:<34} {cpu[name]['median']:.3f} s ({cpu[name]['min']:.2f}–{cpu[name]['max']:.2f})"
                for label, name in (("python -c pass", "interpreter"),
                                    ("import grpc + health messages", "health_imports"),
                                    ("mpdp health", "mpdp_health"))),
              f"    mpdp health is the imports' floor + {health['above_imports_floor_s']:.3f} s "
              f"({health['vs_imports_floor']:.2f}×); target ≤ {health['target_s']} s: "
              f"{'met' if health['target_met'] else 'NOT met'}",
              *_bytecode_lines(health["bytecode"]),
              f"  health checks while the roles ran {', '.join(busy['session_wall_s'])}: {busy['calls']} calls, "
              f"wall median {busy['wall_s']['median']:.2f} s, max {busy['wall_s']['max']:.2f} s, "
              f"{busy['failures']} failed (compose allows {busy['compose_timeout_s']} s): "
              f"{'met' if busy['target_met'] else 'NOT met'}"]
    return "\n".join(lines)
