"""`mpdp verify` on Hamm and Pathak reports (launcher/protocols/hamm/transcript.py, pathak/transcript.py), reached
through the registry as the command reaches it. Hamm: a twin session's report, its votes signed under a CA of the
test's own, verifies; a dropped, duplicated or altered vote, swapped or forged signatures, another contributor
count, ε, privacy or malicious-party line, or message count is rejected. Pathak: a twin session's published shares
re-add to the report's ŵˢ; an altered share or ŵˢ, a missing participant, another privacy line or message count
is rejected. Stored reports without a transcript are checked as far as they allow."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import numpy as np
import pytest

from launcher.protocols.hamm.closed_form import closed_form as hamm_closed_form
from launcher.protocols.hamm.transcript import transcript as hamm_transcript
from launcher.protocols.pathak.closed_form import closed_form as pathak_closed_form
from launcher.protocols.pathak.transcript import transcript as pathak_transcript
from launcher.protocols.stored_transcript import b64, unb64
from launcher.registry import PROTOCOLS
from mpdp.proto.v1 import threshold_sum_pb2
from mpdp.protocols.hamm.release import Release
from mpdp.sessions.identity import CURATOR, party
from mpdp.threshold_sum.binding import SumSlot, signature_for
from mpdp.vote_proofs import influence

STORED = Path(__file__).resolve().parent.parent / "docs" / "results" / "baselines"
PARTIES = 5


def _traffic(counts: dict) -> list[dict]:
    return [{"from": f, "to": t, "rpc": rpc, "messages": n} for (f, t, rpc), n in sorted(counts.items())]


def _rejected(name: str, report, match: str | None = None) -> str:
    with pytest.raises(ValueError) as failed:
        PROTOCOLS[name].verify(report, None, None)
    if match is not None:
        assert match in str(failed.value)
    return str(failed.value)


def _edited(report, path, value):
    changed = copy.deepcopy(report)
    *parents, last = path
    target = changed
    for key in parents:
        target = target[key]
    target[last] = value
    return changed


# ---------------------------------------------------------------------------------------------------------- Hamm

@pytest.fixture(scope="module")
def hamm_report(threshold_key, tmp_path_factory):
    """A twin session's report as the client writes it, every vote signed by its party's certificate."""
    from launcher.deployment import certs
    from launcher.deployment.serve import speaks_for
    from mpdp.cryptocore.keys.contribution_signature import ContributionSigner, ContributionVerifier
    from mpdp.threshold_sum.binding import ContributionKeys
    from tests.test_hamm_sessions import HOLDERS, _aux, _network, _open, _parameters

    public, _ = threshold_key
    parameters = _parameters(public, PARTIES, 2)
    net, _ = _network(threshold_key, PARTIES, 2, _aux())
    _open(net, parameters)
    result = net.sides[CURATOR].result()[1]
    # The twin signs nothing (a plaintext deployment): each party's signature is made here, over the binding the
    # party itself signs, with a certificate of a CA of the test's own.
    directory = tmp_path_factory.mktemp("certs")
    certs.issue(directory, [party(i) for i in range(1, PARTIES + 1)])
    verifier = ContributionVerifier.from_file(directory / certs.CA_FILE)
    slot = SumSlot.of("hamm", net.session_id, parameters)
    for contribution in result.votes.contributions:
        keys = ContributionKeys(verifier, speaks_for, ContributionSigner.from_files(
            *reversed(certs.certificate_files(directory, party(contribution.sender)))))
        contribution.signature.CopyFrom(signature_for(keys, slot, contribution.sender, public.key_id,
                                                      list(contribution.ciphertexts.values)))
    voters = result.voters
    report = {
        "protocol": "hamm", "session_id": net.session_id,
        "parameters": {"parties": PARTIES, "aux_points": parameters.aux_points, "dimension": parameters.dimension,
                       "classes": parameters.classes, "method": parameters.method, "epsilon": parameters.epsilon,
                       "delta": parameters.delta, "lambda": parameters.regularization,
                       "noisy_counts": parameters.noisy_counts, "protect_aux": parameters.protect_aux,
                       "honest_fraction": parameters.honest_fraction, "count_noise": parameters.count_noise,
                       "proven_votes": parameters.proven_votes, "verifiable_noise": parameters.verifiable_noise,
                       "holders_check_bits": parameters.holders_check_bits, "colluding": parameters.colluding,
                       "key_holders": len(HOLDERS)},
        "result": {"weights": list(result.weights), "voters": voters, "contributors": list(result.contributors),
                   "decryptors": list(result.decryptors), "rejected_shares": {}, "rejected_votes": {}},
        "privacy": Release(parameters, voters).report(),
        "malicious_party": influence.one_voter("voter", parameters.assurance, 0, voters, parameters.vote_width),
        "transcript": hamm_transcript(public, (directory / certs.CA_FILE).read_bytes(), parameters,
                                      net.session_id, HOLDERS, result),
    }
    report["traffic"] = _traffic(hamm_closed_form(report))
    return json.loads(json.dumps(report))


def _with_votes(report, alter):
    """The report with its transcript's signed votes altered."""
    changed = copy.deepcopy(report)
    votes = threshold_sum_pb2.DecryptionRequest.FromString(unb64(changed["transcript"]["votes"]))
    alter(votes.contributions)
    changed["transcript"]["votes"] = b64(votes.SerializeToString(deterministic=True))
    return changed


