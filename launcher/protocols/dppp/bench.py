"""`mpdp bench dppp`: private labels per second over loopback, every role a separate process, beside the
paper's layout and the cost floor, all measured in one run.

The floor is the work no implementation of the protocol can skip, timed on this machine in this run: per
round, K·P encryptions (one fixed-base exponentiation h_s^r each, P = ciphertexts per teacher) and t·P
partial decryptions (one c^(2Δ·s_i) each); proofs, transport and everything else are overhead. It is given
for one core (the sum) and for all cores (the sum over the core count)."""

from __future__ import annotations

import asyncio
import os
import secrets
import statistics
import time

import gmpy2

from launcher.bench import observe_overhead
from launcher.bench.deployment import CpuMeter, by_role, deployment, synthetic_dataset
from launcher.common.progress import progress
from launcher.deployment.serve import contribution_keys
from launcher.protocols.dppp import client as dppp_client
from launcher.protocols.dppp.bench_agreement import AgreementTimer
from mpdp.cryptocore.paillier import keyfiles
from mpdp.proto.v1 import dppp_pb2
from mpdp.protocols.dppp.parameters import DpppParameters, default_threshold
from mpdp.sessions.identity import CLIENT
from mpdp.vote_proofs.assurance import Assurance

EPSILON, DELTA = 10.0, 1e-5
TARGETS = {"labels_per_s": 100, "packed_vs_paper": 50, "wall_vs_floor_one_core": 2, "client_checks_vs_round": 0.10,
           "holders_agreement_vs_round": 0.10}
UNIT_REPEAT = 30
DEADLINE_S = 600.0  # per stage: a loaded machine checks ten teachers' committed bits one after another


def _rounds(target, queries: int, packed: bool, count: int, label: str, assurance: Assurance = Assurance.NONE,
            ensemble: int = 1, agreement: AgreementTimer | None = None) -> list[dict]:
    rounds = []
    meter = CpuMeter(target.pids())
    for number in range(1, count + 1):
        meter.start()
        report = asyncio.run(dppp_client.run_dppp_session(target.topology, target.client_data, EPSILON, DELTA,
                                                          queries, packed=packed, assurance=assurance,
                                                          deadline_s=DEADLINE_S,
                                                          ensemble=ensemble))
        cpu = meter.stop()
        timing = report["timing"]
        rounds.append({"wall_s": timing["client_round_trip"], "labels_per_s": queries / timing["client_round_trip"],
                       "stages_s": {k: v for k, v in timing.items() if k != "client_round_trip"},
                       "cpu_s_by_role": by_role(cpu), "cpu_s_total": sum(cpu.values()),
                       "bytes": sum(r["request_bytes"] + r["response_bytes"] for r in report["traffic"])})
        if agreement is not None:
            rounds[-1]["holders_agreement"] = agreement.time(report)
        progress(f"{label} round {number}/{count}: {queries / timing['client_round_trip']:.1f} labels/s "
                 f"({timing['client_round_trip']:.2f} s)")
    return rounds


def _summary_of(rounds: list[dict], queries: int) -> dict:
    """Medians; the client's own checks of each result (docs/client-checks.md) run after the round trip and are
    timed apart from it."""
    wall = statistics.median(r["wall_s"] for r in rounds)
    return {"queries": queries, "rounds": rounds, "median_wall_s": wall, "labels_per_s": queries / wall,
            "cpu_s_per_label": statistics.median(r["cpu_s_total"] for r in rounds) / queries,
            "median_client_checks_s": statistics.median(r["stages_s"].get("client_checks", 0.0) for r in rounds),
            # the launcher is one process among the roles' many: on a loaded machine its wall time stretches more
            "median_client_checks_cpu_s": statistics.median(r["stages_s"].get("client_checks_cpu", 0.0)
                                                            for r in rounds),
            # each check over its own round: the two measured back to back, under the same load
            "median_client_checks_share": statistics.median(r["stages_s"].get("client_checks", 0.0) / r["wall_s"]
                                                            for r in rounds),
            **_agreement_summary(rounds)}


