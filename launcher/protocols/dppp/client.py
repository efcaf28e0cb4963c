"""The DPPP client ("Dave"): opens a round at the aggregator and waits for the
released labels, trains and evaluates the student, and builds the report
(protocol, parameters, result, privacy, traffic, timing)."""

from __future__ import annotations

import functools
import json
import secrets
import time
from pathlib import Path

import grpc
import numpy as np

from launcher.common.client import await_result, opening_signature, role_stub, to_role
from launcher.common.progress import progress
from launcher.protocols.dppp.transcript import transcript
from mpdp.cryptocore.arithmetic import offload
from mpdp.cryptocore.paillier import keyfiles
from mpdp.deployments.topology import Topology
from mpdp.learning import evaluation, models, threshold
from mpdp.proto.v1 import dppp_pb2
from mpdp.protocols.dppp import pool_opening, release
from mpdp.protocols.dppp.parameters import DEFAULT_HONEST_FRACTION, DpppParameters
from mpdp.protocols.dppp.pool_opening import PoolFill
from mpdp.sessions.identity import AGGREGATOR, CLIENT
from mpdp.sessions.matrices import matrix_to_proto
from mpdp.vote_proofs import influence
from mpdp.vote_proofs.assurance import Assurance
from mpdp.wire.channels import PeerChannels
from mpdp.wire.traffic import TrafficLog


async def run_dppp_session(topology: Topology, client_data: dict, epsilon: float, delta: float, queries: int,
                           packed: bool = True, honest_fraction: float = DEFAULT_HONEST_FRACTION,
                           deadline_s: float = 300.0, session_id: str | None = None, noise: str = "binomial",
                           assurance: Assurance = Assurance.NONE, ensemble: int = 1) -> dict:
    public_key = _public_key(topology.public_key)
    public_features = client_data["public_features"]
    if not 1 <= queries <= len(public_features):
        if len(public_features) == 0:
            raise ValueError("this deployment has no public rows to label (a percentage --split keeps none)")
        raise ValueError(f"--queries must be in [1, {len(public_features)}] for this data set")
    classes = int(client_data["classes"])
    started = time.perf_counter()
    parameters = DpppParameters.with_minimal_noise(epsilon, delta, queries, classes, len(topology.parties),
                                                   honest_fraction, packed, public_key.key_id, noise,
                                                   Assurance.parse(assurance), colluding=topology.colluding,
                                                   ensemble=ensemble)
    search_s = time.perf_counter() - started
    session_id = session_id or secrets.token_hex(8)
    progress(f"DPPP (session id {session_id}): {queries} queries, {len(topology.parties)} teachers"
             + (f" of {ensemble} models each" if ensemble > 1 else "") + f", ε={epsilon}, δ={delta}")
    features = matrix_to_proto(public_features[:queries])
    request = dppp_pb2.DpppRoundRequest(parameters=parameters.to_proto(), features=features,
                                        deadline_seconds=deadline_s, client_signature=opening_signature(
                                            topology, "dppp", session_id, parameters,
                                            features.SerializeToString(deterministic=True)))
    offload.start()  # the check's long part runs in a second process; started now, outside the check's time
    reply, traffic, round_s = await await_result(topology, session_id, AGGREGATOR, 5 * deadline_s + 60,
                                                 dppp=dppp_pb2.DpppMessage(open=request))
    result = reply.dppp.result
    # Nothing below takes the aggregator's word: each field is recomputed from the evidence (or the session fails).
    check_cpu = time.thread_time() + offload.worker_cpu_seconds()
    checked, check_s = check_result(topology, public_key, parameters, session_id, result)
    # this thread's CPU and its worker's (offload.py): the check's whole cost, whatever the machine's load
    check_cpu = time.thread_time() + offload.worker_cpu_seconds() - check_cpu
    labels, histograms = checked.labels, checked.histograms
    student = models.train(models.DEFAULT_STUDENT_MODEL, public_features[:queries], labels)
    true_labels = client_data["public_labels"][:queries]
    student_metrics = _student_metrics(student, client_data)
    timing = {t.stage: t.seconds for t in result.timing}
    timing["client_round_trip"] = round_s
    timing["client_noise_search"] = search_s  # the roles only check N (timing["calibration"])
    timing["client_checks"] = check_s
    timing["client_checks_cpu"] = check_cpu
    return {
        "protocol": "dppp",
        "session_id": session_id,
        "parameters": {
            "dataset": str(client_data["dataset"]), "dataset_source": str(client_data["source"]),
            "teachers": len(topology.parties), "key_holders": public_key.holders, "threshold": public_key.threshold,
            "key_bits": public_key.n.bit_length(), "queries": queries, "classes": classes,
            "epsilon": epsilon, "delta": delta, "honest_fraction": honest_fraction, "packed": packed, "noise": noise,
            "proven_votes": parameters.proven_votes, "verifiable_noise": parameters.verifiable_noise,
            "holders_check_bits": parameters.holders_check_bits,
            "colluding": parameters.colluding, "ensemble": ensemble, "deadline_s": deadline_s,
        },
        "result": {
            "labels": labels.tolist(),
            "histograms": histograms.tolist(),
            "label_agreement_with_truth": float(np.mean(labels == true_labels)),
            "student_model": models.DEFAULT_STUDENT_MODEL,
            "student_test_accuracy": student_metrics["accuracy"],
            "test_metrics": student_metrics,
            "contributors": checked.contributors,
            "decryptors": checked.decryptors,
            "rejected_shares": {str(h): r for h, r in checked.rejected_shares.items()},
            "rejected_votes": {str(t): r for t, r in checked.rejected_votes.items()},
            "excluded_unverified": {str(t): r for t, r in checked.unverified_blame.items()},
            "checked_by_client": CLIENT_CHECKS,
        },
        "privacy": {"unit": "one training record of one teacher (replacement)",
                    "sensitivity": "L1 2, L2 √2 per query (two histogram coordinates move by 1)"
                                   + (f"; the record is in one of the teacher's {ensemble} parts: it moves one "
                                      "model's vote" if ensemble > 1 else ""),
                    **parameters.calibration.report(len(checked.contributors))},
        "malicious_party": influence.one_voter("teacher", parameters.assurance, parameters.share_range,
                                               len(checked.contributors), classes,
                                               votes_per_row=ensemble),
        "traffic": traffic["summary"],
        "transcript": transcript(public_key, topology.ca_certificate.read_bytes() if topology.ca_certificate else None,
                                 parameters, session_id, topology.key_holders, result),
        "traffic_detail": traffic["detail"],
        "traffic_client_observed": traffic["client_observed"],
        "timing": timing,
    }


