"""`--keygen distributed` in the launcher: the choice on every command, refusals before any process starts,
and a holder that is gone aborts the ceremony with nothing left behind."""

import pytest

from launcher.cli import _keygen_method, build_parser
from launcher.deployment import distributed_keygen
from mpdp.cryptocore import keyfiles


@pytest.mark.parametrize("command", [["prepare", "--parties", "3", "--out", "k"], ["up", "--parties", "3"],
                                     ["compose", "--parties", "3"]])
def test_up_prepare_and_compose_default_to_the_holders_own_ceremony_where_it_can_run(command):
    parser = build_parser()
    assert _keygen_method(parser.parse_args(command)) == "distributed"
    two = [*command[:command.index("--parties") + 1], "2", *command[command.index("--parties") + 2:]]
    assert _keygen_method(parser.parse_args(two)) == "dealer"  # BGW needs 3 holders
    assert _keygen_method(parser.parse_args([*command, "--keygen", "dealer"])) == "dealer"
    with pytest.raises(SystemExit):
        parser.parse_args([*command, "--keygen", "trusted-friend"])


def test_keygen_keeps_the_dealer_and_takes_the_choice():
    parser = build_parser()
    assert parser.parse_args(["keygen", "--parties", "3", "--out", "k"]).keygen == "dealer"
    assert parser.parse_args(["keygen", "--parties", "3", "--out", "k", "--keygen", "distributed"]).keygen == "distributed"


def _paths(directory):
    return {j: directory / keyfiles.share_file_name(j) for j in (1, 2, 3)}, [directory / keyfiles.PUBLIC_KEY_FILE]


def test_existing_key_files_are_refused_before_any_holder_starts(tmp_path, monkeypatch):
    (tmp_path / keyfiles.share_file_name(2)).write_text("{}")
    monkeypatch.setattr(distributed_keygen, "_spawn", lambda *a: pytest.fail("a holder was started"))
    with pytest.raises(FileExistsError):
        distributed_keygen.ceremony(*_paths(tmp_path), 2, 1024)


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

    def serving_then_one_dies(topology, holders, work):
        wait(topology, holders, work)
        stop({"party/2": pids[2]})

    monkeypatch.setattr(distributed_keygen, "_spawn", record)
    monkeypatch.setattr(distributed_keygen, "_wait_serving", serving_then_one_dies)
    with pytest.raises(RuntimeError, match="distributed key generation failed"):
        distributed_keygen.ceremony(*_paths(tmp_path / "keys"), 2, 1024, batch=64)
    assert not list((tmp_path / "keys").glob("*.json"))


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
