"""Small things users hit: `--help` states defaults, `-` writes JSON to standard output."""

import json
import subprocess
import sys

import pytest


def _mpdp(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "launcher.cli", *args], capture_output=True, text=True, timeout=600)


def test_help_states_every_default():
    text = " ".join(_mpdp("run", "pathak", "--help").stdout.split())
    assert "--epsilon EPSILON default: 1.0" in text
    assert "one of laplace-paper, l2-laplace, gaussian; default: l2-laplace" in text
    assert "(default: 1e-05)" in text
    up = " ".join(_mpdp("up", "--help").stdout.split())
    assert "--parties PARTIES default: 5" in up and "(default: 120)" not in up.replace("(default 120)", "")


@pytest.mark.slow  # a whole audit through the CLI
def test_a_dash_writes_the_json_to_stdout_and_the_summary_to_stderr():
    result = _mpdp("audit", "dppp", "--trials", "200", "--json", "-")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["protocol"] == "dppp" and "within the claim" in result.stderr


def test_the_health_command_imports_no_protocol():
    """`mpdp health` runs every 10 s in each container: it parses and checks with grpc and the topology only."""
    probe = ("import sys\n"
             "from launcher.cli import build_parser\n"
             "import launcher.deployment.health\n"
             "args = build_parser('health').parse_args(['health', '--topology', 't.toml', '--role', 'curator'])\n"
             "assert args.handler.__module__ == 'launcher.commands.health'\n"
             "heavy = ('launcher.registry', 'launcher.protocol', 'numpy', 'mpdp.cryptocore.paillier.keypair', 'mpdp.protocols.pathak', 'mpdp.protocols.dppp')\n"
             "print(sorted(m for m in heavy if m in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_a_mistyped_command_still_lists_every_command():
    result = _mpdp("runn")
    assert result.returncode == 2 and "'run'" in result.stderr and "'experiment'" in result.stderr


def _options(parser) -> list:
    """Every option and positional of a parser and of its sub-parsers, in order."""
    found = []
    for action in parser._actions:
        found.append((tuple(action.option_strings), action.dest, action.default, action.help))
        for name, child in getattr(action, "_name_parser_map", {}).items():
            found.append((name, _options(child)))
    return found


def test_a_commands_parser_built_alone_is_the_one_the_full_parser_holds():
    """`main` builds only the invoked command's parser: it must accept exactly what `mpdp --help` describes."""
    from launcher.cli import COMMANDS, build_parser

    full = build_parser()._subparsers._group_actions[0].choices
    for name in COMMANDS:
        alone = build_parser(name)._subparsers._group_actions[0].choices
        assert list(alone) == [name] and _options(alone[name]) == _options(full[name]), name
    assert list(build_parser("runn")._subparsers._group_actions[0].choices) == list(COMMANDS)


def test_the_startup_bench_sees_whether_health_runs_from_cached_bytecode(tmp_path):
    """Compiling the project's modules at every call costs a health check about 0.03 CPU-s: the report says
    whether they were cached, and counts right both ways (pycache_prefix moves the cache to an empty tree)."""
    import os

    from launcher.bench.startup import project_bytecode

    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(tmp_path)}
    empty = project_bytecode(env)
    assert empty["modules"] >= 5 and empty["cached"] == 0  # launcher.cli, launcher.deployment.health, mpdp.deployments.topology, …
    compile_all = [sys.executable, "-m", "compileall", "-q", "launcher", "mpdp"]
    subprocess.run(compile_all, check=True, env=env, timeout=600, capture_output=True,
                   cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert project_bytecode(env) == {**empty, "cached": empty["modules"]}


def test_every_bench_module_the_cli_names_can_be_imported():
    """`mpdp bench dkg`, `up-stress` and `networks` load their module by name when run: a moved module fails here,
    not in a user's hands."""
    import importlib
    import re
    from pathlib import Path

    source = (Path(__file__).resolve().parents[1] / "launcher" / "commands" / "bench.py").read_text()
    names = re.findall(r'_bench_module\("([\w.]+)"', source)
    assert len(names) >= 2
    for name in names:
        assert callable(importlib.import_module(f"launcher.{name}").main), name


def _ungrouped(parser) -> set[str]:
    """The options of a parser left out of every titled argument group (argparse's own "options" list)."""
    import argparse

    options = next(group for group in parser._action_groups if group.title == "options")
    return {string for action in options._group_actions if action.help != argparse.SUPPRESS
            for string in action.option_strings}


def test_the_big_commands_show_their_options_in_groups():
    """`run <protocol>`, `demo`, `serve` and `bench hardening` list their options under titled groups: what is left
    in the flat list is help, --config, --format and serve's --test-mode."""
    from launcher.cli import build_parser
    from launcher.registry import PROTOCOLS

    def command(*path: str):
        parser = build_parser(path[0])
        for name in path:
            parser = parser._subparsers._group_actions[0].choices[name]  # type: ignore[union-attr]
        return parser

    common = {"-h", "--help", "--format"}
    for name in PROTOCOLS:
        run = command("run", name)
        assert _ungrouped(run) == common | {"--config"}, name
        assert f"{name} (the protocol's own options):" in run.format_help()
    demo = command("demo")
    assert _ungrouped(demo) == common | {"--config"}
    assert all(f"{name} (`mpdp run {name}`'s options" in demo.format_help()
               for name, protocol in PROTOCOLS.items() if protocol.in_demo)
    assert _ungrouped(command("serve")) == common | {"--test-mode"}
    assert _ungrouped(command("bench", "hardening")) == common | {"--json"}
