"""`mpdp trace --report FILE`: a session's message sequence chart from its traffic log.

Roles are lifelines, every RPC is one arrow in the order its receiver saw it start (the records' Unix-ns
timestamps; all roles on one machine share a clock, and a receiver's own order is exact), labelled with its
kind and bytes, and consecutive messages of one protocol stage sit in a box named after the stage. Written
as Mermaid text (`.mmd`) and drawn with matplotlib (`.svg` or `.png`).
"""

from __future__ import annotations

import json
from pathlib import Path

MAX_ARROWS = 5_000  # a K = 32 Pathak session has about 3 500; a chart beyond that is unreadable anyway

SHADES = ["rgb(235, 242, 255)", "rgb(255, 244, 230)", "rgb(236, 250, 236)", "rgb(248, 236, 250)",
          "rgb(250, 250, 228)", "rgb(238, 238, 238)"]


def messages(report: dict) -> list[dict]:
    """Every RPC of the session once, in order."""
    detail = report.get("evaluator_view", {}).get("traffic_detail", report.get("traffic_detail"))
    if not isinstance(detail, list):
        raise ValueError("this report has no traffic log (evaluator_view.traffic_detail): write one with "
                         "`mpdp run PROTOCOL --report FILE`")
    if len(detail) > MAX_ARROWS:
        raise ValueError(f"{len(detail)} messages are more than a chart can show ({MAX_ARROWS})")
    return sorted(detail, key=lambda row: (row.get("started_ns", 0), row["call_id"]))


def stages(protocol: str) -> dict[str, tuple[str, ...]]:
    """The protocol's chart stages, from its registry entry (none for a protocol the registry lacks)."""
    from launcher.registry import PROTOCOLS

    entry = PROTOCOLS.get(protocol)
    return entry.stages if entry is not None else {}


def stage_of(protocol: str, rpc: str) -> str:
    kind = rpc.rsplit("/", 1)[-1]
    if not rpc.startswith("Step/"):
        return "the client: open, await the result" if rpc.startswith("AwaitResult") else rpc
    for stage, kinds in stages(protocol).items():
        if kind in kinds:
            return stage
    return protocol


def lifelines(rows: list[dict]) -> list[str]:
    order = {"client": 0, "aggregator": 1, "curator": 2, "party": 3}
    names = {row["from"] for row in rows} | {row["to"] for row in rows}
    return sorted(names, key=lambda name: (order.get(name.split("/")[0], 9), int(name.split("/")[1] or 0)))


def _shade(protocol: str, stage: str) -> str:
    names = list(stages(protocol))
    return SHADES[names.index(stage) % len(SHADES)] if stage in names else SHADES[-1]


def _alias(name: str) -> str:
    return name.replace("/", "_")


def _label(row: dict) -> str:
    rpc = row["rpc"]
    name = rpc.rsplit("/", 1)[-1] if rpc.startswith("Step/") else rpc.split("/")[0]
    return f"{name} ({row['request_bytes'] + row['response_bytes']} B)"


def grouped(protocol: str, rows: list[dict]) -> list[tuple[str, list[dict]]]:
    groups: list[tuple[str, list[dict]]] = []
    for row in rows:
        stage = stage_of(protocol, row["rpc"])
        if groups and groups[-1][0] == stage:
            groups[-1][1].append(row)
        else:
            groups.append((stage, [row]))
    return groups


def mermaid(report: dict) -> str:
    rows = messages(report)
    protocol = report.get("protocol", "")
    lines = ["sequenceDiagram", f"    %% {protocol}, session id {report.get('session_id', '')}: {len(rows)} messages"]
    names = lifelines(rows)
    lines += [f"    participant {_alias(name)} as {name}" for name in names]
    for stage, members in grouped(protocol, rows):
        lines.append(f"    rect {_shade(protocol, stage)}")
        lines.append(f"    Note over {_alias(names[0])},{_alias(names[-1])}: {stage}")
        for row in members:
            arrow = "->>" if row["status"] == "OK" else "-x"
            lines.append(f"    {_alias(row['from'])}{arrow}{_alias(row['to'])}: {_label(row)}")
        lines.append("    end")
    return "\n".join(lines) + "\n"


def draw(report: dict, path: Path) -> None:
    """The same chart as a picture (SVG or PNG by the suffix)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = messages(report)
    protocol = report.get("protocol", "")
    names = lifelines(rows)
    column = {name: index for index, name in enumerate(names)}
    row_height, width = 0.28, max(6.0, 1.6 * len(names))
    height = 1.2 + row_height * (len(rows) + 1.5 * len(grouped(protocol, rows)))
    figure, axes = plt.subplots(figsize=(width, height))
    axes.set_xlim(-0.8, len(names) - 0.2)
    axes.set_ylim(height, 0)
    axes.axis("off")
    for name, x in column.items():
        axes.plot([x, x], [0.6, height], color="#999999", linewidth=0.8, zorder=1)
        axes.text(x, 0.35, name, ha="center", va="center", fontsize=9, weight="bold",
                  bbox={"boxstyle": "round", "facecolor": "white", "edgecolor": "#555555"})
    y = 0.9
    for stage, members in grouped(protocol, rows):
        colour = tuple(int(v) / 255 for v in _shade(protocol, stage)[4:-1].split(","))
        top = y
        y += row_height * 1.2
        axes.text(-0.75, top + row_height * 0.6, stage, fontsize=8, style="italic", va="center")
        for row in members:
            y += row_height
            start, end = column[row["from"]], column[row["to"]]
            axes.annotate("", xy=(end, y), xytext=(start, y), zorder=3,
                          arrowprops={"arrowstyle": "-|>", "color": "black" if row["status"] == "OK" else "red",
                                      "linewidth": 0.8})
            axes.text((start + end) / 2, y - row_height * 0.15, _label(row), ha="center", va="bottom", fontsize=6,
                      zorder=4)
        axes.add_patch(plt.Rectangle((-0.78, top), len(names) + 0.56, y - top + row_height * 0.3, color=colour,
                                     zorder=0))
        y += row_height * 0.3
    axes.set_title(f"{protocol}, session id {report.get('session_id', '')}: {len(rows)} messages, bytes per arrow "
                   "(request + response)", fontsize=10)
    figure.savefig(path, bbox_inches="tight")
    plt.close(figure)


def write(report_path: Path, out: Path | None, picture: str) -> tuple[Path, Path]:
    report = json.loads(Path(report_path).read_text())
    prefix = out or Path(report_path).with_suffix("")
    prefix.parent.mkdir(parents=True, exist_ok=True)
    text_path = prefix.with_name(prefix.name + ".mmd")
    picture_path = prefix.with_name(prefix.name + f".{picture}")
    text_path.write_text(mermaid(report))
    draw(report, picture_path)
    return text_path, picture_path


def add_command(commands) -> None:
    """`mpdp trace`: its options."""
    chart = commands.add_parser("trace", help="a session's message sequence chart (Mermaid and SVG/PNG) from its "
                                              "report's traffic log")
    chart.add_argument("--report", type=Path, required=True, help="a report written by `mpdp run … --report FILE`")
    chart.add_argument("--out", type=Path, help="path prefix of the chart files (default: the report's, without .json)")
    chart.add_argument("--format", choices=["svg", "png"], default="svg")
    chart.set_defaults(handler=command)


def command(args) -> int:
    text, picture = write(args.report, args.out, args.format)
    print(f"sequence chart: {text} (Mermaid) and {picture}")
    args.json_report = {"mermaid": str(text), "picture": str(picture)}
    return 0
