"""The party's gRPC servicer: translates messages, checks senders, drives sessions.

Steps 1 and 4 arrive from the aggregator and are acknowledged at once; the
work (voting, partial decryption) runs in a worker thread and its result is
sent to the aggregator as steps 2 and 5, each its own RPC.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from dataclasses import dataclass, field

import numpy as np

from cryptocore.key_checks import check_key_id
from cryptocore.threshold import KeyShare, ThresholdPublicKey
from dppp.parameters import DpppParameters
from mpdp_proto.v1 import (
    aggregator_pb2_grpc,
    common_pb2,
    dppp_pb2,
    party_pb2_grpc,
    pathak_pb2,
)
from party.dppp_session import TeacherSession
from party.pathak_session import PathakPartySession
from pathak.parameters import PathakParameters
from sessions.errors import clean_reason, denied, invalid, precondition
from sessions.registry import SessionRegistry
from wire import convert
from wire.channels import PeerChannels
from wire.identity import AGGREGATOR, CLIENT, party, require_sender, sender_of
from wire.pathak_host import PathakHost, PathakRpcs
from wire.status import translate_errors
from wire.traffic import TrafficLog, traffic_reply

log = logging.getLogger(__name__)

FAULTS = ("tamper-partial-decryption", "crash-on-decryption-request", "crash-on-pathak-masked-share")


@dataclass
class PartyConfig:
    id: int
    public_key: ThresholdPublicKey
    # Private: never in a repr or a log line.
    key_share: KeyShare | None = field(repr=False)
    model: object = field(repr=False)  # a fitted scikit-learn classifier (DPPP's teacher)
    features: np.ndarray = field(repr=False)  # the party's own data (Pathak trains on it per session)
    labels: np.ndarray = field(repr=False)
    test_mode: bool = False
    fault: str | None = None  # test mode only

    def __post_init__(self):
        if self.fault and not self.test_mode:
            raise ValueError("fault injection needs test mode")
        if self.fault and self.fault not in FAULTS:
            raise ValueError(f"unknown fault {self.fault!r}")


class PartyServicer(PathakRpcs, party_pb2_grpc.PartyServicer):
    def __init__(self, config: PartyConfig, peers: PeerChannels, traffic: TrafficLog):
        self.config = config
        self.me = party(config.id)
        self._peers = peers
        self._traffic = traffic
        self._sessions: SessionRegistry[TeacherSession] = SessionRegistry()
        self._tasks: set[asyncio.Task] = set()
        self.pathak = PathakHost(self.me, peers, self._new_pathak_session)

    def _new_pathak_session(self, session_id: str, parameters: PathakParameters) -> PathakPartySession:
        try:
            return PathakPartySession(session_id, self.config.id, parameters, self.config.features, self.config.labels,
                                      self.config.public_key.n.bit_length(), self.config.test_mode)
        except ValueError as error:  # e.g. a multi-class data set, or an inexact local minimiser
            raise invalid(str(error)) from None

    def _aggregator(self):
        return aggregator_pb2_grpc.AggregatorStub(self._peers.channel(AGGREGATOR))

    def _spawn(self, coroutine) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @translate_errors
    async def GetStatus(self, request, context):
        require_sender(context, CLIENT)  # open session ids are the operator's business
        return common_pb2.StatusReply(
            role="party", id=self.config.id, open_sessions=self._sessions.open_ids() + self.pathak.open_ids(),
            key_id_hex=self.config.public_key.key_id.hex(),
        )

    @translate_errors
    async def GetTraffic(self, request, context):
        require_sender(context, CLIENT)  # the log spells out π1 (who routed to whom): the operator's only
        return traffic_reply(self._traffic, request.session)

    @translate_errors
    async def AbortSession(self, request, context):
        """The client, or a participant of that session (DPPP: the aggregator; Pathak: the other K participants)."""
        sender = sender_of(context)
        if self.pathak.knows(request.session_id):
            self.pathak.abort_from_peer(request.session_id, sender, request.reason)
        else:
            if sender not in (AGGREGATOR, CLIENT):
                raise denied(f"{sender or 'an unidentified caller'} may not abort a DPPP session")
            self._sessions.get(request.session_id).abort(clean_reason(request.reason or f"aborted by {sender}"))
        log.info("session %s aborted by %s: %s", request.session_id, sender, clean_reason(request.reason) or "no reason")
        return common_pb2.Empty()

    @translate_errors
    async def DeliverDpppQueries(self, request, context):
        """DPPP step 1 in, step 2 out."""
        require_sender(context, AGGREGATOR)
        parameters = DpppParameters.from_proto(request.parameters)
        check_key_id(self.config.public_key.key_id, parameters.key_id)  # cheap checks before any expensive work
        self._sessions.check_new(request.session_id)
        features = convert.matrix_from_proto(request.features)
        if features.shape != (parameters.queries, self.config.features.shape[1]):
            raise invalid(f"queries are {features.shape[0]}×{features.shape[1]}; the session declares "
                          f"{parameters.queries} and the model takes {self.config.features.shape[1]} features")
        # Each party derives N_i itself (off the event loop; cached per parameter set, bounded).
        await asyncio.to_thread(parameters.calibrate)
        session = TeacherSession(request.session_id, self.config.id, parameters, features,
                                 self.config.public_key, self.config.key_share)
        self._sessions.create(request.session_id, session)
        log.info("session %s opened: dppp, %d queries", request.session_id, parameters.queries)
        self._spawn(self._vote(session))
        return common_pb2.Empty()

    async def _vote(self, session: TeacherSession) -> None:
        try:
            tosses, ciphertexts = await asyncio.to_thread(session.cast_votes, self.config.model)
            log.info("session %s step: votes cast", session.session_id)
            await self._aggregator().SubmitDpppVotes(dppp_pb2.DpppVotes(
                session_id=session.session_id, teacher=self.config.id, tosses=tosses,
                votes=common_pb2.Ciphertexts(key_id=session.public_key.key_id, values=ciphertexts),
            ))
        except Exception as error:  # the aggregator's deadline handles a missing vote
            log.warning("session %s: votes not delivered: %s", session.session_id, error)

    @translate_errors
    async def RequestDpppPartialDecryption(self, request, context):
        """DPPP step 4 in, step 5 out."""
        require_sender(context, AGGREGATOR)
        session = self._sessions.get(request.session_id)
        ciphertexts = session.begin_decryption(
            bytes(request.aggregate.key_id), list(request.aggregate.values), list(request.contributors)
        )
        if self.config.fault == "crash-on-decryption-request":
            log.warning("fault injection: party %d dies before decrypting", self.config.id)
            os.kill(os.getpid(), signal.SIGKILL)
        self._spawn(self._decrypt(session, ciphertexts))
        return common_pb2.Empty()

    async def _decrypt(self, session: TeacherSession, ciphertexts: list[int]) -> None:
        try:
            partials = await asyncio.to_thread(session.partial_decrypt, ciphertexts)
            shares = [convert.partial_to_proto(p) for p in partials]
            if self.config.fault == "tamper-partial-decryption":
                log.warning("fault injection: party %d tampers with its partial decryption", self.config.id)
                nsquare = session.public_key.paillier.nsquare
                shares[0].value = convert.int_to_bytes(partials[0].value * 2 % nsquare)
            log.info("session %s completed: %d partial decryptions sent", session.session_id, len(shares))
            await self._aggregator().SubmitDpppPartialDecryptions(dppp_pb2.DpppPartialDecryptions(
                session_id=session.session_id, holder=self.config.id, shares=shares,
            ))
        except Exception as error:
            log.warning("session %s: partial decryption not delivered: %s", session.session_id, error)

    @translate_errors
    async def GetDpppTestRecord(self, request, context):
        require_sender(context, CLIENT)
        if not self.config.test_mode:
            raise precondition("test records exist only in test mode")
        session = self._sessions.get(request.session)
        if session.test_record is None:
            raise precondition("this session has not voted")
        record = session.test_record
        return dppp_pb2.DpppTestRecord(
            session_id=request.session,
            votes=np.asarray(record.votes).ravel().tolist(),
            noise=np.asarray(record.noise).ravel().tolist(),
        )

    async def PathakStep(self, request, context):
        if self.config.fault == "crash-on-pathak-masked-share" and request.WhichOneof("body") == "masked_share":
            log.warning("fault injection: party %d dies in the middle of Pathak stage 1", self.config.id)
            os.kill(os.getpid(), signal.SIGKILL)
        return await super().PathakStep(request, context)

    @translate_errors
    async def GetPathakTestRecord(self, request, context):
        require_sender(context, CLIENT)
        if not self.config.test_mode:
            raise precondition("test records exist only in test mode")
        record = self.pathak.session(request.session).test_record
        return pathak_pb2.PathakTestRecord(session_id=request.session, model=record.model.tolist(),
                                           noise=record.noise, records=record.records)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await self._peers.close()
