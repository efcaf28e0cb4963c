"""DPPP's entry in the launcher: session options, one round, its summary, the Section 7 experiment."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from launcher.common.options import key_bits, warn_small_key, write_json
from launcher.common.summary import traffic_lines
from launcher.protocol import (
    Audit,
    Bench,
    DeploymentShape,
    Experiment,
    Faults,
    Hardening,
    LauncherProtocol,
    Option,
    Report,
    Scale,
)
from launcher.protocols.dppp import chart, noise, results
from launcher.protocols.dppp.closed_form import closed_form
from mpdp.cryptocore.keys.key_sizes import DEFAULT_KEY_BITS
from mpdp.vote_proofs.assurance import OPTIONS as ASSURANCES
from mpdp.vote_proofs.assurance import Assurance

ENSEMBLE_DEFAULT = 8
QUERIES_DEFAULT = 100


def session_options() -> list[Option]:
    return [
        Option("epsilon", {"type": float, "default": 10.0, "help": "budget of the whole run, all queries composed"}),
        Option("delta", {"type": float, "default": 1e-5}),
        # QUERIES_DEFAULT and ENSEMBLE_DEFAULT: chosen together by the sweep in docs/data-and-metrics.md ("DPPP: each
        # party's ensemble of teachers"): more queries cost noise per query, the ensemble's margin T·K pays for it.
        Option("queries", {"type": int, "default": QUERIES_DEFAULT,
                           "help": f"public points to label (default {QUERIES_DEFAULT}; every query spends budget)"}),
        Option("ensemble", {"type": int, "default": ENSEMBLE_DEFAULT,
                            "help": f"T models per teacher, each trained on one of T disjoint parts of its rows; its "
                                    f"ballot sums their votes (default {ENSEMBLE_DEFAULT}; 1: one model on all rows). "
                                    "The sensitivity and the noise stay those of one vote per teacher"}),
        Option("no-packing", {"action": "store_true", "help": "the paper's layout, one plain phe ciphertext per (query, class): the baseline"}),
        Option("noise", {"choices": ["binomial", "skellam"], "default": "binomial",
                         "help": "the teachers' noise shares: Bin(N_i, ½) (the paper's) or Sk(μ/K′) (privacy.md)"}),
        Option("assurance", {"choices": ASSURANCES, "default": "none",
                             "help": "how much of each teacher is checked, each level adding to the one before "
                                     "(docs/malicious-party.md): proven-votes, each teacher proves its votes one-hot "
                                     "and a failed proof excludes it by name; verifiable-noise, each commits to its "
                                     "noise bits before a joint coin flips them, so its share is Bin(N_i, ½) whatever "
                                     "it chose; holders-check-bits, every key holder checks every committed bit's "
                                     "proof too, so an aggregator colluding with one teacher cannot pass it non-bits "
                                     "(default none)"}),
        Option("fill-pool", {"action": "store_true",
                             "help": "with --assurance verifiable-noise or above: first fill every teacher's noise pool with this round's "
                                     "committed bits and vote exponentiations (the offline phase, timed apart; no "
                                     "budget spent), so the round itself makes none"}),
        Option("deadline", {"type": float, "default": 300.0, "help": "round deadline per stage, seconds (how long a missing teacher is waited for)"}),
    ]


def run_session(args: argparse.Namespace, topology, client_data: dict) -> Report:
    from launcher.protocols.dppp.client import fill_noise_pools, run_dppp_session

    queries = min(args.queries, len(client_data["public_features"]))
    offline = None
    if args.fill_pool:
        if not Assurance.parse(args.assurance).verifiable_noise:
            raise ValueError("--fill-pool fills the noise pools of --assurance verifiable-noise")
        offline = asyncio.run(fill_noise_pools(topology, *_round_bits(topology, client_data, args, queries)))
    report = asyncio.run(run_dppp_session(topology, client_data, args.epsilon, args.delta, queries,
                                          packed=not args.no_packing, deadline_s=args.deadline, noise=args.noise,
                                          assurance=Assurance.parse(args.assurance), ensemble=args.ensemble))
    agreement = plain_vote_agreement(topology, client_data, report["result"]["labels"], args.ensemble)
    if agreement is not None:
        report["evaluator_view"] = {"label_agreement_with_plain_vote": agreement,
                                    "note": "operator only: the teachers' models retrained from their data files"}
    if offline is not None:
        report["offline_fill"] = offline
    return report


def charge(args: argparse.Namespace, shape: DeploymentShape):
    """What one round with these options charges each teacher: its parameters as `run_session` makes them."""
    from mpdp.protocols.dppp.parameters import DEFAULT_HONEST_FRACTION, DpppParameters

    queries = min(args.queries, len(shape.client_data["public_features"]))
    return DpppParameters.with_minimal_noise(args.epsilon, args.delta, queries, int(shape.client_data["classes"]),
                                             shape.parties, DEFAULT_HONEST_FRACTION, not args.no_packing, shape.key_id,
                                             args.noise, Assurance.parse(args.assurance), colluding=shape.colluding,
                                             ensemble=args.ensemble).guarantee()


def _round_bits(topology, client_data: dict, args: argparse.Namespace, queries: int) -> tuple[int, float, None, int, int]:
    """fill_noise_pools' arguments for one round: N_i·Q·C bits, the deadline, Q·T votes of C classes."""
    from mpdp.cryptocore.paillier import keyfiles
    from mpdp.protocols.dppp.parameters import DEFAULT_HONEST_FRACTION, DpppParameters

    classes = int(client_data["classes"])
    parameters = DpppParameters.with_minimal_noise(args.epsilon, args.delta, queries, classes, len(topology.parties),
                                                   honest_fraction=DEFAULT_HONEST_FRACTION, packed=True,
                                                   key_id=keyfiles.load_public_key(topology.public_key).key_id,
                                                   assurance=Assurance.VERIFIABLE_NOISE, ensemble=args.ensemble)
    return (parameters.values * parameters.share_range, 5 * args.deadline, None, parameters.proven_rows, classes)


