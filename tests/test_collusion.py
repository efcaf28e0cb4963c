"""The noise calibration against one malicious principal controlling c contributors (mpdp.privacy.collusion):
N_i = ⌈N/(max(c + 1, m) − c)⌉ and μ_i = μ/(m − c), c from each party's own topology."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from mpdp.deployments.topology import RoleEntry, Topology
from mpdp.privacy.binomial import BinomialCalibration, minimal_tosses
from mpdp.privacy.collusion import calibrated_contributors, check_colluding, noise_bearing
from mpdp.privacy.skellam import SkellamCalibration, minimal_grid, mu_of
from mpdp.proto.v1 import dppp_pb2, hamm_pb2, threshold_sum_pb2
from mpdp.protocols.dppp.parameters import DpppParameters
from mpdp.protocols.hamm.parameters import HammParameters
from mpdp.sessions.errors import Kind, ProtocolError
from mpdp.sessions.identity import AGGREGATOR, CURATOR, party
from mpdp.sessions.matrices import matrix_to_proto
from party.registry import protocols as party_protocols
from party.resources import PartyResources

OWNERS, TEACHERS_PER_OWNER = 5, 4  # the demo's layout: K = 20, m = ⌈2/3·20⌉ = 14
K = OWNERS * TEACHERS_PER_OWNER


def test_one_contributor_per_principal_gives_the_single_party_calibration():
    for m in range(0, 40):
        assert calibrated_contributors(m, 1) == calibrated_contributors(m) == max(2, m) - 1
        assert noise_bearing(m, 1) == noise_bearing(m) == max(1, m - 1)
    total = minimal_tosses(1.0, 1e-5, 3)
    for teachers in (2, 5, 10, 20):
        default = BinomialCalibration(1.0, 1e-5, 3, teachers, 2 / 3, total)
        explicit = BinomialCalibration(1.0, 1e-5, 3, teachers, 2 / 3, total, 1)
        m = max(2, math.ceil(2 / 3 * teachers - 1e-9))
        share = -(-total // (m - 1))
        assert default.tosses_per_teacher == explicit.tosses_per_teacher == share + share % 2


def test_four_teachers_per_owner_at_twenty_divide_by_ten():
    total = minimal_tosses(1.0, 1e-5, 3)
    calibration = BinomialCalibration(1.0, 1e-5, 3, K, 2 / 3, total, TEACHERS_PER_OWNER)
    assert calibration.min_contributors == 14
    share = -(-total // 10)
    assert calibration.tosses_per_teacher == share + share % 2
    assert calibration.guaranteed_tosses(14) == 10 * calibration.tosses_per_teacher >= total
    grid = minimal_grid(1.0, 1e-5, 6)
    skellam = SkellamCalibration(1.0, 1e-5, 3, 2, K, 2 / 3, 6, grid, TEACHERS_PER_OWNER)
    assert skellam.share_mu == pytest.approx(mu_of(grid) / 10, rel=1e-15)
    assert skellam.report(14)["mu_guaranteed"] == pytest.approx(mu_of(grid), rel=1e-12)
    assert skellam.report(14)["contributors_counted"] == 10


def test_a_layout_leaving_no_unknown_share_is_refused():
    check_colluding(3, 2)  # m − c = 1
    with pytest.raises(ValueError, match="no share would be unknown"):
        check_colluding(2, 2)
    with pytest.raises(ValueError, match="at least 1"):
        check_colluding(5, 0)
    total = minimal_tosses(5.0, 1e-5, 2)
    for colluding in (2, 3):  # K = 10, τ = 0.2: m = 2
        with pytest.raises(ProtocolError, match="no share would be unknown") as raised:
            DpppParameters(5.0, 1e-5, 2, 2, 10, 0.2, True, bytes(32), total, colluding=colluding)
        assert raised.value.kind is Kind.INVALID_ARGUMENT
        with pytest.raises(ProtocolError, match="no share would be unknown"):
            HammParameters("vote", 1.0, 1e-5, 0.01, 2, 10, 50, 4, True, False, 0.2, b"k" * 32, colluding=colluding)


def test_c_travels_in_the_parameters_and_an_unset_c_is_one():
    parameters = DpppParameters.with_minimal_noise(1.0, 1e-5, 3, 2, K, 2 / 3, True, bytes(32),
                                                   colluding=TEACHERS_PER_OWNER)
    assert DpppParameters.from_proto(parameters.to_proto()) == parameters
    unset = parameters.to_proto()
    unset.ClearField("colluding")
    assert DpppParameters.from_proto(unset).colluding == 1
    hamm = HammParameters("vote", 1.0, 1e-5, 0.01, 2, K, 50, 4, True, False, 2 / 3, b"k" * 32,
                          colluding=TEACHERS_PER_OWNER)
    assert HammParameters.from_proto(hamm.to_proto()) == hamm
    assert HammParameters.from_proto(hamm_pb2.HammParameters(**{**_fields(hamm.to_proto()), "colluding": 0})).colluding == 1


def _fields(message) -> dict:
    return {field.name: value for field, value in message.ListFields()}


def _topology(hosts: list[tuple[int, int]]) -> Topology:
    roles = [RoleEntry(AGGREGATOR, "127.0.0.1:1"), RoleEntry(CURATOR, "127.0.0.1:2")]
    for port, (first, last) in enumerate(hosts, start=10):
        roles += [RoleEntry(party(i), f"127.0.0.1:{port}", host=f"party/{first}-{last}" if last > first else None)
                  for i in range(first, last + 1)]
    return Topology(Path("public.json"), tuple(roles), insecure=True)


def test_the_topology_gives_the_most_parties_one_principal_hosts():
    assert _topology([(i, i) for i in range(1, 6)]).colluding == 1
    owners = [(4 * o + 1, 4 * o + 4) for o in range(OWNERS)]
    assert _topology(owners).colluding == TEACHERS_PER_OWNER
    assert _topology([(1, 2), (3, 7), (8, 8)]).colluding == 5  # the largest host, not the first


def test_a_single_operator_simulation_counts_each_logical_party_as_its_own_principal(tmp_path):
    """`--single-operator`: one operator runs every logical party and holds a decrypting quorum anyway, so the
    logical parties stand for separate owners (c = 1); the flag survives the file every bundle carries."""
    import dataclasses

    hosted = _topology([(1, 10)])
    assert hosted.colluding == 10
    simulated = dataclasses.replace(hosted, single_operator=True)
    assert simulated.colluding == 1
    simulated.dump(tmp_path / "topology.toml")
    assert "single_operator = true" in (tmp_path / "topology.toml").read_text()
    assert Topology.load(tmp_path / "topology.toml").colluding == 1
    hosted.dump(tmp_path / "hosted.toml")
    assert Topology.load(tmp_path / "hosted.toml").colluding == 10


def _dppp_queries(parameters: DpppParameters, features: np.ndarray) -> dppp_pb2.DpppQueries:
    return dppp_pb2.DpppQueries(parameters=parameters.to_proto(), features=matrix_to_proto(features),
                                deadline_seconds=60)


@pytest.mark.parametrize("protocol", ["dppp", "hamm"])
def test_a_party_refuses_a_session_calibrated_for_fewer_contributors_per_principal(threshold_key, tmp_path,
                                                                                  protocol):
    """An active aggregator (or client) names c = 1 in a deployment of four teachers per owner, so each share
    carries N/13 where one owner's 4 subtracted would need N/10. Every party checks c against its own topology
    and refuses before its policy, its ledger or its data are touched."""
    from mpdp.privacy.ledger import UNLIMITED, Ledger, provision

    public, shares = threshold_key
    data = tmp_path / "party_1.npz"
    data.write_bytes(b"records of party 1")
    provision(data, 1)
    own = PartyResources(1, public, shares[0], None, np.zeros((2, 4)), np.zeros(2), test_mode=True,
                         ledger=Ledger(data, 1, UNLIMITED), colluding=TEACHERS_PER_OWNER)
    opened = party_protocols(lambda identity: own)[protocol].open
    features = np.random.default_rng(0).normal(size=(3, 4))
    for colluding in (1, 2, 3):
        if protocol == "dppp":
            parameters = DpppParameters.with_minimal_noise(1.0, 1e-5, 3, 2, K, 2 / 3, True, public.key_id,
                                                           colluding=colluding)
            body = _dppp_queries(parameters, features)
        else:
            hamm = HammParameters("vote", 1.0, 1e-5, 0.01, 2, K, 3, 4, True, False, 2 / 3, public.key_id,
                                  colluding=colluding)
            body = hamm_pb2.HammQueries(parameters=hamm.to_proto(), features=matrix_to_proto(features),
                                        deadline_seconds=60)
        if colluding == 1:
            body.parameters.ClearField("colluding")  # unset on the wire: one
        with pytest.raises(ProtocolError, match="contributors per principal") as raised:
            opened("s", party(1), AGGREGATOR, "queries", body)
        assert raised.value.kind is Kind.INVALID_ARGUMENT
    assert list(Ledger(data, 1).entries()) == []  # nothing spent, nothing admitted
    if protocol == "dppp":  # the honest c opens the teacher's side and spends once
        honest = DpppParameters.with_minimal_noise(1.0, 1e-5, 3, 2, K, 2 / 3, True, public.key_id,
                                                   colluding=TEACHERS_PER_OWNER)
        own.model = _Ones()
        opened("s-honest", party(1), AGGREGATOR, "queries", _dppp_queries(honest, features))
        assert [entry["session"] for entry in Ledger(data, 1).entries()] == ["s-honest"]


class _Ones:
    def predict(self, features):
        return np.ones(len(features), dtype=int)


def _residual_variance(draw, contributors: int, colluding: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The m contributors' shares the aggregator picked, drawn by the real sampler; the colluding owner's first
    `colluding` are known to it and subtracted. Returns (residual noise per coordinate, all shares)."""
    shares = np.array([draw(count) for _ in range(contributors)], dtype=np.int64)
    residual = shares[colluding:].sum(axis=0)
    return residual, shares


