"""Before any cryptography: whether each release can learn at the session's settings, from its registry entry's
check (launcher/common/noise.py says how a check reads)."""

from __future__ import annotations

from launcher.common.noise import NOISY, TOO_NOISY


def estimate(protocol: str, args, topology, client_data: dict) -> dict:
    """The registry entry's check of the release at these options (no warnings where it has none)."""
    from launcher.registry import PROTOCOLS

    entry = PROTOCOLS.get(protocol)
    found = entry.noise_check(args, topology, client_data) if entry is not None and entry.noise_check else None
    return found or {"warnings": []}


def line(check: dict) -> str | None:
    if "ratio" not in check:
        return None
    previewed = f"; the release's own scores: {check['preview']['ratio']:.2g}×" if "preview" in check else ""
    return (f"noise check ({check['release']}): {check['noise_name']} {check['noise']:.3g} against a "
            f"{check.get('signal', 'model bound')} {check['signal_bound']:.3g} ({check['ratio']:.2g}×{previewed})")


def demo_lines(args, topology, client_data_path, protocols) -> list[str]:
    """Before the demo's first session: for every protocol, whether its release can learn at these settings."""
    from launcher.common import client
    from launcher.protocol import protocol_arguments

    client_data = client.load_client_data(client_data_path)
    lines = ["before running: each release's expected noise against its signal, per protocol"]
    for protocol in protocols:
        check = estimate(protocol.name, protocol_arguments(args, protocol), topology, client_data)
        if "ratio" not in check:
            lines.append(f"  {protocol.name}: no output perturbation to check (its noise is on the labels)")
            continue
        verdict = ("can learn" if check["ratio"] <= NOISY else "noisy, one draw decides"
                   if check["ratio"] <= TOO_NOISY else "CANNOT learn here")
        lines.append(f"  {protocol.name}: {verdict}: {line(check)}")
        lines += [f"    {warning}" for warning in check["warnings"]]
    return lines
