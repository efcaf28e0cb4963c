import pytest

from wire.identity import AGGREGATOR, CURATOR, Identity, party
from wire.topology import RoleEntry, Topology
from wire.traffic import merge_views, summarise


def test_topology_round_trip(tmp_path):
    topology = Topology(
        public_key=tmp_path / "keys" / "public_key.json",
        roles=(RoleEntry(AGGREGATOR, "127.0.0.2:5000", listen="0.0.0.0:5000"), RoleEntry(CURATOR, "127.0.0.3:5000"),
               RoleEntry(party(1), "127.0.0.4:5000", key_share=tmp_path / "keys" / "k1.json", data=tmp_path / "p1.npz",
                         model="logistic"),
               RoleEntry(party(2), "127.0.0.5:5000", data=tmp_path / "p2.npz")),
    )
    path = tmp_path / "topology.toml"
    topology.dump(path)
    assert 'public_key = "keys/public_key.json"' in path.read_text()
    loaded = Topology.load(path)
    assert loaded == topology
    assert loaded.key_holders == [1] and loaded.entry(AGGREGATOR).bind_address == "0.0.0.0:5000"


def test_topology_rejects_inconsistent_files(tmp_path):
    with pytest.raises(ValueError):
        Topology(tmp_path / "k", (RoleEntry(AGGREGATOR, "a:1"), RoleEntry(CURATOR, "c:1"), RoleEntry(party(2), "p:1")))
    with pytest.raises(ValueError):
        Topology(tmp_path / "k", (RoleEntry(AGGREGATOR, "a:1"), RoleEntry(party(1), "p:1")))
    with pytest.raises(ValueError):
        Identity.parse("party")
    with pytest.raises(ValueError):
        Identity("mallory", 1)


def _row(frm, to, rpc, call_id, observed_by, size=10):
    return {"from": frm, "to": to, "from_role": frm.split("/")[0], "to_role": to.split("/")[0], "rpc": rpc,
            "request_bytes": size, "response_bytes": 1, "status": "OK", "call_id": call_id, "observed_by": observed_by}


def test_each_rpc_counts_once_from_whichever_side_survived():
    server = [_row("party/1", "aggregator/0", "SubmitDpppVotes", "a", "server")]
    client = [_row("party/1", "aggregator/0", "SubmitDpppVotes", "a", "client"),
              _row("aggregator/0", "party/2", "RequestDpppPartialDecryption", "b", "client")]
    merged = merge_views(server, client)
    assert sorted(r["call_id"] for r in merged) == ["a", "b"]
    summary = summarise(merged)
    assert [(r["from"], r["to"], r["rpc"], r["messages"], r["bytes"]) for r in summary] == [
        ("aggregator", "party", "RequestDpppPartialDecryption", 1, 11),
        ("party", "aggregator", "SubmitDpppVotes", 1, 11),
    ]
