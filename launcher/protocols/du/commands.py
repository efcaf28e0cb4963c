"""Du–Li–Li's entry in the launcher: run options, one run and its summary."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from launcher.common.summary import traffic_lines
from launcher.protocol import (
    Audit,
    Bench,
    DemoSettings,
    DeploymentShape,
    Experiment,
    Faults,
    LauncherProtocol,
    Option,
    Report,
    Scale,
)
from launcher.protocols.du import chart, noise, results
from launcher.protocols.du.closed_form import closed_form


def session_options() -> list[Option]:
    from mpdp.protocols.du.parameters import METHODS

    return [
        Option("method", {"choices": METHODS, "default": "functional",
                          "help": "ofpa / ofaa: the paper's calibrations (not proven DP); objective, functional: "
                                  "the correct counterparts; none: LR_NoPrivacy"}),
        Option("epsilon", {"type": float, "default": 1.0,
                           "help": "ε per round; the run composes ε per round × R rounds (the report states both)"}),
        Option("delta", {"type": float, "default": 1e-5, "help": "δ of the accountant's composed ε"}),
        Option("rounds", {"type": int, "default": 5, "help": "round limit R"}),
        Option("tolerance", {"type": float, "default": 0.0, "help": "stop when ‖θ_{k+1} − θ_k‖ ≤ this (0: R rounds)"}),
        Option("local-epochs", {"type": int, "default": 40, "help": "gradient epochs per round from the warm start"}),
        Option("learning-rate", {"type": float, "default": 1.0}),
        Option("batch-size", {"type": int, "default": 256, "help": "rows per step of a local epoch"}),
        Option("lambda", {"type": float, "default": 1e-4,
                          "help": "λ: objective perturbation's regulariser and the convexity repair's floor"},
               dest="regularization"),
        Option("bound", {"type": float, "default": 100.0, "help": "B: uploads are clipped to [−B, B]"}),
        Option("secure-aggregation", {"action": "store_true",
                                      "help": "uploads as a threshold sum: the server decrypts only the weighted sum"}),
        Option("deadline", {"type": float, "default": 60.0, "help": "round deadline, seconds"}),
        Option("allow-paper-calibration", {"action": "store_true",
                                           "help": "run a paper calibration that does not deliver the ε asked for "
                                                   "(refused without this flag)"}),
    ]


def charge(args: argparse.Namespace, shape: DeploymentShape):
    """What one run with these options charges every party (its round limit R charged): its parameters as
    `session_parameters` makes them for `run_session`."""
    from mpdp.protocols.du import accounting
    from mpdp.protocols.du.parameters import DEFAULT_HONEST_FRACTION, MAX_RECORDS, DuParameters

    sizes = shape.client_data.get("party_sizes", ())
    return accounting.guarantee(DuParameters(
        args.method, args.epsilon, args.delta, args.rounds, args.tolerance, args.local_epochs, args.learning_rate,
        args.regularization, shape.parties, shape.client_data["test_features"].shape[1], args.bound,
        args.secure_aggregation, DEFAULT_HONEST_FRACTION, shape.key_id, args.batch_size,
        int(max(sizes)) if len(sizes) else MAX_RECORDS))


def refusal(args: argparse.Namespace, topology=None, client_data: dict | None = None) -> str | None:
    from mpdp.protocols.du.parameters import PAPER_METHODS

    if args.method in PAPER_METHODS and not args.allow_paper_calibration:
        return (f"--method {args.method} is the paper's calibration and does not deliver the ε asked for "
                f"({'no finite ε holds' if args.method == 'ofpa' else 'it really gives 4/3·ε per round'}); "
                "pass --allow-paper-calibration to run it anyway, or use --method functional | objective")
    return None


def run_session(args: argparse.Namespace, topology, client_data: dict) -> Report:
    from launcher.protocols.du.client import run_du_session, session_parameters

    refused = refusal(args)
    if refused:
        raise ValueError(refused)

    parameters = session_parameters(topology, client_data, args.method, args.epsilon, args.rounds,
                                    args.secure_aggregation, args.delta, args.tolerance, args.local_epochs,
                                    args.learning_rate, args.regularization, args.bound, batch_size=args.batch_size)
    return asyncio.run(run_du_session(topology, client_data, parameters, args.deadline))


def summary(report: Report) -> str:
    p, r, privacy = report["parameters"], report["result"], report["privacy"]
    if privacy.get("epsilon_per_round") is None:
        claim = "none (LR_NoPrivacy)"
    else:
        effective = privacy["epsilon_per_round_effective"]
        claim = (f"ε = {privacy['epsilon_per_round']:g} per round × {p['rounds']} rounds"
                 + (" — no finite ε holds" if effective is None else
                    f" (really {effective:.3g})" if effective != privacy["epsilon_per_round"] else "")
                 + f" = {privacy['epsilon_composed_basic']:.3g} composed (basic)"
                 + (f", {privacy['epsilon_composed_exact']:.3g} at δ = {privacy['delta']:g} (exact composition)"
                    if "epsilon_composed_exact" in privacy else ""))
    lines = [
        f"Du–Li–Li on {p['dataset']}: K = {p['parties']}, d = {p['dimension']}, {p['method']}, "
        f"{p['local_epochs']} local epochs per round"
        + (f", secure aggregation ({p['key_bits']}-bit threshold Paillier)" if p["secure_aggregation"] else ""),
        f"  privacy: {privacy['mechanism']}",
        f"  claim: {claim}",
        f"  {r['rounds']} rounds ({r['stopped']})" + (f"; dropped parties {r['dropped']}" if r["dropped"] else ""),
        f"  test accuracy {r['test_accuracy']:.1%} (always the majority class: "
        f"{r['majority_class_rate']:.1%})",
        *traffic_lines(report["traffic"]),
        f"  time per round {report['timing']['per_round']:.2f} s",
    ]
    return "\n".join(lines)


def experiment_options() -> list[Option]:
    return [
        Option("out", {"type": Path, "required": True}),
        Option("datasets", {"help": "comma-separated (default: breast-cancer, and a9a when a data directory is given)"}),
        Option("data-dir", {"help": "directory holding a9a (default: $MPDP_DATA_DIR)"}),
        Option("epsilons", {"type": float, "nargs": "+", "default": [0.1, 0.2, 0.4, 0.8, 1.6, 3.2],
                            "help": "ε per round"}),
        Option("trials", {"type": int, "default": 10, "help": "noise draws per private point (the paper: 10)"}),
        Option("rounds", {"type": int, "default": 5}),
        Option("local-epochs", {"type": int, "default": 40, "help": "the paper trains 40 epochs"}),
        Option("lambda", {"type": float, "default": 1e-4,
                          "help": "at 0.01 the convexity repair's floor swamps a9a's small eigenvalues"},
               dest="regularization"),
        Option("sweep-epsilon", {"type": float, "default": 0.8, "help": "ε of the cardinality and dimension sweeps"}),
        Option("seed", {"type": int, "default": 2018}),
        Option("no-sweeps", {"action": "store_true", "help": "only Figure 2's ε sweep: no cardinality or dimension "
                                                              "sweep (Figures 3–4)"}),
    ]


def run_experiment(args: argparse.Namespace) -> int:
    from launcher.protocols.du import experiment as experiment_du
    from mpdp.learning.datasets import data_directory

    names = args.datasets.split(",") if args.datasets else ["breast-cancer"]
    if not args.datasets and data_directory(args.data_dir) is not None:
        names.insert(0, "a9a")
    if args.trials < 1 or args.rounds < 1 or args.local_epochs < 1 or min(args.epsilons) <= 0:
        raise ValueError("--trials, --rounds, --local-epochs and every ε must be positive")
    report = experiment_du.run(args.out, names, args.data_dir, args.epsilons, args.trials, args.rounds,
                               args.local_epochs, args.regularization, args.seed, args.sweep_epsilon,
                               sweeps=not args.no_sweeps)
    print(experiment_du.misclassification_table(report))
    print(f"report written to {args.out / 'du_report.json'}; plots: {', '.join(report['plots'])}")
    args.json_report = report  # `--format json`: the figures themselves, not their table
    return 0


async def scale_session(topology, client_data: dict, parties: int) -> Report:
    """Three rounds under secure aggregation."""
    from launcher.protocols.du.client import run_du_session, session_parameters

    parameters = session_parameters(topology, client_data, "objective", 1.0, rounds=3, secure_aggregation=True,
                                    local_epochs=5)
    report = await run_du_session(topology, client_data, parameters)
    return {"wall_s": report["timing"]["client_round_trip"], "traffic": report["traffic"]}


async def fault_session(topology, client_data: dict, deadline: float, session_id: str) -> Report:
    """Under secure aggregation, so that every role takes part."""
    from launcher.protocols.du.client import run_du_session, session_parameters

    parameters = session_parameters(topology, client_data, "functional", 1.0, 2, True, local_epochs=5)
    return await run_du_session(topology, client_data, parameters, deadline, session_id=session_id)


def released_steps(report: Report, client_data: dict) -> list:
    """θ on x̃ = (x / max(1, ‖x‖₁), 1), cut on the public rows."""
    import numpy as np
    from sklearn.preprocessing import FunctionTransformer

    from mpdp.learning import released
    from mpdp.protocols.du.objectives import augment

    theta = np.array(report["result"]["theta"])
    return [("l1_rows", FunctionTransformer(augment)),
            ("model", released.linear(theta, -released.cut_of(report), [0, 1]))]


def verify_report(report: Report, ca_certificate: bytes | None, public_key) -> list[str]:
    from launcher.protocols.du.transcript import verify

    return verify(report, ca_certificate, public_key)
def audit(*args, **keywords) -> Report:
    """`mpdp audit du` (launcher/protocols/du/audit.py), imported when an audit runs."""
    from launcher.protocols.du.audit import audit_du

    return audit_du(*args, **keywords)



def proofs_bench_options() -> list[Option]:
    """`mpdp bench du-proofs`'s options (launcher/protocols/du/bench_proofs.py), imported when the parser is built."""
    from launcher.protocols.du import bench_proofs

    return bench_proofs.options()


