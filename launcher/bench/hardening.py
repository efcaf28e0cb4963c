"""`mpdp bench hardening`: fuzzing, a fault matrix, concurrent sessions and resource growth against one
deployment of real processes."""

from __future__ import annotations

import asyncio
import os
import random
import tempfile
import time
from collections import Counter
from pathlib import Path

from launcher.bench import attacks as hardening
from launcher.common.progress import progress, steps
from launcher.deployment import processes
from mpdp.sessions.identity import AGGREGATOR, CURATOR, party

FUZZ_TARGETS = {"fuzz_crashes": 0, "fuzz_hangs": 0, "fuzz_undefined_statuses": 0}
# Many sessions at once take longer each than one alone.
CONCURRENT_DEADLINE_S = 240.0


def targets() -> dict:
    """The report's targets: nothing crashes, hangs or answers an undefined status under fuzzing, and each protocol's
    `concurrent` sessions at once complete."""
    return {**FUZZ_TARGETS, **{f"concurrent_{name}": entry.concurrent for name, entry in hardening.hardened().items()}}


def default_scenarios(parties: int) -> list[tuple]:
    """SIGKILL and SIGSTOP 0.3 s into a session, for each role of each protocol (`--faults full` adds every step)."""
    roles = [AGGREGATOR, CURATOR, party(1), party(parties)]
    scenarios = []
    for protocol, faults in hardening.fault_entries().items():
        for role in roles:
            if role.role in faults.absent:
                continue  # takes no part
            for fault in ("SIGKILL", "SIGSTOP"):
                scenarios.append((protocol, role, fault))
    return scenarios


