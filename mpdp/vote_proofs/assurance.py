"""How much a voting protocol (DPPP, Hamm) checks of each voter: one ordered level, each adding to the one below
(docs/malicious-party.md).

none < proven votes (one-hot proofs on votes sent apart from the noise) < verifiable noise (noise shares are
committed bits flipped by a joint coin) < holders check bits (every key holder checks every committed bit's proof
too). A level implies every level below it, so no combination of checks can be asked for that does not exist.
"""

from __future__ import annotations

import enum

from mpdp.proto.v1 import common_pb2
from mpdp.sessions.errors import invalid


class Assurance(enum.IntEnum):
    NONE = common_pb2.ASSURANCE_NONE
    PROVEN_VOTES = common_pb2.ASSURANCE_PROVEN_VOTES
    VERIFIABLE_NOISE = common_pb2.ASSURANCE_VERIFIABLE_NOISE
    HOLDERS_CHECK_BITS = common_pb2.ASSURANCE_HOLDERS_CHECK_BITS

    @property
    def proven_votes(self) -> bool:
        return self >= Assurance.PROVEN_VOTES

    @property
    def verifiable_noise(self) -> bool:
        return self >= Assurance.VERIFIABLE_NOISE

    @property
    def holders_check_bits(self) -> bool:
        return self >= Assurance.HOLDERS_CHECK_BITS

    @property
    def option(self) -> str:
        """As the command line and a run configuration spell it: `none`, `proven-votes`, …"""
        return self.name.lower().replace("_", "-")

    @classmethod
    def parse(cls, value: "str | int | Assurance") -> "Assurance":
        """A level from its option spelling, its proto number or itself; anything else is refused."""
        if isinstance(value, str):
            for level in cls:
                if level.option == value:
                    return level
            raise invalid(f"assurance must be one of {', '.join(OPTIONS)}, not {value!r}")
        try:
            return cls(int(value))
        except ValueError:
            raise invalid(f"assurance must be one of {', '.join(OPTIONS)}, not {value!r}") from None

    @classmethod
    def of_report(cls, parameters: dict) -> "Assurance":
        """The level a report's parameters name: reports spell it as the three checks it implies
        (`proven_votes`, `verifiable_noise`, `holders_check_bits`), so stored reports read the same."""
        level = cls.NONE
        for check in (cls.PROVEN_VOTES, cls.VERIFIABLE_NOISE, cls.HOLDERS_CHECK_BITS):
            if parameters.get(check.name.lower()):
                level = check
        return level


OPTIONS = tuple(level.option for level in Assurance)


class AssuredParameters:
    """A voting protocol's parameters with an `assurance` field: the three levels' tests as the reports name them."""

    assurance: Assurance

    @property
    def proven_votes(self) -> bool:
        return self.assurance.proven_votes

    @property
    def verifiable_noise(self) -> bool:
        return self.assurance.verifiable_noise

    @property
    def holders_check_bits(self) -> bool:
        return self.assurance.holders_check_bits
