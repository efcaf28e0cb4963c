"""The Du client: opens a run at the server (the aggregator role) and waits for the final (w, α),
evaluates it on the test set, and builds the report (parameters, result, privacy, traffic, timing)."""

from __future__ import annotations

import secrets
import time

import numpy as np

from launcher.common.client import await_result, opening_signature
from launcher.common.progress import progress
from launcher.protocols.du.transcript import transcript
from mpdp.cryptocore.paillier import keyfiles
from mpdp.deployments.topology import Topology
from mpdp.learning import evaluation, threshold
from mpdp.proto.v1 import du_pb2
from mpdp.protocols.du import accounting, release
from mpdp.protocols.du.objectives import augment
from mpdp.protocols.du.parameters import DEFAULT_HONEST_FRACTION, MAX_RECORDS, DuParameters
from mpdp.sessions.identity import AGGREGATOR, CLIENT


def session_parameters(topology: Topology, client_data: dict, method: str, epsilon: float, rounds: int,
                       secure_aggregation: bool = False, delta: float = 1e-5, tolerance: float = 0.0,
                       local_epochs: int = 40, learning_rate: float = 1.0, regularization: float = 1e-4,
                       bound: float = 100.0, honest_fraction: float = DEFAULT_HONEST_FRACTION,
                       batch_size: int = 256) -> DuParameters:
    public_key = keyfiles.load_public_key(topology.public_key)
    # The cap on n_i: the largest part of the operator's split at `up`, public; never a party's own claim.
    cap = int(max(client_data["party_sizes"])) if len(client_data.get("party_sizes", ())) else MAX_RECORDS
    return DuParameters(method, epsilon, delta, rounds, tolerance, local_epochs, learning_rate, regularization,
                        len(topology.parties), client_data["test_features"].shape[1], bound, secure_aggregation,
                        honest_fraction, public_key.key_id, batch_size, cap)


async def run_du_session(topology: Topology, client_data: dict, parameters: DuParameters,
                         round_deadline_s: float = 60.0, session_id: str | None = None, noise_seed: int = 0) -> dict:
    session_id = session_id or secrets.token_hex(8)
    progress(f"Du (session id {session_id}): {parameters.method}, ε = {parameters.epsilon} per round, up to "
             f"{parameters.rounds} rounds, K = {parameters.parties}"
             + (", secure aggregation" if parameters.secure_aggregation else ""))
    opening = du_pb2.DuOpen(parameters=parameters.to_proto(), round_deadline_seconds=round_deadline_s,
                            noise_seed=noise_seed,
                            client_signature=opening_signature(topology, "du", session_id, parameters))
    reply, traffic, round_trip = await await_result(topology, session_id, AGGREGATOR,
                                                    parameters.rounds * 3 * round_deadline_s + 60,
                                                    du=du_pb2.DuMessage(open=opening))
    result = reply.du.result
    checked: dict = {}
    check_s = 0.0
    if parameters.secure_aggregation:  # each round's sum recomputed here; in the clear there is nothing to check
        from launcher.deployment.serve import contribution_keys

        started = time.perf_counter()
        checked = release.check_result(parameters, keyfiles.load_public_key(topology.public_key), session_id,
                                       contribution_keys(topology, CLIENT, signs=False), topology.key_holders, result)
        check_s = time.perf_counter() - started
    theta = np.array(result.theta)
    test_x, test_y = client_data["test_features"], client_data["test_labels"]
    # the cut from the public rows (post-processing): noise on α alone no longer sends every row to one side
    cut = threshold.on_public_rows(augment(evaluation.public_rows(client_data)) @ theta)
    predictions = threshold.predict(augment(test_x) @ theta, cut)
    error = float(np.mean(predictions != test_y))
    test_metrics = {**evaluation.metrics(test_y, predictions, augment(test_x) @ theta, spread=True),
                    "threshold": cut}
    rounds = [{"round": r.round, "participants": list(r.participants), "step_norm": r.step_norm,
               "seconds": r.seconds} for r in result.history]
    return {
        "protocol": "du",
        "session_id": session_id,
        "parameters": {
            "dataset": str(client_data["dataset"]), "parties": parameters.parties,
            "dimension": parameters.dimension, "method": parameters.method, "epsilon": parameters.epsilon,
            "rounds": parameters.rounds, "tolerance": parameters.tolerance, "local_epochs": parameters.local_epochs,
            "learning_rate": parameters.learning_rate, "batch_size": parameters.batch_size,
            "lambda": parameters.regularization, "delta": parameters.delta,
            "bound": parameters.bound, "secure_aggregation": parameters.secure_aggregation,
            "key_bits": keyfiles.load_public_key(topology.public_key).n.bit_length(),
            "round_deadline_s": round_deadline_s,
        },
        "result": {
            "theta": theta.tolist(), "rounds": result.rounds, "stopped": result.stopped, "history": rounds,
            "dropped": list(result.dropped), "test_accuracy": 1 - error, "test_misclassification": error,
            "test_metrics": test_metrics,
            "majority_class_rate": float(np.max(np.bincount(test_y)) / len(test_y)),
            "rejected_shares": {str(h): r for h, r in checked.get("rejected_shares", {}).items()}
            if parameters.secure_aggregation else {str(r.holder): r.reason for r in result.rejected},
            "rejected_uploads": {str(r.holder): r.reason for r in result.rejected_uploads},
            "checked_by_client": ("every round's signed uploads, C, every partial decryption's proof, the "
                                  "combination, the participants, the steps and the final θ "
                                  "(docs/client-checks.md)") if parameters.secure_aggregation else
                                 "nothing: uploads in the clear reach the server alone",
        },
        "privacy": accounting.report(parameters, result.rounds),
        **({"transcript": transcript(keyfiles.load_public_key(topology.public_key),
                                     topology.ca_certificate.read_bytes() if topology.ca_certificate else None,
                                     parameters, session_id, topology.key_holders, result)}
           if parameters.secure_aggregation else {}),
        "traffic": traffic["summary"],
        "traffic_detail": traffic["detail"],
        "traffic_client_observed": traffic["client_observed"],
        "timing": {**{t.stage: t.seconds for t in result.timing}, "client_round_trip": round_trip,
                   "per_round": round_trip / max(1, result.rounds), "client_checks": check_s},
    }
