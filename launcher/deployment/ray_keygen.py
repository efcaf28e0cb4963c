"""The key ceremony of `mpdp up --ray` among the holder actors: each share is written on its holder's node only.

The launcher's own ceremony (launcher/deployment/distributed_keygen.py) starts the holders on its machine, so every
share is written there before the bundles are handed out. Here, each key holder j is a `serve party --keygen-only`
process started by the actor that will host party j, on a port of that actor's node, writing its share into the
actor's private directory; the launcher is the ceremony's client only: it opens the ceremony at every holder, checks
that all prepared the same key, commits, and receives the public key and the verification keys (the key's public
part). No share crosses Ray or reaches the launcher's process or host.

What the launcher still makes, as for every bundle: the ceremony's CA and each holder's TLS certificate and key (in a
directory of its run directory, removed when the ceremony ends); the certificates of one ceremony serve no other.

Layout in an actor's private directory D (0700, files 0600): the ceremony's files in D/keygen/ (its topology, CA
certificate, the actor's holders' TLS files and logs), where holder j writes key_share_j.json; once every holder's
share is checked against the public key, the actor moves each share to D/key_share_j.json, where its bundle's
topology names it, and removes D/keygen/. A failed ceremony removes D/keygen/ and every share in it.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from launcher.common.errors import CeremonyError
from launcher.common.progress import progress
from launcher.deployment import bundles, certs
from launcher.deployment.health import is_serving
from mpdp.cryptocore.keys import secret_files
from mpdp.cryptocore.paillier import keyfiles
from mpdp.deployments.topology import RoleEntry, Topology
from mpdp.platform.lifetime import die_with_parent
from mpdp.proto.v1 import keygen_pb2
from mpdp.sessions.identity import AGGREGATOR, CLIENT, CURATOR, Identity, party
from mpdp.wire.identity import Principal

CEREMONY_DIR = "keygen"  # in an actor's private directory
CEREMONY_PREFIX = ".keygen-ray-"  # the launcher's directory of the ceremony's TLS files, in its run directory
TOPOLOGY = "topology.toml"
STOP_GRACE_S = 10.0


# --- the actor's side (called by launcher.deployment.ray_hosts.RoleHostActor on the holder's node) ---

class HolderProcesses:
    """The `serve party --keygen-only` processes of one actor's key holders, in its private directory."""

    def __init__(self, directory: Path, code_root: Path):
        self.directory = directory
        self.code_root = code_root
        self.processes: dict[int, subprocess.Popen] = {}

    @property
    def ceremony(self) -> Path:
        return self.directory / CEREMONY_DIR

    def start(self, files: dict[str, bytes], numbers: list[int]) -> dict[int, int]:
        """Write the ceremony's files for this actor's holders and start one holder process per number."""
        if self.processes:
            raise RuntimeError("the key holders already started")
        with bundles.private_umask():
            bundles.private_directory(self.ceremony)
            for name, content in files.items():
                if "/" in name or name in ("", ".", ".."):
                    raise ValueError(f"ceremony file {name!r} leaves the ceremony's directory")
                fd = bundles.open_private(self.ceremony / name, append=False)
                with os.fdopen(fd, "wb") as out:
                    out.write(content)
            for number in numbers:
                log = bundles.open_private(self.ceremony / f"holder-{number}.log")
                command = [sys.executable, "-m", "launcher.cli", "serve", "party", "--topology",
                           str(self.ceremony / TOPOLOGY), "--id", str(number), "--keygen-only"]
                try:
                    self.processes[number] = subprocess.Popen(
                        command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.code_root,
                        umask=bundles.PRIVATE_UMASK, preexec_fn=lambda: die_with_parent(signal.SIGKILL))
                finally:
                    os.close(log)
        return {number: process.pid for number, process in self.processes.items()}

    def exited(self) -> dict[int, str]:
        """Holders whose process ended, with the end of its log (a holder that cannot start fails the wait)."""
        ended = {}
        for number, process in self.processes.items():
            if process.poll() is not None:
                path = self.ceremony / f"holder-{number}.log"
                text = path.read_text(errors="replace").splitlines()[-10:] if path.exists() else []
                ended[number] = "\n".join("  " + line for line in text) or "  (no log)"
        return ended

    def finish(self, public_key: bytes) -> list[str]:
        """After the commit: each share checked against the key every holder agreed on, then moved where the
        bundle's topology names it; the ceremony's files go. Returns the shares' file names (no content)."""
        public = keyfiles.public_key_from_dict(json.loads(public_key))
        self.stop()
        try:
            moved = []
            for number in sorted(self.processes):
                name = keyfiles.share_file_name(number)
                share = keyfiles.load_key_share(self.ceremony / name)
                if share.public != public or share.index != number:
                    raise CeremonyError(f"party/{number}'s share belongs to another key")
                del share
                os.replace(self.ceremony / name, self.directory / name)  # one file system: a rename, not a copy
                moved.append(name)
            return moved
        finally:
            self.remove()

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.terminate()
        deadline = time.monotonic() + STOP_GRACE_S
        for process in self.processes.values():
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def remove(self) -> None:
        """The ceremony's directory, with any share a failed ceremony left in it."""
        shutil.rmtree(self.ceremony, ignore_errors=True)


