"""What `up` (and `demo`) say about the data they read and the deployment they start: one line per fact or
per mistake, each naming the file, the line or the fix."""

from __future__ import annotations

from pathlib import Path

MIN_PARTIES = 2  # one party is central learning: every protocol needs two or more


def check_parties(parties: int) -> None:
    if parties < MIN_PARTIES:
        raise ValueError(f"--parties {parties}: every protocol needs at least {MIN_PARTIES} parties "
                         "(one party is central learning)")


def missing_topology_files(topology_path: Path) -> str | None:
    """The first file a topology names that is not there (a copied topology without its certs), or None."""
    from mpdp.deployments.topology import Topology

    topology = Topology.load(topology_path)
    named = [topology.public_key, topology.ca_certificate, topology.client_certificate, topology.client_key]
    for entry in topology.roles:
        named += [entry.certificate, entry.key]
    for path in named:
        if path is not None and not Path(path).exists():
            return (f"{topology_path} names {path}, which does not exist: copy the run directory's certs/ and keys "
                    "with the topology, or run `mpdp prepare` there")
    return None


def lines(dataset) -> list[str]:
    """What was read and how it was scaled: rows, columns, features, label mapping, scaling, clipping, norms."""
    import numpy as np

    report = dataset.scaling
    counts = np.bincount(dataset.labels, minlength=dataset.classes)
    labels = ", ".join(f"{name} → {index} ({count} rows, {count / len(dataset.labels):.1%})"
                       for index, (name, count) in enumerate(zip(dataset.class_names, counts)))
    text = [f"data: {dataset.name} ({dataset.source}): {report.get('rows', len(dataset.labels))} rows, "
            f"{report.get('columns', '?')} columns → {dataset.features.shape[1]} features",
            f"  labels: {labels}"]
    if dataset.classes != 2:
        from launcher.registry import PROTOCOLS

        binary = [p.name for p in PROTOCOLS.values() if p.binary_only]
        if binary:
            verb = "takes" if len(binary) == 1 else "take"
            text.append(f"  {', '.join(binary)} {verb} two classes, this data set has {dataset.classes}: `run "
                        f"{binary[0]}` will refuse this deployment (a two-class label column: --label)")
    if report:
        text.append(f"  scaling: {report['rule']}")
        text.append(f"  intercept: {report.get('intercept', 'none')}")
        text.append(f"  rows clipped to the unit ball: {report['rows_clipped_share']:.1%}; median row norm "
                    f"{report['median_row_norm']:.3f}")
        if report["rows_clipped_share"] > 0.5:
            text.append("  most rows were longer than the ball: each was scaled onto it on its own, as --scaling "
                        "unit-rows would (a linear model reads the direction, which is kept)")
        if "schema" in report:
            text.append(f"  bounds: {report['schema']}")
        if report["median_row_norm"] < 0.1:
            text.append("  WARNING: the median row keeps less than a tenth of the unit ball: every regularised model "
                        "will learn little beyond the intercept; give public bounds (--schema)"
                        + ("" if report["rule"].startswith("public") else " or --scaling public"))
    return text


def print_lines(dataset) -> None:
    print("\n".join(lines(dataset)), flush=True)