def _agreement_summary(rounds: list[dict]) -> dict:
    """The holders' agreement step (bench_agreement.py): one holder's, and t of them one after another, per round."""
    timed = [r["holders_agreement"] for r in rounds if "holders_agreement" in r]
    if not timed:
        return {}
    return {"median_holder_agreement_s": statistics.median(a["wall_s"] for a in timed),
            "median_holder_agreement_cpu_s": statistics.median(a["cpu_s"] for a in timed),
            "median_holders_agreement_s": statistics.median(a["holders"] * a["wall_s"] for a in timed),
            "median_holders_agreement_share": statistics.median(r["holders_agreement"]["holders"]
                                                                * r["holders_agreement"]["wall_s"] / r["wall_s"]
                                                                for r in rounds if "holders_agreement" in r)}


def _unit_costs(public_key) -> dict:
    """Seconds per fixed-base encryption and per partial-decryption exponentiation, on this machine now."""
    encryptor = public_key.encryptor
    encryptor.precompute()
    started = time.perf_counter()
    for value in range(UNIT_REPEAT):
        encryptor.encrypt(value)
    encryption = (time.perf_counter() - started) / UNIT_REPEAT
    nsquare = public_key.paillier.nsquare
    exponent_bits = nsquare.bit_length() + public_key.delta.bit_length()  # 2Δ·s_i with s_i < n·m < n²/4
    base = encryptor.encrypt(1)
    started = time.perf_counter()
    for _ in range(UNIT_REPEAT):
        gmpy2.powmod(base, secrets.randbits(exponent_bits), nsquare)
    partial = (time.perf_counter() - started) / UNIT_REPEAT
    return {"fixed_base_encryption_s": encryption, "partial_decryption_exponentiation_s": partial,
            "partial_decryption_exponent_bits": exponent_bits}


def _proof_costs(public_key, teachers: int, classes: int, queries: int = 20, ensemble: int = 1) -> dict:
    """Seconds per query for one teacher's T one-hot proofs (C + 1 fixed-base exponentiations each: the vote and C
    commitments) and for the aggregator's combined check of them, on this machine now."""
    from mpdp.cryptocore.proofs import membership_proof
    from mpdp.vote_proofs import votes as vote_proofs

    layout = DpppParameters.with_minimal_noise(EPSILON, DELTA, queries, classes, teachers, 2 / 3, True, public_key.key_id,
                                               assurance=Assurance.PROVEN_VOTES, ensemble=ensemble).layout(public_key.n)
    lists = vote_proofs.choices(layout, queries, classes, ensemble)
    key = vote_proofs.proof_key(public_key)
    picks = [secrets.randbelow(classes) for _ in range(queries * ensemble)]
    membership_proof.encrypt_and_prove(key, lists[:1], picks[:1], b"bench")  # the table, once per key
    started = time.perf_counter()
    ciphertexts, proofs = membership_proof.encrypt_and_prove(key, lists, picks, b"bench")
    proved = time.perf_counter()
    membership_proof.verify(key, ciphertexts, lists, proofs, b"bench")
    verified = time.perf_counter()
    return {"prove_s_per_query": (proved - started) / queries, "verify_s_per_query": (verified - proved) / queries}


def _fill(target, bits: int, votes: int, classes: int, label: str) -> dict:
    """The offline phase: every teacher makes `bits` committed bits, the aggregator verifies them into its pool; and
    each teacher makes the exponentiations of one round's `votes` vote proofs (Q·T)."""
    meter = CpuMeter(target.pids())
    meter.start()
    filled = asyncio.run(dppp_client.fill_noise_pools(target.topology, bits, deadline_s=DEADLINE_S, votes=votes,
                                                      classes=classes))
    cpu = meter.stop()
    if filled["rejected"]:
        raise RuntimeError(f"the noise pool fill left out teachers: {filled['rejected']}")
    progress(f"{label}: {bits} committed bits per teacher in {filled['seconds']:.2f} s")
    return {"bits_per_teacher": bits, "wall_s": filled["seconds"], "cpu_s_by_role": by_role(cpu),
            "cpu_s_total": sum(cpu.values()),
            "bytes": sum(r["request_bytes"] + r["response_bytes"] for r in filled["traffic"])}