@pytest.mark.parametrize("noise", ["binomial", "skellam"])
def test_an_aggregator_with_one_owner_of_four_teachers_keeps_the_calibrated_noise(noise):
    """Attack: 5 owners × 4 teachers, τ = 2/3. The aggregator asks the key holders for the sum of exactly m = 14
    contributions, the malicious owner's 4 among them (the holders accept: 14 signed contributions), and the owner
    subtracts its 4 shares. The 10 shares left must carry the variance (ε, δ) was calibrated on: N/4 (Binomial)
    or μ (Skellam). Under the one-party calibration (N_i = N/13) they carry 10/13 of it."""
    from mpdp.proto.v1 import common_pb2
    from mpdp.threshold_sum import decryption

    parameters = DpppParameters.with_minimal_noise(1.0, 1e-5, 3, 2, K, 2 / 3, True, bytes(32), noise=noise,
                                                   colluding=TEACHERS_PER_OWNER)
    calibration = parameters.calibration
    m = calibration.min_contributors
    assert m == 14
    picked = threshold_sum_pb2.DecryptionRequest(contributions=[
        threshold_sum_pb2.Contribution(sender=sender, ciphertexts=common_pb2.Ciphertexts(values=[b"\x01"]))
        for sender in range(1, m + 1)])  # teachers 1..4 are the malicious owner's
    decryption._check_shape(picked, K, m, 1)  # a sum the holders decrypt
    if isinstance(calibration, BinomialCalibration):
        required = calibration.total_tosses / 4  # Var Bin(N, ½)
        exact = (m - TEACHERS_PER_OWNER) * calibration.tosses_per_teacher / 4
        one_party = (m - TEACHERS_PER_OWNER) * BinomialCalibration(
            1.0, 1e-5, 3, K, 2 / 3, calibration.total_tosses).tosses_per_teacher / 4
    else:
        required = calibration.mu
        exact = (m - TEACHERS_PER_OWNER) * calibration.share_mu
        one_party = (m - TEACHERS_PER_OWNER) * SkellamCalibration(
            1.0, 1e-5, 3, 2, K, 2 / 3, parameters.values, calibration.grid).share_mu
    assert exact >= required * (1 - 1e-12)
    assert one_party < 0.8 * required  # what this test catches: the one-party calibration leaves 10/13 of it
    residual, shares = _residual_variance(parameters.draw_shares, m, TEACHERS_PER_OWNER, 6000)
    measured = residual.astype(float).var(ddof=1)
    # 6 000 draws: the variance estimate's relative spread is about √(2/6000) ≈ 1.8 %, far below the 23 % gap
    assert measured >= 0.92 * required
    assert abs(measured - exact) <= 0.08 * exact


