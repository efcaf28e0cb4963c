"""Topology files: which role runs where, with which key file, data file and certificate.

TOML, one `[[roles]]` table per process. Relative paths are relative to the
file. `listen` (optional) is the address a server binds when it differs from
the address peers dial (e.g. 0.0.0.0:port in a container). Mutual TLS needs
`ca_certificate`, `client_certificate`/`client_key` (the launcher's identity)
and a `certificate`/`key` per role; `insecure = true` instead declares a
plaintext deployment, which every server must also be told on its command line.

A role's bundle holds a topology naming every role's address (and which parties hold key shares) but
only its own files: a role entry without certificate, key, data or key share is another role's, whose files
are not here. The client's topology alone holds the client's certificate.

Logical parties: entries with the same `host` ("party/1-250") are served by one
process, at one address, with one certificate naming that range; each party
keeps its own entry (data, key share).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from mpdp.sessions.identity import AGGREGATOR, CLIENT, CURATOR, Identity
from mpdp.wire.identity import Principal
from mpdp.wire.tls import TlsFiles

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
    host: str | None = None  # the process serving it, when it serves several parties ("party/1-250")
    key_holder: bool = False  # public: whether this party holds a key share (its file only in its own bundle)

    @property
    def bind_address(self) -> str:
        return self.listen or self.address

    @property
    def principal(self) -> Principal:
        return Principal.parse(self.host) if self.host else Principal.of(self.identity)


@dataclass(frozen=True)
class Topology:
    public_key: Path
    roles: tuple[RoleEntry, ...]
    ca_certificate: Path | None = None
    client_certificate: Path | None = None
    client_key: Path | None = None
    insecure: bool = False
    # `--single-operator`: one operator runs every logical party (a simulation; it can decrypt alone anyway), so
    # each logical party stands for a separate owner and the calibration counts one contributor per principal.
    single_operator: bool = False

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
        for entry in self.roles:
            principal = entry.principal
            first = self._by_identity.get(Identity(principal.role, principal.first)) \
                if principal.covers(entry.identity) else None
            if first is None or (first.address, first.certificate) != (entry.address, entry.certificate):
                raise ValueError(f"{entry.identity}'s host {entry.principal} must cover it, and every party of a host "
                                 "shares its address and certificate")
        if not self.insecure:
            halves = [str(e.identity) for e in self.roles if (e.certificate is None) != (e.key is None)]
            if self.ca_certificate is None or (self.client_certificate is None) != (self.client_key is None) or halves:
                raise ValueError("mutual TLS needs a CA, and each certificate with its key "
                                 f"(missing for {', '.join(halves) or 'the CA or the client'}); "
                                 "or declare `insecure = true`")

    def tls_for(self, identity: Identity | Principal) -> TlsFiles | None:
        """The TLS files of `identity` (a role or the client), or None in a plaintext deployment."""
        if self.insecure:
            return None
        assert self.ca_certificate is not None  # checked when the topology was made
        if identity == CLIENT or identity == Principal.of(CLIENT):
            if self.client_certificate is None or self.client_key is None:
                raise ValueError("this topology holds no client certificate (it is a role's bundle, not the client's)")
            return TlsFiles(self.ca_certificate, self.client_certificate, self.client_key)
        entry = self.entry(identity if isinstance(identity, Identity) else identity.identities[0])
        if entry.certificate is None or entry.key is None:
            raise ValueError(f"this topology holds no certificate for {identity} (it is another role's bundle)")
        return TlsFiles(self.ca_certificate, entry.certificate, entry.key)

    def holds_credentials(self, identity: Identity | Principal) -> bool:
        """Whether this topology holds `identity`'s TLS files (always, on a plaintext deployment)."""
        try:
            self.tls_for(identity)
        except ValueError:
            return False
        return True

    @cached_property
    def _by_identity(self) -> dict[Identity, RoleEntry]:
        """Entries by identity: a topology of 10 000 logical parties is looked up once per entry as it loads."""
        return {entry.identity: entry for entry in self.roles}

    def entry(self, identity: Identity) -> RoleEntry:
        try:
            return self._by_identity[identity]
        except KeyError:
            raise KeyError(f"{identity} is not in the topology") from None

    @property
    def parties(self) -> list[RoleEntry]:
        return sorted((e for e in self.roles if e.identity.role == "party"), key=lambda e: e.identity.id)

    @property
    def key_holders(self) -> list[int]:
        return [e.identity.id for e in self.parties if e.key_holder or e.key_share is not None]

    @property
    def host_entries(self) -> list[RoleEntry]:
        """One entry per role process: the first identity its principal covers."""
        return [entry for entry in self.roles
                if entry.identity == Identity(entry.principal.role, entry.principal.first)]

    @property
    def hosts(self) -> list[Identity]:
        """One identity per role process (what to ask for its status or traffic)."""
        return [entry.identity for entry in self.host_entries]

    @property
    def principals(self) -> dict[Identity, Principal]:
        return {entry.identity: entry.principal for entry in self.roles}

    @property
    def colluding(self) -> int:
        """c: the most logical parties any one principal (process, certificate, data owner) hosts, so the most
        contributions one malicious principal can subtract from a decrypted sum (mpdp.privacy.collusion).
        1 in a single-operator simulation, whose logical parties stand for separate owners."""
        if self.single_operator:
            return 1
        hosted: dict[Principal, int] = {}
        for entry in self.parties:
            hosted[entry.principal] = hosted.get(entry.principal, 0) + 1
        return max(hosted.values())

    def principal_of(self, identity: Identity) -> Principal:
        return self.entry(identity).principal

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
                host=item.get("host"),
                key_holder=bool(item.get("key_holder", False)),
            )
            for item in data.get("roles", [])
        )
        return cls(public_key=resolve(data["public_key"]), roles=roles,
                   ca_certificate=resolve(data.get("ca_certificate")),
                   client_certificate=resolve(data.get("client_certificate")),
                   client_key=resolve(data.get("client_key")), insecure=bool(data.get("insecure", False)),
                   single_operator=bool(data.get("single_operator", False)))

    def dump(self, path: Path) -> None:
        import tomli_w  # here: `mpdp health`, which loads topologies every few seconds, never writes one

        path = Path(path)
        base = path.parent.resolve()

        def relative(value: Path) -> str:
            value = Path(value).resolve()
            return str(value.relative_to(base)) if value.is_relative_to(base) else str(value)

        document: dict = {"version": FORMAT_VERSION, "public_key": relative(self.public_key)}
        if self.insecure:
            document["insecure"] = True
        if self.single_operator:
            document["single_operator"] = True
        for name in ("ca_certificate", "client_certificate", "client_key"):
            if getattr(self, name) is not None:
                document[name] = relative(getattr(self, name))
        roles = []
        for entry in self.roles:
            role: dict = {"role": entry.identity.role, "id": entry.identity.id, "address": entry.address}
            if entry.listen:
                role["listen"] = entry.listen
            for name in ("key_share", "data", "certificate", "key"):
                if getattr(entry, name) is not None:
                    role[name] = relative(getattr(entry, name))
            if entry.model:
                role["model"] = entry.model
            if entry.host:
                role["host"] = entry.host
            if entry.key_holder:
                role["key_holder"] = True
            roles.append(role)
        document["roles"] = roles
        path.write_text(tomli_w.dumps(document))  # the library escapes a path holding a backslash or a quote
