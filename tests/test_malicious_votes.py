"""A malicious teacher's (and Hamm voter's) votes over real processes (docs/malicious-party.md, "Proven votes"): a vote that is not
one-hot, inside the feasible range (a second 1) or outside it (1000 in a slot), is caught by its proof, its
sender excluded by name, and the round goes on with the others, equal to their honest reference. Without proofs
the in-range one passes unnoticed."""

import asyncio

import numpy as np
import pytest

from launcher.protocols.hamm.client import run_hamm_session, session_parameters
from mpdp.proto.v1.role_pb2_grpc import RoleStub
from mpdp.protocols.dppp.reference import noisy_histograms
from mpdp.protocols.hamm import reference
from mpdp.sessions.identity import CLIENT, CURATOR, party
from mpdp.vote_proofs.assurance import Assurance
from tests.deployment import envelope

FAULTS = {2: "vote-two-ones", 3: "vote-stuffed"}


@pytest.fixture
def four(pool):
    return pool.get(4, FAULTS)


def _reference(deployment, report, teachers):
    records = deployment.test_records(report["session_id"])
    queries, classes = report["parameters"]["queries"], report["parameters"]["classes"]
    votes = [np.array(records[i].votes).reshape(queries, classes) for i in teachers]
    noise = [np.array(records[i].noise).reshape(queries, classes) for i in teachers]
    return noisy_histograms(votes, noise, report["privacy"]["tosses_per_teacher"])


def test_non_one_hot_votes_are_rejected_by_name_and_the_round_goes_on(four):
    report = four.run_dppp(assurance=Assurance.PROVEN_VOTES, honest_fraction=0.5)
    result = report["result"]
    assert sorted(result["rejected_votes"]) == ["2", "3"]
    assert all("vote proof failed" in reason for reason in result["rejected_votes"].values())
    assert result["contributors"] == [1, 4]
    assert np.array_equal(np.array(result["histograms"]), _reference(four, report, [1, 4]))


def test_an_ensemble_ballot_with_more_than_t_votes_in_a_query_is_rejected_by_name(four):
    """T = 4 proven votes per query: one model's vote with a second 1 (T + 1 votes in query 0) or 1000 fails its
    proof; the sender is named and the others' round released."""
    report = four.run_dppp(assurance=Assurance.PROVEN_VOTES, honest_fraction=0.5, ensemble=4)
    result = report["result"]
    assert sorted(result["rejected_votes"]) == ["2", "3"] and result["contributors"] == [1, 4]
    assert all("vote proof failed" in reason for reason in result["rejected_votes"].values())
    assert np.array_equal(np.array(result["histograms"]), _reference(four, report, [1, 4]))


def test_without_proofs_a_second_one_in_the_feasible_range_passes_unnoticed(four):
    report = four.run_dppp(honest_fraction=0.5)
    result = report["result"]
    assert result["contributors"] == [1, 2, 3, 4] and result["rejected_votes"] == {}
    skew = np.array(result["histograms"]) - _reference(four, report, [1, 2, 3, 4])
    assert skew.sum() == 1 and skew[0].sum() == 1  # teacher 2's extra vote in query 0, counted


def test_honest_proven_round_equals_its_reference_and_costs_one_votes_message_per_teacher(pool):
    three = pool.get(3)
    report = three.run_dppp(assurance=Assurance.PROVEN_VOTES, queries=10)
    result = report["result"]
    assert result["rejected_votes"] == {} and result["contributors"] == [1, 2, 3]
    assert np.array_equal(np.array(result["histograms"]), _reference(three, report, [1, 2, 3]))
    votes = next(r for r in report["traffic"] if r["rpc"] == "Step/dppp/votes")
    assert votes["messages"] == 3
    # Per teacher: 10 vote ciphertexts, each with C = 2 commitments of 256 bytes, beside the packed noise.
    assert votes["request_bytes"] > 3 * 10 * 3 * 256


@pytest.mark.parametrize("noisy", [True, False])
def test_hamm_voters_with_non_one_hot_votes_are_rejected_by_name(four, noisy):
    """With noisy counts beside their shares; without, a voter sends no noise ciphertexts at all."""
    parameters = session_parameters(four.topology, four.client_data, "vote", 1.0, 1e-5, 0.01, noisy,
                                    honest_fraction=0.5, assurance=Assurance.PROVEN_VOTES)
    report = asyncio.run(run_hamm_session(four.topology, four.client_data, parameters, deadline_s=60.0))
    result = report["result"]
    assert sorted(result["rejected_votes"]) == ["2", "3"] and result["contributors"] == [1, 4]
    session = report["session_id"]
    records = [four.call(party(j), RoleStub, "GetTestRecord", envelope(session, party(j)), CLIENT).hamm.test_record
               for j in (1, 4)]
    expected = reference.counts(parameters, [np.array(r.votes).reshape(-1, 1) for r in records],
                                [np.array(r.noise).reshape(-1, 1) for r in records])
    charlie = four.call(CURATOR, RoleStub, "GetTestRecord", envelope(session, CURATOR), CLIENT).hamm.test_record
    assert np.array_equal(np.array(charlie.counts).reshape(expected.shape), expected)
