"""The Hamm client ("Dave"): opens a session at Charlie and waits for the released classifier, evaluates
it on the test set, and builds the report (protocol, parameters, result, privacy, traffic, timing)."""

from __future__ import annotations

import secrets
from pathlib import Path

import numpy as np

from launcher.common.client import await_result, opening_signature
from launcher.common.progress import progress
from launcher.protocols.hamm.transcript import transcript
from mpdp.cryptocore.paillier import keyfiles
from mpdp.deployments.topology import Topology
from mpdp.learning import evaluation, threshold
from mpdp.learning.logistic import predict
from mpdp.proto.v1 import hamm_pb2
from mpdp.protocols.hamm.parameters import DEFAULT_HONEST_FRACTION, HammParameters
from mpdp.protocols.hamm.release import Release
from mpdp.sessions.identity import CURATOR
from mpdp.vote_proofs import influence
from mpdp.vote_proofs.assurance import Assurance


def session_parameters(topology: Topology, client_data: dict, method: str, epsilon: float, delta: float,
                       regularization: float, noisy_counts: bool = False, protect_aux: bool = False,
                       honest_fraction: float = DEFAULT_HONEST_FRACTION, count_noise: str = "binomial",
                       assurance: Assurance = Assurance.NONE) -> HammParameters:
    public_key = keyfiles.load_public_key(topology.public_key)
    aux = client_data["public_features"]
    return HammParameters(method, epsilon, delta, regularization, int(client_data["classes"]), len(topology.parties),
                          aux.shape[0], aux.shape[1], noisy_counts, protect_aux, honest_fraction, public_key.key_id,
                          count_noise, topology.colluding, assurance)


async def run_hamm_session(topology: Topology, client_data: dict, parameters: HammParameters,
                           deadline_s: float = 300.0, session_id: str | None = None, noise_seed: int = 0) -> dict:
    session_id = session_id or secrets.token_hex(8)
    progress(f"Hamm (session id {session_id}): M = {parameters.parties} parties vote on N = {parameters.aux_points} "
             f"points; {parameters.method}, ε = {parameters.epsilon}, λ = {parameters.regularization}")
    opening = hamm_pb2.HammOpen(parameters=parameters.to_proto(), deadline_seconds=deadline_s, noise_seed=noise_seed,
                                client_signature=opening_signature(topology, "hamm", session_id, parameters))
    reply, traffic, round_s = await await_result(topology, session_id, CURATOR, 3 * deadline_s + 60,
                                                 hamm=hamm_pb2.HammMessage(open=opening))
    result = reply.hamm.result
    weights = np.array(result.weights)
    if result.rows > 1:
        weights = weights.reshape(result.rows, -1)
    test_x, test_y = client_data["test_features"], client_data["test_labels"]
    test_metrics = released_metrics(weights, test_x, test_y, evaluation.public_rows(client_data))
    accuracy = test_metrics["accuracy"]
    majority = float(np.max(np.bincount(test_y)) / len(test_y))
    timing = {t.stage: t.seconds for t in result.timing}
    timing["client_round_trip"] = round_s
    return {
        "protocol": "hamm",
        "session_id": session_id,
        "parameters": {
            "dataset": str(client_data["dataset"]), "parties": parameters.parties, "aux_points": parameters.aux_points,
            "dimension": parameters.dimension, "classes": parameters.classes, "method": parameters.method,
            "epsilon": None if parameters.epsilon == float("inf") else parameters.epsilon,
            "delta": parameters.delta, "lambda": parameters.regularization, "noisy_counts": parameters.noisy_counts,
            "protect_aux": parameters.protect_aux, "honest_fraction": parameters.honest_fraction,
            "count_noise": parameters.count_noise, "proven_votes": parameters.proven_votes,
            "verifiable_noise": parameters.verifiable_noise, "holders_check_bits": parameters.holders_check_bits,
            "key_bits": keyfiles.load_public_key(topology.public_key).n.bit_length(), "deadline_s": deadline_s,
            "colluding": parameters.colluding, "key_holders": len(topology.key_holders),
        },
        "result": {
            "weights": weights.tolist(),
            "test_accuracy": accuracy,
            "test_metrics": test_metrics,
            "majority_class_rate": majority,
            "voters": result.voters,
            "contributors": list(result.contributors),
            "decryptors": list(result.decryptors),
            "rejected_shares": {str(r.holder): r.reason for r in result.rejected},
            "rejected_votes": {str(r.holder): r.reason for r in result.rejected_votes},
        },
        "privacy": Release(parameters, result.voters).report(),
        "malicious_party": influence.one_voter("voter", parameters.assurance,
                                               parameters.share_range if parameters.noisy_counts else 0,
                                               len(result.contributors), parameters.vote_width),
        "traffic": traffic["summary"],
        "traffic_detail": traffic["detail"],
        "traffic_client_observed": traffic["client_observed"],
        "timing": timing,
        # What `mpdp verify` re-checks (launcher/protocols/hamm/transcript.py): public values only.
        "transcript": transcript(keyfiles.load_public_key(topology.public_key),
                                 topology.ca_certificate.read_bytes() if topology.ca_certificate else None,
                                 parameters, session_id, topology.key_holders, result),
    }