# --- the launcher's side ---

def ceremony_topology(work: Path, addresses: dict[int, str]) -> Topology:
    """The ceremony's topology as the client sees it: holder j at the address its actor reserved, with its own
    certificate (each holder a principal of its own, as in the launcher's ceremony), its share written beside the
    topology. The aggregator and curator entries only satisfy the topology's shape: no one serves them here."""
    from launcher.deployment.children import free_ports

    identities = [party(j) for j in sorted(addresses)] + [AGGREGATOR, CURATOR]
    unused = dict(zip((AGGREGATOR, CURATOR), (f"127.0.0.1:{port}" for port in free_ports(2))))
    certs.issue(work, [Principal.of(i) for i in identities] + [Principal.of(CLIENT)], ca_name="mpdp keygen CA")
    roles = []
    for identity in identities:
        certificate, key = certs.certificate_files(work, identity)
        if identity.role == "party":
            roles.append(RoleEntry(identity, addresses[identity.id], certificate=certificate, key=key,
                                   key_share=work / keyfiles.share_file_name(identity.id)))
        else:
            roles.append(RoleEntry(identity, unused[identity], certificate=certificate, key=key))
    client_certificate, client_key = certs.certificate_files(work, CLIENT)
    return Topology(public_key=work / keyfiles.PUBLIC_KEY_FILE, roles=tuple(roles),
                    ca_certificate=work / certs.CA_FILE, client_certificate=client_certificate, client_key=client_key)


def holder_files(topology: Topology, work: Path, numbers: list[int]) -> dict[str, bytes]:
    """What one actor receives for its holders `numbers`: the topology naming every holder's address but only its
    own holders' files, the CA certificate, and its own holders' certificates and keys. No share: none exists."""
    own = set(numbers)

    def entry(e: RoleEntry) -> RoleEntry:
        if e.identity.role == "party" and e.identity.id in own:
            return e
        return RoleEntry(e.identity, e.address, key_holder=e.identity.role == "party")

    view = Topology(public_key=topology.public_key, roles=tuple(entry(e) for e in topology.roles),
                    ca_certificate=topology.ca_certificate)
    path = work / f"topology-{'-'.join(map(str, numbers))}.toml"
    view.dump(path)
    files = {TOPOLOGY: path.read_bytes(), certs.CA_FILE: (work / certs.CA_FILE).read_bytes()}
    path.unlink()
    for number in numbers:
        for file in certs.certificate_files(work, party(number)):
            files[file.name] = file.read_bytes()
    return files