def plain_vote_agreement(topology, client_data: dict, released: list[int], ensemble_size: int = 1) -> float | None:
    """How often the released labels equal the teachers' non-private plurality vote (every model of every
    teacher's ensemble; ties to the lowest class, as the released argmax); None when the party data files are
    not here."""
    import numpy as np

    from mpdp.learning import datasets, ensemble, models

    entries = [entry for entry in topology.parties if entry.data is not None and Path(entry.data).is_file()]
    if len(entries) != len(topology.parties):
        return None
    from launcher.common.progress import progress

    progress("evaluator: retraining the teachers from their data files for the plain-vote baseline")
    queries = client_data["public_features"][:len(released)]
    classes = int(client_data["classes"])
    votes = np.zeros((len(released), classes), dtype=int)
    for entry in entries:
        features, labels, _ = datasets.load_part(entry.data)
        for model in ensemble.train(entry.model or models.DEFAULT_TEACHER_MODEL, features, labels, classes,
                                    ensemble_size):
            votes[np.arange(len(released)), np.asarray(model.predict(queries), dtype=int)] += 1
    return float(np.mean(np.argmax(votes, axis=1) == np.asarray(released)))


def summary(report: Report) -> str:
    p, r, privacy, timing = report["parameters"], report["result"], report["privacy"], report["timing"]
    lines = [
        f"DPPP on {p['dataset']}: {p['teachers']} teachers"
        + (f" of {p['ensemble']} models each" if p.get("ensemble", 1) > 1 else "")
        + f", {p['key_holders']} key holders (t = {p['threshold']}), "
        f"{p['key_bits']}-bit threshold Paillier, {'packed' if p['packed'] else 'unpacked'} votes",
        f"  privacy: (ε = {privacy['epsilon']}, δ = {privacy['delta']}) over {privacy['queries']} queries; "
        f"ε per query {privacy['epsilon_per_query']:.3f}; unit: {privacy['unit']}",
        _noise_line(privacy),
        f"  contributors {r['contributors']}, decryptors {r['decryptors']}"
        + (f", rejected shares {r['rejected_shares']}" if r["rejected_shares"] else ""),
        *([f"  checked by the client, not taken from the aggregator: {r['checked_by_client']}"]
          if r.get("checked_by_client") else []),
        f"  noisy labels agree with the truth on {r['label_agreement_with_truth']:.1%} of queries",
        f"  student ({r['student_model']}) test accuracy: {r['student_test_accuracy']:.1%}",
        *traffic_lines(report["traffic"]),
    ]
    lines.append("  timing: " + ", ".join(f"{stage} {seconds:.2f} s" for stage, seconds in timing.items()))
    return "\n".join(lines)


