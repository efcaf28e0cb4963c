"""Pathak–Rane–Raj's entry in the launcher: session options, one session, its summary, the Figure 2 experiment."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from launcher.common.options import key_bits, warn_small_key, write_json
from launcher.common.progress import progress
from launcher.common.summary import traffic_lines
from launcher.protocol import (
    Audit,
    Bench,
    DemoSettings,
    DeploymentShape,
    Experiment,
    Faults,
    Hardening,
    HardeningTarget,
    LauncherProtocol,
    Option,
    Report,
    Scale,
)
from launcher.protocols.pathak import chart, noise, results
from launcher.protocols.pathak.closed_form import closed_form
from launcher.protocols.pathak.session_parameters import parameters
from mpdp.cryptocore.keys.key_sizes import DEFAULT_KEY_BITS


def session_options() -> list[Option]:
    from mpdp.privacy.mechanisms import CALIBRATIONS, MECHANISMS

    return [
        Option("epsilon", {"type": float, "default": 1.0}),
        Option("delta", {"type": float, "default": 1e-5, "help": "δ of the Gaussian mechanism"}),
        Option("lambda", {"type": float, "default": 0.01,
                          "help": "λ of the λ/2·‖w‖² regulariser (the paper's λ·wᵀw is λ/2 here)"},
               dest="regularization"),
        Option("mechanism", {"choices": MECHANISMS, "default": "l2-laplace"}),
        Option("calibration", {"choices": CALIBRATIONS, "default": "tight"}),
        Option("n-min", {"type": int, "default": 1, "help": "public lower bound on n_j for the clamp bound"}),
        Option("noise-source", {"choices": ["selected", "distributed"], "default": "selected",
                                "help": "selected: the smallest party's noise (the paper); distributed: every party "
                                        "adds a discrete Gaussian share, no one knows the noise, Stage 1 skipped "
                                        "(needs --mechanism gaussian; calibrated to --n-min)"}),
        Option("calibrate-to", {"choices": ["n_1", "n_min"], "default": None,
                                "help": "the n the noise is calibrated to: the secret smallest n_j (n_1, the paper) "
                                        "or the public --n-min (default: n_min with distributed noise, else n_1)"}),
        Option("deadline", {"type": float, "default": 300.0, "help": "session deadline, seconds"}),
        Option("allow-paper-calibration", {"action": "store_true",
                                           "help": "run a paper calibration that does not deliver the ε asked for "
                                                   "(refused without this flag)"}),
    ]


def charge(args: argparse.Namespace, shape: DeploymentShape):
    """What one session with these options charges every party: its parameters as `run_session` makes them."""
    return parameters(args, shape.parties, shape.client_data["test_features"].shape[1]).guarantee()


def refusal(args: argparse.Namespace, topology, client_data: dict) -> str | None:
    chosen = parameters(args, len(topology.parties), client_data["test_features"].shape[1])
    delivered = chosen.noise.effective_epsilon()
    if delivered > chosen.epsilon * (1 + 1e-6) and not args.allow_paper_calibration:
        return (f"--mechanism {chosen.mechanism} with --calibration {chosen.calibration} delivers ε = "
                f"{delivered:.3g}, not the ε = {chosen.epsilon:g} asked for (i.i.d. Laplace scaled to an L2 "
                "sensitivity); pass --allow-paper-calibration to run it anyway, or use --mechanism l2-laplace")
    return None


def run_session(args: argparse.Namespace, topology, client_data: dict) -> Report:
    from launcher.protocols.pathak.client import run_pathak_session

    refused = refusal(args, topology, client_data)
    if refused:
        raise ValueError(refused)
    chosen = parameters(args, len(topology.parties), client_data["test_features"].shape[1])
    if chosen.noise_source == "selected":
        progress("warning: --noise-source selected (the paper's) trusts the smallest party to add its noise: one "
                 "that under-reports n_j wins Stage 1 and can add none. --noise-source distributed counts K − 1 "
                 "shares and tolerates one party adding none (docs/malicious-party.md)")
    report = asyncio.run(run_pathak_session(topology, client_data, chosen))
    report["evaluator_view"]["party_sizes"] = client_data["party_sizes"].tolist()  # the launcher's split
    return report


def summary(report: Report) -> str:
    p, r, privacy, evaluator = report["parameters"], report["result"], report["privacy"], report["evaluator_view"]
    lines = [
        f"Pathak–Rane–Raj on {p['dataset']}: K = {p['parties']} parties, d = {p['dimension']}, λ = {p['regularization']}",
        f"  privacy: {privacy['mechanism']} / {privacy['calibration']} calibration, ε = {privacy['epsilon']}"
        + (f" (really gives ε = {privacy['epsilon_effective']:.3g})" if "epsilon_effective" in privacy else "")
        + f", δ = {privacy['delta']:.2g}; unit: {privacy['unit']}",
        f"  noise: {privacy['noise_source']}; calibrated to {privacy['calibrated_to']}"
        + (f"; {privacy['stage1']}" if "stage1" in privacy else ""),
        f"  ŵˢ: norm {r['norm']:.4f}, test accuracy {r['test_accuracy']:.1%}",
        f"  secure comparisons of ℓ = {p['comparison_bits']} bits; noise slots of {p['noise_value_bits']} bits",
        "  timing: " + ", ".join(f"{k} {v:.2f} s" for k, v in report["timing"].items() if isinstance(v, float)),
        f"  hides {report['hides']}; not hidden: {'; '.join(report['does_not_hide'])}",
        "  evaluator's view (operator only; no protocol role sees it):",
        f"    party sizes {evaluator.get('party_sizes', '?')}",
        *traffic_lines(evaluator["traffic"], "    traffic (each RPC counted once):"),
    ]
    return "\n".join(lines)


def experiment_options() -> list[Option]:
    return [
        Option("out", {"type": Path, "required": True}),
        Option("data-dir", {"help": "directory holding a9a (default: $MPDP_DATA_DIR)"}),
        Option("runs", {"type": int, "default": 200}),
        Option("epsilons", {"type": float, "nargs": "+", "default": [0.01, 0.03, 0.1, 0.3, 1, 3, 10]}),
        Option("lambdas", {"type": float, "nargs": "+", "default": [1.0, 0.001]}),
        Option("delta", {"type": float, "default": 1e-5, "help": "δ of the Gaussian mechanism"}),
        Option("seed", {"type": int, "default": 2010}),
        Option("wire-samples", {"type": int, "default": 2,
                                "help": "points re-run over the wire (split 10, last λ) and compared with the reference"}),
        Option("bits", {"type": key_bits, "default": DEFAULT_KEY_BITS, "help": "key size of those sessions"}),
    ]


def run_experiment(args: argparse.Namespace) -> int:
    from launcher.protocols.pathak import experiment as experiment_pathak

    report = experiment_pathak.run(args.out, args.data_dir, args.runs, args.epsilons, args.lambdas, args.delta,
                                   args.seed, args.wire_samples, args.bits)
    print(experiment_pathak.error_table(report))
    for check in report.get("wire_checks", []):
        print(f"over the wire ({check['key_bits']}-bit keys): {check['mechanism']}/{check['calibration']} "
              f"ε={check['epsilon']} λ={check['lambda']} split {check['split']}: max |ŵˢ − reference| = "
              f"{check['max_abs_difference']:.1e} ({'matches' if check['matches'] else 'DOES NOT MATCH'}), "
              f"{check['session_seconds']:.1f} s")
    print(f"report written to {args.out / 'pathak_report.json'}; plots: {', '.join(report['plots'])}")
    args.json_report = report  # `--format json`: the figures themselves, not their table
    return 0


def _probe_parameters(topology, client_data: dict, **deadline):
    from mpdp.protocols.pathak.parameters import PathakParameters

    return PathakParameters(epsilon=1.0, delta=1e-5, regularization=0.01, mechanism="l2-laplace", calibration="tight",
                            parties=len(topology.parties), dimension=client_data["test_features"].shape[1], **deadline)


async def scale_session(topology, client_data: dict, parties: int) -> Report:
    from launcher.protocols.pathak.client import run_pathak_session

    report = await run_pathak_session(topology, client_data, _probe_parameters(topology, client_data))
    return {"wall_s": report["timing"]["protocol"], "traffic": report["evaluator_view"]["traffic"]}


async def fault_session(topology, client_data: dict, deadline: float, session_id: str) -> Report:
    from launcher.protocols.pathak.client import run_pathak_session

    parameters = _probe_parameters(topology, client_data, deadline_seconds=deadline)
    return await run_pathak_session(topology, client_data, parameters, session_id=session_id)


def _hardening_parameters(topology, client_data: dict, deadline: float):
    return _probe_parameters(topology, client_data, deadline_seconds=deadline)


def _open(parameters) -> dict:
    """The body of the Step that opens (not starts) a session with `parameters` at a participant."""
    from mpdp.proto.v1 import pathak_pb2

    return {"pathak": pathak_pb2.PathakMessage(open=parameters.to_proto())}


def _step(labels: list[str]) -> list[str]:
    return [f"Step/pathak/{label}" for label in labels]


FAULTS_RECEIVED = {  # traffic labels each kind of Pathak participant receives, in protocol order
    "party": _step(["open", "start", "party_key", "curator_key", "commitment", "reveal", "routed_share",
                    "barrier_release", "masked_share", "indicator_element", "share"]),
    "leader": _step(["open", "start", "curator_key", "commitment", "reveal", "routed_share", "barrier_ready",
                     "masked_share", "masked_value", "compare_request", "indicator", "selected_noise", "share"]),
    "curator": _step(["open", "start", "party_public_key", "stage1_element", "ready_to_compare", "compare_reply",
                      "masked_noise", "share"]),
}
FAULTS_SENT = {
    "leader": _step(["party_key", "barrier_release", "indicator_element", "compare_reply", "masked_noise"]),
    "party": _step(["commitment", "reveal", "routed_share", "stage1_element", "masked_value", "selected_noise",
                    "barrier_ready", "share"]),
    "curator": _step(["curator_key", "masked_share", "compare_request", "indicator", "share"]),
}


def bench_options() -> list[Option]:
    return [
        Option("parties", {"default": "5,10,20,32", "help": "comma-separated K (default 5,10,20,32)"}),
        Option("bits", {"type": key_bits, "default": DEFAULT_KEY_BITS, "help": "modulus size (default 2048)"}),
        Option("sessions", {"type": int, "default": 2,
                            "help": "online sessions per K after one cold one, each after the leader's offline phase "
                                    "(default 2; the median is shown)"}),
        Option("dataset", {"default": "a9a", "help": "a9a (default; needs --data-dir) or breast-cancer"}),
        Option("data-dir", {"help": "directory holding a9a (default: $MPDP_DATA_DIR)"}),
        Option("json", {"type": Path, "help": "also write the figures to this JSON file"}),
    ]


def run_bench(args: argparse.Namespace) -> int:
    from launcher.protocols.pathak import bench as bench_pathak

    warn_small_key(args.bits)
    parties = [int(k) for k in args.parties.split(",")]
    report = bench_pathak.run(parties, args.bits, args.sessions, args.dataset, args.data_dir)
    print(bench_pathak.summary(report))
    write_json(args.json, report)
    args.json_report = report
    return 0


def released_steps(report: Report, client_data: dict) -> list:
    """w, cut on the public rows: class 1 where x·w exceeds the cut."""
    import numpy as np

    from mpdp.learning import released

    return [("model", released.linear(np.array(report["result"]["w"]), -released.cut_of(report), [0, 1]))]


def verify_report(report: Report, ca_certificate: bytes | None, public_key) -> list[str]:
    """`mpdp verify` (launcher/protocols/pathak/transcript.py), imported when a report is verified."""
    from launcher.protocols.pathak.transcript import verify

    return verify(report, ca_certificate, public_key)


def audit(*args, **keywords) -> Report:
    """`mpdp audit pathak` (launcher/protocols/pathak/audit.py), imported when an audit runs."""
    from launcher.protocols.pathak.audit import audit_pathak

    return audit_pathak(*args, **keywords)



def demo_reference(args: argparse.Namespace, split, draw: int, colluding: int, model: str | None) -> dict:
    """`mpdp demo`'s in-process reference (launcher/protocols/pathak/demo_reference.py), imported when one runs."""
    from launcher.protocols.pathak.demo_reference import release

    return release(args, split, draw, colluding, model)