def _wait_serving(topology: Topology, holders: list[Identity], exited, timeout: float) -> None:
    """Until every holder's health check says SERVING; a holder process that ended fails the wait at once."""
    started = time.monotonic()
    waiting = list(holders)
    while waiting:
        ended = exited()
        if ended:
            number, tail = next(iter(sorted(ended.items())))
            raise CeremonyError(f"key holder party/{number} exited while starting; the end of its log:\n{tail}")
        waiting = [h for h in waiting if not is_serving(topology, h, timeout=1.0)]
        if waiting and time.monotonic() - started > timeout:
            raise CeremonyError(f"key holders not serving after {timeout:.0f} s: " + ", ".join(map(str, waiting)))
        if waiting:
            time.sleep(0.3)


def run(ray, actors: dict[Principal, Any], holders: dict[int, Principal], public_bundles: list[Path],
        run_dir: Path, bits: int, threshold: int, timeout: float) -> dict:
    """The ceremony among the holder actors; the public key into every bundle of the launcher's run directory (the
    actors receive it with their bundles). Returns figures: seconds, candidates, traffic per holder, key id."""
    from launcher.deployment import distributed_keygen

    numbers = sorted(holders)
    by_actor: dict[Principal, list[int]] = {}
    for number in numbers:
        by_actor.setdefault(holders[number], []).append(number)
    opening = keygen_pb2.KeygenOpen(bits=bits, holders=len(numbers), threshold=threshold,
                                    step_deadline_seconds=distributed_keygen.step_deadline())
    started = time.perf_counter()
    reserved: dict[int, str] = {}
    for principal, addresses in zip(by_actor, ray.get([actors[p].reserve_holders.remote(n)
                                                       for p, n in by_actor.items()], timeout=timeout)):
        reserved.update({int(number): address for number, address in addresses.items()})
    # The ceremony's TLS identities, made here as every bundle's are, and gone with this directory.
    work = Path(tempfile.mkdtemp(prefix=CEREMONY_PREFIX, dir=run_dir))
    involved = list(by_actor)
    completed = False
    try:
        topology = ceremony_topology(work, reserved)
        progress(f"key ceremony: starting {len(numbers)} key holders in {len(by_actor)} Ray actors")
        ray.get([actors[p].start_holders.remote(holder_files(topology, work, n), n) for p, n in by_actor.items()],
                timeout=timeout)
        identities = [party(j) for j in numbers]

        def exited() -> dict[int, str]:
            ended: dict[int, str] = {}
            for answer in ray.get([actors[p].holders_exited.remote() for p in involved], timeout=timeout):
                ended.update({int(k): v for k, v in answer.items()})
            return ended

        _wait_serving(topology, identities, exited, timeout)
        progress(f"key ceremony: {len(numbers)} key holders serving; generating a {bits}-bit key among them")
        public, figures = asyncio.run(distributed_keygen._open_everywhere(
            topology, identities, f"keygen-{secrets.token_hex(8)}", opening))
        encoded = json.dumps(keyfiles.public_key_to_dict(public), indent=2).encode()
        moved = ray.get([actors[p].finish_holders.remote(encoded) for p in involved], timeout=timeout)
        if sorted(name for names in moved for name in names) != sorted(keyfiles.share_file_name(j) for j in numbers):
            raise CeremonyError(f"the holders' shares after the commit: {moved}")
        with bundles.private_umask():
            for directory in public_bundles:
                secret_files.write_file(Path(directory) / keyfiles.PUBLIC_KEY_FILE, encoded, overwrite=True)
        completed = True
        progress(f"key ceremony: committed; each holder's share is in its actor's directory, the key "
                 f"{public.key_id.hex()[:16]} in every bundle")
    finally:
        if not completed:
            for principal in involved:
                try:
                    ray.get(actors[principal].abort_holders.remote(), timeout=30)
                except Exception:  # noqa: BLE001 — an actor gone took its directory's processes with it
                    pass
        shutil.rmtree(work, ignore_errors=True)
    return {"seconds": round(time.perf_counter() - started, 1), "key_id": public.key_id.hex()[:16], **figures}
