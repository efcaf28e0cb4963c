"""A protocol's entry in the launcher: what `run`, `demo`, `experiment`, `bench`, `audit` and the
hardening fault matrix need to know about it. `cli.py` and those modules build their commands and lists
from the registry of these entries, so adding a protocol adds an entry, not code in `cli.py`."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

Report = dict[str, Any]


@dataclass(frozen=True)
class Option:
    """One command-line option: `--name` (dest from the name unless given) with argparse's keywords."""

    name: str
    keywords: dict[str, Any] = field(default_factory=dict)
    dest: str | None = None

    @property
    def destination(self) -> str:
        return self.dest or self.name.replace("-", "_")

    def add_to(self, parser: argparse.ArgumentParser, prefix: str = "") -> None:
        """Add the option, as `--{prefix}-{name}` with a dest of `{prefix}__{dest}` when prefixed."""
        keywords = dict(self.keywords)
        if keywords.get("action") not in ("store_true", "store_false"):
            keywords.setdefault("metavar", self.name.upper().replace("-", "_"))
        if prefix:
            parser.add_argument(f"--{prefix}-{self.name}", dest=f"{prefix}__{self.destination}", **keywords)
        else:
            parser.add_argument(f"--{self.name}", dest=self.destination, **keywords)


@dataclass(frozen=True)
class Experiment:
    """`mpdp experiment <protocol>`: reproduce the paper's comparison (JSON + PNG under --out)."""

    help: str
    options: Callable[[], list[Option]]
    run: Callable[[argparse.Namespace], int]
    # Runs made side by side and merged into one report: redraw the one figure for every data set (else each
    # run's figures are copied); returns the figure's file name.
    replot: Callable[[dict, Any], str] | None = None
    # `mpdp experiment all`: the arguments of the stored results (`full`) and of `--quick` (tiny sizes, a smoke
    # test); `needs_a9a`: skipped where the a9a data set is absent.
    full: tuple[str, ...] = ()
    quick: tuple[str, ...] = ()
    needs_a9a: bool = False
    # `mpdp experiment table`: the protocol's rows of docs/reproduction.md's tables, from its stored report.
    table: "ResultsTable | None" = None


@dataclass(frozen=True)
class ResultsTable:
    """The protocol in `mpdp experiment table`: the paper's name (`paper`, `short`, `title`), its place in the
    page's tables (`position`: the papers' order there), the data its results are on, and from its stored report
    (None when not stored): its lines of the comparison table (`lines`), its measured block (`measured`; None when
    the stored report cannot fill it) and its headline claims with their verdicts (`claims`,
    launcher.common.results.Claim)."""

    paper: str
    short: str
    title: str
    position: int
    data: str
    lines: Callable[[dict | None], list[list[str]]]
    measured: Callable[[dict], str | None]
    claims: Callable[[dict | None], list[Any]]


@dataclass(frozen=True)
class Bench:
    """`mpdp bench <protocol>`: the protocol's own benchmark (figures and a JSON report)."""

    help: str
    options: Callable[[], list[Option]]
    run: Callable[[argparse.Namespace], int]
    target: str | None = None  # `mpdp bench <target>`; the protocol's name when None


# One measured session of `bench scale`: (topology, client data, parties) -> {"wall_s", "traffic"}.
ScaleSession = Callable[[Any, dict, int], Coroutine[Any, Any, Report]]
# One session of the fault matrix: (topology, client data, deadline in seconds, session id) -> its report.
FaultSession = Callable[[Any, dict, float, str], Coroutine[Any, Any, Report]]


@dataclass(frozen=True)
class Scale:
    """The protocol in `mpdp bench scale`: the K measured by default, logical parties per process, rows per party,
    and one session whose wall time and traffic are measured ({"wall_s", "traffic"})."""

    sizes: tuple[int, ...]
    parties_per_process: int
    rows_per_party: int
    session: ScaleSession
    target_exponent: float | None = None  # per-party cost flat: total ∝ K^b with b at most this
    public_points: bool = False  # the curator holds X_aux (`bench_scale.AUX_POINTS` of them)
    startup_timeout: float | None = None  # seconds for every role to serve, when the default is too short


