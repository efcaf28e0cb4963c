"""`--keygen distributed`: the key holders generate the threshold key among themselves (the `keygen`
protocol, docs/distributed-keygen.md), each as its own process over mutual TLS.

The launcher starts one `serve party --keygen-only` process per key holder on loopback, with a
CA and certificates made for this ceremony alone, opens the session at every holder and waits
for each one to prepare its share; only when every holder reports the same public key and digest
does it commit (docs/distributed-keygen.md, "Commit"): each holder then writes only its own
key_share_i.json, and the launcher writes public_key.json. On any failure the launcher withdraws the
ceremony at every holder, stops them and removes the share files they wrote: nothing partial stays. (Holders on one machine, started by one launcher, share its trust: separate machines, each
with its own certificate, make the separation real; see the page for what compose needs.)

Every wait is bounded and shown: the holders' start-up (STARTUP_TIMEOUT_S; a holder that exits meanwhile fails it
at once), each stage among the holders (a holder aborts when no message of the next stage came for the step
deadline, naming the holders it waits for: MPDP_KEYGEN_STEP_DEADLINE_S, 60 s by default), the whole ceremony
(CEREMONY_TIMEOUT_S). Progress lines name each step. The ceremony's directory (CA, TLS keys, holder logs) lies
beside the key files, never in a shared temporary directory, and goes on every exit path: the launcher's own,
or, after a SIGKILL of the launcher, its guard's (launcher/deployment/leftovers.py), which also removes the key
files of a ceremony that did not complete. The holders die with the launcher (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc

from launcher.common.errors import CeremonyError
from launcher.common.progress import progress
from launcher.deployment import bundles, certs
from launcher.deployment.health import is_serving
from launcher.deployment.leftovers import Guard
from mpdp.cryptocore.keys import secret_files
from mpdp.cryptocore.paillier import keyfiles
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.deployments.topology import RoleEntry, Topology
from mpdp.platform.lifetime import die_with_parent
from mpdp.proto.v1 import common_pb2, keygen_pb2, role_pb2_grpc
from mpdp.protocols.keygen import decision
from mpdp.sessions.identity import AGGREGATOR, CLIENT, CURATOR, Identity, party
from mpdp.threshold_sum import quorums
from mpdp.wire.channels import PeerChannels
from mpdp.wire.identity import Principal
from mpdp.wire.traffic import CALL_ID_METADATA_KEY, TrafficLog, new_call_id

STARTUP_TIMEOUT_S = 60.0
CEREMONY_TIMEOUT_S = 3600.0
STEP_DEADLINE_VARIABLE = "MPDP_KEYGEN_STEP_DEADLINE_S"
PROGRESS_EVERY_S = 15.0
# The client's calls to a holder that did not answer (a holder still starting its server, a TLS handshake that
# timed out under load) are retried under their call id: a holder answers a retry as the first attempt.
CALL_ATTEMPTS = 5
RETRY_PAUSE_S = 1.0
WITHDRAW_TIMEOUT_S = 5.0  # a holder that does not take the withdrawal in that time is stopped with the others


def _topology(work: Path, shares: dict[int, Path], public_path: Path) -> Topology:
    """Loopback addresses and certificates for the holders (the aggregator and curator entries only satisfy the
    topology's shape: they are never started)."""
    from launcher.deployment.children import free_ports

    identities = [party(j) for j in sorted(shares)] + [AGGREGATOR, CURATOR]
    cert_dir = work / "certs"
    certs.issue(cert_dir, [Principal.of(i) for i in identities] + [Principal.of(CLIENT)], ca_name="mpdp keygen CA")
    roles = []
    for identity, port in zip(identities, free_ports(len(identities))):
        certificate, key = certs.certificate_files(cert_dir, identity)
        share = shares[identity.id] if identity.role == "party" else None
        roles.append(RoleEntry(identity, f"127.0.0.1:{port}", key_share=share, certificate=certificate, key=key))
    client_certificate, client_key = certs.certificate_files(cert_dir, CLIENT)
    topology = Topology(public_key=public_path, roles=tuple(roles),
                        ca_certificate=cert_dir / certs.CA_FILE, client_certificate=client_certificate,
                        client_key=client_key)
    topology.dump(work / "topology.toml")
    return topology


def _spawn(work: Path, holder: int) -> int:
    """One holder's process: it dies with the launcher (SIGKILL: a stopped holder dies too)."""
    command = [sys.executable, "-m", "launcher.cli", "serve", "party", "--topology", str(work / "topology.toml"),
               "--id", str(holder), "--keygen-only"]
    log = bundles.open_private(work / f"holder-{holder}.log")
    try:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True, cwd=Path(__file__).resolve().parent.parent.parent,
                                   umask=bundles.PRIVATE_UMASK, preexec_fn=lambda: die_with_parent(signal.SIGKILL))
    finally:
        os.close(log)
    return process.pid


