"""`mpdp report --html REPORT.json` (and `mpdp run … --html FILE`): one session's report as one self-contained
HTML page: the message sequence chart (`launcher.commands.trace`'s), the traffic beside the protocol's closed form,
privacy asked vs delivered, each party's ledger when the report holds it, the result beside its baselines, the
warnings and what one malicious party could move.

Everything on the page comes from the JSON report, which stays the source of truth; the page fetches nothing
(pictures are data URIs, the style is inline, there is no script). Every figure a reader may check against the
JSON carries it exactly in a `data-value` attribute beside its rounded text, named by `data-figure`.
"""

from __future__ import annotations

import base64
import html
import io
import json
import os
import platform
import tempfile
from datetime import datetime, timezone
from pathlib import Path

METRICS = (("accuracy", "accuracy"), ("balanced_accuracy", "balanced accuracy"), ("auc", "AUC"))

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; line-height: 1.4; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; border-bottom: 1px solid #ccc; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: left; vertical-align: top; }
tr.differs td { background: #fde8e8; }
.warning { background: #fff4d6; border-left: 4px solid #e0a100; padding: 0.4em 0.8em; margin: 0.4em 0; }
.weaker { color: #b00020; font-weight: bold; }
.note, .provenance { color: #555; font-size: 0.9em; }
img { max-width: 100%; border: 1px solid #ddd; }
"""


def _escape(value) -> str:
    return html.escape(str(value), quote=True)


def _figure(name: str, value, text: str | None = None) -> str:
    """A number the page shows rounded, with its exact JSON value in `data-value`."""
    shown = text if text is not None else (f"{value:.4g}" if isinstance(value, float) else str(value))
    return (f'<span data-figure="{_escape(name)}" data-value="{_escape(json.dumps(value))}">'
            f"{_escape(shown)}</span>")


def _table(header: list[str], rows: list[list[str]], classes: list[str] | None = None) -> str:
    head = "".join(f"<th>{_escape(cell)}</th>" for cell in header)
    body = []
    for index, row in enumerate(rows):
        css = f' class="{classes[index]}"' if classes and classes[index] else ""
        body.append(f"<tr{css}>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _key_values(values: dict) -> str:
    rows = [[_escape(key), _escape(json.dumps(value) if isinstance(value, (dict, list)) else value)]
            for key, value in values.items()]
    return _table(["key", "value"], rows)


def _data_uri(kind: str, data: bytes) -> str:
    return f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"


def _chart(report: dict) -> str:
    """The sequence chart `mpdp trace` draws, as an inline SVG picture."""
    from launcher.commands import trace

    try:
        rows = trace.messages(report)
    except ValueError as missing:
        return f'<p class="note">{_escape(missing)}</p>'
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "chart.svg"
        trace.draw(report, path)
        picture = path.read_bytes()
    return (f'<p>{_figure("chart-messages", len(rows))} messages as the receivers logged them, in the order each '
            "started; consecutive messages of one stage in one box (the same chart as `mpdp trace`).</p>"
            f'<img id="sequence-chart" alt="message sequence chart" src="{_data_uri("image/svg+xml", picture)}">')


def traffic(report: dict) -> list[dict]:
    """The session's traffic summary (each RPC once), wherever the protocol's report keeps it."""
    rows = report.get("traffic")
    if rows is None:
        rows = report.get("evaluator_view", {}).get("traffic", [])
    return list(rows)


def _closed_form(report: dict) -> dict[tuple[str, str, str], int] | None:
    from launcher.registry import PROTOCOLS

    protocol = PROTOCOLS.get(report.get("protocol", ""))
    if protocol is None or protocol.closed_form is None:
        return None
    return protocol.closed_form(report)


def _traffic(report: dict) -> str:
    rows = traffic(report)
    if not rows:
        return '<p class="note">This report holds no traffic summary.</p>'
    expected = _closed_form(report)
    observed = {(row["from"], row["to"], row["rpc"]): row for row in rows}
    keys = sorted(set(observed) | set(expected or {}))
    cells, classes = [], []
    for key in keys:
        row = observed.get(key)
        messages = row["messages"] if row else 0
        closed = "—" if expected is None else str(expected.get(key, 0))
        differs = expected is not None and expected.get(key, 0) != messages
        name = "/".join(key)
        cells.append([_escape(key[0]), _escape(key[1]), f"<code>{_escape(key[2])}</code>",
                      _figure(f"messages:{name}", messages),
                      _figure(f"bytes:{name}", row["bytes"] if row else 0), closed,
                      "DIFFERS" if differs else ("=" if expected is not None else "")])
        classes.append("differs" if differs else "")
    total_messages = sum(row["messages"] for row in rows)
    total_bytes = sum(row["bytes"] for row in rows)
    cells.append(["<b>all</b>", "", "", _figure("messages-total", total_messages), _figure("bytes-total", total_bytes),
                  "—" if expected is None else str(sum(expected.values())), ""])
    classes.append("")
    note = ("no closed form is registered for this protocol" if expected is None else
            f"closed form from the report's public parameters (docs/protocols/{_escape(report.get('protocol'))}.md); "
            "a row that DIFFERS is a message the closed form does not predict (a fault, a retry, a crashed holder)")
    return (_table(["from", "to", "rpc", "messages", "bytes (request + response)", "closed form", ""], cells, classes)
            + f'<p class="note">Each RPC counted once, as its receiver logged it; {note}.</p>')


def _first(values: dict, *keys: str):
    for key in keys:
        if values.get(key) is not None:
            return values[key]
    return None


def _privacy(report: dict) -> str:
    from launcher.common.summary import delivered_epsilon

    privacy = report.get("privacy", {})
    asked, delivered, how = delivered_epsilon(report)
    weaker = asked is not None and delivered is not None and delivered > asked * (1 + 1e-6)
    delta = _first(privacy, "delta", "clamp_delta")
    rows = [
        ["ε asked", _figure("epsilon-asked", asked) if asked is not None else "not stated"],
        ["ε delivered", (_figure("epsilon-delivered", delivered) + (' <span class="weaker">WEAKER than asked</span>'
                                                                     if weaker else "") + f" ({_escape(how)})")
         if delivered is not None else '<span class="weaker">NO finite ε is delivered</span>'],
        ["δ", _figure("delta", delta) if delta is not None else "not stated"],
        ["mechanism", _escape(_first(privacy, "mechanism", "release_mechanism", "method") or "not stated")],
        ["unit", _escape(_first(privacy, "unit", "release_unit") or "not stated")],
        ["sensitivity", _escape(_first(privacy, "sensitivity", "release_sensitivity") or "not stated")],
        ["accountant", _escape(_first(privacy, "accountant", "composition_note", "composition")
                               or "none named: ε as calibrated for this one release")],
    ]
    return _table(["", ""], rows) + "<details><summary>every privacy figure of the report</summary>" \
        + _key_values(privacy) + "</details>"


def _ledger(report: dict) -> str:
    rows = report.get("ledgers")
    if not rows:
        return ('<p class="note">This report holds no party ledger: a party\'s ledger is its own file beside its '
                "data, which the client does not read. <code>mpdp budget --run-dir DIR</code> (the operator's "
                "view) shows each party's sessions and the (ε, δ) composed over them.</p>")
    cells = []
    for row in rows:
        budget = row.get("budget")
        cells.append([_escape(row.get("party")), _figure(f"ledger-sessions:{row.get('party')}", row.get("sessions")),
                      _figure(f"ledger-epsilon:{row.get('party')}", row.get("epsilon")),
                      _figure(f"ledger-delta:{row.get('party')}", row.get("delta")), _escape(row.get("composition", "")),
                      _escape("none" if budget is None else budget)])
    return _table(["party", "sessions", "ε composed", "δ composed", "composition", "budget"], cells)


def beside_baselines(report: dict) -> list[tuple[str, dict]]:
    """(name, metrics) of the release and of every baseline the report holds."""
    metrics = report.get("result", {}).get("test_metrics")
    baselines = report.get("baselines") or {}
    scored = [("this release", metrics)] if metrics else []
    if "majority_class_rate" in baselines:
        scored.append(("always the majority class", {"accuracy": baselines["majority_class_rate"],
                                                     "balanced_accuracy": 0.5}))
    for key, value in baselines.items():
        if isinstance(value, dict) and "accuracy" in value:
            scored.append((f"{key.replace('_', ' ')}: {value.get('model', '')}".rstrip(": "), value))
    return scored


def baselines_figure(report: dict, axis=None):
    """The release beside its baselines as horizontal bars (accuracy, balanced accuracy, AUC) on `axis` (a new
    figure's when None); returns the axis."""
    import matplotlib.pyplot as plt

    scored = beside_baselines(report)
    if axis is None:
        axis = plt.subplots(figsize=(8, 0.9 + 0.55 * len(scored)))[1]
    height = 0.8 / len(METRICS)
    for index, (key, label) in enumerate(METRICS):
        values = [metrics.get(key, 0.0) for _, metrics in scored]
        positions = [row + index * height for row in range(len(scored))]
        bars = axis.barh(positions, values, height=height, label=label)
        axis.bar_label(bars, labels=[f"{v:.3f}" if key in metrics else "" for v, (_, metrics) in zip(values, scored)],
                       fontsize=7, padding=2)
    axis.set_yticks([row + height for row in range(len(scored))])
    axis.set_yticklabels([name.split(":")[0] for name, _ in scored], fontsize=8)  # the table names the models
    axis.invert_yaxis()
    axis.set_xlim(0, 1.1)
    axis.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=len(METRICS))
    rows = (report.get("baselines") or {}).get("test_rows")
    axis.set_title(f"{report.get('protocol', '')} on the same {rows} test rows" if rows else "on the test rows",
                   fontsize=9)
    return axis


def _plot(report: dict) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = baselines_figure(report).figure
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return f'<img id="baselines-plot" alt="the result beside its baselines" src="{_data_uri("image/png", buffer.getvalue())}">'


def _result(report: dict) -> str:
    scored = beside_baselines(report)
    if not scored:
        return '<p class="note">This report holds no test metrics.</p>'
    cells = []
    for index, (name, metrics) in enumerate(scored):
        figure = "result" if index == 0 else f"baseline{index}"
        cells.append([_escape(name)] + [_figure(f"{figure}-{key}", metrics[key]) if key in metrics else "—"
                                        for key, _ in METRICS])
    return _plot(report) + _table(["", *(label for _, label in METRICS)], cells)


def _warnings(report: dict) -> str:
    from mpdp.vote_proofs import influence

    parts = [f'<div class="warning">WARNING: {_escape(text)}</div>' for text in report.get("warnings", [])]
    if not parts:
        parts.append('<p class="note">' + ("No warning." if "warnings" in report else
                                          "This report holds no warnings list (written before warnings were kept in "
                                          "reports)."))
    malicious = report.get("malicious_party")
    if malicious:
        parts.append(f"<h3>What one malicious party could move</h3><p>{_escape(influence.summary_line(malicious).strip())}</p>"
                     + "<details><summary>in detail</summary>" + _key_values(malicious) + "</details>")
    for key, heading in (("hides", "What the protocol hides"), ("does_not_hide", "What it does not hide")):
        if report.get(key):
            items = report[key] if isinstance(report[key], list) else [report[key]]
            parts.append(f"<h3>{heading}</h3><ul>" + "".join(f"<li>{_escape(item)}</li>" for item in items) + "</ul>")
    if not malicious:
        parts.append('<p class="note">This report states no bound on what one malicious party could move.</p>')
    return "".join(parts)


def render(report: dict, command: str) -> str:
    """The page; `command` is the one that wrote it (stated with the date and the machine)."""
    protocol, session = report.get("protocol", "?"), report.get("session_id", "?")
    data = report.get("data") or {}
    made = (f"{datetime.now(timezone.utc).isoformat(timespec='seconds')} on {platform.node()} "
            f"({platform.machine()}, {os.cpu_count()} cores)")
    sections = [
        ("Privacy: asked and delivered", _privacy(report)),
        ("The result beside its baselines", _result(report)),
        ("Warnings and one malicious party", _warnings(report)),
        ("Message sequence chart", _chart(report)),
        ("Traffic beside the closed form", _traffic(report)),
        ("Each party's ledger after the session", _ledger(report)),
        ("Parameters", _key_values(report.get("parameters", {}))),
        ("Timing (seconds)", _key_values(report.get("timing", {}))),
    ]
    if report.get("config"):
        sections.append(("The configuration it ran", _key_values(report["config"])))
    body = "".join(f'<section><h2>{_escape(title)}</h2>{content}</section>' for title, content in sections)
    dataset = (f"{data.get('dataset')}, split {data.get('split')} (seed {data.get('split_seed', '?')})"
               if data else report.get("parameters", {}).get("dataset", "?"))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>mpdp {_escape(protocol)} session {_escape(session)}</title><style>{STYLE}</style></head><body>"
            f'<h1>mpdp: a <span data-figure="protocol" data-value="{_escape(json.dumps(protocol))}">'
            f"{_escape(protocol)}</span> session, id <code>{_escape(session)}</code></h1>"
            f"<p>Data: {_escape(dataset)}.</p>"
            f'<p class="provenance">Written {_escape(made)} by <code>{_escape(command)}</code> from the JSON report '
            "(the source of truth).</p>"
            f"{body}</body></html>\n")


def write(report: dict, out: Path, command: str) -> Path:
    from launcher.deployment.bundles import open_private

    out.parent.mkdir(parents=True, exist_ok=True)
    with os.fdopen(open_private(out, append=False), "w", encoding="utf-8") as handle:  # 0600, as the JSON report
        handle.write(render(report, command))
    return out


def add_command(commands) -> None:
    """`mpdp report`: its options."""
    page = commands.add_parser("report", help="a session's JSON report as one self-contained HTML page: sequence "
                                              "chart, traffic beside the closed form, privacy, baselines, warnings")
    page.add_argument("--html", type=Path, required=True, metavar="REPORT.json",
                      help="a report written by `mpdp run … --report FILE`")
    page.add_argument("--out", type=Path, help="the page (default: the report's path with .html)")
    page.set_defaults(handler=command)


def command(args) -> int:
    import json


    report = json.loads(args.html.read_text())
    out = args.out or args.html.with_suffix(".html")
    write(report, out, f"mpdp report --html {args.html}")
    print(f"session page: {out}")
    args.json_report = {"page": str(out)}
    return 0