def _verifiable(target, public_key, teachers: int, classes: int, queries: int, count: int, ensemble: int = 1) -> dict:
    """At Q = `queries` (N_i·Q·C committed bits per teacher grow as Q², so verifiable rounds take fewer queries):
    packed, proven votes, verifiable noise with bits made in the round, and verifiable noise with bits from the
    pool (online; each such round's bits filled just before it, the fill timed apart as the offline phase), one
    warm-up round each, then `count` rounds of each, interleaved so that the machine's load falls on all alike."""
    bits = DpppParameters.with_minimal_noise(EPSILON, DELTA, queries, classes, teachers, 2 / 3, True, public_key.key_id,
                                             assurance=Assurance.VERIFIABLE_NOISE, ensemble=ensemble)
    bits_per_round = bits.values * bits.share_range
    kinds = {"packed": Assurance.NONE, "proven_votes": Assurance.PROVEN_VOTES,
             "verifiable_noise": Assurance.VERIFIABLE_NOISE, "verifiable_pooled": Assurance.VERIFIABLE_NOISE}
    fills: list[dict] = []

    def one(name: str, label: str) -> list[dict]:
        if name == "verifiable_pooled":  # the pools are empty otherwise: each pooled round spends what it filled
            fills.append(_fill(target, bits_per_round, bits.proven_rows, classes, f"offline fill before {label}"))
        return _rounds(target, queries, True, 1, label, kinds[name], ensemble=ensemble)

    for name in kinds:
        one(name, f"{name} warm-up (Q = {queries})")
    fills.clear()  # the warm-up fill built the fixed-base tables
    measured: dict[str, list[dict]] = {name: [] for name in kinds}
    for number in range(count):
        for name in kinds:
            measured[name] += one(name, f"{name} (Q = {queries}) {number + 1}/{count}")
    summaries = {name: _summary_of(rounds, queries) for name, rounds in measured.items()}
    packed = summaries["packed"]["labels_per_s"]
    offline = {"fills": fills, "bits_per_teacher_per_round": bits_per_round,
               "median_wall_s": statistics.median(f["wall_s"] for f in fills),
               "cpu_s_per_label": statistics.median(f["cpu_s_total"] for f in fills) / queries,
               "wall_s_per_label": statistics.median(f["wall_s"] for f in fills) / queries,
               "bytes_per_round": statistics.median(f["bytes"] for f in fills)}
    return {**summaries, "offline_fill": offline,
            "ratios": {f"{name}_vs_packed": summaries[name]["labels_per_s"] / packed
                       for name in ("proven_votes", "verifiable_noise", "verifiable_pooled")}}


async def _packed_round(topology, client_data: dict, queries: int, ensemble: int) -> dict:
    report = await dppp_client.run_dppp_session(topology, client_data, EPSILON, DELTA, queries, packed=True,
                                                deadline_s=DEADLINE_S, ensemble=ensemble)
    return {"wall_s": report["timing"]["client_round_trip"], "traffic": report["traffic"]}


