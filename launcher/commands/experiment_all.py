"""`mpdp experiment all --out docs/results`: every paper experiment into `<out>/<protocol>/`, each beside a
README.md with the exact command, the date, the machine and the commit. `--quick` runs tiny sizes (a smoke
test of the files, not a result)."""

from __future__ import annotations

import datetime
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path

from mpdp.learning.datasets import data_directory
from mpdp.learning.shipped import available as shipped_available


def full_sizes() -> dict[str, list[str]]:
    """Each experiment's arguments for the stored results (the papers' sizes unless its README says otherwise)."""
    from launcher.registry import PROTOCOLS

    return {name: list(p.experiment.full) for name, p in PROTOCOLS.items() if p.experiment is not None}


def quick_sizes() -> dict[str, list[str]]:
    """Each experiment's tiny sizes of `--quick`."""
    from launcher.registry import PROTOCOLS

    return {name: list(p.experiment.quick) for name, p in PROTOCOLS.items() if p.experiment is not None}


def _available(arguments: list[str], has_a9a: bool) -> list[str]:
    """The arguments with the data sets this machine lacks left out of `--datasets`."""
    if "--datasets" not in arguments:
        return arguments
    position = arguments.index("--datasets") + 1
    names = [name for name in arguments[position].split(",")
             if (name != "a9a" or has_a9a) and (name not in ("mnist-5k", "har") or shipped_available(name))]
    return [*arguments[:position], ",".join(names), *arguments[position + 1:]]


def plan(quick: bool, data_dir) -> dict[str, list[str]]:
    """Each protocol's experiment arguments (without --out), the ones needing absent data left out."""
    has_a9a = data_directory(data_dir) is not None
    chosen = {}
    from launcher.registry import PROTOCOLS

    for protocol, arguments in (quick_sizes() if quick else full_sizes()).items():
        if PROTOCOLS[protocol].experiment.needs_a9a and not has_a9a:  # type: ignore[union-attr]
            print(f"mpdp: skipping {protocol}: it needs a9a (--data-dir or $MPDP_DATA_DIR)", file=sys.stderr)
            continue
        chosen[protocol] = _available(arguments, has_a9a) + (["--data-dir", str(data_dir)] if data_dir else [])
    return chosen


def _commit() -> str:
    try:
        described = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True,
                                   check=True, cwd=Path(__file__).resolve().parent)
        return described.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"


def write_readme(directory: Path, protocol: str, arguments: list[str], files: list[str], notes: str = "") -> None:
    """The provenance page of one stored result."""
    command = shlex.join(["mpdp", "experiment", protocol, "--out", str(directory), *arguments])
    machine = f"{platform.node()}: {platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    lines = [f"# `mpdp experiment {protocol}`", "", "Made by", "", f"    {command}", "",
             f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
             f"- machine: {machine}", f"- commit: {_commit()}",
             f"- files: {', '.join(f'`{name}`' for name in sorted(files))}", ""]
    if notes:
        lines += [notes.strip(), ""]
    (directory / "README.md").write_text("\n".join(lines))


MERGED_KEYS = ("datasets", "seconds", "plots", "plot", "processes", "wire_checks")


def merge_reports(protocol: str, sources: list[Path], out: Path, differing: tuple[str, ...] = ()) -> dict:
    """One report from runs of the same experiment made side by side, one data set per process (what the
    command would write with all of them in `--datasets`): their data sets in order, their plots copied.
    Settings named in `differing` may differ between the runs; the report lists their values per run."""
    import json
    import shutil

    reports = [json.loads((source / f"{protocol}_report.json").read_text()) for source in sources]
    ignored = (*MERGED_KEYS, *differing)
    if len({json.dumps({k: v for k, v in r.items() if k not in ignored}, sort_keys=True) for r in reports}) != 1:
        raise ValueError(f"the {protocol} reports were made with different settings")
    merged = dict(reports[0])
    for key in differing:
        merged[key] = [report.get(key) for report in reports]
    merged["datasets"] = [result for report in reports for result in report["datasets"]]
    merged["seconds"] = sum(report["seconds"] for report in reports)
    merged["processes"] = "one data set per process, side by side; `seconds` is their sum"
    if "plots" in merged:
        merged["plots"] = [name for report in reports for name in report["plots"]]
    out.mkdir(parents=True, exist_ok=True)
    from launcher.registry import PROTOCOLS

    experiment = PROTOCOLS[protocol].experiment
    if experiment is not None and experiment.replot is not None:  # one figure for every data set: drawn again
        merged["runs_wire_checks"] = [report.get("wire_checks", []) for report in reports]
        merged["plot"] = experiment.replot(merged, out)
    else:
        for source in sources:
            for plot in source.glob("*.png"):
                if source.resolve() != out.resolve():
                    shutil.copy(plot, out / plot.name)
    (out / f"{protocol}_report.json").write_text(json.dumps(merged, indent=2))
    return merged
