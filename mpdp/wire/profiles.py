"""Network profiles: what one link between two role hosts costs (latency, bandwidth, loss).

`latency_ms` is the one-way delay added on each direction of a link (as `tc netem delay` on each host's
egress), so a round trip between two hosts costs 2 × latency. `bandwidth_mbit` limits each direction of a
link on its own. `loss` is the fraction of TCP segments lost: gRPC runs over TCP, which never hands the
application a gap, so a lost segment shows up as a *retransmission delay* — the segment, and everything
sent after it on that connection, arrives one retransmission timeout late. That is how both the relay
(mpdp.wire.relay) and the cost model (launcher.commands.predict) treat it.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

SEGMENT_BYTES = 1448  # TCP payload of one Ethernet-sized segment (1500 MTU, timestamps on)
MIN_RTO_S = 0.2  # Linux's minimum retransmission timeout (TCP_RTO_MIN)


@dataclass(frozen=True)
class NetworkProfile:
    name: str
    latency_ms: float = 0.0
    bandwidth_mbit: float | None = None  # None: as fast as loopback
    loss: float = 0.0  # fraction of segments lost, 0 ≤ loss < 1

    def __post_init__(self):
        if self.latency_ms < 0 or not 0 <= self.loss < 1 or (self.bandwidth_mbit is not None and
                                                              self.bandwidth_mbit <= 0):
            raise ValueError(f"network profile {self.name!r}: latency ≥ 0 ms, bandwidth > 0 Mbit/s and "
                             "0 ≤ loss < 100 % are required")

    @property
    def emulated(self) -> bool:
        """Whether any link needs an emulator at all."""
        return self.latency_ms > 0 or self.bandwidth_mbit is not None or self.loss > 0

    @property
    def latency_s(self) -> float:
        return self.latency_ms / 1000

    @property
    def rtt_s(self) -> float:
        return 2 * self.latency_s

    @property
    def retransmission_timeout_s(self) -> float:
        """One RTO: what a lost segment costs (Linux waits at least 200 ms, and at least the RTT)."""
        return MIN_RTO_S + self.rtt_s

    def transmission_s(self, size: int) -> float:
        """Seconds to put `size` bytes on the link (0 without a bandwidth limit)."""
        return 0.0 if self.bandwidth_mbit is None else size * 8 / (self.bandwidth_mbit * 1e6)

    def expected_loss_s(self, size: int) -> float:
        """The expected retransmission delay of a `size`-byte message: each of its segments may be lost, and
        one lost segment holds the message back one RTO (counted once per message: losses overlap)."""
        if self.loss == 0:
            return 0.0
        segments = max(1, -(-size // SEGMENT_BYTES))
        return (1 - (1 - self.loss) ** segments) * self.retransmission_timeout_s

    def one_way_s(self, size: int) -> float:
        """Expected seconds for a `size`-byte message to cross one direction of a link."""
        return self.latency_s + self.transmission_s(size) + self.expected_loss_s(size)

    def describe(self) -> str:
        parts = [f"{self.latency_ms:g} ms one-way per link (RTT {2 * self.latency_ms:g} ms)"]
        parts.append(f"{self.bandwidth_mbit:g} Mbit/s" if self.bandwidth_mbit is not None else "unlimited bandwidth")
        if self.loss:
            parts.append(f"{100 * self.loss:g} % segment loss (as TCP retransmission delay)")
        return f"{self.name}: " + ", ".join(parts)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "NetworkProfile":
        return cls(name=str(data["name"]), latency_ms=float(data.get("latency_ms", 0.0)),
                   bandwidth_mbit=None if data.get("bandwidth_mbit") is None else float(data["bandwidth_mbit"]),
                   loss=float(data.get("loss", 0.0)))


LOOPBACK = NetworkProfile("loopback")
PROFILES: dict[str, NetworkProfile] = {p.name: p for p in (
    LOOPBACK,
    NetworkProfile("lan", latency_ms=0.25, bandwidth_mbit=1000),  # one switched gigabit LAN: 0.5 ms RTT
    NetworkProfile("wan", latency_ms=20, bandwidth_mbit=100),  # sites on one continent: 40 ms RTT
    NetworkProfile("mobile", latency_ms=40, bandwidth_mbit=20, loss=0.01),  # 4G: 80 ms RTT, 1 % loss
)}


def _number(text: str, units: dict[str, float], what: str) -> float:
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-z%/]*)\s*", text.lower())
    if match is None or match.group(2) not in units:
        raise ValueError(f"{what} {text!r}: a number with one of the units {', '.join(u for u in units if u)}")
    return float(match.group(1)) * units[match.group(2)]


def parse_latency(text: str) -> float:
    """'20ms', '0.5 ms', '20' (ms) → milliseconds."""
    return _number(text, {"": 1.0, "ms": 1.0, "s": 1000.0, "us": 0.001}, "latency")


def parse_bandwidth(text: str) -> float:
    """'100mbit', '1gbit', '100' (Mbit/s) → Mbit/s."""
    return _number(text, {"": 1.0, "mbit": 1.0, "mbit/s": 1.0, "gbit": 1000.0, "gbit/s": 1000.0, "kbit": 0.001,
                          "kbit/s": 0.001}, "bandwidth")


def parse_loss(text: str) -> float:
    """'1%', '0.01' → a fraction."""
    return _number(text, {"%": 0.01, "": 1.0}, "loss")


def resolve(name: str | None, latency: str | None = None, bandwidth: str | None = None,
            loss: str | None = None) -> NetworkProfile:
    """A named profile, with any of latency, bandwidth and loss given explicitly overriding it (the result is
    named after what was given, e.g. `wan+loss=1%`)."""
    if name is not None and name not in PROFILES:
        raise ValueError(f"unknown network profile {name!r}; choose from {', '.join(PROFILES)}")
    base = PROFILES[name] if name is not None else LOOPBACK
    if latency is None and bandwidth is None and loss is None:
        return base
    changes = [f"{key}={value}" for key, value in (("latency", latency), ("bandwidth", bandwidth), ("loss", loss))
               if value is not None]
    label = "+".join(([name] if name is not None else []) + changes)
    return NetworkProfile(label, parse_latency(latency) if latency is not None else base.latency_ms,
                          parse_bandwidth(bandwidth) if bandwidth is not None else base.bandwidth_mbit,
                          parse_loss(loss) if loss is not None else base.loss)
