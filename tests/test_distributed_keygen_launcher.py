"""`--keygen distributed` in the launcher: the choice on every command, refusals before any process starts,
and a holder that is gone aborts the ceremony with nothing left behind."""

import pytest

from launcher.cli import build_parser
from launcher.common.deployment_options import keygen_method
from launcher.deployment import distributed_keygen
from mpdp.cryptocore.paillier import keyfiles


@pytest.mark.parametrize("command", [["prepare", "--parties", "3", "--out", "k"], ["up", "--parties", "3"],
                                     ["compose", "--parties", "3"]])
def test_up_prepare_and_compose_default_to_the_holders_own_ceremony_where_it_can_run(command):
    parser = build_parser()
    assert keygen_method(parser.parse_args(command)) == "distributed"
    two = [*command[:command.index("--parties") + 1], "2", *command[command.index("--parties") + 2:]]
    assert keygen_method(parser.parse_args(two)) == "dealer"  # BGW needs 3 holders
    assert keygen_method(parser.parse_args([*command, "--keygen", "dealer"])) == "dealer"
    with pytest.raises(SystemExit):
        parser.parse_args([*command, "--keygen", "trusted-friend"])


@pytest.mark.parametrize(("parties", "per_process", "single_operator", "expected"), [
    (100, 50, True, "dealer"),  # party/1-50 would hold all 16 shares: the ceremony protects nothing against it
    (100, 20, True, "dealer"),
    (100, 10, True, "distributed"),  # 10 of 16 shares, t = 11: no process decrypts alone, the ceremony matters
    (100, 5, True, "distributed"),
    (100, 1, False, "distributed"),
    (100, 50, False, "distributed"),  # refused later (2t > ℓ + c), never dealt by default
])
def test_up_deals_the_key_only_where_one_process_would_decrypt_alone(parties, per_process, single_operator,
                                                                       expected, capsys):
    from launcher.commands.up import _local_keygen
    from launcher.deployment.keygen import quorum_in_one_host
    from launcher.deployment.processes import party_hosts
    from mpdp.sessions.identity import party

    command = ["up", "--parties", str(parties), "--parties-per-process", str(per_process)]
    args = build_parser().parse_args(command + (["--single-operator"] if single_operator else []))
    assert _local_keygen(args) == expected
    said = capsys.readouterr().out
    assert ("decrypts alone however the key is made" in said) == (expected == "dealer")
    holders = [party_hosts(parties, per_process)[party(number)] for number in range(1, 17)]
    assert quorum_in_one_host(holders) == (per_process >= 20)
    args.keygen = "distributed"  # the user's choice wins: the ceremony can still be measured
    assert _local_keygen(args) == "distributed"


def test_keygen_keeps_the_dealer_and_takes_the_choice():
    parser = build_parser()
    assert parser.parse_args(["keygen", "--parties", "3", "--out", "k"]).keygen == "dealer"
    assert parser.parse_args(["keygen", "--parties", "3", "--out", "k", "--keygen", "distributed"]).keygen == "distributed"


class _NoGuard:
    """In place of launcher/deployment/leftovers.py's guard, to see what the holders do on their own."""

    def __init__(self, *args):
        pass

    def holder_started(self, pid):
        pass

    def close(self, completed):
        pass


def _paths(directory):
    return {j: directory / keyfiles.share_file_name(j) for j in (1, 2, 3)}, [directory / keyfiles.PUBLIC_KEY_FILE]


def test_existing_key_files_are_refused_before_any_holder_starts(tmp_path, monkeypatch):
    (tmp_path / keyfiles.share_file_name(2)).write_text("{}")
    monkeypatch.setattr(distributed_keygen, "_spawn", lambda *a: pytest.fail("a holder was started"))
    with pytest.raises(FileExistsError):
        distributed_keygen.ceremony(*_paths(tmp_path), 3, 1024)


def test_a_failed_ceremony_removes_the_shares_it_wrote_and_the_key_they_no_longer_match(tmp_path):
    old = tmp_path / keyfiles.share_file_name(1)
    old.write_text("old")
    before = {old: old.stat().st_mtime_ns}
    (tmp_path / keyfiles.share_file_name(2)).write_text("written by this ceremony")
    (tmp_path / keyfiles.PUBLIC_KEY_FILE).write_text("old public key")
    shares = [tmp_path / keyfiles.share_file_name(j) for j in (1, 2, 3)]
    distributed_keygen._remove_partial([tmp_path / keyfiles.PUBLIC_KEY_FILE], shares, before)
    assert old.exists() and not shares[1].exists() and not (tmp_path / keyfiles.PUBLIC_KEY_FILE).exists()


