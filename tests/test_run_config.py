"""`--config FILE.toml` on up, run, demo and experiment: the same namespace as the same flags, a flag on the
command line wins, and a setting no option has is one error line."""

import json

import pytest

from launcher.cli import build_parser, main
from launcher.common import run_config


def parsed(argv: list[str]):
    return run_config.parse(build_parser(argv[0]), argv)


def same(config_argv: list[str], flags_argv: list[str]) -> None:
    with_file, with_flags = parsed(config_argv), parsed(flags_argv)
    assert run_config.record(with_file)["options"] == run_config.record(with_flags)["options"]


@pytest.mark.parametrize("command, settings, flags", [
    (["run", "dppp"], 'run-dir = "r"\nepsilon = 2\nqueries = 7\nnoise = "skellam"\nassurance = "proven-votes"\n',
     ["--run-dir", "r", "--epsilon", "2", "--queries", "7", "--noise", "skellam", "--assurance", "proven-votes"]),
    (["run", "pathak"], 'lambda = 0.1\nmechanism = "gaussian"\n', ["--lambda", "0.1", "--mechanism", "gaussian"]),
    (["up"], 'parties = 3\nbits = 1024\nkeygen = "dealer"\nintercept = false\nrun_dir = "r"\n',
     ["--parties", "3", "--bits", "1024", "--keygen", "dealer", "--no-intercept", "--run-dir", "r"]),
    (["demo"], 'parties = 3\n[dppp]\nepsilon = 3\n[pathak]\nlambda = 0.5\n',
     ["--parties", "3", "--dppp-epsilon", "3", "--pathak-lambda", "0.5"]),
    (["experiment", "all"], 'out = "x"\nquick = true\n', ["--out", "x", "--quick"]),
])
def test_a_config_file_equals_its_flags(tmp_path, command, settings, flags):
    path = tmp_path / "x.toml"
    path.write_text(settings)
    same([*command, "--config", str(path)], [*command, *flags])


def test_a_flag_on_the_command_line_wins(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text("epsilon = 2\nqueries = 7\n")
    args = parsed(["run", "dppp", "--config", str(path), "--queries", "9"])
    assert (args.epsilon, args.queries) == (2.0, 9)
    assert run_config.record(args)["file"] == {"path": str(path), "settings": {"epsilon": 2, "queries": 7}}


@pytest.mark.parametrize("settings, said", [("epsilon = 2\nbogus = 1\n", "unknown setting 'bogus'"),
                                             ('noise = "nope"\n', "noise: 'nope' is not one of binomial, skellam"),
                                             ("queries = \"many\"\n", "queries: invalid int value"),
                                             ("no-packing = 1\n", "must be true or false"),
                                             ("epsilon = \n", "not TOML")])
def test_a_bad_setting_is_one_error_line(tmp_path, capsys, settings, said):
    path = tmp_path / "x.toml"
    path.write_text(settings)
    assert main(["run", "dppp", "--config", str(path)]) == 2
    error = capsys.readouterr().err
    assert said in error and str(path) in error and len(error.strip().splitlines()) == 1


@pytest.mark.slow  # two sessions with their baselines
def test_a_run_from_a_config_file_reports_what_the_same_flags_do(pool, tmp_path):
    """One DPPP round each way on a shared deployment: the same parameters and options (the noise is fresh)."""
    d = pool.get(3)
    config = tmp_path / "dppp.toml"
    # `anyway`: a 3-party round this small is stopped by the check before spending; the comparison is the point
    config.write_text(f'run-dir = "{d.run.path}"\nqueries = 5\nepsilon = 8\nensemble = 1\nanyway = true\n')
    assert main(["run", "dppp", "--config", str(config), "--report", str(tmp_path / "file.json")]) == 0
    assert main(["run", "dppp", "--run-dir", str(d.run.path), "--queries", "5", "--epsilon", "8", "--ensemble", "1",
                 "--anyway", "--report", str(tmp_path / "flags.json")]) == 0
    from_file, from_flags = (json.loads((tmp_path / name).read_text()) for name in ("file.json", "flags.json"))
    assert from_file["parameters"] == from_flags["parameters"] and from_file["privacy"] == from_flags["privacy"]
    options = dict(from_flags["config"]["options"], report=str(tmp_path / "file.json"))
    assert from_file["config"]["options"] == options and from_file["config"]["file"]["settings"]["queries"] == 5
    assert "file" not in from_flags["config"]