def test_an_honest_hamm_report_verifies(hamm_report):
    lines = PROTOCOLS["hamm"].verify(hamm_report, None, None)
    assert any(f"the votes of {PARTIES} voters signed by their senders under the CA" in line for line in lines)
    assert any("C = Π votes computed here" in line for line in lines)
    assert any(line.startswith("privacy recomputed") and "malicious-party" in line for line in lines)
    assert any(line.startswith("message counts match") for line in lines)
    assert lines[-1].startswith("not checked, by design")


def test_hamm_votes_are_judged_under_the_ca_given(hamm_report, tmp_path):
    """`mpdp verify --ca`: signatures that hold under the transcript's CA fail under another deployment's."""
    from launcher.deployment import certs

    certs.issue(tmp_path, [party(1)], ca_name="another deployment CA")
    with pytest.raises(ValueError, match="do not verify"):
        PROTOCOLS["hamm"].verify(hamm_report, (tmp_path / certs.CA_FILE).read_bytes(), None)


def test_tampered_hamm_votes_are_rejected(hamm_report):
    def dropped(contributions):  # four of five still reach ⌈τM⌉: only the report's contributors tell
        del contributions[4]

    def duplicated(contributions):
        contributions.append(contributions[0])

    def altered(contributions):
        values = contributions[2].ciphertexts.values
        values[0] = bytes(reversed(values[0]))

    def swapped(contributions):
        first, second = copy.deepcopy(contributions[0].signature), copy.deepcopy(contributions[1].signature)
        contributions[0].signature.CopyFrom(second)
        contributions[1].signature.CopyFrom(first)

    def forged(contributions):
        signature = bytearray(contributions[3].signature.signature)
        signature[-1] ^= 1
        contributions[3].signature.signature = bytes(signature)

    assert "contributors" in _rejected("hamm", _with_votes(hamm_report, dropped))
    assert "twice" in _rejected("hamm", _with_votes(hamm_report, duplicated))
    for alter in (altered, swapped, forged):
        assert "do not verify" in _rejected("hamm", _with_votes(hamm_report, alter))


def test_a_hamm_report_that_differs_from_its_transcript_is_rejected(hamm_report):
    _rejected("hamm", _edited(hamm_report, ("result", "voters"), PARTIES - 1), "M′")
    _rejected("hamm", _edited(hamm_report, ("result", "contributors"), [1, 2, 3, 4]), "contributors")
    _rejected("hamm", _edited(hamm_report, ("parameters", "epsilon"), 0.5), "epsilon")
    _rejected("hamm", _edited(hamm_report, ("privacy", "noise_norm_scale"),
                              hamm_report["privacy"]["noise_norm_scale"] / 2), "privacy")
    _rejected("hamm", _edited(hamm_report, ("malicious_party", "steer_per_count"), 1), "malicious-party")
    _rejected("hamm", _edited(hamm_report, ("result", "decryptors"), [1, 2]), "decryptors")
    _rejected("hamm", _edited(hamm_report, ("session_id",), "another"), "another session")
    more = _traffic({**hamm_closed_form(hamm_report), ("aggregator", "party", "Step/hamm/queries"): PARTIES + 1})
    _rejected("hamm", _edited(hamm_report, ("traffic",), more), "message counts")


