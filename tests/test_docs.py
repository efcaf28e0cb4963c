"""The README is a quickstart whose commands run as written; docs link to what exists; tracked text
describes the software as it is, not its history."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
HISTORY = re.compile(r"\b(session|issue)\s+[0-9]+", re.IGNORECASE)


def shell_blocks(text: str) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", text, re.DOTALL)


def commands_of(block: str) -> list[list[str]]:
    """The `mpdp` commands of one shell block, each as its arguments."""
    commands = []
    for line in block.splitlines():
        line = line.split("#", 1)[0].strip()
        for part in line.split("&&"):
            words = shlex.split(part)
            if words and words[0] == "mpdp":
                commands.append(words[1:])
    return commands


def mpdp_commands(text: str) -> list[list[str]]:
    return [command for block in shell_blocks(text) for command in commands_of(block)]


def test_readme_is_a_quickstart():
    text = README.read_text()
    assert len(text.encode()) <= 12 * 1024, f"README.md is {len(text.encode())} bytes; the rest belongs in docs/"
    first = shell_blocks(text)[0].splitlines()
    assert first == ["pip install -e '.[test]' && mpdp demo", "python -m pytest -q"]
    ci = (ROOT / ".ci" / "run").read_text()
    # its quick suite is `python -m pytest -q` with no argument added
    assert "\nsuite quick\n" in ci and '\n    python -m pytest -q "$@"' in ci, \
        ".ci/run must run exactly the README's test command"


def test_links_in_readme_and_docs_exist():
    pages = [README, *sorted((ROOT / "docs").rglob("*.md"))]
    missing = []
    for page in pages:
        for target in LINK.findall(page.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                missing.append(f"{page.relative_to(ROOT)} → {target}")
    assert not missing, "broken links:\n" + "\n".join(missing)


def test_readme_commands_parse():
    from launcher.cli import build_parser

    commands = mpdp_commands(README.read_text())
    assert len(commands) >= 8
    for words in commands:
        build_parser(words[0]).parse_args(words)  # argparse exits (SystemExit) on an unknown option


def test_no_history_in_tracked_text():
    try:
        files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    found = []
    for name in files:
        path = ROOT / name
        if path.suffix in {".png", ".svg", ".pdf", ".gz", ".npz", ".pyc"} or name.startswith("mpdp/proto/") or not path.is_file():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        found += [f"{name}:{number}: {line.strip()[:100]}" for number, line in enumerate(text.splitlines(), 1)
                  if HISTORY.search(line)]
        if HISTORY.search(name):
            found.append(f"{name}: file name")
    assert not found, "the product speaks of itself as it is; found history:\n" + "\n".join(found[:40])


@pytest.mark.slow
@pytest.mark.network
def test_readme_commands_in_short_run_as_written(tmp_path):
    """The README's "Commands in short" block, on 1024-bit keys so it stays quick."""
    text = README.read_text()
    block = next(b for b in shell_blocks(text) if "mpdp up" in b)
    commands = commands_of(block)
    assert [words[0] for words in commands][:2] == ["up", "run"] and commands[-1][0] == "down"
    try:
        for words in commands:
            if words[0] == "up":
                words = [*words, "--bits", "1024"]
            result = subprocess.run([sys.executable, "-m", "launcher.cli", *words], cwd=tmp_path,
                                    capture_output=True, text=True, timeout=600)
            assert result.returncode == 0, f"mpdp {' '.join(words)}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
    finally:
        subprocess.run([sys.executable, "-m", "launcher.cli", "down", "--run-dir", str(tmp_path / "run")], cwd=tmp_path,
                       capture_output=True, timeout=600)