def _noise_line(privacy: dict) -> str:
    if privacy["mechanism"] == "skellam":
        return (f"  noise: Sk(μ) with μ = {privacy['mu_guaranteed']:.1f} from the contributors (σ = "
                f"{privacy['noise_std']:.1f}; μ = {privacy['mu_required']:.1f} required), Sk(μ/K′) per teacher with "
                f"μ/K′ = {privacy['mu_per_contributor']:.2f}, kept in ±{privacy['truncation_bound']}; exact PLD "
                f"accounting gives ε = {privacy['epsilon_all_queries']:.2f}, the Skellam paper's RDP bound "
                f"ε = {privacy['epsilon_rdp_bound']:.2f}")
    return (f"  noise: Bin(N, ½) with N = {privacy['total_tosses_required']} (exact PLD accounting; "
            f"a Theorem-1-style bound would need {privacy['theorem1_style_tosses']}), N_i = {privacy['tosses_per_teacher']}")


def experiment_options() -> list[Option]:
    return [
        Option("out", {"type": Path, "required": True}),
        Option("datasets", {"help": "comma-separated (default: breast-cancer,digits, and a9a when a data directory "
                                    "is given)"}),
        Option("data-dir", {"help": "directory holding a9a (default: $MPDP_DATA_DIR)"}),
        Option("epsilons", {"type": float, "nargs": "+", "default": [0.5, 1, 2, 5, 10, 20, 50]}),
        Option("runs", {"type": int, "default": 20}),
        Option("queries", {"type": int, "default": 50, "help": "public queries labeled per run"}),
        Option("delta", {"type": float, "help": "default 1/n_train"}),
        Option("model", {"default": "svm-rbf", "help": "teachers' model"}),
        Option("delta-factors", {"type": float, "nargs": "+", "default": [1.0, 1e-1, 1e-2, 1e-3, 1e-4],
                                 "help": "Figure 3: δ as these multiples of the default δ"}),
        Option("delta-epsilon", {"type": float, "default": 2.0, "help": "Figure 3: the ε of the δ sweep"}),
        Option("honest-fraction", {"type": float, "default": 1.0,
                                   "help": "τ: the fraction of teachers each share's noise counts on (the paper: 1; "
                                           "the system's sessions: 2/3)"}),
        Option("seed", {"type": int, "default": 2026}),
    ]


def run_experiment(args: argparse.Namespace) -> int:
    from launcher.protocols.dppp import experiment as experiment_dppp
    from mpdp.learning.datasets import data_directory

    names = args.datasets.split(",") if args.datasets else ["breast-cancer", "digits"]
    if not args.datasets and data_directory(args.data_dir) is not None:
        names.append("a9a")
    if not 0 < args.honest_fraction <= 1:
        raise ValueError("--honest-fraction must be in (0, 1]")
    if min(args.delta_factors) <= 0 or max(args.delta_factors) > 1 or args.delta_epsilon <= 0:
        raise ValueError("--delta-factors must be in (0, 1] (δ no larger than the default) and --delta-epsilon > 0")
    report = experiment_dppp.run(args.out, names, args.epsilons, args.runs, args.queries, args.delta,
                                 args.model, args.data_dir, args.seed, args.delta_factors, args.delta_epsilon,
                                 args.honest_fraction)
    for result in report["datasets"]:
        print(f"{result['dataset']}: {result['teachers']} teachers, {result['queries']} queries "
              f"(plot {args.out / result['plot']})")
        for point in result["points"]:
            row = "  ".join(f"{f} {point[f]['mean']:.3f}" for f in experiment_dppp.FRAMEWORKS)
            print(f"  ε={point['epsilon']:<6g} (one query {point['epsilon_per_query']:.3g}) {row}")
    print(f"report written to {args.out / 'dppp_report.json'}")
    args.json_report = report  # `--format json`: the figures themselves, not their table
    return 0


