"""One `run` (or a demo's protocol) end to end around the protocol's own session: the noise check before any
cryptography, R sessions (`--repeat`), the baselines on the same test rows, the warnings (printed and in the
JSON report), the summary."""

from __future__ import annotations

import sys

import numpy as np

METRICS = ("accuracy", "balanced_accuracy", "auc")


def _regularization(report: dict) -> float | None:
    parameters = report.get("parameters", {})
    value = parameters.get("lambda", parameters.get("regularization"))
    return float(value) if value is not None else None


def _student(protocol):
    if not protocol.trains_student:
        return None
    from mpdp.learning import models

    return lambda features, labels: models.train(models.DEFAULT_STUDENT_MODEL, features, labels)


def spread(reports: list[dict]) -> dict:
    """Mean ± std (sample std; 0 for one session) of every test metric over the sessions."""
    result: dict = {"sessions": len(reports)}
    for key in METRICS:
        values = [r["result"]["test_metrics"][key] for r in reports if key in r["result"].get("test_metrics", {})]
        if values:
            result[key] = {"mean": float(np.mean(values)), "std": float(np.std(values, ddof=1)) if len(values) > 1
                           else 0.0, "values": values}
    result["one_class_sessions"] = sum(bool(r["result"].get("test_metrics", {}).get("one_class")) for r in reports)
    return result


def run(protocol, args, topology, client_data: dict) -> dict:
    from launcher.common import noise_check, noise_spread, spend_gate, summary
    from mpdp.learning import evaluation
    from mpdp.wire import links

    refused = protocol.refusal(args, topology, client_data) if protocol.refusal else None
    if refused:
        raise ValueError(refused)
    check = noise_check.estimate(protocol.name, args, topology, client_data)
    stated = noise_check.line(check)
    if stated:
        print(stated, file=sys.stderr)
    gate = spend_gate.check(protocol, args, topology, client_data, check, _student(protocol))  # or Stopped
    for warning in check["warnings"] + ([gate["warning"]] if "warning" in gate else []):
        print(f"WARNING (before running): {warning}", file=sys.stderr, flush=True)
    repeat = max(1, int(getattr(args, "repeat", 1) or 1))
    reports = [protocol.run(args, topology, client_data) for _ in range(repeat)]
    report = reports[0]
    report["network"] = links.describe()  # the profile its links ran under, and the emulator that imposed it
    report["noise_check"] = check
    report["pre_run_check"] = gate
    if repeat > 1:
        report["repeat"] = spread(reports)
        report["repeat"]["session_ids"] = [r.get("session_id") for r in reports]
    report["data"] = evaluation.data_record(client_data)
    report["baselines"] = evaluation.baselines([entry.data for entry in topology.parties if entry.data], client_data,
                                               _regularization(report), _student(protocol))
    metrics = report.get("result", {}).get("test_metrics")
    if metrics is not None:  # beside the bootstrap over test rows: the privacy noise's own spread
        metrics["noise_spread"] = noise_spread.estimate(protocol.name, report, topology, client_data)
    report["warnings"] = summary.warnings(report)
    return report