def run(teachers: int = 10, classes: int = 10, queries: int = 200, bits: int = 2048, rounds: int = 5,
        warmup: int = 2, paper_queries: int = 10, paper_rounds: int = 2, seed: int = 1,
        proven_rounds: int | None = None, verifiable_queries: int = 20, verifiable_rounds: int | None = None,
        ensemble: int = 1, observe_pairs: int = 0) -> dict:
    """`proven_rounds` (default: `rounds`) rounds with proven votes, in the same run after one warm-up round;
    `verifiable_rounds` (default: `rounds`) rounds each of packed, proven and verifiable at `verifiable_queries`;
    every round with `ensemble` models per teacher (a proven ballot carries Q·T proofs); `observe_pairs` pairs of
    packed rounds with the [observe] extra switched off and on in one deployment (launcher/bench/observe_overhead.py)."""
    proven_rounds = rounds if proven_rounds is None else proven_rounds
    verifiable_rounds = rounds if verifiable_rounds is None else verifiable_rounds
    rows = max(6 * max(queries, paper_queries) + 600, 60 * teachers)
    dataset = synthetic_dataset(classes, rows, seed)
    progress(f"starting {teachers + 2} role processes ({bits}-bit threshold key, {teachers} teachers)")
    started = time.perf_counter()
    with deployment(teachers, bits, dataset, seed=seed, model="logistic") as target:
        startup_s = time.perf_counter() - started
        public_key = keyfiles.load_public_key(target.run.path / target.topology.public_key)
        search_started = time.perf_counter()
        parameters = DpppParameters.with_minimal_noise(EPSILON, DELTA, queries, classes, teachers, 2 / 3, True,
                                                       public_key.key_id, ensemble=ensemble)
        search_s = time.perf_counter() - search_started  # the client's once-per-parameter-set search
        agreement = AgreementTimer(public_key, contribution_keys(target.topology, CLIENT, signs=False))
        cold = _rounds(target, queries, True, warmup, "warm-up", ensemble=ensemble, agreement=agreement)
        load_before = os.getloadavg()[0]  # the shared machine's load stretches a one-process check the most
        packed = _summary_of(_rounds(target, queries, True, rounds, "packed", ensemble=ensemble, agreement=agreement),
                             queries)
        load_after = os.getloadavg()[0]
        proven = None
        if proven_rounds:
            proven_warmup = _rounds(target, queries, True, 1, "proven votes warm-up", Assurance.PROVEN_VOTES,
                                    ensemble=ensemble)
            proven = {**_summary_of(_rounds(target, queries, True, proven_rounds, "proven votes", Assurance.PROVEN_VOTES,
                                            ensemble=ensemble), queries), "warmup": proven_warmup}
        verifiable = (_verifiable(target, public_key, teachers, classes, verifiable_queries, verifiable_rounds,
                                  ensemble) if verifiable_rounds else None)
        paper = _summary_of(_rounds(target, paper_queries, False, paper_rounds, "paper layout", ensemble=ensemble),
                            paper_queries)
        units = _unit_costs(public_key)
        proof_units = _proof_costs(public_key, teachers, classes, ensemble=ensemble) if proven_rounds else None
    # After the bench's own deployment is down: one deployment with the extra installed, switched off and on between
    # rounds, alone on the machine's share this run has.
    observed = observe_overhead.run(
        lambda: deployment(teachers, bits, dataset, seed=seed, model="logistic"),
        lambda topology, data: _packed_round(topology, data, queries, ensemble), teachers,
        observe_pairs, dppp_pb2.DpppMessage, warmup=max(warmup, observe_overhead.WARMUP)) if observe_pairs else None
    per_teacher = parameters.layout(public_key.n).plaintexts_needed(parameters.values)
    threshold = public_key.threshold
    floor_round_s = (teachers * per_teacher * units["fixed_base_encryption_s"]
                     + threshold * per_teacher * units["partial_decryption_exponentiation_s"])
    cores = os.cpu_count() or 1
    floor = {**units, "ciphertexts_per_teacher": per_teacher,
             "encryptions_per_label": teachers * per_teacher / queries,
             "partial_decryptions_per_label": threshold * per_teacher / queries,
             "seconds_per_round_one_core": floor_round_s,
             "labels_per_s_one_core": queries / floor_round_s,
             "labels_per_s_all_cores": cores * queries / floor_round_s}
    return {
        "setup": {"teachers": teachers, "classes": classes, "queries": queries, "bits": bits,
                  "key_holders": public_key.holders, "threshold": threshold, "cores": cores, "epsilon": EPSILON,
                  "delta": DELTA, "dataset": dataset.name, "rows": rows, "teacher_model": "logistic",
                  "ensemble": ensemble,
                  "startup_s": startup_s, "client_noise_search_s": search_s,
                  "load_average_packed_rounds": [load_before, load_after],
                  "total_tosses": parameters.total_tosses, "tosses_per_teacher": parameters.share_range},
        "warmup": cold,
        "packed": packed,
        "paper_layout": paper,
        "proven_votes": proven,
        "proof_costs": proof_units,
        "verifiable_noise": verifiable,
        "floor": floor,
        "ratios": {"packed_vs_paper": packed["labels_per_s"] / paper["labels_per_s"],
                   "wall_vs_floor_one_core": packed["median_wall_s"] / floor_round_s,
                   "wall_vs_floor_all_cores": packed["median_wall_s"] / (floor_round_s / cores),
                   "client_checks_vs_round": packed["median_client_checks_s"] / packed["median_wall_s"],
                   "client_checks_cpu_vs_round": packed["median_client_checks_cpu_s"] / packed["median_wall_s"],
                   "holders_agreement_vs_round": packed["median_holders_agreement_s"] / packed["median_wall_s"],
                   **({"proven_vs_packed": proven["labels_per_s"] / packed["labels_per_s"]} if proven else {})},
        "targets": TARGETS,
        "default_threshold": default_threshold(public_key.holders),
        "observe_overhead": observed,
    }


