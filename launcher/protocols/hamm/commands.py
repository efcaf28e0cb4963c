"""Hamm–Cao–Belkin's entry in the launcher: session options, one session and its summary."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from launcher.common.options import DEFAULT_KEY_BITS, key_bits
from launcher.common.summary import traffic_lines
from launcher.protocol import (
    Audit,
    DemoDeployment,
    DemoSettings,
    DeploymentShape,
    Experiment,
    Faults,
    LauncherProtocol,
    Option,
    Report,
    Scale,
)
from launcher.protocols.hamm import chart, noise, results
from launcher.protocols.hamm.closed_form import closed_form
from mpdp.vote_proofs.assurance import OPTIONS as ASSURANCES
from mpdp.vote_proofs.assurance import Assurance


def _epsilon(value: str) -> float:
    """A positive ε, or `inf` for the non-private run (1/ε = 0)."""
    epsilon = float(value)
    if not epsilon > 0:
        raise argparse.ArgumentTypeError("ε must be positive (or inf: non-private)")
    return epsilon


def session_options() -> list[Option]:
    return [
        Option("method", {"choices": ["vote", "soft"], "default": "soft",
                          "help": "Charlie's training: majority labels (vote) or α-weighted ERM (soft)"}),
        Option("epsilon", {"type": _epsilon, "default": 1.0,
                           "help": "ε of the released classifier (of the counts with --noisy-counts); inf: no noise"}),
        Option("delta", {"type": float, "default": 1e-5, "help": "δ of the noisy counts"}),
        Option("lambda", {"type": float, "default": 1e-4, "help": "λ of λ/2·‖w‖² (Hamm's setting: 1e-4)"},
               dest="regularization"),
        Option("noisy-counts", {"action": "store_true",
                                "help": "parties add noise shares so that Charlie's view is DP too"}),
        Option("count-noise", {"choices": ["binomial", "skellam"], "default": "binomial",
                               "help": "the shares with --noisy-counts: Bin(N_i, ½) or Sk(μ/⌈τM⌉) (privacy.md)"}),
        Option("protect-aux", {"action": "store_true", "help": "Section 4.5: protect X_aux too (soft only)"}),
        Option("assurance", {"choices": ASSURANCES, "default": "none",
                             "help": "how much of each party is checked, each level adding to the one before "
                                     "(docs/malicious-party.md): proven-votes, each party proves its votes one-hot "
                                     "(binary: a bit) and a failed proof excludes it by name; verifiable-noise (with "
                                     "--noisy-counts), each commits to its noise bits before a joint coin flips them, "
                                     "so its share is Bin(N_i, ½) whatever it chose; holders-check-bits, every key "
                                     "holder checks every committed bit's proof too, so an aggregator colluding with "
                                     "one party cannot pass it non-bits (default none)"}),
        Option("deadline", {"type": float, "default": 300.0, "help": "vote collection deadline, seconds"}),
    ]


def charge(args: argparse.Namespace, shape: DeploymentShape):
    """What one session with these options charges every party: its parameters as `session_parameters` makes
    them for `run_session`."""
    from mpdp.protocols.hamm.parameters import DEFAULT_HONEST_FRACTION, HammParameters

    aux = shape.client_data["public_features"]
    return HammParameters(args.method, args.epsilon, args.delta, args.regularization,
                          int(shape.client_data["classes"]), shape.parties, aux.shape[0], aux.shape[1],
                          args.noisy_counts, args.protect_aux, DEFAULT_HONEST_FRACTION, shape.key_id, args.count_noise,
                          shape.colluding, Assurance.parse(args.assurance)).guarantee()


def run_session(args: argparse.Namespace, topology, client_data: dict) -> Report:
    from launcher.protocols.hamm.client import evaluator_view, run_hamm_session, session_parameters

    parameters = session_parameters(topology, client_data, args.method, args.epsilon, args.delta,
                                    args.regularization, args.noisy_counts, args.protect_aux,
                                    count_noise=args.count_noise, assurance=Assurance.parse(args.assurance))
    report = asyncio.run(run_hamm_session(topology, client_data, parameters, args.deadline))
    report["evaluator_view"] = evaluator_view(topology, client_data, report)
    return report


def _baseline_lines(view: dict) -> list[str]:
    if "unavailable" in view:
        return [f"  baselines: unavailable ({view['unavailable']})"]
    avg = view["avg"]
    average = (f"avg {avg['at_epsilon']:.1%} at this ε (non-private {avg['non_private']:.1%})" if "at_epsilon" in avg
               else f"avg n/a ({avg['unavailable']})")
    return ["  baselines on the same split (operator's view; no protocol role sees it): "
            f"batch {view['batch']:.1%}, {average}, indiv {view['indiv']['mean']:.1%} "
            f"(local models: {', '.join(view['local_models'])})"]


def summary(report: Report) -> str:
    p, r, privacy = report["parameters"], report["result"], report["privacy"]
    epsilon = "∞ (non-private)" if p["epsilon"] is None else p["epsilon"]
    lines = [
        f"Hamm–Cao–Belkin on {p['dataset']}: M = {p['parties']} parties vote on N = {p['aux_points']} auxiliary "
        f"points ({p['classes']} classes, d = {p['dimension']}), {p['method']}, λ = {p['lambda']}, "
        f"{p['key_bits']}-bit threshold Paillier",
        f"  trust: {privacy['trust']}",
        f"  release: {privacy['release_mechanism']}, ε = {epsilon}"
        + (f"; sensitivity {privacy['release_sensitivity']}" if "release_sensitivity" in privacy else ""),
        f"  voters M′ = {r['voters']} of {p['parties']}; decryptors {r['decryptors']}"
        + (f", rejected shares {r['rejected_shares']}" if r["rejected_shares"] else ""),
        f"  w_p test accuracy {r['test_accuracy']:.1%} (majority class {r['majority_class_rate']:.1%})",
        *_baseline_lines(report.get("evaluator_view", {"unavailable": "not computed"})),
        *traffic_lines(report["traffic"]),
        "  timing: " + ", ".join(f"{stage} {seconds:.2f} s" for stage, seconds in report["timing"].items()),
    ]
    if p["noisy_counts"]:
        share = (f"N_i = {privacy['tosses_per_party']}" if "tosses_per_party" in privacy else
                 f"μ/⌈τM⌉ = {privacy['mu_per_contributor']:.2f} (σ of the sum {privacy['noise_std']:.1f}; RDP bound "
                 f"ε = {privacy['epsilon_rdp_bound']:.2f})")
        lines.insert(2, f"  counts: {privacy['mechanism']}, {share}, "
                        f"(ε = {privacy['epsilon']}, δ = {privacy['delta']}) per {privacy['unit']}")
    return "\n".join(lines)


def experiment_options() -> list[Option]:
    return [
        Option("out", {"type": Path, "required": True}),
        Option("datasets", {"help": "comma-separated (default: digits, and a9a first when a data directory is given)"}),
        Option("data-dir", {"help": "directory holding a9a (default: $MPDP_DATA_DIR)"}),
        Option("parties", {"type": int, "help": "M for every data set (default: a9a 1000, digits 100)"}),
        Option("inverse-epsilons", {"type": float, "nargs": "+", "default": [0, 0.1, 1, 10, 100],
                                    "help": "privacy levels 1/ε (0: non-private)"}),
        Option("trials", {"type": int, "default": 100, "help": "noise draws per private point"}),
        Option("lambda", {"type": float, "default": 1e-4}, dest="regularization"),
        Option("seed", {"type": int, "default": 2016}),
        Option("wire-samples", {"type": int, "default": 1,
                                "help": "points per data set re-run over the wire and compared with the reference"}),
        Option("bits", {"type": key_bits, "default": DEFAULT_KEY_BITS, "help": "key size of those sessions"}),
        Option("parties-per-process", {"type": int, "default": 250, "help": "logical parties per process (wire)"}),
        Option("splits", {"type": int, "default": 10, "help": "splits the non-private methods are averaged over"}),
        Option("ray", {"nargs": "?", "const": "", "metavar": "ADDRESS",
                       "help": "run the wire checks' role hosts as actors on this Ray cluster (none: a local one; "
                               "docs/ray.md)"}),
    ]


def run_experiment(args: argparse.Namespace) -> int:
    from launcher.protocols.hamm import experiment as experiment_hamm
    from mpdp.learning.datasets import data_directory

    names = args.datasets.split(",") if args.datasets else ["digits"]
    if not args.datasets and data_directory(args.data_dir) is not None:
        names.insert(0, "a9a")
    if any(inverse < 0 for inverse in args.inverse_epsilons) or args.trials < 1 or args.splits < 1:
        raise ValueError("1/ε must be ≥ 0, --trials ≥ 1 and --splits ≥ 1")
    if args.ray is not None:
        from launcher.deployment import ray_hosts

        ray_hosts.require_ray()  # before hours of reference computation
    report = experiment_hamm.run(args.out, names, args.parties, args.data_dir, args.inverse_epsilons, args.trials,
                                 args.regularization, args.seed, args.wire_samples, args.bits,
                                 args.parties_per_process, args.splits, args.ray)
    print(experiment_hamm.accuracy_table(report))
    for check in report["wire_checks"]:
        print(f"over the wire ({check['key_bits']}-bit keys, M = {check['parties']}): {check['dataset']} "
              f"{check['method']} 1/ε = {check['inverse_epsilon']:g}: max |w_p − reference| = "
              f"{check['max_abs_difference']:.1e} ({'matches' if check['matches'] else 'DOES NOT MATCH'}), "
              f"{check['session_seconds']:.1f} s")
    print(f"report written to {args.out / 'hamm_report.json'}; plot: {args.out / report['plot']}")
    args.json_report = report  # `--format json`: the figures themselves, not their table
    return 0 if all(check["matches"] for check in report["wire_checks"]) else 1


async def scale_session(topology, client_data: dict, parties: int) -> Report:
    from launcher.protocols.hamm import client as hamm_client

    parameters = hamm_client.session_parameters(topology, client_data, "vote", 1.0, 1e-5, 1e-4)
    report = await hamm_client.run_hamm_session(topology, client_data, parameters)
    return {"wall_s": report["timing"]["client_round_trip"], "traffic": report["traffic"]}


async def fault_session(topology, client_data: dict, deadline: float, session_id: str) -> Report:
    from launcher.protocols.hamm import client as hamm_client

    parameters = hamm_client.session_parameters(topology, client_data, "soft", 1.0, 1e-5, 0.01)
    return await hamm_client.run_hamm_session(topology, client_data, parameters, deadline_s=deadline,
                                              session_id=session_id)

def replot_experiment(report: dict, out) -> str:
    from launcher.protocols.hamm import experiment as experiment_hamm

    report["wire_checks"] = [check for run in report.pop("runs_wire_checks", []) for check in run]
    return experiment_hamm.plot(report, out)


def released_steps(report: Report, client_data: dict) -> list:
    """w_p: a binary release cut on the public rows, a multiclass one (one row per class) by the largest score."""
    import numpy as np

    from mpdp.learning import released

    weights = np.array(report["result"]["weights"])
    if weights.ndim == 1:
        return [("model", released.linear(weights, -released.cut_of(report), [0, 1]))]
    return [("model", released.linear(weights, 0.0, np.arange(len(weights))))]


def verify_report(report: Report, ca_certificate: bytes | None, public_key) -> list[str]:
    """`mpdp verify` (launcher/protocols/hamm/transcript.py), imported when a report is verified."""
    from launcher.protocols.hamm.transcript import verify

    return verify(report, ca_certificate, public_key)


def audit(*args, **keywords) -> Report:
    """`mpdp audit hamm` (launcher/protocols/hamm/audit.py), imported when an audit runs."""
    from launcher.protocols.hamm.audit import audit_hamm

    return audit_hamm(*args, **keywords)



def demo_reference(args: argparse.Namespace, split, draw: int, colluding: int, model: str | None) -> dict:
    """`mpdp demo`'s in-process reference (launcher/protocols/hamm/demo_reference.py), imported when one runs."""
    from launcher.protocols.hamm.demo_reference import release

    return release(args, split, draw, colluding, model)


