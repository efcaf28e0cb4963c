"""The launcher's layout, read from its imports: no import circle among its files, at most 12 modules directly in
launcher/, and no shared launcher module that names a protocol (each protocol's launcher knowledge lives in
launcher/protocols/<name>/ and is reached through launcher/registry.py)."""

import ast
import re
from pathlib import Path

from tests.import_circles import circles

ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = ROOT / "launcher"
MAX_TOP_MODULES = 12


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, known: set[str]) -> set[str]:
    """The launcher modules a file imports, at its top or inside a function (either closes a circle at run time)."""
    found = set()
    package = _module(path) if path.name == "__init__.py" else _module(path).rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[:len(package.split(".")) - node.level + 1], *filter(None, [base])])
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return {name for name in found if name in known} - {_module(path)}


def _graph() -> dict[str, set[str]]:
    files = {_module(path): path for path in LAUNCHER.rglob("*.py")}
    return {name: _imports(path, set(files)) - {name} for name, path in files.items()}


def test_no_import_circle_in_the_launcher():
    """A package's __init__ importing nothing, every circle is one of modules importing each other (lazily too)."""
    assert circles(_graph()) == []


def test_the_circle_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_at_most_twelve_modules_directly_in_the_launcher():
    top = sorted(path.name for path in LAUNCHER.glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, top


def _docstrings(tree: ast.AST) -> set[int]:
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}


def _words(node: ast.AST) -> list[str]:
    """The names and strings a node of code says (a docstring or comment is prose, not code)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.ImportFrom):
        return [node.module or "", *(alias.name for alias in node.names)]
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    for field in ("id", "attr", "name", "arg"):
        if isinstance(getattr(node, field, None), str) and not isinstance(node, ast.alias):
            return [getattr(node, field)]
    return []


def names_a_protocol(path: Path, protocols: list[str]) -> list[str]:
    pattern = re.compile(r"(?<![a-z0-9])(" + "|".join(map(re.escape, protocols)) + r")(?![a-z0-9])", re.IGNORECASE)
    tree = ast.parse(path.read_text())
    prose = _docstrings(tree)
    return [f"{getattr(node, 'lineno', 0)}: {word[:70]!r}" for node in ast.walk(tree) if id(node) not in prose
            for word in _words(node) if pattern.search(word.replace("_", " ").replace(".", " ").replace("/", " "))]


def test_the_protocol_finder_sees_names_strings_and_imports_but_not_prose(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('"""Runs dppp."""\nfrom mpdp.protocols.hamm import x\nrun_du = "mpdp run pathak"\nduration = 1\n')
    assert [line.split(":")[0] for line in names_a_protocol(module, ["dppp", "hamm", "du", "pathak"])] == \
        ["2", "3", "3"]


def test_no_shared_launcher_module_names_a_protocol():
    """Outside launcher/protocols/, no launcher file says a registered protocol's name in its code (its prose may):
    what differs per protocol is a field of the protocol's registry entry."""
    from launcher.registry import PROTOCOLS

    offences = {}
    for path in sorted(LAUNCHER.rglob("*.py")):
        relative = str(path.relative_to(LAUNCHER))
        if relative.startswith("protocols/") or relative == "registry.py":
            continue
        found = names_a_protocol(path, list(PROTOCOLS))
        if found:
            offences[relative] = found
    assert not offences, offences


def test_up_shows_its_options_in_groups():
    """`mpdp up --help` lists its options under titled groups (parties, deployment, keys, models, Ray, data,
    network), not in one flat list: only help, --config and --format are left ungrouped."""
    import argparse

    from launcher import cli

    parser = cli.build_parser("up")
    up = parser._subparsers._group_actions[0].choices["up"]  # type: ignore[union-attr]
    groups = {group.title: [action for action in group._group_actions if action.help != argparse.SUPPRESS]
              for group in up._action_groups}
    assert {option for action in groups["options"] for option in action.option_strings} == \
        {"-h", "--help", "--config", "--format"}
    titled = [title for title, actions in groups.items() if actions and title not in ("options", "positional arguments")]
    assert len(titled) >= 6 and all(len(groups[title]) <= 12 for title in titled), groups
    assert "parties (data owners, their processes and teachers):" in up.format_help()
