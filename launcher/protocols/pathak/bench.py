"""`mpdp bench pathak`: a Pathak session's wall time by stage for several K, every role a separate process,
with each role's CPU time. Stages come from the participants' own clocks (Charlie's and the
leader's): Stage 1 up to the blinded values, the tournament of K − 1 secure comparisons, Stage 2 and Stage 3.

The first session of a deployment is cold: the leader holds no prepared ρ^n for Charlie's key and makes every
one online. One more session follows the last without a pause: it gets only what the offline phase prepared
before it started. After each session the leader prepares the next one's while idle (the offline phase); the bench
waits until every role process is idle again, reports that wait and its CPU (the phase starts as the leader
finishes, so a small one is over before the client has the report), and then measures the next
(online) session. Both figures are reported; the target is judged on the online one, with its offline cost
beside it."""

from __future__ import annotations

import asyncio
import statistics
import time

from launcher.bench.deployment import CpuMeter, by_role, deployment, wait_until_idle
from launcher.common.progress import progress
from launcher.protocols.pathak.client import run_pathak_session
from mpdp.learning import datasets
from mpdp.protocols.pathak.parameters import PathakParameters

TARGET_K5_PROTOCOL_S = 2.0


def _stages(report: dict) -> dict[str, float]:
    """Stage durations from Charlie's and the leader's marks (seconds since each opened its side)."""
    marks = report["evaluator_view"]["stages_by_participant"]
    charlie, leader = marks["curator/0"], marks["party/1"]
    protocol = report["timing"]["protocol"]
    return {
        "stage1_to_blinding": charlie["stage1_blinded"],
        "stage1_tournament": charlie["stage1_tournament"] - charlie["stage1_blinded"],
        "stage2": leader["stage2_done"] - charlie["stage1_tournament"],
        "stage3": max(m["stage3_done"] for m in marks.values()) - leader["stage2_done"],
        "protocol": protocol,
        "open": report["timing"]["open"],
    }


def _one_k(parties: int, bits: int, dataset: datasets.Dataset, sessions: int, seed: int) -> dict:
    progress(f"K = {parties}: starting {parties + 1} role processes ({bits}-bit keys)")
    started = time.perf_counter()
    with deployment(parties, bits, dataset, seed=seed, model="logistic") as target:
        startup_s = time.perf_counter() - started
        parameters = PathakParameters(epsilon=1.0, delta=1e-5, regularization=0.01, mechanism="l2-laplace",
                                      calibration="tight", parties=parties,
                                      dimension=target.client_data["test_features"].shape[1])
        meter = CpuMeter(target.pids())

        def one_session(label: str) -> dict:
            meter.start()
            report = asyncio.run(run_pathak_session(target.topology, target.client_data, parameters))
            cpu = meter.stop()
            stages = _stages(report)
            progress(f"K = {parties} {label}: protocol {stages['protocol']:.2f} s "
                     f"(tournament {stages['stage1_tournament']:.2f} s)")
            return {"stages_s": stages, "cpu_s_by_role": by_role(cpu), "cpu_s_total": sum(cpu.values()),
                    "cpu_s_leader": cpu["party/1"],  # on the critical path: it answers every comparison
                    "test_accuracy": report["result"]["test_accuracy"],
                    "messages": sum(r["messages"] for r in report["evaluator_view"]["traffic"]),
                    "bytes": sum(r["request_bytes"] + r["response_bytes"] for r in report["evaluator_view"]["traffic"])}

        cold = one_session("cold session (nothing prepared)")
        runs = []
        for number in range(1, sessions + 1):
            offline_s, offline_cpu_s = wait_until_idle(meter)
            progress(f"K = {parties} offline phase: {offline_s:.2f} s, {offline_cpu_s:.2f} CPU-s")
            run = one_session(f"session {number}/{sessions}")
            run.update(offline_s=offline_s, offline_cpu_s=offline_cpu_s)
            runs.append(run)
        back_to_back = one_session("session right after the last (no idle time: prepared only what it could)")
    median = {stage: statistics.median(r["stages_s"][stage] for r in runs) for stage in runs[0]["stages_s"]}
    return {"parties": parties, "comparisons": parties - 1, "comparison_rounds": (parties - 1).bit_length(),
            "comparison_bits": parameters.comparison_bits, "startup_s": startup_s, "cold_session": cold,
            "back_to_back_session": back_to_back,
            "sessions": runs, "median_stages_s": median,
            "median_offline_s": statistics.median(r["offline_s"] for r in runs),
            "median_offline_cpu_s": statistics.median(r["offline_cpu_s"] for r in runs),
            "tournament_s_per_comparison": median["stage1_tournament"] / (parties - 1)}


def run(parties: list[int], bits: int = 2048, sessions: int = 2, dataset_name: str = "a9a",
        data_dir: str | None = None, seed: int = 1) -> dict:
    if not parties or min(parties) < 2:
        raise ValueError("--parties needs numbers of parties ≥ 2")
    dataset = datasets.load(dataset_name, data_dir=data_dir)
    results = [_one_k(k, bits, dataset, sessions, seed) for k in parties]
    k5 = next((r for r in results if r["parties"] == 5), None)
    return {"bits": bits, "dataset": dataset.name, "sessions_per_k": sessions, "results": results,
            "target": {"k5_protocol_s": TARGET_K5_PROTOCOL_S,
                       "k5_met": None if k5 is None else k5["median_stages_s"]["protocol"] <= TARGET_K5_PROTOCOL_S}}


def summary(report: dict) -> str:
    lines = [f"Pathak over loopback on {report['dataset']}, {report['bits']}-bit keys, median of "
             f"{report['sessions_per_k']} online sessions, each after the leader's offline phase (seconds); "
             "beside them the cold first session, one with no pause before it, and the offline phase:",
             f"  {'K':>3} {'ℓ':>4} {'to blinding':>12} {'tournament':>11} {'per comparison':>15} {'stage 2':>8} "
             f"{'stage 3':>8} {'protocol':>9} {'CPU total':>10} {'cold':>6} {'no pause':>9} {'offline':>8} {'its CPU':>8}"]
    for r in report["results"]:
        s = r["median_stages_s"]
        cpu = statistics.median(run["cpu_s_total"] for run in r["sessions"])
        lines.append(f"  {r['parties']:>3} {r['comparison_bits']:>4} {s['stage1_to_blinding']:>12.2f} "
                     f"{s['stage1_tournament']:>11.2f} {r['tournament_s_per_comparison']:>15.2f} {s['stage2']:>8.2f} "
                     f"{s['stage3']:>8.2f} {s['protocol']:>9.2f} {cpu:>10.1f} "
                     f"{r['cold_session']['stages_s']['protocol']:>6.2f} "
                     f"{r['back_to_back_session']['stages_s']['protocol']:>9.2f} {r['median_offline_s']:>8.2f} "
                     f"{r['median_offline_cpu_s']:>8.1f}")
    met = report["target"]["k5_met"]
    if met is not None:
        lines.append(f"  target: K = 5 protocol ≤ {report['target']['k5_protocol_s']:.0f} s online — "
                     + ("met" if met else "NOT met"))
    return "\n".join(lines)
