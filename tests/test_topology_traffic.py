import pytest

from mpdp.deployments.topology import RoleEntry, Topology
from mpdp.sessions.identity import AGGREGATOR, CLIENT, CURATOR, Identity, party
from mpdp.wire.traffic import merge_views, summarise


def _tls(tmp_path, identity):
    return {"certificate": tmp_path / f"{identity.role}{identity.id}.pem", "key": tmp_path / f"{identity.role}{identity.id}.key"}


def test_topology_round_trip(tmp_path):
    topology = Topology(
        public_key=tmp_path / "keys" / "public_key.json",
        roles=(RoleEntry(AGGREGATOR, "127.0.0.2:5000", listen="0.0.0.0:5000", **_tls(tmp_path, AGGREGATOR)),
               RoleEntry(CURATOR, "127.0.0.3:5000", **_tls(tmp_path, CURATOR)),
               RoleEntry(party(1), "127.0.0.4:5000", key_share=tmp_path / "keys" / "k1.json", data=tmp_path / "p1.npz",
                         model="logistic", **_tls(tmp_path, party(1))),
               RoleEntry(party(2), "127.0.0.5:5000", data=tmp_path / "p2.npz", **_tls(tmp_path, party(2)))),
        ca_certificate=tmp_path / "ca.pem", client_certificate=tmp_path / "c.pem", client_key=tmp_path / "c.key",
    )
    path = tmp_path / "topology.toml"
    topology.dump(path)
    assert 'public_key = "keys/public_key.json"' in path.read_text()
    loaded = Topology.load(path)
    assert loaded == topology
    assert loaded.key_holders == [1] and loaded.entry(AGGREGATOR).bind_address == "0.0.0.0:5000"
    assert loaded.tls_for(party(2)).certificate == tmp_path / "party2.pem"
    assert loaded.tls_for(CLIENT).key == tmp_path / "c.key"


def test_plaintext_must_be_declared(tmp_path):
    roles = (RoleEntry(AGGREGATOR, "a:1"), RoleEntry(CURATOR, "c:1"), RoleEntry(party(1), "p:1"))
    with pytest.raises(ValueError, match="mutual TLS"):
        Topology(tmp_path / "k", roles)
    insecure = Topology(tmp_path / "k", roles, insecure=True)
    path = tmp_path / "plain.toml"
    insecure.dump(path)
    assert "insecure = true" in path.read_text()
    assert Topology.load(path).tls_for(party(1)) is None


def test_topology_rejects_inconsistent_files(tmp_path):
    with pytest.raises(ValueError):
        Topology(tmp_path / "k", (RoleEntry(AGGREGATOR, "a:1"), RoleEntry(CURATOR, "c:1"), RoleEntry(party(2), "p:1")),
                 insecure=True)
    with pytest.raises(ValueError):
        Topology(tmp_path / "k", (RoleEntry(AGGREGATOR, "a:1"), RoleEntry(party(1), "p:1")), insecure=True)
    with pytest.raises(ValueError):
        Identity.parse("party")
    with pytest.raises(ValueError):
        Identity("mallory", 1)


def _row(frm, to, rpc, call_id, observed_by, size=10):
    return {"from": frm, "to": to, "from_role": frm.split("/")[0], "to_role": to.split("/")[0], "rpc": rpc,
            "request_bytes": size, "response_bytes": 1, "status": "OK", "call_id": call_id, "observed_by": observed_by}


def test_each_rpc_counts_once_from_whichever_side_survived():
    server = [_row("party/1", "aggregator/0", "Step/dppp/votes", "a", "server")]
    client = [_row("party/1", "aggregator/0", "Step/dppp/votes", "a", "client"),
              _row("aggregator/0", "party/2", "RequestDpppPartialDecryption", "b", "client")]
    merged = merge_views(server, client)
    assert sorted(r["call_id"] for r in merged) == ["a", "b"]
    summary = summarise(merged)
    assert [(r["from"], r["to"], r["rpc"], r["messages"], r["bytes"]) for r in summary] == [
        ("aggregator", "party", "RequestDpppPartialDecryption", 1, 11),
        ("party", "aggregator", "Step/dppp/votes", 1, 11),
    ]


def test_a_retried_message_counts_once():
    """Attempts that never reached the server share the call id of the one that did."""
    server = [_row("party/1", "party/2", "Step/pathak/commitment", "m1", "server")]
    client = [{**_row("party/1", "party/2", "Step/pathak/commitment", "m1", "client"), "status": "UNAVAILABLE"},
              _row("party/1", "party/2", "Step/pathak/commitment", "m1", "client")]
    assert [r["messages"] for r in summarise(merge_views(server, client))] == [1]


def test_a_role_started_twice_on_its_address_is_refused_with_one_clear_line(pool):
    """No port sharing (grpc.so_reuseport = 0): the second server fails at once instead of taking half the calls."""
    import subprocess
    import sys

    d = pool.get(3)
    result = subprocess.run([sys.executable, "-m", "launcher.cli", "serve", "curator", "--topology", str(d.run.topology)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("mpdp: error:") and "in use" in last, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert d.run_pathak()["result"]["w"]  # the running deployment is untouched


def test_the_traffic_log_is_bounded():
    from mpdp.wire.traffic import MAX_RECORDS_PER_SESSION, TrafficLog, TrafficRecord

    log = TrafficLog(max_sessions=3)
    refused = TrafficRecord("party/1", "curator/0", "Step", 10, 0, "FAILED_PRECONDITION", "server")
    for index in range(1000):  # refused calls for unknown sessions: counted, not recorded
        log.add(f"unknown-{index}", refused)
    log.add("x" * 8_000_000, TrafficRecord("party/1", "curator/0", "Step", 10, 0, "OK", "server"))
    assert log.records("unknown-1") == [] and log.refused_unknown[("Step", "FAILED_PRECONDITION")] == 1000
    ok = TrafficRecord("party/1", "curator/0", "Step", 10, 0, "OK", "server")
    for index in range(MAX_RECORDS_PER_SESSION + 50):
        log.add("s", ok)
    assert len(log.records("s")) == MAX_RECORDS_PER_SESSION and log.dropped["s"] == 50
    log.add("s", refused)  # a known session's refused calls are still recorded (bounded above)
    for name in ("t", "u", "v"):
        log.add(name, ok)
    assert log.records("s") == [] and len(log.records("v")) == 1  # oldest session forgotten


def test_a_topology_whose_paths_hold_a_backslash_and_a_quote_round_trips(tmp_path):
    odd = tmp_path / 'a "quoted" dir\\with\\backslashes'
    odd.mkdir()
    topology = Topology(public_key=odd / "public_key.json", insecure=True, single_operator=True,
                        roles=(RoleEntry(AGGREGATOR, "127.0.0.1:1"), RoleEntry(CURATOR, "127.0.0.1:2"),
                               RoleEntry(party(1), "127.0.0.1:3", data=odd / 'party "1".npz', model='m\\"x',
                                         key_share=tmp_path / "elsewhere\\k.json", key_holder=True)))
    path = tmp_path / "topology.toml"
    topology.dump(path)
    assert Topology.load(path) == topology