def _log_tail(work: Path, holder: Identity) -> str:
    text = (work / f"holder-{holder.id}.log").read_text(errors="replace") if (work / f"holder-{holder.id}.log").exists() else ""
    return "\n".join("  " + line for line in text.splitlines()[-10:]) or "  (no log)"


def _wait_serving(topology: Topology, holders: list[Identity], work: Path, pids: dict[str, int]) -> None:
    """Until every holder's health check says SERVING (the event the ceremony waits for); a holder that exits
    meanwhile fails it at once, with the end of its log."""
    from launcher.deployment.children import _running

    started = time.monotonic()
    waiting, last_report = list(holders), started
    while waiting:
        for holder in list(waiting):
            if not _running(pids[str(holder)]):
                raise CeremonyError(f"key holder {holder} exited while starting; the end of its log:\n"
                                    + _log_tail(work, holder))
            if is_serving(topology, holder, timeout=1.0):
                waiting.remove(holder)
        if not waiting:
            return
        now = time.monotonic()
        if now - started > STARTUP_TIMEOUT_S:
            raise CeremonyError(f"key holders not serving after {STARTUP_TIMEOUT_S:.0f} s: "
                                + ", ".join(map(str, waiting)))
        if now - last_report >= 5:
            progress(f"key ceremony: {len(holders) - len(waiting)}/{len(holders)} holders serving after "
                     f"{now - started:.0f} s; waiting for {', '.join(map(str, waiting))}")
            last_report = now
        time.sleep(0.2)


def _start_holders(work: Path, shares: dict[int, Path], public_path: Path, identities: list[Identity],
                   pids: dict[str, int], guard: Guard) -> Topology:
    """Every holder serving, each on a port of its own. A port chosen free can be taken by another process before
    the holder binds it (a race no probe can close): then the holders start again, once, on other ports."""
    from launcher.deployment.children import stop

    for attempt in (1, 2):
        attempt_dir = work / f"attempt-{attempt}"
        attempt_dir.mkdir(mode=0o700)
        topology = _topology(attempt_dir, shares, public_path)
        for holder in identities:
            pids[str(holder)] = _spawn(attempt_dir, holder.id)
            guard.holder_started(pids[str(holder)])
        try:
            _wait_serving(topology, identities, attempt_dir, pids)
            return topology
        except CeremonyError as error:
            if attempt == 2 or "cannot listen on" not in str(error):
                raise
            progress("key ceremony: a holder's port was taken meanwhile; starting the holders on other ports")
            stop(pids)
            pids.clear()
    raise AssertionError("unreachable")


def step_deadline() -> int:
    """Seconds a holder waits for the next stage's messages (MPDP_KEYGEN_STEP_DEADLINE_S; 0: the holders' 60 s)."""
    text = os.environ.get(STEP_DEADLINE_VARIABLE, "")
    try:
        seconds = int(text) if text else 0
    except ValueError:
        raise ValueError(f"{STEP_DEADLINE_VARIABLE}={text!r}: a whole number of seconds") from None
    if not 0 <= seconds <= 600:
        raise ValueError(f"{STEP_DEADLINE_VARIABLE}={text!r}: 1 to 600 seconds (0: the default, 60)")
    return seconds