def proofs_bench(args: argparse.Namespace) -> int:
    from launcher.protocols.du import bench_proofs

    return bench_proofs.run(args)



def demo_reference(args: argparse.Namespace, split, draw: int, colluding: int, model: str | None) -> dict:
    """`mpdp demo`'s in-process reference (launcher/protocols/du/demo_reference.py), imported when one runs."""
    from launcher.protocols.du.demo_reference import release

    return release(args, split, draw, colluding, model)


PROTOCOL = LauncherProtocol(
    name="du",
    help="Du–Li–Li OFPA / OFAA and their correct counterparts: rounds of weighted averaging",
    options=session_options,
    run=run_session,
    refusal=refusal,
    summary=summary,
    experiment=Experiment("Du–Li–Li, Section 4 (a9a and breast cancer stand in for the paper's data)",
                          experiment_options, run_experiment,
                          full=("--datasets", "a9a,breast-cancer"),
                          quick=("--datasets", "breast-cancer", "--epsilons", "1", "--trials", "2", "--rounds", "1",
                                 "--local-epochs", "2"),
                          table=results.TABLE),
    binary_only=True,
    # Breast cancer, 5 parties, random splits with one noise draw each (the reference; docs/demo.md): at ε = 1 per
    # round × 5 rounds 26 % of 300 releases fell below the majority class; one round at ε = 6, none of 1 000.
    demo_settings=DemoSettings(
        {"rounds": 1, "epsilon": 6.0},
        why="the functional mechanism adds its noise every round, and on ~75 rows per party ε = 1 per round is 5× "
            "the signal; one round at ε = 6 is 0.87× of it, for a composed ε of 6 (`run`'s 1 per round × 5 "
            "rounds = 5)"),
    more_benches=(Bench("one proven Du upload: build, check and size", proofs_bench_options, proofs_bench,
                        target="du-proofs"),),
    scale=Scale(sizes=(5, 10, 20, 40), parties_per_process=5, rows_per_party=60, session=scale_session,
                target_exponent=1.1),
    faults=Faults(received={"party": ["Step/du/model", "Step/du/decryption_request"],
                            "aggregator": ["AwaitResult/du/open", "Step/du/upload", "Step/du/partial_decryptions"]},
                  sent={"aggregator": ["Step/du/model", "Step/du/decryption_request"],
                        "party": ["Step/du/upload", "Step/du/partial_decryptions"]},
                  session=fault_session, absent=("curator",)),
    charge=charge,
    closed_form=closed_form,
    verify=verify_report,
    message_type=chart.MESSAGE,
    stages=chart.STAGES,
    noise_check=noise.check,
    noise_spread=noise.spread,
    audit_noise="functional",
    audit=Audit(("functional", "objective", "ofaa", "ofpa"), audit),
    release=released_steps,
    compose_demo="",  # as `mpdp demo` runs it
    demo_reference=demo_reference,
)