SCALE_QUERIES = 40  # queries of a `bench scale` round


async def scale_session(topology, client_data: dict, parties: int) -> Report:
    from launcher.protocols.dppp import client as dppp_client

    report = await dppp_client.run_dppp_session(topology, client_data, 10.0, 1e-5, SCALE_QUERIES)
    return {"wall_s": report["timing"]["client_round_trip"], "traffic": report["traffic"]}


async def fault_session(topology, client_data: dict, deadline: float, session_id: str) -> Report:
    from launcher.protocols.dppp import client as dppp_client

    return await dppp_client.run_dppp_session(topology, client_data, 5.0, 1e-5, 6, deadline_s=deadline,
                                              session_id=session_id)


def bench_options() -> list[Option]:
    return [
        Option("teachers", {"type": int, "default": 10, "help": "K (default 10)"}),
        Option("classes", {"type": int, "default": 10, "help": "C (default 10; a synthetic data set)"}),
        Option("queries", {"type": int, "default": 200, "help": "Q per round, packed layout (default 200)"}),
        Option("bits", {"type": key_bits, "default": DEFAULT_KEY_BITS, "help": "modulus size (default 2048)"}),
        Option("rounds", {"type": int, "default": 5, "help": "measured packed rounds (default 5)"}),
        Option("warmup", {"type": int, "default": 2, "help": "packed rounds before measuring (default 2)"}),
        Option("paper-queries", {"type": int, "default": 10, "help": "Q per round, paper's layout (default 10)"}),
        Option("paper-rounds", {"type": int, "default": 2, "help": "measured paper-layout rounds (default 2)"}),
        Option("proven-rounds", {"type": int, "default": None,
                                 "help": "measured rounds with proven votes, same run (default: --rounds; 0 skips them)"}),
        Option("verifiable-queries", {"type": int, "default": 20,
                                      "help": "Q per round for packed, proven and verifiable-noise rounds side by "
                                              "side (default 20: committed bits grow as Q²)"}),
        Option("verifiable-rounds", {"type": int, "default": None,
                                     "help": "measured rounds of each at --verifiable-queries (default: --rounds; 0 "
                                             "skips them)"}),
        Option("ensemble", {"type": int, "default": 1,
                            "help": "T models per teacher in every round (default 1, the one-model protocol; `run "
                                    f"dppp` takes {ENSEMBLE_DEFAULT}): a proven ballot carries Q·T proofs"}),
        Option("observe-pairs", {"type": int, "default": 10,
                                 "help": "pairs of packed rounds with the [observe] extra switched off and on by "
                                         "signal in one deployment started with it, for its overhead (default 10; "
                                         "0 skips them)"}),
        Option("json", {"type": Path, "help": "also write the figures to this JSON file"}),
    ]


def run_bench(args: argparse.Namespace) -> int:
    from launcher.protocols.dppp import bench as bench_dppp

    warn_small_key(args.bits)
    report = bench_dppp.run(args.teachers, args.classes, args.queries, args.bits, args.rounds, args.warmup,
                            args.paper_queries, args.paper_rounds, proven_rounds=args.proven_rounds,
                            verifiable_queries=args.verifiable_queries, verifiable_rounds=args.verifiable_rounds,
                            ensemble=args.ensemble, observe_pairs=args.observe_pairs)
    print(bench_dppp.summary(report))
    write_json(args.json, report)
    args.json_report = report
    return 0

