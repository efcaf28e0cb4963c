"""Many logical parties in one process: one address and one certificate per host, one RPC per logical message."""

import json
from collections import Counter

import grpc
import pytest

from launcher.deployment import processes
from mpdp.cryptocore.paillier import keyfiles
from mpdp.proto.v1 import common_pb2, dppp_pb2
from mpdp.proto.v1.role_pb2_grpc import RoleStub
from mpdp.sessions.identity import AGGREGATOR, party
from mpdp.wire.identity import Principal
from tests.deployment import deployment, envelope
from tests.test_dppp_network import closed_form_counts, observed_counts
from tests.test_du_network import _run as run_du
from tests.test_du_sessions import closed_form as du_closed_form
from tests.test_hamm_network import closed_form as hamm_closed_form
from tests.test_hamm_network import run as run_hamm
from tests.test_pathak_network import closed_form, observed


def test_parties_per_process_group_the_parties_into_hosts():
    hosts = processes.party_hosts(7, 3)
    assert sorted(set(map(str, hosts.values()))) == ["party/1-3", "party/4-6", "party/7"]
    with pytest.raises(ValueError):
        processes.party_hosts(3, 0)


def test_five_parties_in_two_processes_run_every_protocol_with_the_closed_form_counts(tmp_path):
    with deployment(tmp_path, 5, parties_per_process=3) as d:
        assert len(json.loads(d.run.processes.read_text())) == 4  # aggregator, curator, parties 1–3, parties 4–5
        assert {str(d.topology.principal_of(party(j))) for j in range(1, 6)} == {"party/1-3", "party/4-5"}
        dppp = d.run_dppp(queries=5)
        assert dppp["result"]["contributors"] == [1, 2, 3, 4, 5]
        # parties 1–3 hold three of the five shares: 2t > ℓ + 3 makes t = 5 (mpdp.threshold_sum.quorums)
        threshold = keyfiles.load_public_key(d.topology.public_key).threshold
        assert threshold == 5
        assert observed_counts(dppp) == closed_form_counts(5, 5, threshold=threshold)  # messages stay per logical party
        _, hamm = run_hamm(d, seed=4)
        assert hamm["result"]["voters"] == 5 and observed_counts(hamm) == hamm_closed_form(5, 5)
        _, du = run_du(d, secure=True, rounds=2)
        assert observed_counts(du) == du_closed_form(5, 2, holders=5, client_rpc="AwaitResult")
        pathak = d.run_pathak(noise_seed=5)
        self_routed = sum(pathak["evaluator_view"]["self_deliveries"][f"party/{j}"].get("routed_share", 0)
                          for j in range(1, 6))
        assert observed(pathak) == closed_form(5, self_routed)
        # A host speaks for its own parties only: parties 1–3's certificate may not send as party 4.
        forged = envelope("forged", AGGREGATOR, party(4), dppp=dppp_pb2.DpppMessage(votes=dppp_pb2.DpppVotes()))
        with pytest.raises(grpc.RpcError) as refused:
            d.call(AGGREGATOR, RoleStub, "Step", forged, Principal("party", 1, 3))
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
        # Its status names the host; both hosts keep serving.
        status = d.call(party(5), RoleStub, "GetStatus", common_pb2.Empty(), Principal("client", 0, 0))
        assert status.role == "party" and not status.open_sessions
        # Every logical message is its own RPC, recorded with its logical sender and receiver.
        senders = Counter(row["from"] for row in pathak["evaluator_view"]["traffic_detail"]
                          if row["rpc"] == "Step/pathak/commitment")
        assert senders == Counter({f"party/{j}": 4 for j in range(1, 6)})
