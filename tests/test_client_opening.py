"""Sessions start on the client's word (mpdp/sessions/opening.py), in process for all four protocols: a party
holding a CA-issued verifier spends nothing on, and answers nothing in, a session the aggregator opens without
the client's signature on it — unsigned, signed by the aggregator's own certificate, or carrying the client's
signature on another session or on other parameters (another ε). Each is refused with PERMISSION_DENIED before
any work, and the party's ledger is unchanged; the client's own opening is then taken and charged once. Pathak's
parties take an opening from the client's own mTLS channel only, so the aggregator's is refused by its sender."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from launcher.deployment import certs
from mpdp.cryptocore.keys.contribution_signature import ContributionSigner, ContributionVerifier
from mpdp.privacy.ledger import UNLIMITED, Ledger, provision
from mpdp.proto.v1 import dppp_pb2, du_pb2, hamm_pb2
from mpdp.protocols.dppp.parameters import DpppParameters
from mpdp.protocols.du.parameters import DuParameters
from mpdp.protocols.hamm.parameters import HammParameters
from mpdp.protocols.pathak.parameters import PathakParameters
from mpdp.sessions import opening
from mpdp.sessions.errors import Kind, ProtocolError
from mpdp.sessions.identity import AGGREGATOR, CLIENT, party
from mpdp.sessions.matrices import matrix_to_proto
from mpdp.threshold_sum.binding import ContributionKeys
from party.resources import PartyResources
from tests.hostile_aggregator import client_signature_from

DIMENSION, QUERIES = 3, 4


class _Teacher:
    def predict(self, features):
        return np.ones(len(features), dtype=int)


@pytest.fixture(scope="module")
def issued(tmp_path_factory):
    directory = tmp_path_factory.mktemp("opening-certs")
    certs.issue(directory, [party(1), AGGREGATOR, CLIENT])
    return directory


def _party(tmp_path, issued, threshold_key) -> PartyResources:
    public, shares = threshold_key
    data = tmp_path / "party_1.npz"
    data.write_bytes(b"records")
    provision(data, 1)
    rng = np.random.default_rng(3)
    keys = ContributionKeys(ContributionVerifier.from_file(issued / certs.CA_FILE),
                            lambda name, sender: name == f"party/{sender}",
                            ContributionSigner.from_files(*reversed(certs.certificate_files(issued, party(1)))))
    return PartyResources(1, public, shares[0], _Teacher(), rng.uniform(-0.5, 0.5, (30, DIMENSION)),
                          rng.integers(0, 2, 30), test_mode=True, ledger=Ledger(data, 1, UNLIMITED),
                          contribution_keys=keys)


def _signed_by(issued, identity, protocol, session_id, parameters, public_inputs=b""):
    certificate, key = certs.certificate_files(issued, identity)
    return opening.sign(ContributionSigner.from_files(key, certificate), protocol, session_id, parameters,
                        public_inputs)


def _cases(issued, protocol: str, parameters, other, public_inputs: bytes):
    """(what is wrong, the signature the aggregator forwards) for session "s" under `parameters`."""
    return [
        ("unsigned", None),
        ("signed by the aggregator", _signed_by(issued, AGGREGATOR, protocol, "s", parameters, public_inputs)),
        ("the client's, of another session", client_signature_from(issued, protocol, "t", parameters, public_inputs)),
        ("the client's, of another ε", client_signature_from(issued, protocol, "s", other, public_inputs)),
    ]


def _dppp(public):
    features = np.zeros((1, DIMENSION))  # one query: the noise search is what costs here
    parameters = DpppParameters.with_minimal_noise(5.0, 1e-5, 1, 2, 5, 2 / 3, True, public.key_id)
    other = dataclasses.replace(parameters, epsilon=10.0)  # refused before any calibration checks it
    inputs = matrix_to_proto(features).SerializeToString(deterministic=True)

    def body(p, signature):
        message = dppp_pb2.DpppQueries(parameters=p.to_proto(), features=matrix_to_proto(features),
                                       deadline_seconds=60)
        if signature is not None:
            message.client_signature.CopyFrom(signature)
        return message
    return "queries", parameters, other, inputs, body


def _hamm(public):
    parameters = HammParameters("vote", 1.0, 1e-5, 0.01, 2, 5, QUERIES, DIMENSION, True, False, 2 / 3, public.key_id)
    other = dataclasses.replace(parameters, epsilon=8.0)

    def body(p, signature):
        message = hamm_pb2.HammQueries(parameters=p.to_proto(), features=matrix_to_proto(np.zeros((QUERIES, DIMENSION))),
                                       deadline_seconds=60)
        if signature is not None:
            message.client_signature.CopyFrom(signature)
        return message
    return "queries", parameters, other, b"", body


def _du(public):
    parameters = DuParameters(method="functional", epsilon=1.0, delta=1e-5, rounds=2, tolerance=0.0, local_epochs=1,
                              learning_rate=1.0, regularization=0.01, parties=5, dimension=DIMENSION, bound=50.0,
                              secure_aggregation=True, honest_fraction=2 / 3, key_id=public.key_id)
    other = dataclasses.replace(parameters, epsilon=8.0)

    def body(p, signature):
        message = du_pb2.DuModel(parameters=p.to_proto(), round=0, theta=[0.0] * p.weights, round_deadline_seconds=30)
        if signature is not None:
            message.client_signature.CopyFrom(signature)
        return message
    return "model", parameters, other, b"", body


@pytest.mark.parametrize("protocol, make", [("dppp", _dppp), ("hamm", _hamm), ("du", _du)])
def test_an_opening_the_client_did_not_sign_spends_nothing_and_is_refused(protocol, make, tmp_path, issued,
                                                                          threshold_key):
    from party import dppp, du, hamm

    own = _party(tmp_path, issued, threshold_key)
    opener = {"dppp": dppp, "hamm": hamm, "du": du}[protocol].protocol(lambda me: own)
    kind, parameters, other, inputs, body = make(own.public_key)
    for wrong, signature in _cases(issued, protocol, parameters, other, inputs):
        with pytest.raises(ProtocolError) as refused:
            opener.open("s", party(1), AGGREGATOR, kind, body(parameters, signature))
        assert refused.value.kind is Kind.PERMISSION_DENIED, wrong
        assert "client" in str(refused.value), wrong
        assert own.ledger.entries() == [], f"{wrong}: the party spent on a session the client did not open"
    signed = client_signature_from(issued, protocol, "s", parameters, inputs)
    opener.open("s", party(1), AGGREGATOR, kind, body(parameters, signed))
    assert [entry["session"] for entry in own.ledger.entries()] == ["s"]


def test_a_pathak_opening_comes_from_the_clients_own_channel_only(tmp_path, issued, threshold_key):
    from party import pathak

    own = _party(tmp_path, issued, threshold_key)
    opener = pathak.protocol(lambda me: own)
    parameters = PathakParameters(epsilon=1.0, delta=1e-5, regularization=0.05, mechanism="l2-laplace",
                                  calibration="tight", parties=3, dimension=DIMENSION, noise_seed=11)
    with pytest.raises(ProtocolError) as refused:
        opener.open("s", party(1), AGGREGATOR, "open", parameters.to_proto())
    assert refused.value.kind is Kind.PERMISSION_DENIED
    assert own.ledger.entries() == []