def verify_report(report: Report, ca_certificate: bytes | None, public_key) -> list[str]:
    from launcher.protocols.dppp.transcript import verify

    return verify(report, ca_certificate, public_key)


def released_steps(report: Report, client_data: dict) -> list:
    """The student, trained again as the client trained it (the same public rows, the released labels, the same
    deterministic fit), a binary one with its public cut folded into its intercept."""
    import numpy as np

    from mpdp.learning import models, released

    queries = report["parameters"]["queries"]
    labels = np.array(report["result"]["labels"])
    student = models.train(report["result"]["student_model"], client_data["public_features"][:queries], labels)
    steps = list(student.steps) if hasattr(student, "steps") else [("model", student)]
    last = steps[-1][1]
    if len(getattr(last, "classes_", ())) == 2 and hasattr(last, "intercept_"):
        last.intercept_ = last.intercept_ - released.cut_of(report)
    return steps


def audit(*args, **keywords) -> Report:
    """`mpdp audit dppp` (launcher/protocols/dppp/audit.py), imported when an audit runs."""
    from launcher.protocols.dppp.audit import audit_dppp

    return audit_dppp(*args, **keywords)



def demo_reference(args: argparse.Namespace, split, draw: int, colluding: int, model: str | None) -> dict:
    """`mpdp demo`'s in-process reference (launcher/protocols/dppp/demo_reference.py), imported when one runs."""
    from launcher.protocols.dppp.demo_reference import release

    return release(args, split, draw, colluding, model)



def wire_difference(*args) -> float:
    """`mpdp audit dppp --wire-sample` (launcher/protocols/dppp/wire_check.py), imported when one runs."""
    from launcher.protocols.dppp.wire_check import difference

    return difference(*args)


PROTOCOL = LauncherProtocol(
    name="dppp",
    help="distributed privacy-preserving prediction",
    options=session_options,
    run=run_session,
    summary=summary,
    experiment=Experiment("DPPP paper, Section 7", experiment_options, run_experiment,
                          full=("--datasets", "breast-cancer,digits,mnist-5k,a9a"),
                          quick=("--datasets", "breast-cancer", "--epsilons", "1", "10", "--runs", "2", "--queries", "20",
                                 "--delta-factors", "1", "0.01"),
                          table=results.TABLE),
    bench=Bench("private labels per second: packed, the paper's layout and the floor", bench_options, run_bench),
    scale=Scale(sizes=(10, 25, 50, 100), parties_per_process=10, rows_per_party=60, session=scale_session,
                target_exponent=1.1),
    faults=Faults(received={"party": ["Step/dppp/queries", "Step/dppp/decryption_request"],
                            "aggregator": ["AwaitResult/dppp/open", "Step/dppp/votes", "Step/dppp/partial_decryptions"]},
                  sent={"aggregator": ["Step/dppp/queries", "Step/dppp/decryption_request"],
                        "party": ["Step/dppp/votes", "Step/dppp/partial_decryptions"]},
                  session=fault_session, absent=("curator",)),
    # DPPP rounds are the honest sessions beside each transport limit (docs/transport-limits.md).
    hardening=Hardening("DPPP", concurrent=20, session=fault_session, transport_round=True),
    charge=charge,
    closed_form=closed_form,
    message_type=chart.MESSAGE,
    stages=chart.STAGES,
    noise_check=noise.check,
    noise_spread_unavailable=noise.SPREAD_UNAVAILABLE,
    audit_noise="binomial",
    audit=Audit(("binomial", "skellam"), audit, colluding=True, wire=(wire_difference, 0.0)),  # integers: equal
    verify=verify_report,
    release=released_steps,
    # DPPP labels 50 of the 95 public points: fewer queries, less noise per vote (0.68× the unanimous margin at ε = 3,
    # where all 95 at ε = 2.5 are 1.1×).
    compose_demo="--epsilon 3 --delta 2.5e-6 --queries 50",
    trains_student=True,
    demo_reference=demo_reference,
)