def test_the_hamm_voters_shares_keep_the_calibrated_noise_without_one_owners_four():
    for count_noise in ("binomial", "skellam"):
        parameters = HammParameters("vote", 1.0, 1e-5, 0.01, 2, K, 50, 4, True, False, 2 / 3, b"k" * 32,
                                    count_noise, colluding=TEACHERS_PER_OWNER)
        kept = parameters.min_contributors - TEACHERS_PER_OWNER
        if parameters.skellam is None:
            assert kept * parameters.tosses_per_party >= parameters.total_tosses
            assert parameters.counts_report(14)["tosses_guaranteed"] == kept * parameters.tosses_per_party
        else:
            assert kept * parameters.skellam.share_mu >= parameters.skellam.mu * (1 - 1e-12)


@pytest.mark.parametrize("protocol", ["dppp", "hamm"])
def test_the_audit_counts_the_shares_one_owner_cannot_subtract(protocol):
    """`mpdp audit --teachers-per-party 4`: the exact check sums the m − 4 shares left after one owner's 4, drawn
    with the calibration against 4, and stays within the claim; the summary says what it counted and why."""
    from launcher.audit import counts
    from launcher.commands import audit

    report = audit.run(protocol, "binomial", 1.0, 1e-5, 300, None, colluding=TEACHERS_PER_OWNER)
    expected = {"dppp": 10, "hamm": 20}[protocol]  # the audits' K
    m = math.ceil(2 / 3 * expected - 1e-9)
    assert report["setting"]["contributors"] == m - TEACHERS_PER_OWNER
    assert report["exact"]["noise"]["contributors_counted"] == m - TEACHERS_PER_OWNER
    assert report["exact"]["epsilon"] <= 1.0 + report["exact"]["tolerance"] and not report["exceeds_claim"]
    assert f"{m - TEACHERS_PER_OWNER} contributors counted" in counts.summary(report)
    assert "4 per data owner" in counts.summary(report)


def test_the_one_party_shares_exceed_the_claim_once_one_owner_removes_four():
    """The exact check on the shares the one-party calibration draws, with 4 of the 7 a decryptable sum holds
    removed: ε above the claim, which is what the calibration against c = 4 prevents."""
    from launcher.audit import counts as audit
    from mpdp.privacy import spec_sensitivity

    sampler, _ = audit.share_sampler("binomial", 1.0, 1e-5, 2, 10, 2, None, 10, colluding=1)
    draws = np.asarray(sampler.draw(20_000))
    shifts = spec_sensitivity.dppp_shifts(1)
    exact = audit.exact_check(sampler, 7 - TEACHERS_PER_OWNER, shifts, shifts, 1.0, 1e-5, draws, 20)
    assert exact.epsilon > 1.0 + 0.05
