"""Pieces every protocol's summary shares."""

from __future__ import annotations


def traffic_lines(traffic: list[dict], heading: str = "  traffic (each RPC counted once):") -> list[str]:
    lines = [heading]
    for row in traffic:
        lines.append(f"    {row['from']:>10} → {row['to']:<10} {row['rpc']:<38} {row['messages']:>4} msgs {row['bytes']:>10} bytes")
    return lines
