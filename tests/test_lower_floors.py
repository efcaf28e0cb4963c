"""The floors below the launcher, read from their imports: no file circle in mpdp/cryptocore/, its groups in
one order, `sessions` free of privacy accounting; and importing them starts nothing (no launcher module, no change
to the environment)."""

import ast
import functools
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.import_circles import circles

ROOT = Path(__file__).resolve().parent.parent
CRYPTOCORE = ROOT / "mpdp" / "cryptocore"
# The groups of mpdp/cryptocore/, lowest first: a group imports only from groups before it (and errors.py).
CRYPTO_GROUPS = ["errors", "arithmetic", "keys", "encodings", "paillier", "proofs", "comparison", "dkg"]
# Every floor below the launcher (tests/test_extension_point.py's LAYERS), as packages to import.
LOWER_FLOORS = ["mpdp/platform", "mpdp/cryptocore", "mpdp/privacy", "mpdp/learning", "mpdp/sessions",
                "mpdp/threshold_sum", "mpdp/vote_proofs", "mpdp/wire", "mpdp/protocols", "mpdp/deployments",
                "party", "curator", "aggregator"]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(folder: Path) -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(folder.rglob("*.py"))}


def _imported(path: Path, known: set[str]) -> set[str]:
    """The modules of `known` that `path` imports, anywhere in the file (in functions, under TYPE_CHECKING), with
    the packages Python runs on the way (importing a.b.c runs a.b's __init__)."""
    named = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            named |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            named |= {f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in known else node.module
                      for alias in node.names}
    found = set()
    for name in named:
        parts = name.split(".")
        found |= {".".join(parts[:end]) for end in range(1, len(parts) + 1)} & known
    return found


@functools.cache
def _cryptocore_graph() -> dict[str, set[str]]:
    modules = _modules(CRYPTOCORE)
    known = set(modules)
    return {name: _imported(path, known) - {name} - {"mpdp.cryptocore"} for name, path in modules.items()}


def test_circles_are_found():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_in_cryptocore():
    """No module of mpdp/cryptocore/ imports, through any chain, one that imports it."""
    graph = _cryptocore_graph()
    assert "mpdp.cryptocore.paillier.keypair" in graph and graph["mpdp.cryptocore.paillier.keypair"]
    assert not circles(graph)


def test_cryptocore_groups_import_only_lower_groups():
    """arithmetic, keys and encodings need no scheme; the proofs and the comparison stand on Paillier; the
    distributed key generation on all of them."""
    offences = []
    for module, imported in _cryptocore_graph().items():
        group = module.split(".")[2] if module != "mpdp.cryptocore" else None
        if group is None:
            continue
        assert group in CRYPTO_GROUPS, f"{module} is in no group of CRYPTO_GROUPS"
        for other in imported:
            other_group = other.split(".")[2] if other != "mpdp.cryptocore" else None
            if other_group is not None and other_group != group \
                    and CRYPTO_GROUPS.index(other_group) > CRYPTO_GROUPS.index(group):
                offences.append(f"{module} imports {other}")
    assert not offences, offences


def test_sessions_import_no_privacy_accounting():
    """A session's errors, states and hosts know nothing of budgets: the protocols that spend one say so."""
    offences = [f"{path.relative_to(ROOT)} imports {module}"
                for path in sorted((ROOT / "mpdp" / "sessions").rglob("*.py"))
                for module in _imported(path, set(_modules(ROOT / "mpdp" / "privacy")))]
    assert not offences, offences


def test_importing_the_lower_floors_starts_nothing():
    """Every module below the launcher imported in a fresh interpreter: no launcher module comes with them, and
    the environment is as it was (gRPC's fork handling is set where processes start, by the launcher)."""
    names = sorted(name for floor in LOWER_FLOORS for name in _modules(ROOT / floor))
    script = ("import importlib, json, os, sys\n"
              "import sklearn\n"  # scikit-learn sets its own KMP_* variables when imported: not ours to check
              "before = dict(os.environ)\n"
              "import mpdp.cryptocore.paillier.keypair\n"
              f"for name in {names!r}:\n"
              "    importlib.import_module(name)\n"
              "print(json.dumps({'launcher': sorted(m for m in sys.modules if m.split('.')[0] == 'launcher'),\n"
              "                  'changed': sorted(k for k in set(before) | set(os.environ)\n"
              "                                    if before.get(k) != os.environ.get(k)),\n"
              "                  'imported': len(sys.modules)}))\n")
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    environment.pop("GRPC_ENABLE_FORK_SUPPORT", None)
    seen = json.loads(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                                     cwd=ROOT, env=environment).stdout)
    assert len(names) > 100 and seen["imported"] > len(names)
    assert seen["launcher"] == [] and seen["changed"] == []


def test_one_parent_death_helper():
    """Every child bound to its parent's lifetime is bound by mpdp/platform/lifetime.py's `die_with_parent`."""
    lifetime = ROOT / "mpdp" / "platform" / "lifetime.py"
    assert ".prctl(" in lifetime.read_text()
    callers = [str(path.relative_to(ROOT)) for folder in ("mpdp", "party", "curator", "aggregator", "launcher")
               for path in sorted((ROOT / folder).rglob("*.py")) if path != lifetime and ".prctl(" in path.read_text()]
    assert not callers, callers
