"""Du–Li–Li's entry in the launcher: run options, one run and its summary."""

from __future__ import annotations

import argparse
import asyncio

from launcher.protocol import LauncherProtocol, Option, Report
from launcher.summary import traffic_lines


def session_options() -> list[Option]:
    from du.parameters import METHODS

    return [
        Option("method", {"choices": METHODS, "default": "functional",
                          "help": "ofpa / ofaa: the paper's calibrations (not proven DP); objective, functional: "
                                  "the correct counterparts; none: LR_NoPrivacy"}),
        Option("epsilon", {"type": float, "default": 1.0, "help": "ε per round (the report composes the run)"}),
        Option("delta", {"type": float, "default": 1e-5, "help": "δ of the accountant's composed ε"}),
        Option("rounds", {"type": int, "default": 5, "help": "round limit R"}),
        Option("tolerance", {"type": float, "default": 0.0, "help": "stop when ‖θ_{k+1} − θ_k‖ ≤ this (0: R rounds)"}),
        Option("local-epochs", {"type": int, "default": 40, "help": "gradient epochs per round from the warm start"}),
        Option("learning-rate", {"type": float, "default": 1.0}),
        Option("lambda", {"type": float, "default": 0.01,
                          "help": "λ: objective perturbation's regulariser and the convexity repair's floor"},
               dest="regularization"),
        Option("bound", {"type": float, "default": 100.0, "help": "B: uploads are clipped to [−B, B]"}),
        Option("secure-aggregation", {"action": "store_true",
                                      "help": "uploads as a threshold sum: the server decrypts only the weighted sum"}),
        Option("deadline", {"type": float, "default": 60.0, "help": "round deadline, seconds"}),
    ]


def run_session(args: argparse.Namespace, topology, client_data: dict) -> Report:
    from launcher.du_client import run_du_session, session_parameters

    parameters = session_parameters(topology, client_data, args.method, args.epsilon, args.rounds,
                                    args.secure_aggregation, args.delta, args.tolerance, args.local_epochs,
                                    args.learning_rate, args.regularization, args.bound)
    return asyncio.run(run_du_session(topology, client_data, parameters, args.deadline))


def summary(report: Report) -> str:
    p, r, privacy = report["parameters"], report["result"], report["privacy"]
    if privacy.get("epsilon_per_round") is None:
        claim = "none (LR_NoPrivacy)"
    else:
        effective = privacy["epsilon_per_round_effective"]
        claim = (f"ε = {privacy['epsilon_per_round']} per round"
                 + (" — no finite ε holds" if effective is None else
                    f" (really {effective:.3g})" if effective != privacy["epsilon_per_round"] else "")
                 + f"; {p['rounds']} rounds: {privacy['epsilon_composed_basic']:.3g} by basic composition"
                 + (f", {privacy['epsilon_composed_accountant']:.3g} at δ = {privacy['delta']:g} by the PLD accountant"
                    if "epsilon_composed_accountant" in privacy else ""))
    lines = [
        f"Du–Li–Li on {p['dataset']}: K = {p['parties']}, d = {p['dimension']}, {p['method']}, "
        f"{p['local_epochs']} local epochs per round"
        + (f", secure aggregation ({p['key_bits']}-bit threshold Paillier)" if p["secure_aggregation"] else ""),
        f"  privacy: {privacy['mechanism']}",
        f"  claim: {claim}",
        f"  {r['rounds']} rounds ({r['stopped']})" + (f"; dropped parties {r['dropped']}" if r["dropped"] else ""),
        f"  test misclassification {r['test_misclassification']:.1%} (majority class "
        f"{1 - r['majority_class_rate']:.1%})",
        *traffic_lines(report["traffic"]),
        f"  time per round {report['timing']['per_round']:.2f} s",
    ]
    return "\n".join(lines)


PROTOCOL = LauncherProtocol(
    name="du",
    help="Du–Li–Li OFPA / OFAA and their correct counterparts: rounds of weighted averaging",
    options=session_options,
    run=run_session,
    summary=summary,
    in_demo=False,  # binary labels only: the demo's data set may have more classes
)
