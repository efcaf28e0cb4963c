"""A readable summary of a session report."""

from __future__ import annotations


def _traffic_lines(traffic: list[dict], heading: str = "  traffic (each RPC counted once):") -> list[str]:
    lines = [heading]
    for row in traffic:
        lines.append(f"    {row['from']:>10} → {row['to']:<10} {row['rpc']:<38} {row['messages']:>4} msgs {row['bytes']:>10} bytes")
    return lines


def pathak_summary(report: dict) -> str:
    p, r, privacy, evaluator = report["parameters"], report["result"], report["privacy"], report["evaluator_view"]
    lines = [
        f"Pathak–Rane–Raj on {p['dataset']}: K = {p['parties']} parties, d = {p['dimension']}, λ = {p['regularization']}",
        f"  privacy: {privacy['mechanism']} / {privacy['calibration']} calibration, ε = {privacy['epsilon']}"
        + (f" (really gives ε = {privacy['epsilon_effective']:.3g})" if "epsilon_effective" in privacy else "")
        + f", δ = {privacy['delta']:.2g}; unit: {privacy['unit']}",
        f"  ŵˢ: norm {r['norm']:.4f}, test accuracy {r['test_accuracy']:.1%}",
        f"  secure comparisons of ℓ = {p['comparison_bits']} bits; noise slots of {p['noise_value_bits']} bits",
        "  timing: " + ", ".join(f"{k} {v:.2f} s" for k, v in report["timing"].items() if isinstance(v, float)),
        f"  hides {report['hides']}; not hidden: {'; '.join(report['does_not_hide'])}",
        "  evaluator's view (operator only; no protocol role sees it):",
        f"    party sizes {evaluator.get('party_sizes', '?')}",
        *_traffic_lines(evaluator["traffic"], "    traffic (each RPC counted once):"),
    ]
    return "\n".join(lines)


def dppp_summary(report: dict) -> str:
    p, r, privacy, timing = report["parameters"], report["result"], report["privacy"], report["timing"]
    lines = [
        f"DPPP on {p['dataset']}: {p['teachers']} teachers, {p['key_holders']} key holders (t = {p['threshold']}), "
        f"{p['key_bits']}-bit threshold Paillier, {'packed' if p['packed'] else 'unpacked'} votes",
        f"  privacy: (ε = {privacy['epsilon']}, δ = {privacy['delta']}) over {privacy['queries']} queries; "
        f"ε per query {privacy['epsilon_per_query']:.3f}; unit: {privacy['unit']}",
        f"  noise: Bin(N, ½) with N = {privacy['total_tosses_required']} (exact PLD accounting; "
        f"a Theorem-1-style bound would need {privacy['theorem1_style_tosses']}), N_i = {privacy['tosses_per_teacher']}",
        f"  contributors {r['contributors']}, decryptors {r['decryptors']}"
        + (f", rejected shares {r['rejected_shares']}" if r["rejected_shares"] else ""),
        f"  noisy labels agree with the truth on {r['label_agreement_with_truth']:.1%} of queries",
        f"  student ({r['student_model']}) test accuracy: {r['student_test_accuracy']:.1%}",
        *_traffic_lines(report["traffic"]),
    ]
    lines.append("  timing: " + ", ".join(f"{stage} {seconds:.2f} s" for stage, seconds in timing.items()))
    return "\n".join(lines)
