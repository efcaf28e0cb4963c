"""Pieces every protocol's summary shares: the release beside its baselines, what one malicious party can do, and
its warnings."""

from __future__ import annotations

import math

from mpdp.learning.evaluation import IMBALANCED
from mpdp.vote_proofs import influence


def traffic_lines(traffic: list[dict], heading: str = "  traffic (each RPC counted once):") -> list[str]:
    lines = [heading]
    for row in traffic:
        lines.append(f"    {row['from']:>10} → {row['to']:<10} {row['rpc']:<38} {row['messages']:>4} msgs {row['bytes']:>10} bytes")
    return lines


def _rate(metrics: dict, lead_balanced: bool = False) -> str:
    """Accuracy first, or (imbalanced test rows) balanced accuracy and AUC first."""
    auc = f", AUC {metrics['auc']:.3f}" if "auc" in metrics else ""
    if lead_balanced:
        return f"balanced accuracy {metrics['balanced_accuracy']:.1%}{auc} (accuracy {metrics['accuracy']:.1%})"
    return f"{metrics['accuracy']:.1%} (balanced {metrics['balanced_accuracy']:.1%}{auc})"


def delivered_epsilon(report: dict) -> tuple[float | None, float | None, str]:
    """(asked, delivered, how): the ε the user asked for and the one the release is accounted to give."""
    privacy = report.get("privacy", {})
    asked = report.get("parameters", {}).get("epsilon")
    if privacy.get("epsilon_per_round") is not None and privacy.get("round_limit"):  # Du: ε per round, R rounds
        asked = privacy["epsilon_per_round"] * privacy["round_limit"]
    for key, how in (("epsilon_effective", "for the sensitivity actually used"),
                     ("epsilon_all_queries", "all queries, by the PLD accountant, with the contributors counted"),
                     ("epsilon_delivered", "by the PLD accountant, with the contributors counted"),
                     ("epsilon_composed_exact", "the run composed exactly (Kairouz et al.)")):
        if privacy.get(key) is not None:
            return asked, float(privacy[key]), how + _counted(privacy)
    return asked, privacy.get("epsilon"), "as calibrated"


def _counted(privacy: dict) -> str:
    """How many contributors' noise the delivered ε counts on, and why (mpdp.privacy.collusion)."""
    if privacy.get("contributors_counted") is None:
        return ""
    colluding = privacy.get("colluding_contributors", 1)
    why = "one malicious party's" if colluding == 1 else f"one data owner's {colluding}, {colluding} per data owner"
    return f": {privacy['contributors_counted']}, a decryptable sum's less {why}"


def session_summary(protocol_summary: str, report: dict) -> str:
    """A session's summary: the protocol's heading, then what one malicious party could have moved (a reader weighs
    the result knowing it: in DPPP's default mode one teacher sending legal values can flip labels), then the
    protocol's own lines and the context every summary ends with."""
    heading, _, body = protocol_summary.partition("\n")
    stated = [influence.summary_line(report["malicious_party"])] if "malicious_party" in report else []
    return "\n".join([heading, *stated, *([body] if body else []), *context_lines(report)])