PROTOCOL = LauncherProtocol(
    name="hamm",
    help="Hamm–Cao–Belkin 2016 ensemble transfer: threshold vote counting on Charlie's public data",
    options=session_options,
    run=run_session,
    summary=summary,
    experiment=Experiment("Hamm et al., Section 6 (a9a M = 1 000 when a data directory is given; digits)",
                          experiment_options, run_experiment, replot=replot_experiment,
                          full=("--datasets", "a9a,har,digits"),
                          quick=("--datasets", "digits", "--parties", "10", "--inverse-epsilons", "0", "1", "--trials", "2",
                                 "--splits", "2", "--wire-samples", "0"),
                          table=results.TABLE),
    # Measured on breast cancer (1024-bit, one draw each): M = 5 with output perturbation 58.9 % (the majority
    # class; its noise is ~1 000× the model); M = 60 with noisy counts 83.2 % (balanced 79.5 %).
    demo_deployment=DemoDeployment(
        parties=60, parties_per_process=30, model="logistic-exact",
        why="Hamm's noise falls as 1/M: at 5 parties it is about 1 000× the model; 60 logical parties on this host "
            "with noisy counts can learn"),
    # Breast cancer, 60 logical parties, noisy counts at ε = 1, 1 000 random splits with one noise draw each (the
    # reference; docs/demo.md): at λ = 1e-4 1 % of releases fell below the majority class; at λ = 1e-2 none did.
    demo_settings=DemoSettings(
        {"noisy_counts": True, "regularization": 1e-2},
        why="the noise is on the counts (Charlie's view is DP too) and the release is post-processing of them, so "
            "λ costs no privacy: λ = 1e-2 steadies Charlie's fit on counts whose noise std (≈ 45) is near M = 60; "
            "ε is unchanged"),
    scale=Scale(sizes=(500, 1000, 2500, 5000), parties_per_process=250, rows_per_party=12, session=scale_session,
                target_exponent=1.1, public_points=True, startup_timeout=900),
    faults=Faults(received={"party": ["Step/hamm/queries", "Step/hamm/decryption_request"],
                            "aggregator": ["Step/hamm/queries", "Step/hamm/votes"],
                            "curator": ["AwaitResult/hamm/open", "Step/hamm/aggregate", "Step/hamm/partial_decryptions"]},
                  sent={"curator": ["Step/hamm/queries"],
                        "aggregator": ["Step/hamm/queries", "Step/hamm/decryption_request", "Step/hamm/aggregate"],
                        "party": ["Step/hamm/votes", "Step/hamm/partial_decryptions"]},
                  session=fault_session),
    charge=charge,
    closed_form=closed_form,
    verify=verify_report,
    message_type=chart.MESSAGE,
    stages=chart.STAGES,
    noise_check=noise.check,
    noise_spread=noise.spread,
    audit_noise="binomial",
    audit=Audit(("binomial", "skellam"), audit, colluding=True),
    release=released_steps,
    # Hamm's noise falls as 1/M: at M = 5 the check puts its noisy counts at 23× their margin and would stop it (on
    # the engine 4 of 8 draws beat the majority class); it runs `--anyway` at a small ε, its summary beside the
    # check's warning (`mpdp demo` runs it with 60 logical parties).
    compose_demo="--epsilon 0.5 --delta 1e-6 --anyway",
    demo_reference=demo_reference,
)