async def _open_everywhere(topology: Topology, holders: list[Identity], session_id: str,
                           opening: keygen_pb2.KeygenOpen) -> tuple[ThresholdPublicKey, dict]:
    """The ceremony and its commit (docs/distributed-keygen.md, "Commit"): open at every holder and wait until each
    has prepared its share; commit only if all prepared the same key and digest, in a session of its own at every
    holder; if any step fails, withdraw everywhere (prepared shares dropped, written ones rolled back). Returns the
    key and figures: the candidates tried, what each holder sent (as the receiving holders recorded it), and what
    the acknowledgement stage and the commit cost."""
    own_log = TrafficLog()
    peers = PeerChannels(CLIENT, topology.addresses, own_log, topology.tls_for(CLIENT), hosts=topology.principals)
    commit_id = f"{session_id}-commit"
    committing = False
    try:
        replies = await _all_or_first_failure(peers, holders, session_id, lambda h: codec_envelope(
            session_id, h, keygen_pb2.KeygenMessage(open=opening)), "distributed key generation failed",
            "generating")
        try:
            public, digest = decision.decide([r.keygen.public_key for r in replies], len(holders))
        except ValueError as error:
            raise CeremonyError(f"distributed key generation failed: {error}") from None
        committing = True
        progress(f"key ceremony: every holder prepared the same key ({public.key_id.hex()[:16]}); committing")
        commit = keygen_pb2.KeygenMessage(commit=keygen_pb2.KeygenCommit(ceremony=session_id, digest=digest))
        started = time.perf_counter()
        await _all_or_first_failure(peers, holders, commit_id, lambda h: codec_envelope(commit_id, h, commit),
                                    "the key holders' commit failed", "committing")
        commit_seconds = time.perf_counter() - started
        traffic = {ref: await asyncio.gather(*(role_pb2_grpc.RoleStub(peers.channel(h)).GetTraffic(
            common_pb2.SessionRef(session=ref), timeout=10) for h in holders), return_exceptions=True)
            for ref in (session_id, commit_id)}
    except BaseException:
        await _withdraw(peers, holders, [session_id] + ([commit_id] if committing else []))
        raise
    finally:
        await peers.close()
    records = {ref: [record for reply in replies_ if not isinstance(reply, BaseException) for record in reply.records
                     if record.observed_by == "server"] for ref, replies_ in traffic.items()}
    sent: dict = {}
    for record in records[session_id]:
        if record.from_role == "party":
            entry = sent.setdefault(f"party/{record.from_id}", {"messages": 0, "bytes": 0})
            entry["messages"] += 1
            entry["bytes"] += record.request_bytes
    figures = {"candidates_tried": replies[0].keygen.public_key.candidates_tried, "sent_by_holder": sent,
               "acknowledgement": _acknowledgement_figures(records[session_id]),
               "commit": {"messages": len(records[commit_id]),
                          "request_bytes": sum(r.request_bytes for r in records[commit_id]),
                          "response_bytes": sum(r.response_bytes for r in records[commit_id]),
                          "seconds": round(commit_seconds, 3)}}
    return public, figures


def _acknowledgement_figures(records) -> dict:
    """The acknowledgement stage as the receiving holders recorded it: each holder's messages to another leave in
    order, so a pair's last one is the acknowledgement and the one before it the confirmation. Seconds: from the
    last confirmation to the last acknowledgement to start."""
    pairs: dict[tuple[int, int], list] = {}
    for record in records:
        if record.from_role == "party" and record.to_role == "party":
            pairs.setdefault((record.from_id, record.to_id), []).append(record)
    if not pairs or any(len(sent) < 2 for sent in pairs.values()):
        return {}
    ordered = [sorted(sent, key=lambda r: r.started_ns) for sent in pairs.values()]
    acknowledgements = [sent[-1] for sent in ordered]
    last_confirmation = max(sent[-2].started_ns for sent in ordered)
    holders = {r.from_id for r in acknowledgements}
    return {"messages": len(acknowledgements), "bytes": sum(r.request_bytes for r in acknowledgements),
            "messages_per_holder": len(acknowledgements) // len(holders),
            "seconds": round((max(r.started_ns for r in acknowledgements) - last_confirmation) / 1e9, 3)}


