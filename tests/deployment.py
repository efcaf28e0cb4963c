"""Real multi-process deployments for integration tests (1024-bit keys, loopback ports)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from contextlib import contextmanager
from pathlib import Path

import grpc

from launcher.common import client
from launcher.deployment import processes
from launcher.protocols.dppp import client as dppp_client
from mpdp.learning import datasets
from mpdp.privacy.ledger import UNLIMITED, Budget
from mpdp.proto.v1.role_pb2_grpc import RoleStub
from mpdp.sessions.identity import CLIENT, Identity
from mpdp.wire.identity import SENDER_METADATA_KEY, Principal
from mpdp.wire.tls import target_options
from tests.waiting import PATIENCE_S

TEST_BITS = 1024
# Fitted in the party's own process (numpy): no scikit-learn child per party start, which cost about 2 CPU-s
# each. The CLI tests keep the scikit-learn models and the spawned child.
TEST_MODEL = "logistic-exact"

envelope = client.to_role  # raw envelopes, from the client or (to test refusals) any role


@contextmanager
def deployment(tmp_path: Path, parties: int, faults: dict[int, str] | None = None, dataset: str = "breast-cancer",
               parties_per_process: int = 1, budget: Budget = UNLIMITED, allow_unproven: bool = False,
               single_operator: bool = False):
    run_dir = tmp_path / f"run-{parties}"
    # foreground: the roles die with the test process, even one killed before its fixtures finish
    topology = processes.up(run_dir, parties, TEST_BITS, datasets.load(dataset), seed=7, model=TEST_MODEL,
                            test_mode=True, faults=faults, parties_per_process=parties_per_process, budget=budget,
                            allow_unproven=allow_unproven, foreground=True,
                            single_operator=single_operator)
    try:
        yield Deployment(run_dir, topology, budget, allow_unproven)
    finally:
        processes.down(run_dir)


class DeploymentPool:
    """Deployments shared by the whole test session, started on first use, keyed by (K, faults, split)."""

    def __init__(self, root: Path):
        self._root = root
        self._running: dict[tuple, Deployment] = {}

    def get(self, parties: int, faults: dict[int, str] | None = None, split: str = "even",
            allow_unproven: bool = False) -> "Deployment":
        """Shared deployments run many sessions: no budget limit (the budget tests start their own)."""
        key = (parties, tuple(sorted((faults or {}).items())), split, allow_unproven)
        if key not in self._running:
            run_dir = self._root / f"pool-{len(self._running)}"
            topology = processes.up(run_dir, parties, TEST_BITS, datasets.load("breast-cancer"), seed=7,
                                    model=TEST_MODEL, test_mode=True, faults=faults, split=split, budget=UNLIMITED,
                                    allow_unproven=allow_unproven, foreground=True)
            self._running[key] = Deployment(run_dir, topology, UNLIMITED, allow_unproven)
        return self._running[key]

    def close(self) -> None:
        for deployment in self._running.values():
            processes.down(deployment.run.path)


class Deployment:
    def __init__(self, run_dir: Path, topology, budget: Budget = UNLIMITED, allow_unproven: bool = False):
        self.run = processes.RunDirectory(run_dir)
        self.budget, self.allow_unproven = budget, allow_unproven  # the parties' policy, kept across restarts
        self.topology = topology
        self.client_data = client.load_client_data(self.run.client_data)

    def pathak_parameters(self, **overrides):
        from mpdp.protocols.pathak.parameters import PathakParameters

        options = dict(epsilon=1.0, delta=1e-5, regularization=0.01, mechanism="l2-laplace", calibration="tight",
                       parties=len(self.topology.parties), dimension=self.client_data["test_features"].shape[1],
                       deadline_seconds=60.0)
        options.update(overrides)
        return PathakParameters(**options)

    def run_pathak(self, session_id: str | None = None, **overrides) -> dict:
        from launcher.protocols.pathak.client import run_pathak_session

        return asyncio.run(run_pathak_session(self.topology, self.client_data, self.pathak_parameters(**overrides),
                                              session_id=session_id))

    def pathak_records(self, session_id: str) -> dict:
        return {entry.identity.id: self.call(entry.identity, RoleStub, "GetTestRecord",
                                             envelope(session_id, entry.identity), CLIENT).pathak.test_record
                for entry in self.topology.parties}

    def restart(self, identity: Identity) -> None:
        processes.restart(self.run.path, identity, test_mode=True, budget=self.budget,
                          allow_unproven=self.allow_unproven, foreground=True)

    def run_dppp(self, **overrides) -> dict:
        # A round ends when every teacher has voted or is unreachable; its deadline only bounds a slow machine.
        options = dict(epsilon=10.0, delta=1e-5, queries=12, deadline_s=PATIENCE_S)
        options.update(overrides)
        return asyncio.run(dppp_client.run_dppp_session(self.topology, self.client_data, **options))

    def test_records(self, session_id: str):
        return asyncio.run(dppp_client.test_records(self.topology, session_id))

    def pid(self, identity: Identity) -> int:
        return json.loads(self.run.processes.read_text())[str(identity)]

    def kill(self, identity: Identity) -> None:
        os.killpg(self.pid(identity), signal.SIGKILL)

    def call(self, identity: Identity, stub_class: type, method: str, request, as_sender: Identity | Principal | None,
             credentials: grpc.ChannelCredentials | None = None, declare: Identity | None = None):
        """One raw RPC over mutual TLS with `as_sender`'s certificate (or `credentials`; a
        sender of None presents no certificate). `declare` adds a metadata claim, which TLS ignores."""
        if credentials is None:
            if as_sender is not None:
                tls = self.topology.tls_for(as_sender)  # the operator's view holds every bundle's files
                assert tls is not None
                credentials = tls.channel_credentials()
            else:
                credentials = grpc.ssl_channel_credentials(root_certificates=self.topology.ca_certificate.read_bytes())
        metadata = [(SENDER_METADATA_KEY, str(declare))] if declare else []
        with grpc.secure_channel(self.topology.entry(identity).address, credentials,
                                 options=target_options(self.topology.principal_of(identity))) as channel:
            return getattr(stub_class(channel), method)(request, metadata=metadata, timeout=30)
