"""Pieces every protocol's summary shares."""

from __future__ import annotations


def traffic_lines(traffic: list[dict], heading: str = "  traffic (each RPC counted once):") -> list[str]:
    lines = [heading]
    for row in traffic:
        lines.append(f"    {row['from']:>10} → {row['to']:<10} {row['rpc']:<38} {row['messages']:>4} msgs {row['bytes']:>10} bytes")
    return lines


def _rate(metrics: dict) -> str:
    text = f"{metrics['accuracy']:.1%} (balanced {metrics['balanced_accuracy']:.1%}"
    return text + (f", AUC {metrics['auc']:.3f})" if "auc" in metrics else ")")


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
            return asked, float(privacy[key]), how
    return asked, privacy.get("epsilon"), "as calibrated"


def context_lines(report: dict) -> list[str]:
    """What every summary ends with: the data and split, privacy asked vs delivered, the baselines."""
    lines = []
    data = report.get("data")
    if data:
        labels = ", ".join(f"{name} → {index}" for name, index in data.get("labels", {}).items())
        lines.append(f"  data: {data['dataset']}, split {data['split']} (seed {data.get('split_seed', '?')}); "
                     f"labels {labels}; intercept: {data.get('intercept', '?')}")
    asked, delivered, how = delivered_epsilon(report)
    if asked is not None:
        if delivered is None:
            lines.append(f"  privacy asked vs delivered: ε = {asked:g} asked; NO finite ε is delivered")
        elif delivered > asked * (1 + 1e-6):
            lines.append(f"  privacy asked vs delivered: ε = {asked:g} asked, ε = {delivered:.3g} DELIVERED ({how}): "
                         "weaker than asked")
        else:
            lines.append(f"  privacy asked vs delivered: ε = {asked:g} asked, ε = {delivered:.3g} delivered ({how})")
    baselines, metrics = report.get("baselines"), report.get("result", {}).get("test_metrics")
    if baselines and metrics:
        central = baselines["central"]
        central_text = _rate(central) if isinstance(central, dict) else central
        lines.append(f"  beside its baselines (the same {baselines['test_rows']} test rows): this release "
                     f"{_rate(metrics)}; always the majority class {baselines['majority_class_rate']:.1%}; central "
                     f"non-private logistic regression {central_text}")
        if metrics["accuracy"] <= baselines["majority_class_rate"] + 1e-12:
            lines.append("  WARNING: the private result is no better than always answering the majority class")
    agreement = report.get("evaluator_view", {}).get("label_agreement_with_plain_vote")
    if agreement is not None:
        lines.append(f"  released labels agree with the teachers' non-private vote on {agreement:.1%} of queries")
    return lines
