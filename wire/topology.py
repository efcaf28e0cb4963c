"""Topology files: which role runs where, with which key file, data file and certificate.

TOML, one `[[roles]]` table per process. Relative paths are relative to the
file. `listen` (optional) is the address a server binds when it differs from
the address peers dial (e.g. 0.0.0.0:port in a container). Mutual TLS needs
`ca_certificate`, `client_certificate`/`client_key` (the launcher's identity)
and a `certificate`/`key` per role; `insecure = true` instead declares a
plaintext deployment, which every server must also be told on its command line.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from sessions.identity import AGGREGATOR, CLIENT, CURATOR, Identity
from wire.tls import TlsFiles

FORMAT_VERSION = 1


@dataclass(frozen=True)
class RoleEntry:
    identity: Identity
    address: str
    listen: str | None = None
    key_share: Path | None = None
    data: Path | None = None
    model: str | None = None
    certificate: Path | None = None
    key: Path | None = None

    @property
    def bind_address(self) -> str:
        return self.listen or self.address


@dataclass(frozen=True)
class Topology:
    public_key: Path
    roles: tuple[RoleEntry, ...]
    ca_certificate: Path | None = None
    client_certificate: Path | None = None
    client_key: Path | None = None
    insecure: bool = False

    def __post_init__(self):
        identities = [entry.identity for entry in self.roles]
        if len(set(identities)) != len(identities):
            raise ValueError("a role identity appears twice in the topology")
        for required in (AGGREGATOR, CURATOR):
            if required not in identities:
                raise ValueError(f"the topology has no {required}")
        if not self.parties:
            raise ValueError("the topology has no parties")
        if [p.identity.id for p in self.parties] != list(range(1, len(self.parties) + 1)):
            raise ValueError("parties must be numbered 1..K")
        if not self.insecure:
            missing = [str(e.identity) for e in self.roles if e.certificate is None or e.key is None]
            if self.ca_certificate is None or self.client_certificate is None or self.client_key is None or missing:
                raise ValueError("mutual TLS needs a CA, the client's certificate and one per role "
                                 f"(missing for {', '.join(missing) or 'the CA or the client'}); "
                                 "or declare `insecure = true`")

    def tls_for(self, identity: Identity) -> TlsFiles | None:
        """The TLS files of `identity` (a role or the client), or None in a plaintext deployment."""
        if self.insecure:
            return None
        assert self.ca_certificate is not None and self.client_certificate is not None and self.client_key is not None
        if identity == CLIENT:
            return TlsFiles(self.ca_certificate, self.client_certificate, self.client_key)
        entry = self.entry(identity)
        assert entry.certificate is not None and entry.key is not None  # checked when the topology was made
        return TlsFiles(self.ca_certificate, entry.certificate, entry.key)

    def entry(self, identity: Identity) -> RoleEntry:
        for entry in self.roles:
            if entry.identity == identity:
                return entry
        raise KeyError(f"{identity} is not in the topology")

    @property
    def parties(self) -> list[RoleEntry]:
        return sorted((e for e in self.roles if e.identity.role == "party"), key=lambda e: e.identity.id)

    @property
    def key_holders(self) -> list[int]:
        return [e.identity.id for e in self.parties if e.key_share is not None]

    @property
    def hosts(self) -> list[Identity]:
        """One identity per role process (what to ask for its status or traffic)."""
        return [entry.identity for entry in self.roles]

    @property
    def addresses(self) -> dict[Identity, str]:
        return {entry.identity: entry.address for entry in self.roles}

    @classmethod
    def load(cls, path: Path) -> "Topology":
        path = Path(path)
        data = tomllib.loads(path.read_text())
        if data.get("version", FORMAT_VERSION) != FORMAT_VERSION:
            raise ValueError(f"unsupported topology version {data.get('version')}")
        base = path.parent

        def resolve(value):
            return None if value is None else (base / value).resolve()

        roles = tuple(
            RoleEntry(
                identity=Identity(item["role"], int(item.get("id", 0))),
                address=item["address"],
                listen=item.get("listen"),
                key_share=resolve(item.get("key_share")),
                data=resolve(item.get("data")),
                model=item.get("model"),
                certificate=resolve(item.get("certificate")),
                key=resolve(item.get("key")),
            )
            for item in data.get("roles", [])
        )
        return cls(public_key=resolve(data["public_key"]), roles=roles,
                   ca_certificate=resolve(data.get("ca_certificate")),
                   client_certificate=resolve(data.get("client_certificate")),
                   client_key=resolve(data.get("client_key")), insecure=bool(data.get("insecure", False)))

    def dump(self, path: Path) -> None:
        path = Path(path)
        base = path.parent.resolve()

        def relative(value: Path) -> str:
            value = Path(value).resolve()
            return str(value.relative_to(base)) if value.is_relative_to(base) else str(value)

        lines = [f"version = {FORMAT_VERSION}", f'public_key = "{relative(self.public_key)}"']
        if self.insecure:
            lines.append("insecure = true")
        for name in ("ca_certificate", "client_certificate", "client_key"):
            if getattr(self, name) is not None:
                lines.append(f'{name} = "{relative(getattr(self, name))}"')
        lines.append("")
        for entry in self.roles:
            lines += ["[[roles]]", f'role = "{entry.identity.role}"', f"id = {entry.identity.id}",
                      f'address = "{entry.address}"']
            if entry.listen:
                lines.append(f'listen = "{entry.listen}"')
            for name in ("key_share", "data", "certificate", "key"):
                if getattr(entry, name) is not None:
                    lines.append(f'{name} = "{relative(getattr(entry, name))}"')
            if entry.model:
                lines.append(f'model = "{entry.model}"')
            lines.append("")
        path.write_text("\n".join(lines))