def test_a_hamm_report_without_transcript_is_checked_as_far_as_it_allows():
    stored = json.loads((STORED / "breast-cancer_hamm.json").read_text())
    del stored["transcript"]  # a real session's report without its transcript: checked from what it states
    lines = PROTOCOLS["hamm"].verify(stored, None, None)
    assert lines[0].startswith("no transcript") and any(line.startswith("message counts match") for line in lines)
    _rejected("hamm", _edited(stored, ("privacy", "epsilon"), 0.5), "privacy")
    _rejected("hamm", _edited(stored, ("result", "voters"), 4), "voters")
    _rejected("hamm", _edited(stored, ("parameters", "lambda"), 0.01), "privacy")
    fewer = [{**row, "messages": row["messages"] - 1} if row["rpc"] == "Step/hamm/queries" else row
             for row in stored["traffic"]]
    _rejected("hamm", _edited(stored, ("traffic",), fewer), "message counts")


# -------------------------------------------------------------------------------------------------------- Pathak

@pytest.fixture(scope="module")
def pathak_report(keypair):
    """A twin session's report: its parameters, ŵˢ as the client reconstructs it, the published shares."""
    import dataclasses

    from mpdp.learning import datasets
    from tests.pathak_router import reconstruct, run
    from tests.test_pathak_sessions import SIZES, _parameters

    data = datasets.load("breast-cancer")
    bounds = np.cumsum([0] + SIZES)
    parts = [(data.features[a:b], data.labels[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    parameters = _parameters()
    parties, curator = run(parameters, parts, keypair, random.Random(5))
    machines = [*parties.values(), curator]
    w = reconstruct(machines, parameters)
    self_deliveries = {str(identity): {c.kind: c.count for c in side.result()[1].self_deliveries}
                       for identity, side in [*parties.items(), (CURATOR, curator)]}
    report = {"protocol": "pathak", "session_id": "s", "parameters": dataclasses.asdict(parameters),
              "result": {"w": w.tolist()}, "privacy": parameters.privacy_report(),
              "evaluator_view": {"self_deliveries": self_deliveries},
              "transcript": pathak_transcript(parameters, "s", [str(identity) for identity in [*parties, CURATOR]],
                                              [side.result()[1] for side in machines])}
    report["evaluator_view"]["traffic"] = _traffic(pathak_closed_form(report))
    return json.loads(json.dumps(report))


def test_an_honest_pathak_report_verifies(pathak_report):
    lines = PROTOCOLS["pathak"].verify(pathak_report, None, None)
    assert any("published shares add up to K·2^F·ŵˢ" in line for line in lines)
    assert any(line.startswith("privacy recomputed") for line in lines)
    assert any(line.startswith("message counts match") for line in lines)


def test_a_tampered_pathak_report_is_rejected(pathak_report):
    shares = pathak_report["transcript"]["shares"]
    one = bytearray(unb64(shares["party/1"][0]))
    one[-1] ^= 1
    _rejected("pathak", _edited(pathak_report, ("transcript", "shares", "party/1"),
                                [b64(bytes(one)), *shares["party/1"][1:]]), "ŵˢ")
    _rejected("pathak", _edited(pathak_report, ("transcript", "shares"),
                                {k: v for k, v in shares.items() if k != "party/2"}), "participants")
    _rejected("pathak", _edited(pathak_report, ("result", "w"),
                                [pathak_report["result"]["w"][0] + 2**-30, *pathak_report["result"]["w"][1:]]), "ŵˢ")
    _rejected("pathak", _edited(pathak_report, ("parameters", "epsilon"), 2.0), "parameters")
    _rejected("pathak", _edited(pathak_report, ("privacy", "epsilon_effective"), 0.5), "privacy")
    counts = pathak_closed_form(pathak_report)
    key = ("party", "party", "Step/pathak/commitment")
    _rejected("pathak", _edited(pathak_report, ("evaluator_view", "traffic"), _traffic({**counts, key: counts[key] - 1})),
              "message counts")


def test_a_pathak_report_without_transcript_is_checked_as_far_as_it_allows():
    stored = json.loads((STORED / "a9a_pathak.json").read_text())
    del stored["transcript"]  # a real session's report without its transcript: checked from what it states
    assert PROTOCOLS["pathak"].verify(stored, None, None)[0].startswith("no transcript")
    _rejected("pathak", _edited(stored, ("privacy", "noise_scale_at_n_min"), 1.0), "privacy")
    _rejected("pathak", _edited(stored, ("parameters", "regularization"), 1.0), "privacy")
    traffic = stored["evaluator_view"]["traffic"]
    _rejected("pathak", _edited(stored, ("evaluator_view", "traffic"), traffic[1:]), "message counts")