@dataclass(frozen=True)
class Faults:
    """The protocol in the hardening fault matrix: the traffic labels each kind of participant (`leader`,
    `party`, `curator`, `aggregator`) receives and sends, and the session run under each fault."""

    received: dict[str, list[str]]
    sent: dict[str, list[str]]
    session: FaultSession
    # The kinds of participant (`aggregator`, `curator`) that take no part in a session: no fault is put on them.
    absent: tuple[str, ...] = ()


@dataclass(frozen=True)
class HardeningTarget:
    """The protocol the hardening target deployment fuzzes and opens sessions of out of order: `parameters(topology,
    client data, deadline in seconds)` its session parameters there, `deadline(parameters)` their deadline in
    seconds, `open(parameters)` the body (`to_role`'s keywords) of the Step that opens a session with them at each
    kind of participant in `opened_at`, and `publishes`: the kinds of participant that hand out a share by
    AwaitResult (after a failed session none may)."""

    parameters: Callable[[Any, dict, float], Any]
    deadline: Callable[[Any], float]
    open: Callable[[Any], dict[str, Any]]
    opened_at: tuple[str, ...]
    publishes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Hardening:
    """The protocol in `mpdp bench hardening`: `concurrent` of its sessions run at once (its target there), it takes
    turns in the repeated sessions of the resource growth, each session being `session` (as `Faults.session`);
    `label` names it in the summary. `target`: the hardening deployment fuzzes it; `transport_round`: its session is
    the honest round beside each transport limit (docs/transport-limits.md)."""

    label: str
    concurrent: int
    session: FaultSession
    target: HardeningTarget | None = None
    transport_round: bool = False


@dataclass(frozen=True)
class Audit:
    """The protocol in `mpdp audit`: the noise mechanisms its audit takes and
    `run(mechanism, epsilon, delta, trials, broken=…)`, the audit's report (launcher/audit/counts.py `report`);
    `colluding`: its noise is shared among contributors, and `run` also takes `colluding=` (contributors per
    data owner, `--teachers-per-party`)."""

    mechanisms: tuple[str, ...]
    run: Callable[..., Report]
    colluding: bool = False
    # `--wire-sample`: (the check, its tolerance); the check runs one release over real processes, (topology,
    # client data, mechanism, ε, δ, session number) -> its largest difference from the in-process reference.
    wire: tuple[Callable[..., float], float] | None = None


@dataclass(frozen=True)
class DeploymentShape:
    """What a session's charge to each party depends on besides its options: the deployment's parties, the most
    one principal hosts, its key's id, and the client's data (public points, classes, dimension, party sizes)."""

    parties: int
    colluding: int
    key_id: bytes
    client_data: dict

    @classmethod
    def of(cls, topology, client_data: dict) -> "DeploymentShape":
        from mpdp.cryptocore.paillier import keyfiles

        return cls(len(topology.parties), topology.colluding, keyfiles.load_public_key(topology.public_key).key_id,
                   client_data)


# What one session with these options charges each party (its ledger's entry, an
# mpdp.privacy.composition.Guarantee), derived by the code the parties derive it with.
Charge = Callable[[argparse.Namespace, DeploymentShape], Any]


@dataclass(frozen=True)
class DemoDeployment:
    """A protocol's own deployment in the demo and the session options that let it learn there."""

    parties: int
    parties_per_process: int
    model: str
    options: dict = field(default_factory=dict)
    why: str = ""


@dataclass(frozen=True)
class DemoSettings:
    """The session options a protocol runs at in the demo where `run`'s defaults would not learn on the demo's data
    (measured: docs/demo.md). They are the demo's defaults of its `--<protocol>-…` flags, so a flag still overrides
    them, and the demo prints each beside `run`'s default with `why` before the first session."""

    options: dict
    why: str