async def _await_result(peers: PeerChannels, holder: Identity, envelope) -> object:
    """One holder's reply, its call retried under one call id while the holder cannot be reached."""
    metadata = ((CALL_ID_METADATA_KEY, new_call_id()),)
    for attempt in range(1, CALL_ATTEMPTS + 1):
        try:
            return await role_pb2_grpc.RoleStub(peers.channel(holder)).AwaitResult(
                envelope, metadata=metadata, timeout=CEREMONY_TIMEOUT_S)
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE or attempt == CALL_ATTEMPTS:
                raise
            await asyncio.sleep(RETRY_PAUSE_S)
    raise AssertionError("unreachable")


async def _all_or_first_failure(peers: PeerChannels, holders: list[Identity], session_id: str, envelope, failed: str,
                                waiting: str = ""):
    """Every holder's reply to its envelope; the first failure (an abort, a holder gone) ends the wait for all.
    `waiting`: a progress line every PROGRESS_EVERY_S while they work."""
    tasks = [asyncio.ensure_future(_await_result(peers, h, envelope(h))) for h in holders]
    started = time.monotonic()
    pending: set = set(tasks)
    while pending:
        _, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION, timeout=PROGRESS_EVERY_S)
        if any(task.done() and not task.cancelled() and task.exception() is not None for task in tasks):
            break
        if pending and waiting:
            progress(f"key ceremony: {waiting} for {time.monotonic() - started:.0f} s; "
                     f"{len(tasks) - len(pending)}/{len(tasks)} holders done")
    for task in pending:
        task.cancel()
    failures = [f"{h}: {_reason(task.exception())}" for h, task in zip(holders, tasks)
                if task.done() and not task.cancelled() and task.exception() is not None]
    if failures or pending:
        raise CeremonyError(f"{failed}: " + "; ".join(failures)[:2000])
    return [task.result() for task in tasks]


def _reason(error) -> str:
    """A refusal's status and text, without gRPC's debug string."""
    if isinstance(error, grpc.aio.AioRpcError):
        return f"{error.code().name}: {error.details()}"
    return str(error)


async def _withdraw(peers: PeerChannels, holders: list[Identity], session_ids: list[str]) -> None:
    """The client's discard: abort the ceremony (a prepared share is dropped) and the commit (a written share is
    removed) at every holder. Best effort: a holder gone has nothing prepared in memory any more."""
    await asyncio.gather(*(role_pb2_grpc.RoleStub(peers.channel(h)).AbortSession(common_pb2.AbortRequest(
        session_id=session_id, reason="the client discards the key generation", sender=str(CLIENT),
        receiver=str(h)), timeout=WITHDRAW_TIMEOUT_S) for h in holders for session_id in session_ids),
        return_exceptions=True)


def codec_envelope(session_id: str, receiver: Identity, message: keygen_pb2.KeygenMessage):
    from launcher.common.client import to_role

    return to_role(session_id, receiver, keygen=message)


def _remove_partial(public_paths: list[Path], shares: list[Path], before: dict[Path, int]) -> None:
    """After a failure: the shares this ceremony wrote go, and with them a public key they no longer match."""
    fresh = [path for path in shares if path.exists() and before.get(path) != path.stat().st_mtime_ns]
    for path in fresh:
        path.unlink()
    if fresh:
        for path in public_paths:
            path.unlink(missing_ok=True)