def wire_difference(*args) -> float:
    """`mpdp audit pathak --wire-sample` (launcher/protocols/pathak/wire_check.py), imported when one runs."""
    from launcher.protocols.pathak.wire_check import difference

    return difference(*args)


PROTOCOL = LauncherProtocol(
    name="pathak",
    help="Pathak–Rane–Raj 2010 multiparty differentially private classifier",
    options=session_options,
    run=run_session,
    refusal=refusal,
    summary=summary,
    experiment=Experiment("Pathak et al., Section 5 / Figure 2 (needs a9a)", experiment_options, run_experiment,
                          full=(),
                          quick=("--runs", "3", "--epsilons", "1", "--lambdas", "0.001", "--wire-samples", "0"),
                          needs_a9a=True,
                          table=results.TABLE),
    bench=Bench("a Pathak session's wall time by stage for several K", bench_options, run_bench),
    scale=Scale(sizes=(5, 10, 20, 32), parties_per_process=1, rows_per_party=60, session=scale_session),
    faults=Faults(received=FAULTS_RECEIVED, sent=FAULTS_SENT, session=fault_session, absent=("aggregator",)),
    # The hardening deployment fuzzes Pathak: its sessions open at parties and curator, which each hand out a share.
    hardening=Hardening("Pathak", concurrent=10, session=fault_session, target=HardeningTarget(
        parameters=_hardening_parameters, deadline=lambda parameters: parameters.deadline_seconds, open=_open,
        opened_at=("party", "curator"), publishes=("party", "curator"))),
    charge=charge,
    closed_form=closed_form,
    verify=verify_report,
    message_type=chart.MESSAGE,
    stages=chart.STAGES,
    noise_check=noise.check,
    noise_spread=noise.spread,
    audit_noise="laplace-paper",
    # The wire sample within 2^−20 per coordinate: the fixed-point encoding's resolution.
    audit=Audit(("laplace-paper", "l2-laplace", "gaussian", "distributed"), audit, wire=(wire_difference, 2.0**-20)),
    # Breast cancer, 1 000 random splits, one noise draw each (the reference; docs/demo.md): at λ = 0.01 the noise
    # is 1.4× the model bound and about a quarter of releases fell below the majority class; at λ = 0.3, 2 did.
    demo_settings=DemoSettings(
        {"regularization": 0.3},
        why="on ~380 training rows the noise at λ = 0.01 is 1.4× the largest model (one draw decides); at λ = 0.3 "
            "it is 0.26× (noise ∝ 1/λ, the model bound ∝ 1/√λ); ε is unchanged"),
    release=released_steps,
    compose_demo="",  # as `mpdp demo` runs it (at ε = 0.5 it fell below the majority class in one of seven draws)
    demo_reference=demo_reference,
)