@dataclass(frozen=True)
class LauncherProtocol:
    """How the launcher runs one protocol against a running deployment.

    `options` are the session's options (lazily built: choices may need imports);
    `run(args, topology, client_data)` runs one session and returns its report;
    `summary(report)` is what the user reads. `in_demo` protocols run in `mpdp demo`,
    in registry order, with their options prefixed by the protocol's name (on `demo_deployment` when set; at
    `demo_settings`' defaults when set).
    `bench`, `more_benches`, `scale` and `faults` put it in `mpdp bench <name>` (and each other target), `mpdp bench scale` and the hardening fault
    matrix; `hardening` in the rest of `mpdp bench hardening`; `audit_noise` (its default mechanism) in `mpdp audit`;
    `charge` in `mpdp budget` (what its next
    session at the defaults would cost); `closed_form` beside the traffic of `mpdp report --html`; `verify` in
    `mpdp verify`.
    """

    name: str
    help: str
    options: Callable[[], list[Option]]
    run: Callable[[argparse.Namespace, Any, dict], Report]
    summary: Callable[[Report], str]
    experiment: Experiment | None = None
    in_demo: bool = True
    demo_deployment: DemoDeployment | None = None  # the demo runs it on a deployment of its own
    demo_settings: DemoSettings | None = None  # the demo's defaults where `run`'s cannot learn there
    binary_only: bool = False  # two classes only: the demo skips it on other data sets and says so
    bench: Bench | None = None
    more_benches: tuple[Bench, ...] = ()  # further benchmarks of the protocol, each under its own target
    scale: Scale | None = None
    faults: Faults | None = None
    hardening: Hardening | None = None
    audit_noise: str | None = None
    audit: Audit | None = None
    charge: Charge | None = None
    # The messages of one session per (from role, to role, rpc), from its report's public parameters: the
    # closed form `mpdp report --html` sets beside the observed traffic.
    closed_form: Callable[[Report], dict[tuple[str, str, str], int]] | None = None
    # `mpdp verify`: (report, CA certificate PEM or None, pinned threshold public key or None) -> what was checked,
    # one line each; raises ValueError on the first check that fails.
    verify: Callable[[Report, bytes | None, Any], list[str]] | None = None
    # The one line that refuses a session's options before any check or cryptography (a paper calibration not
    # allowed), or None: `run` asks it first, so the refusal is not hidden behind the check before spending.
    refusal: Callable[[argparse.Namespace, Any, dict], str | None] | None = None
    # `mpdp export`: (report, client data) -> the released model's scikit-learn steps on the scaled rows (the
    # last a classifier; mpdp/learning/released.py puts the deployment's scaling before them).
    release: Callable[[Report, dict], list[tuple[str, Any]]] | None = None
    # `mpdp trace`: the protocol's message type and its stages in the sequence chart (stage -> the message kinds
    # sent in it, in the protocol's order); every kind of the message has a stage.
    message_type: Any = None
    stages: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Before a session: the release's expected noise against its signal, from public quantities
    # ((session options, topology, client data) -> the check, or None when there is nothing to check).
    noise_check: Callable[[argparse.Namespace, Any, dict], dict | None] | None = None
    # After a session: the spread its figures are expected to have from the privacy noise
    # ((report, topology, client data) -> mpdp.learning.noise_spread's estimate); `noise_spread_unavailable` says
    # why a protocol has none.
    noise_spread: Callable[[Report, Any, dict], dict] | None = None
    noise_spread_unavailable: str | None = None
    # Its released labels train a student model: the baselines of its reports (and the check before spending)
    # include the same student trained on the pooled data without privacy.
    trains_student: bool = False
    # `mpdp demo`'s in-process reference (launcher/commands/demo_reference.py): (its demo options, the split, a noise
    # draw, c, the demo deployment's model or None) -> the metrics and majority rate of one release that equals
    # its networked session's.
    demo_reference: Callable[[argparse.Namespace, Any, int, int, str | None], dict] | None = None
    # Its line in the compose file's demo container (`mpdp run <name>` at its demo settings, then these flags,
    # which replace a demo setting there: M = 5 parties, each party's default budget); None: not in that container.
    compose_demo: str | None = None


def session_arguments(protocol: LauncherProtocol, argv: list[str] | tuple[str, ...] = ()) -> argparse.Namespace:
    """The protocol's session options as `mpdp run <name> ARGV` parses them (its defaults when ARGV is empty)."""
    parser = argparse.ArgumentParser(prog=f"mpdp run {protocol.name}", add_help=False)
    for option in protocol.options():
        option.add_to(parser)
    return parser.parse_args(list(argv))


def protocol_arguments(args: argparse.Namespace, protocol: LauncherProtocol) -> argparse.Namespace:
    """The demo's namespace seen by one protocol: its prefixed options unprefixed, the shared ones as they are."""
    prefix = f"{protocol.name}__"
    own = {dest[len(prefix):]: value for dest, value in vars(args).items() if dest.startswith(prefix)}
    shared = {dest: value for dest, value in vars(args).items() if "__" not in dest}
    return argparse.Namespace(**{**shared, **own})