def _verifiable_lines(verifiable: dict) -> list[str]:
    lines = [f"  at Q = {verifiable['packed']['queries']} (same run, rounds interleaved; verifiable pooled is the "
             "online phase, its offline fill below):"]
    for name in ("packed", "proven_votes", "verifiable_noise", "verifiable_pooled"):
        row = verifiable[name]
        ratio = verifiable["ratios"].get(f"{name}_vs_packed", 1.0)
        cpu = row["rounds"][len(row["rounds"]) // 2]["cpu_s_by_role"]
        lines.append(f"    {name.replace('_', ' '):18s}{row['labels_per_s']:8.2f} labels/s   ({ratio:.3f}× packed; "
                     f"{1000 * row['cpu_s_per_label']:.1f} CPU-ms per label; CPU-s of a round: "
                     + ", ".join(f"{role} {seconds:.1f}" for role, seconds in cpu.items()) + ")")
    offline = verifiable["offline_fill"]
    cpu = offline["fills"][len(offline["fills"]) // 2]["cpu_s_by_role"]
    lines.append(f"    offline fill      {offline['bits_per_teacher_per_round']} bits per teacher per round in "
                 f"{offline['median_wall_s']:.1f} s ({1000 * offline['wall_s_per_label']:.0f} ms and "
                 f"{1000 * offline['cpu_s_per_label']:.0f} CPU-ms per label; {offline['bytes_per_round'] / 1e6:.1f} MB; "
                 "CPU-s: " + ", ".join(f"{role} {seconds:.1f}" for role, seconds in cpu.items()) + ")")
    return lines


def summary(report: dict) -> str:
    setup, packed, paper, floor, ratios = (report[k] for k in ("setup", "packed", "paper_layout", "floor", "ratios"))
    stages = packed["rounds"][len(packed["rounds"]) // 2]["stages_s"]
    lines = [
        f"DPPP over loopback: K = {setup['teachers']} teachers"
        + (f" of T = {setup['ensemble']} models each" if setup.get("ensemble", 1) > 1 else "")
        + f", C = {setup['classes']} classes, Q = "
        f"{setup['queries']} queries per round, {setup['bits']}-bit key, t = {setup['threshold']} of "
        f"{setup['key_holders']} holders, {setup['cores']} cores",
        f"  packed layout       {packed['labels_per_s']:8.1f} labels/s   (median of {len(packed['rounds'])} rounds, "
        f"{packed['median_wall_s']:.2f} s each, {1000 * packed['cpu_s_per_label']:.1f} CPU-ms per label)",
        *([f"  proven votes        {report['proven_votes']['labels_per_s']:8.1f} labels/s   ("
           f"{1000 * report['proven_votes']['cpu_s_per_label']:.1f} CPU-ms per label; "
           f"{ratios['proven_vs_packed']:.2f}× packed in this run; one teacher's proofs "
           f"{1000 * report['proof_costs']['prove_s_per_query']:.2f} ms per query, their check "
           f"{1000 * report['proof_costs']['verify_s_per_query']:.2f} ms)"] if report.get("proven_votes") else []),
        *(["  proven votes, CPU-s of a round by role: " + ", ".join(
            f"{role} {seconds:.1f}" for role, seconds in report["proven_votes"]["rounds"][
                len(report["proven_votes"]["rounds"]) // 2]["cpu_s_by_role"].items())]
          if report.get("proven_votes") else []),
        *(_verifiable_lines(report["verifiable_noise"]) if report.get("verifiable_noise") else []),
        f"  paper's layout      {paper['labels_per_s']:8.2f} labels/s   (Q = {paper['queries']}, one phe ciphertext "
        f"per (query, class))",
        f"  floor, one core     {floor['labels_per_s_one_core']:8.1f} labels/s   ({floor['encryptions_per_label']:.2f} "
        f"encryptions × {1000 * floor['fixed_base_encryption_s']:.2f} ms + {floor['partial_decryptions_per_label']:.2f} "
        f"partial decryptions × {1000 * floor['partial_decryption_exponentiation_s']:.1f} ms per label)",
        f"  floor, all cores    {floor['labels_per_s_all_cores']:8.1f} labels/s",
        f"  packed vs paper {ratios['packed_vs_paper']:.0f}× (target ≥ {report['targets']['packed_vs_paper']}×); "
        f"wall vs floor {ratios['wall_vs_floor_one_core']:.2f}× one core (target ≤ "
        f"{report['targets']['wall_vs_floor_one_core']}×), {ratios['wall_vs_floor_all_cores']:.2f}× all cores",
        f"  the client's checks  {1000 * packed['median_client_checks_s']:.0f} ms per packed round, "
        f"{100 * ratios['client_checks_vs_round']:.1f} % of the round (target ≤ "
        f"{100 * report['targets']['client_checks_vs_round']:.0f} %; each round's own: median "
        f"{100 * packed['median_client_checks_share']:.1f} %): signatures, C, t partial-decryption proofs, "
        "the combination, the histograms and labels; its CPU (with its worker process's) "
        f"{1000 * packed['median_client_checks_cpu_s']:.0f} ms, {100 * ratios['client_checks_cpu_vs_round']:.1f} % "
        "of the round",
        f"  the holders' agreement on the slot's one subset  {1000 * packed['median_holder_agreement_s']:.1f} ms a "
        f"holder (CPU {1000 * packed['median_holder_agreement_cpu_s']:.1f} ms), {setup['threshold']} asked: {100 * ratios['holders_agreement_vs_round']:.1f} % of the round "
        f"(target ≤ {100 * report['targets']['holders_agreement_vs_round']:.0f} %; each round's own: median "
        f"{100 * packed['median_holders_agreement_share']:.1f} %; t steps one after another): the "
        "request's shape, the K signatures, C = Π contributions, before any exponentiation with a share",
        *([f"  load average over the packed rounds: {loads[0]:.1f} to {loads[1]:.1f} on {setup['cores']} cores (a "
           "one-process step's wall time stretches with it; its CPU time does not)"]
          if (loads := setup.get("load_average_packed_rounds")) else []),
        "  a packed round's stages: " + ", ".join(f"{k} {v:.2f} s" for k, v in stages.items()),
        f"  first round (cold: fixed-base tables not yet built): {report['warmup'][0]['wall_s']:.2f} s"
        if report["warmup"] else "  no warm-up rounds",
        f"  the client's search for N = {setup['total_tosses']}: {setup['client_noise_search_s']:.2f} s once per "
        f"parameter set (every role checks N in two accountant evaluations)",
        *(observe_overhead.lines(report["observe_overhead"]) if report.get("observe_overhead") else []),
    ]
    return "\n".join(lines)