def released_metrics(weights: np.ndarray, test_x: np.ndarray, test_y: np.ndarray, public_x: np.ndarray) -> dict:
    """Test metrics of the released classifier. A binary release is cut on Charlie's public, unlabelled rows
    (mpdp/learning/threshold.py: post-processing of the release, ε and δ unchanged); a multiclass one takes
    the argmax."""
    if weights.ndim != 1:
        return evaluation.metrics(test_y, predict(weights, test_x), None, spread=True)
    cut = threshold.on_public_rows(public_x @ weights)
    scores = test_x @ weights
    return {**evaluation.metrics(test_y, threshold.predict(scores, cut), scores, spread=True), "threshold": cut}


def evaluator_view(topology: Topology, client_data: dict, report: dict) -> dict:
    """Hamm's baselines on the same split (Section 6), from the operator's copy of the parties' data: no
    protocol role sees this. batch: pooled training; indiv: the local classifiers' mean test accuracy;
    avg: parameter averaging with l2-laplace noise of sensitivity 2/(M′λ) (2√2/(M′λ) multiclass), only
    when every local model is linear (`logistic-exact`)."""
    import math
    import random

    from mpdp.learning import datasets, models
    from mpdp.protocols.hamm import baselines

    files = [Path(entry.data) for entry in topology.parties if entry.data is not None]
    if len(files) < len(topology.parties) or not all(path.exists() for path in files):
        return {"unavailable": "the parties' data files are not on this machine"}
    parameters, result = report["parameters"], report["result"]
    classes, regularization = parameters["classes"], parameters["lambda"]
    parts = [datasets.load_part(path)[:2] for path in files]
    local = [models.train(entry.model or models.DEFAULT_TEACHER_MODEL, x, y, classes)
             for entry, (x, y) in zip(topology.parties, parts)]
    test_x, test_y = client_data["test_features"], client_data["test_labels"]
    view: dict = {
        "batch": baselines.accuracy(baselines.batch(parts, classes, regularization), test_x, test_y),
        "indiv": baselines.indiv(local, test_x, test_y),
        "local_models": sorted({entry.model or models.DEFAULT_TEACHER_MODEL for entry in topology.parties}),
    }
    try:
        average = baselines.averaged(local)
    except ValueError as reason:
        view["avg"] = {"unavailable": str(reason)}
        return view
    voters = result["voters"]
    epsilon = math.inf if parameters["epsilon"] is None else parameters["epsilon"]
    noisy = baselines.avg_release(average, classes, voters, regularization, epsilon, random.SystemRandom())
    view["avg"] = {"non_private": baselines.accuracy(average, test_x, test_y),
                   "at_epsilon": baselines.accuracy(noisy, test_x, test_y),
                   "sensitivity": baselines.avg_sensitivity(classes, voters, regularization)}
    return view