def ceremony(shares: dict[int, Path], public_paths: list[Path], threshold: int, bits: int, overwrite: bool = False,
             batch: int = 0) -> dict:
    """Run the holders' ceremony: holder j's process writes shares[j], then the public key goes to every public
    path. Returns figures: seconds, the holders' CPU, candidates, traffic per holder."""
    from launcher.deployment.children import stop

    holders = len(shares)
    paths = [Path(shares[j]) for j in sorted(shares)]
    targets = paths + [Path(p) for p in public_paths]
    existing = [path for path in targets if path.is_symlink() or path.exists()]
    if existing and not overwrite:  # before any holder starts
        raise FileExistsError(f"{existing[0]} exists; refusing to overwrite key files")
    opening = keygen_pb2.KeygenOpen(bits=bits, holders=holders, threshold=threshold, batch=batch,
                                    step_deadline_seconds=step_deadline())  # a mistake fails before any work
    for path in targets:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    before = {path: path.stat().st_mtime_ns for path in paths if path.exists()}
    started = time.perf_counter()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    # Beside the key files it makes (in the run directory for `up` and `prepare`), never in a shared /tmp.
    work = Path(tempfile.mkdtemp(prefix=".keygen-", dir=os.path.commonpath([p.parent for p in targets])))
    guard = Guard(work, targets)  # before anything secret is written: it removes what a SIGKILL leaves
    pids: dict[str, int] = {}
    written = False
    try:
        progress(f"key ceremony: starting {holders} key holders")
        identities = [party(j) for j in sorted(shares)]
        topology = _start_holders(work, shares, Path(public_paths[0]), identities, pids, guard)
        progress(f"key ceremony: {holders} key holders serving; generating a {bits}-bit key among them")
        public, figures = asyncio.run(_open_everywhere(topology, identities, f"keygen-{secrets.token_hex(8)}",
                                                       opening))
        for path in paths:
            share = keyfiles.load_key_share(path)
            if share.public != public:
                raise CeremonyError(f"{path} belongs to another key")
        encoded = json.dumps(keyfiles.public_key_to_dict(public), indent=2).encode()
        for path in public_paths:
            secret_files.write_file(Path(path), encoded, mode=secret_files.PUBLIC_MODE, overwrite=overwrite)
        written = True
        progress("key ceremony: committed; every holder wrote its share, the public key is written")
    finally:
        stop(pids)
        if not written:
            _remove_partial([Path(p) for p in public_paths], paths, before)
        shutil.rmtree(work, ignore_errors=True)
        guard.close(completed=written)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime  # the holders, once reaped
    return {"seconds": round(time.perf_counter() - started, 1), "holders_cpu_s": round(cpu, 1), **figures}


def open_at_holders(topology: Topology, bits: int, public_paths: list[Path], startup_timeout: float) -> dict:
    """Compose's side of the ceremony (`mpdp open-keygen`): the holders already serve `keygen` in their own
    containers (`serve party --keygen-only --once`), each writing its own share and public key; the client opens
    the session at every one, checks that all report the same key and writes it where the other roles read it."""
    holders = [party(j) for j in topology.key_holders]
    deadline = time.monotonic() + startup_timeout
    waiting = list(holders)
    while waiting:
        waiting = [h for h in waiting if not is_serving(topology, h, timeout=2.0)]
        if waiting and time.monotonic() > deadline:
            raise RuntimeError(f"{waiting[0]} not serving after {startup_timeout:.0f} s")
        time.sleep(0.5)
    progress(f"{len(holders)} key holders serving; generating a {bits}-bit key among them")
    started = time.perf_counter()
    colluding = 1 if topology.single_operator else quorums.most_shares(topology.principal_of(h) for h in holders)
    opening = keygen_pb2.KeygenOpen(bits=bits, holders=len(holders),
                                    threshold=quorums.default_threshold(len(holders), colluding))
    public, figures = asyncio.run(_open_everywhere(topology, holders, f"keygen-{secrets.token_hex(8)}", opening))
    encoded = json.dumps(keyfiles.public_key_to_dict(public), indent=2).encode()
    for path in public_paths:
        secret_files.write_file(Path(path), encoded, mode=secret_files.PUBLIC_MODE, overwrite=True)
    return {"seconds": round(time.perf_counter() - started, 1), "key_id": public.key_id.hex()[:16], **figures}