@pytest.mark.network
def test_a_holder_gone_before_the_opening_aborts_everywhere_and_leaves_no_file(tmp_path, monkeypatch):
    from launcher.deployment.processes import stop

    pids: dict[int, int] = {}
    spawn, wait = distributed_keygen._spawn, distributed_keygen._wait_serving

    def record(work, holder):
        pids[holder] = spawn(work, holder)
        return pids[holder]

    def serving_then_one_dies(topology, holders, work, started):
        wait(topology, holders, work, started)
        stop({"party/2": pids[2]})

    monkeypatch.setattr(distributed_keygen, "_spawn", record)
    monkeypatch.setattr(distributed_keygen, "_wait_serving", serving_then_one_dies)
    with pytest.raises(RuntimeError, match="distributed key generation failed"):
        distributed_keygen.ceremony(*_paths(tmp_path / "keys"), 3, 1024, batch=64)
    assert not list((tmp_path / "keys").glob("*.json")) and not list((tmp_path / "keys").iterdir())


def test_deferred_is_prepares_alone_and_leaves_no_key_from_an_earlier_deployment(tmp_path):
    """compose's `prepare --keygen deferred`: no key is made; with --force the old one goes (its shares would not
    match the fresh certificates' deployment); without --force existing key files are refused."""
    from launcher.deployment.keygen import deal_into_bundles

    parser = build_parser()
    assert parser.parse_args(["prepare", "--parties", "3", "--out", "k", "--keygen", "deferred"]).keygen == "deferred"
    for command in (["keygen", "--parties", "3", "--out", "k"], ["up"]):
        with pytest.raises(SystemExit):
            parser.parse_args([*command, "--keygen", "deferred"])
    holders = {j: tmp_path / f"party-{j}" for j in (1, 2, 3)}
    public = [tmp_path / "aggregator", *holders.values()]
    for directory in public:
        directory.mkdir()
    stale = [holders[j] / keyfiles.share_file_name(j) for j in holders] + [d / keyfiles.PUBLIC_KEY_FILE for d in public]
    for path in stale:
        path.write_text("{}")
    with pytest.raises(FileExistsError):
        deal_into_bundles(3, 1024, holders, public, method="deferred")
    assert all(path.exists() for path in stale)
    assert deal_into_bundles(3, 1024, holders, public, overwrite=True, method="deferred") == (3, 3)
    assert not any(path.exists() for path in stale)


@pytest.mark.network
@pytest.mark.slow
def test_a_commit_refused_at_one_holder_is_rolled_back_by_the_holders_that_wrote(tmp_path, monkeypatch):
    """Over real processes: holders 1 and 2 get the client's commit and write their shares; holder 3 then gets a
    commit with another digest and refuses it. The launcher withdraws, and the holders' own processes remove what
    they wrote (the launcher's clean-up is switched off here to see that): the holders end alike, with nothing."""
    from mpdp.sessions.identity import party

    directory = tmp_path / "keys"
    everyone = distributed_keygen._all_or_first_failure
    written: list[list[str]] = []

    async def commit_one_by_one(peers, holders, session_id, envelope, failed, waiting=""):
        if not session_id.endswith("-commit"):
            return await everyone(peers, holders, session_id, envelope, failed)
        replies = await everyone(peers, holders[:2], session_id, envelope, failed)
        written.append(sorted(p.name for p in directory.glob("key_share_*")))

        def other_digest(holder):
            message = envelope(holder)
            message.keygen.commit.digest = bytes(32)
            return message

        return replies + await everyone(peers, holders[2:], session_id, other_digest, failed)

    monkeypatch.setattr(distributed_keygen, "_all_or_first_failure", commit_one_by_one)
    monkeypatch.setattr(distributed_keygen, "_remove_partial", lambda *args: None)
    monkeypatch.setattr(distributed_keygen, "Guard", _NoGuard)  # and the guard's, which would remove them too
    with pytest.raises(RuntimeError, match=f"commit failed: {party(3)}: INVALID_ARGUMENT: the commit names another digest"):
        distributed_keygen.ceremony(*_paths(directory), 3, 1024)
    assert written == [[keyfiles.share_file_name(1), keyfiles.share_file_name(2)]]
    assert not list(directory.glob("*.json"))