def context_lines(report: dict) -> list[str]:
    """What every summary ends with: the data and split, privacy asked vs delivered, the baselines."""
    lines = []
    data = report.get("data")
    if data:
        labels = ", ".join(f"{name} → {index}" for name, index in data.get("labels", {}).items())
        lines.append(f"  data: {data['dataset']}, split {data['split']} (seed {data.get('split_seed', '?')}); "
                     f"labels {labels}; intercept: {data.get('intercept', '?')}")
    asked, delivered, how = delivered_epsilon(report)
    privacy = report.get("privacy", {})
    if asked is not None and privacy.get("epsilon_per_round") is not None and privacy.get("round_limit"):
        asked_text = (f"ε = {privacy['epsilon_per_round']:g} per round × {privacy['round_limit']} rounds = "
                      f"{asked:g} composed (basic)")
        lines.append(f"  privacy asked vs delivered: {asked_text} asked, ε = {delivered:.3g} delivered ({how})"
                     if delivered is not None else f"  privacy asked vs delivered: {asked_text} asked; NO finite ε "
                                                   "is delivered")
    elif asked is not None:
        if delivered is None:
            lines.append(f"  privacy asked vs delivered: ε = {asked:g} asked; NO finite ε is delivered")
        elif delivered > asked * (1 + 1e-6):
            lines.append(f"  privacy asked vs delivered: ε = {asked:g} asked, ε = {delivered:.3g} DELIVERED ({how}): "
                         "weaker than asked")
        else:
            lines.append(f"  privacy asked vs delivered: ε = {asked:g} asked, ε = {delivered:.3g} delivered ({how})")
    baselines, metrics = report.get("baselines"), report.get("result", {}).get("test_metrics")
    if baselines and metrics:
        lead = baselines["majority_class_rate"] > IMBALANCED
        if lead:
            lines.append(f"  the majority class is {baselines['majority_class_rate']:.1%} of the test rows: balanced "
                         "accuracy (50 % = chance) and AUC lead")
        lines.append(f"  beside its baselines (the same {baselines['test_rows']} test rows):")
        lines.append(f"    this release                     {_rate(metrics, lead)}")
        if "spread" in metrics:
            lines.append(f"      one draw's spread                ± {_spread_of_one(metrics['spread'], lead)} "
                         f"({metrics['spread']['method']})")
        if "noise_spread" in metrics:
            lines.append(f"      the privacy noise's spread       {_noise_spread(metrics['noise_spread'], lead)}")
        if "threshold" in metrics:
            cut = metrics["threshold"]
            lines.append(f"      decision threshold               {cut['value']:.3g}: {cut['rule']}")
        if "repeat" in report:
            lines.append(f"    over {report['repeat']['sessions']} sessions        "
                         + _spread(report["repeat"], lead))
        lines.append(f"    always the majority class        accuracy {baselines['majority_class_rate']:.1%}, "
                     "balanced accuracy 50.0%")
        for key, label in (("same_model", "same model, non-private"), ("tuned", "tuned, non-private")):
            value = baselines.get(key)
            if value is not None:
                text = _rate(value, lead) + f" — {value['model']}" if isinstance(value, dict) else value
                lines.append(f"    {label:<32} {text}")
    for warning in report.get("warnings", []):
        lines.append(f"  WARNING: {warning}")
    agreement = report.get("evaluator_view", {}).get("label_agreement_with_plain_vote")
    if agreement is not None:
        lines.append(f"  released labels agree with the teachers' non-private vote on {agreement:.1%} of queries")
    return lines


def _spread_of_one(spread: dict, lead: bool) -> str:
    keys = ("balanced_accuracy", "auc", "accuracy") if lead else ("accuracy", "balanced_accuracy", "auc")
    return ", ".join(f"{key.replace('_', ' ')} {spread[key]:.1%}" if key != "auc" else f"AUC {spread[key]:.3f}"
                     for key in keys if key in spread)


def _noise_spread(found: dict, lead: bool) -> str:
    if "unavailable" in found:
        return f"not computed: {found['unavailable']}"
    return f"± {_spread_of_one(found, lead)} ({found['method']})"


def _spread(repeat: dict, lead: bool) -> str:
    keys = ("balanced_accuracy", "auc", "accuracy") if lead else ("accuracy", "balanced_accuracy", "auc")
    parts = [f"{key.replace('_', ' ')} {repeat[key]['mean']:.1%} ± {repeat[key]['std']:.1%}" if key != "auc"
             else f"AUC {repeat[key]['mean']:.3f} ± {repeat[key]['std']:.3f}" for key in keys if key in repeat]
    return ", ".join(parts)


def warnings(report: dict) -> list[str]:
    """Every warning a summary prints, also kept in the JSON report (`warnings`)."""
    found = list(report.get("noise_check", {}).get("warnings", []))
    baselines, metrics = report.get("baselines"), report.get("result", {}).get("test_metrics")
    if metrics and metrics.get("one_class"):
        found.append("the model predicts one class for every row" + (
            f" (AUC {metrics['auc']:.3f}: the scores rank rows, but the threshold sends every row to one side)"
            if metrics.get("auc", 0.5) > 0.6 else ""))
    if baselines and metrics:
        if metrics["accuracy"] <= baselines["majority_class_rate"] + 1e-12 and \
                baselines["majority_class_rate"] <= IMBALANCED:
            found.append("the private result is no better than always answering the majority class")
        if metrics["balanced_accuracy"] <= 0.5 + 1e-12:
            found.append("balanced accuracy is at or below chance (50 %): no better than the majority class")
        auc = metrics.get("auc")
        if auc is not None and not math.isnan(auc) and auc <= 0.5:
            found.append(f"AUC {auc:.3f}: the scores rank rows no better than chance")
    return found