@functools.lru_cache(maxsize=4)
def _key_of(content: bytes):
    return keyfiles.public_key_from_dict(json.loads(content))


def _public_key(path):
    """The threshold public key, one object per key file content for the process's life: its fixed-base table
    (every proof check raises v to a response) is built once, not once per session."""
    return _key_of(Path(path).read_bytes())


@functools.lru_cache(maxsize=4)
def _client_keys(ca_certificate: bytes):
    """The contributions' checker, one per deployment CA for the process's life: a certificate's chain is verified
    the first time it is met (its validity period at every use), as a serving role keeps them; each session's
    signatures are checked every time."""
    from cryptography import x509

    from launcher.deployment.serve import speaks_for
    from mpdp.cryptocore.keys.contribution_signature import ContributionVerifier
    from mpdp.threshold_sum.binding import ContributionKeys

    return ContributionKeys(ContributionVerifier(x509.load_pem_x509_certificate(ca_certificate)), speaks_for)


CLIENT_CHECKS = ("every contribution's signature, C = Π contributions, every forwarded partial decryption's "
                 "proof, the combination, the histograms, the labels (argmax), the contributors (and so ε), "
                 "every blame it can repeat (docs/client-checks.md)")


def check_result(topology: Topology, public_key, parameters: DpppParameters, session_id: str,
                 result: dppp_pb2.DpppRoundResult) -> tuple[release.CheckedRound, float]:
    """The client's own check of the aggregator's result, and its seconds; the session fails if it lies."""
    started = time.perf_counter()
    tls = topology.tls_for(CLIENT)
    keys = _client_keys(Path(tls.ca).read_bytes()) if tls is not None else None  # None: a plaintext deployment
    checked = release.check_round(parameters, public_key, session_id, keys, topology.key_holders,
                                  result)
    return checked, time.perf_counter() - started


async def fill_noise_pools(topology: Topology, bits: int, deadline_s: float = 600.0, session_id: str | None = None,
                           votes: int = 0, classes: int = 0) -> dict:
    """The offline phase of verifiable noise: every teacher makes `bits` more committed noise bits, which the
    aggregator verifies into its pool, and the exponentiations of `votes` future proven votes of `classes`
    branches, which it keeps (docs/malicious-party.md, "The noise pool"). Spends no privacy budget."""
    public_key = keyfiles.load_public_key(topology.public_key)
    session_id = session_id or secrets.token_hex(8)
    progress(f"DPPP noise pools (session id {session_id}): {bits} committed bits per teacher")
    fill = PoolFill(public_key.key_id, bits, votes, votes * classes)
    request = dppp_pb2.DpppPoolFill(key_id=public_key.key_id, bits=bits, deadline_seconds=deadline_s,
                                    randomness_powers=votes, mask_powers=votes * classes,
                                    client_signature=opening_signature(topology, pool_opening.PROTOCOL, session_id,
                                                                       fill))
    reply, traffic, seconds = await await_result(topology, session_id, AGGREGATOR, deadline_s + 60,
                                                 dppp=dppp_pb2.DpppMessage(fill=request))
    filled = reply.dppp.pool_filled
    return {"session_id": session_id, "bits": bits, "seconds": seconds,
            "levels": {level.teacher: {"available": level.available, "next": level.next} for level in filled.levels},
            "rejected": {str(r.holder): r.reason for r in filled.rejected},
            "traffic": traffic["summary"]}


async def test_records(topology: Topology, session_id: str) -> dict[int, dppp_pb2.DpppTestRecord]:
    """Test mode only: what each teacher drew."""
    peers = PeerChannels(CLIENT, topology.addresses, TrafficLog(), topology.tls_for(CLIENT), hosts=topology.principals)
    try:
        records = {}
        for entry in topology.parties:
            try:
                reply = await role_stub(peers, entry.identity).GetTestRecord(to_role(session_id, entry.identity),
                                                                            timeout=10)
            except grpc.aio.AioRpcError:
                continue
            records[entry.identity.id] = reply.dppp.test_record
        return records
    finally:
        await peers.close()


def _student_metrics(student, client_data: dict) -> dict:
    """The student's test metrics, a binary student cut on the public rows (mpdp/learning/threshold.py)."""
    test_x, test_y = client_data["test_features"], client_data["test_labels"]
    if not hasattr(student, "decision_function") or len(getattr(student, "classes_", ())) != 2:
        return evaluation.metrics(test_y, student.predict(test_x), spread=True)
    cut = threshold.on_public_rows(student.decision_function(evaluation.public_rows(client_data)))
    scores = student.decision_function(test_x)
    return {**evaluation.metrics(test_y, threshold.predict(scores, cut), scores, spread=True), "threshold": cut}