@pytest.mark.network
@pytest.mark.slow
def test_a_key_holders_abort_of_a_prepared_holder_is_refused_over_the_wire_and_the_commit_goes_through(tmp_path,
                                                                                                     monkeypatch):
    """Over real processes, with holder 3's own certificate: once every holder has prepared, holder 3 tells holder 1
    (not holder 2) to abort. Refused (PERMISSION_DENIED: only the client decides for a prepared holder), so the
    client's commit reaches all alike and every share is written, of one key."""
    import grpc

    from mpdp.proto.v1 import common_pb2, role_pb2_grpc
    from mpdp.sessions.identity import party
    from mpdp.wire.channels import PeerChannels
    from mpdp.wire.traffic import TrafficLog

    directory = tmp_path / "keys"
    make_topology, everyone = distributed_keygen._topology, distributed_keygen._all_or_first_failure
    seen: dict = {}

    def keep_topology(*args):
        seen["topology"] = make_topology(*args)
        return seen["topology"]

    async def third_aborts_first(peers, holders, session_id, envelope, failed, waiting=""):
        if session_id.endswith("-commit"):
            topology = seen["topology"]
            third = PeerChannels(party(3), topology.addresses, TrafficLog(), topology.tls_for(party(3)),
                                 hosts=topology.principals)
            try:
                await role_pb2_grpc.RoleStub(third.channel(party(1))).AbortSession(common_pb2.AbortRequest(
                    session_id=session_id.removesuffix("-commit"), reason="holder 3 says abort",
                    sender=str(party(3)), receiver=str(party(1))), timeout=10)
            except grpc.aio.AioRpcError as error:
                seen["refusal"] = error.code()
            finally:
                await third.close()
        return await everyone(peers, holders, session_id, envelope, failed)

    monkeypatch.setattr(distributed_keygen, "_topology", keep_topology)
    monkeypatch.setattr(distributed_keygen, "_all_or_first_failure", third_aborts_first)
    distributed_keygen.ceremony(*_paths(directory), 3, 1024)
    assert seen["refusal"] == grpc.StatusCode.PERMISSION_DENIED
    public = keyfiles.load_public_key(directory / keyfiles.PUBLIC_KEY_FILE)
    assert all(keyfiles.load_key_share(directory / keyfiles.share_file_name(j)).public == public for j in (1, 2, 3))


def test_a_failed_ceremony_is_one_line_for_the_user():
    from launcher.cli import _user_error
    from launcher.common.errors import CeremonyError

    message = "distributed key generation failed: party/1: ABORTED: no round-3 message from party/2 within 60 s"
    assert _user_error(CeremonyError(message)) == message


def test_the_guard_removes_the_ceremonys_directory_and_what_it_wrote_unless_it_completed(tmp_path):
    """What the guard does once the launcher's pipe closes (launcher/deployment/leftovers.py), here without a
    process: the ceremony's directory goes; a share written by the ceremony (new, changed, or a half-written
    temporary file) goes with the public key, and one that was there before and untouched stays."""
    from launcher.deployment import leftovers

    work = tmp_path / ".keygen-x"
    (work / "certs").mkdir(parents=True)
    (work / "certs" / "party_1.key").write_text("TLS private key")
    old, fresh = tmp_path / keyfiles.share_file_name(1), tmp_path / keyfiles.share_file_name(2)
    old.write_text("an earlier deployment's share")
    public = tmp_path / keyfiles.PUBLIC_KEY_FILE
    keys = {str(old): old.stat().st_mtime_ns, str(fresh): None, str(public): None}
    fresh.write_text("written by this ceremony")
    public.write_text("its public key")
    partial = tmp_path / f".{keyfiles.share_file_name(3)}.0123.tmp"
    partial.write_text("cut short")
    keys[str(tmp_path / keyfiles.share_file_name(3))] = None
    leftovers.clean(work, keys, {}, completed=False)
    assert not work.exists() and not fresh.exists() and not public.exists() and not partial.exists()
    assert old.read_text() == "an earlier deployment's share"
    fresh.write_text("a completed ceremony's share")
    work.mkdir()
    leftovers.clean(work, {str(fresh): None}, {}, completed=True)
    assert fresh.exists() and not work.exists()