def run(bits: int = 1024, parties: int = 3, cases_per_rpc: int = 200, sessions: int = 100, seed: int = 1,
        scenarios: list[tuple] | None = None, concurrent: dict[str, int] | None = None, deadline: float = 10.0,
        full_faults: bool = False) -> dict:
    """`concurrent`: sessions at once per protocol (each `Hardening.concurrent` by default)."""
    started = time.perf_counter()
    rng = random.Random(seed)
    entries = hardening.hardened()
    fuzzed = hardening.target_name()
    at_once_counts = {name: entry.concurrent for name, entry in entries.items()} | (concurrent or {})
    with tempfile.TemporaryDirectory(prefix="mpdp-hardening-") as scratch:
        run_dir = Path(scratch) / "run"
        progress(f"starting {parties + 2} roles ({bits}-bit keys)")
        run_directory, topology, client_data, parameters = hardening.start_target(run_dir, parties, bits, seed, deadline)

        def session(name: str, session_id: str, seconds: float = deadline):
            return entries[name].session(topology, client_data, seconds, session_id)

        # The repeated sessions take turns, the fuzzed protocol first.
        turns = [fuzzed, *(name for name in entries if name != fuzzed)]

        def in_turn(index: int, prefix: str):
            name = turns[index % len(turns)]
            return session(name, f"{prefix}-{name}{index}")

        try:
            report: dict = {"bits": bits, "parties": parties, "seed": seed, "targets": targets()}
            asyncio.run(session(fuzzed, "finished"))
            hardening.open_session_ids(topology, run_directory, "opened", parameters)
            context = hardening.FuzzContext(session_ids=["finished", "opened", "unknown", "x" * 129, ""],
                                            finished_ids=["finished"],
                                            ciphertext_bytes=2 * ((bits + 7) // 8), parties=parties)
            progress(f"fuzzing every RPC of every role, {cases_per_rpc} cases each")
            report["fuzz"] = hardening.fuzz(topology, run_directory, context, cases_per_rpc, rng, progress)
            asyncio.run(session(fuzzed, "after-fuzz"))
            report["fuzz"]["next_session_succeeds"] = True

            progress(" and ".join(f"{count} {entries[name].label} sessions" for name, count in at_once_counts.items())
                     + " at once")

            async def at_once():
                return await asyncio.gather(
                    *(session(name, f"concurrent-{name}{index}", CONCURRENT_DEADLINE_S)
                      for name, count in at_once_counts.items() for index in range(count)),
                    return_exceptions=True)

            outcomes = asyncio.run(at_once())
            failures = [hardening._describe(o) for o in outcomes if isinstance(o, Exception)]
            report["concurrency"] = {
                "failures": failures,
                **{f"{name}_requested": count for name, count in at_once_counts.items()},
                **{f"{name}_completed": sum(not isinstance(outcome, BaseException) and outcome["protocol"] == name
                                            for outcome in outcomes) for name in at_once_counts},
            }

            progress(f"{sessions} sequential sessions (taking turns: "
                     f"{', '.join(entries[name].label for name in turns)}) for resource growth")
            warm = min(10, sessions // 2)
            for index in range(warm):
                asyncio.run(in_turn(index, "warm"))
            before = hardening.resources(run_directory)
            with steps(sessions, "sequential sessions") as done:
                for index in range(sessions):
                    asyncio.run(in_turn(index, "growth"))
                    done.advance()
            after = hardening.resources(run_directory)
            report["growth"] = {"sessions": sessions, "after_warm_up": warm, "before": before, "after": after,
                                "growth": hardening.growth(before, after)}

            chosen = scenarios if scenarios is not None else default_scenarios(parties)
            if full_faults:
                chosen = chosen + hardening.full_matrix(parties)
            progress(f"fault matrix: {len(chosen)} scenarios")
            report["faults"] = hardening.fault_matrix(run_dir, topology, client_data, parameters, chosen, progress)
        finally:
            processes.down(run_dir)
    report["seconds"] = time.perf_counter() - started
    return report


def summary(report: dict) -> str:
    fuzz, concurrency, faults = report["fuzz"], report["concurrency"], report["faults"]
    lines = [
        f"hardening ({report['bits']}-bit keys, K = {report['parties']}, {report['seconds']:.0f} s)",
        f"  fuzz: {fuzz['cases']} cases ({', '.join(f'{k} {v}' for k, v in fuzz['case_kinds'].items())}) over "
        f"{len(fuzz['per_rpc'])} RPCs: {fuzz['crashes']} crashes, {fuzz['hangs']} hangs, "
        f"{fuzz['undefined_statuses']} undefined statuses (target 0 / 0 / 0)",
    ]
    for name, stats in fuzz["per_rpc"].items():
        statuses = ", ".join(f"{code} {count}" for code, count in sorted(stats["statuses"].items()))
        lines.append(f"    {name:<42} {stats['sent']:>5} sent: {statuses}")
    lines.append("  concurrent: " + ", ".join(
        f"{concurrency[f'{name}_completed']}/{concurrency[f'{name}_requested']} {entry.label}"
        for name, entry in hardening.hardened().items() if f"{name}_requested" in concurrency) + " completed")
    lines.append(f"  growth over {report['growth']['sessions']} sequential sessions (after {report['growth']['after_warm_up']} "
                 "warm-up sessions):")
    for name, delta in report["growth"]["growth"].items():
        lines.append(f"    {name:<14} RSS {delta['rss_mb']:+.1f} MB, threads {delta['threads']:+d}, fds {delta['fds']:+d}")
    held = sum(row["as_expected"] for row in faults)
    lines.append(f"  faults: {held}/{len(faults)} scenarios as the spec says (fail or complete, nothing published, "
                 "next session succeeds)")
    for row in faults:
        lines.append(f"    {row['protocol']:<7} {row['role']:<13} {row['fault']:<8} observed {row['observed']:<28} "
                     f"published by {row['published_by'] or 'nobody'}; next session "
                     f"{'succeeds' if row['next_session_succeeds'] else 'FAILS'}")
    return "\n".join(lines)


def transport_limits(bits: int = 1024, parties: int = 3, seed: int = 5, flood: int = 1100,
                     role_descriptors: int = 1024) -> dict:
    """What a peer can hold at a role through its transport (docs/transport-limits.md): idle connections from
    one address while an honest DPPP round runs, how long a connection that never starts TLS is kept, the
    aggregator's memory after 32 large refused requests, and a DPPP round beside 256 sessions per party
    opened and never started, and beside 128 long polls per party. The roles start under
    `role_descriptors` open files (a usual default)."""
    import resource
    import socket

    from launcher.common.client import to_role
    from mpdp.proto.v1 import role_pb2
    from mpdp.sessions.identity import CLIENT

    # The honest round is the `transport_round` protocol's session; the unstarted sessions are the target's.
    honest = next(entry for entry in hardening.hardened().values() if entry.transport_round)
    fuzzed = hardening.target()

    deadline = 60.0
    report: dict = {"bits": bits, "parties": parties, "role_descriptors": role_descriptors}
    with tempfile.TemporaryDirectory(prefix="mpdp-transport-") as scratch:
        run_dir = Path(scratch) / "run"
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(role_descriptors, hard), hard))
        try:
            run, topology, client_data, parameters = hardening.start_target(run_dir, parties, bits, seed, deadline)
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        everyone = [party(number) for number in range(1, parties + 1)]

        def honest_round(session_id: str) -> dict:
            started = time.perf_counter()
            try:
                asyncio.run(honest.session(topology, client_data, deadline, session_id))
                outcome = "completed"
            except Exception as error:  # the figure is the outcome
                outcome = f"failed: {hardening._describe(error)}"
            return {"outcome": outcome, "seconds": round(time.perf_counter() - started, 1)}

        try:
            report["warm_up_round"] = honest_round("warm-up")
            progress(f"{flood} idle connections to the aggregator from 127.0.0.2")
            held = hardening.idle_connections(topology.entry(AGGREGATOR).address, flood, "127.0.0.2")
            try:
                time.sleep(1)
                report["flood"] = {"connected": len(held), "still_open_after_1_s": hardening.still_open(held),
                                   "round": honest_round("under-flood")}
            finally:
                hardening.close_all(held)

            progress("one connection to the curator that never starts TLS")
            [idle] = hardening.idle_connections(topology.entry(CURATOR).address, 1, "127.0.0.3")
            started = time.perf_counter()
            idle.settimeout(150)
            try:
                closed = idle.recv(1) == b""
            except (socket.timeout, OSError):
                closed = False
            report["handshake"] = {"closed_by_role": closed, "seconds": round(time.perf_counter() - started, 1)}
            idle.close()

            progress("32 refused requests of 63 MiB to the aggregator from party/1's certificate")
            step = hardening.Target(AGGREGATOR, "Step", role_pb2.Envelope)
            before = hardening.resources(run)["aggregator/0"]["rss_mb"]
            statuses: Counter = Counter()
            for sender in (CLIENT, party(1)):  # a sender it may not speak for; its own (parsed, no message)
                request = hardening.large_envelope("large", sender, AGGREGATOR, 63 * 1024 * 1024)
                statuses += hardening.send_concurrently(topology, run, party(1), step, [request] * 16, at_once=8)
                del request
            right_after = hardening.resources(run)["aggregator/0"]["rss_mb"]
            time.sleep(15)
            report["memory"] = {"statuses": dict(statuses), "rss_mb_before": round(before),
                                "rss_mb_right_after": round(right_after),
                                "rss_mb_after_15_s_idle": round(hardening.resources(run)["aggregator/0"]["rss_mb"])}

            progress("256 sessions per party opened by the client and never started")
            opened = [f"unstarted-{index}" for index in range(256)]
            caller = hardening.Caller(topology)
            opens: Counter = Counter()
            try:
                for receiver in everyone:
                    target = hardening.Target(receiver, "Step", role_pb2.Envelope)
                    for session_id in opened:
                        message = to_role(session_id, receiver, **fuzzed.open(parameters))
                        opens[caller.call(CLIENT, target, message.SerializeToString(), timeout=60)] += 1
                report["unstarted"] = {"opens": dict(opens), "round": honest_round("beside-unstarted")}
            finally:
                caller.close()
                hardening.abort_sessions(topology, run, opened, everyone)

            progress("128 long polls per party from the client")
            caller = hardening.Caller(topology)
            polls = []
            try:
                for receiver in everyone:
                    message = to_role("polled", receiver, **fuzzed.open(parameters))
                    caller.call(CLIENT, hardening.Target(receiver, "Step", role_pb2.Envelope),
                                message.SerializeToString(), timeout=60)
                    polls.append(hardening.long_polls(topology, run, receiver, "polled", 128, timeout=300))
                time.sleep(2)
                refused = sum(1 for _, futures in polls for future in futures
                              if future.done() and future.exception() is not None)
                report["long_polls"] = {"sent": 128 * parties, "refused_at_once": refused,
                                        "round": honest_round("beside-polls")}
            finally:
                hardening.abort_sessions(topology, run, ["polled"], everyone)
                for poll_caller, futures in polls:
                    for future in futures:
                        future.cancel()
                    poll_caller.close()
                caller.close()
        finally:
            processes.down(run_dir)
    return report


if __name__ == "__main__":  # python -m launcher.bench.hardening: the transport-limit figures, as JSON
    import json
    import platform

    figures = transport_limits()
    figures["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    figures["machine"] = f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}"
    print(json.dumps(figures, indent=2))
