"""Logical role identities ("party/3", "aggregator/0", "client/0"): who a protocol message is from and to.

A name only; which transport peer may speak for which identity is the transport's business.
"""

from __future__ import annotations

from dataclasses import dataclass

ROLES = ("party", "aggregator", "curator", "client")


@dataclass(frozen=True, order=True)
class Identity:
    role: str
    id: int = 0

    def __post_init__(self):
        if self.role not in ROLES:
            raise ValueError(f"unknown role {self.role!r}")
        if self.id < 0:
            raise ValueError("role ids are non-negative")

    def __str__(self) -> str:
        return f"{self.role}/{self.id}"

    @classmethod
    def parse(cls, text: str) -> "Identity":
        role, _, number = text.partition("/")
        if not number.isdigit() or len(number) > 9:
            raise ValueError(f"identity {text!r} is not role/id")
        return cls(role, int(number))


CLIENT = Identity("client", 0)
AGGREGATOR = Identity("aggregator", 0)
CURATOR = Identity("curator", 0)


def party(number: int) -> Identity:
    return Identity("party", number)
