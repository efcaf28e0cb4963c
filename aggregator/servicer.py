"""The aggregator's gRPC servicer: runs DPPP rounds for the client, receives
votes and partial decryptions from the parties (each its own RPC)."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

import grpc

from aggregator.dppp_round import DpppRound
from cryptocore import ciphertext as ct
from cryptocore.errors import InvalidShare
from cryptocore.key_checks import check_key_id
from cryptocore.threshold import ThresholdPublicKey
from dppp.parameters import DpppParameters
from mpdp_proto.v1 import aggregator_pb2_grpc, common_pb2, dppp_pb2, party_pb2_grpc
from sessions.errors import ProtocolError, invalid
from sessions.registry import SessionRegistry
from wire import convert
from wire.channels import PeerChannels
from wire.identity import CLIENT, party, require_sender, sender_of
from wire.status import translate_errors
from wire.traffic import CALL_ID_METADATA_KEY, TrafficLog, new_call_id, traffic_reply

log = logging.getLogger(__name__)
DEFAULT_DEADLINE_S = 60.0
SEND_ATTEMPTS = 7  # retries span 3 s, longer than the channels' 2 s maximum reconnect backoff
RETRY_PAUSE_S = 0.5
MAX_DEADLINE_S = 3600.0


@dataclass
class RoundHandle:
    round: DpppRound
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def finished(self) -> bool:
        return self.round.finished

    def abort(self, reason: str) -> None:
        self.round.abort(reason)
        self.changed.set()


class AggregatorServicer(aggregator_pb2_grpc.AggregatorServicer):
    def __init__(self, public_key: ThresholdPublicKey, teachers: list[int], key_holders: list[int],
                 peers: PeerChannels, traffic: TrafficLog):
        self.public_key = public_key
        self.teachers = teachers
        self.key_holders = key_holders
        self._peers = peers
        self._traffic = traffic
        self._rounds: SessionRegistry[RoundHandle] = SessionRegistry()

    def _party(self, number: int):
        return party_pb2_grpc.PartyStub(self._peers.channel(party(number)))

    @translate_errors
    async def GetStatus(self, request, context):
        require_sender(context, CLIENT)  # open session ids are the operator's business
        return common_pb2.StatusReply(role="aggregator", id=0, open_sessions=self._rounds.open_ids(),
                                      key_id_hex=self.public_key.key_id.hex())

    @translate_errors
    async def GetTraffic(self, request, context):
        require_sender(context, CLIENT)  # the log spells out who sent what: the operator's only
        return traffic_reply(self._traffic, request.session)

    @translate_errors
    async def RunDpppRound(self, request, context):
        require_sender(context, CLIENT)
        parameters = DpppParameters.from_proto(request.parameters)
        check_key_id(self.public_key.key_id, parameters.key_id)  # cheap checks before any expensive work
        self._rounds.check_new(request.session_id)
        if parameters.teachers != len(self.teachers):
            raise invalid(f"the session declares {parameters.teachers} teachers; this topology has {len(self.teachers)}")
        features = convert.matrix_from_proto(request.features)
        if features.shape[0] != parameters.queries:
            raise invalid(f"{features.shape[0]} query rows but {parameters.queries} queries declared")
        deadline = request.deadline_seconds or DEFAULT_DEADLINE_S
        if not 0 < deadline <= MAX_DEADLINE_S:
            raise invalid(f"deadline must be in (0, {MAX_DEADLINE_S}] seconds")
        timing: dict[str, float] = {}
        started = time.perf_counter()
        await asyncio.to_thread(parameters.calibrate)
        timing["calibration"] = time.perf_counter() - started
        handle = RoundHandle(DpppRound(request.session_id, parameters, self.public_key, self.teachers, self.key_holders))
        self._rounds.create(request.session_id, handle)
        log.info("session %s opened: dppp, %d queries, %d teachers", request.session_id, parameters.queries,
                 parameters.teachers)
        try:
            result = await self._run(handle, request, deadline, timing)
        except ProtocolError as error:
            handle.abort(str(error))
            log.info("session %s aborted: %s", request.session_id, error)
            await self._notify_abort(request.session_id, str(error))
            raise
        except BaseException as error:  # cancelled by the client, or a bug: abort everywhere
            handle.abort(f"aggregator failure: {error!r}")
            log.info("session %s aborted: aggregator failure: %r", request.session_id, error)
            await self._notify_abort(request.session_id, "aggregator failure")
            raise
        log.info("session %s completed: %d contributors, %d decryptors", request.session_id,
                 len(result.contributors), len(result.decryptors))
        timing["total"] = time.perf_counter() - started
        parameters_proto = request.parameters
        return dppp_pb2.DpppRoundResult(
            session_id=request.session_id,
            queries=parameters_proto.queries,
            classes=parameters_proto.classes,
            histograms=result.histograms.ravel().tolist(),
            labels=result.labels.tolist(),
            contributors=result.contributors,
            decryptors=result.decryptors,
            rejected=[dppp_pb2.RejectedShare(holder=h, reason=r) for h, r in sorted(result.rejected.items())],
            timing=[common_pb2.StageTiming(stage=s, seconds=t) for s, t in timing.items()],
            tosses_per_teacher=parameters.calibration.tosses_per_teacher,
            total_tosses_required=parameters.calibration.total_tosses,
        )

    async def _wait(self, handle: RoundHandle, settled, deadline: float) -> None:
        loop = asyncio.get_running_loop()
        until = loop.time() + deadline
        while not settled() and not handle.finished:
            handle.changed.clear()
            remaining = until - loop.time()
            if remaining <= 0:
                return
            try:
                await asyncio.wait_for(handle.changed.wait(), remaining)
            except TimeoutError:
                return

    async def _run(self, handle: RoundHandle, request, deadline: float, timing: dict):
        rnd = handle.round
        session_id = request.session_id

        # Step 1: the public batch to every teacher.
        stage = time.perf_counter()
        queries = dppp_pb2.DpppQueries(session_id=session_id, parameters=request.parameters, features=request.features)
        await self._broadcast(handle, self.teachers, "DeliverDpppQueries", queries, deadline, rnd.mark_teacher_absent)
        # Steps 2–3: wait for the votes (or the deadline), then C = Π Enc_i.
        await self._wait(handle, lambda: rnd.all_votes_in, deadline)
        aggregate, contributors = rnd.close_collection()
        timing["collect_votes"] = time.perf_counter() - stage
        log.info("session %s step: votes collected from %s", session_id, contributors)

        # Step 4: identical C and S to every key holder.
        stage = time.perf_counter()
        decryption_request = dppp_pb2.DpppDecryptionRequest(
            session_id=session_id,
            aggregate=common_pb2.Ciphertexts(
                key_id=self.public_key.key_id,
                values=[ct.to_bytes(self.public_key.paillier, c) for c in aggregate],
            ),
            contributors=contributors,
        )
        await self._broadcast(handle, self.key_holders, "RequestDpppPartialDecryption", decryption_request, deadline,
                              rnd.mark_holder_absent)
        # Steps 5–6: verified shares from any t holders, combine, unpack, remove the noise mean.
        await self._wait(handle, lambda: rnd.decryption_settled, deadline)
        timing["partial_decryptions"] = time.perf_counter() - stage
        log.info("session %s step: partial decryptions from %s", session_id, sorted(rnd.partials))
        stage = time.perf_counter()
        result = await asyncio.to_thread(rnd.finish)
        timing["combine"] = time.perf_counter() - stage
        return result

    async def _broadcast(self, handle: RoundHandle, parties: list[int], rpc: str, request, deadline: float,
                         mark_absent) -> None:
        """Send one request to each party concurrently; a party that cannot take it is marked absent.
        A party that is not connected (yet) — restarted, its channel in reconnect backoff — is retried for a few
        seconds first, as Pathak's sends are."""

        async def send(number: int):
            metadata = ((CALL_ID_METADATA_KEY, new_call_id()),)  # one message, one call id, however many attempts
            for attempt in range(1, SEND_ATTEMPTS + 1):
                try:
                    return await getattr(self._party(number), rpc)(request, timeout=deadline, metadata=metadata)
                except grpc.aio.AioRpcError as error:
                    if error.code() != grpc.StatusCode.UNAVAILABLE or attempt == SEND_ATTEMPTS or handle.finished:
                        raise
                    await asyncio.sleep(RETRY_PAUSE_S)

        outcomes = await asyncio.gather(*(send(number) for number in parties), return_exceptions=True)
        for number, outcome in zip(parties, outcomes):
            if isinstance(outcome, BaseException):
                mark_absent(number, _describe(outcome))
                log.warning("session %s: %s to party %d failed: %s", request.session_id, rpc, number, _describe(outcome))
        handle.changed.set()

    async def _notify_abort(self, session_id: str, reason: str) -> None:
        request = common_pb2.AbortRequest(session_id=session_id, reason=reason)
        await asyncio.gather(
            *(self._party(t).AbortSession(request, timeout=5.0) for t in self.teachers), return_exceptions=True
        )

    @translate_errors
    async def SubmitDpppVotes(self, request, context):
        handle = self._rounds.get(request.session_id)
        handle.round.accept_votes(
            sender_of(context), request.teacher, request.tosses, bytes(request.votes.key_id), list(request.votes.values)
        )
        handle.changed.set()
        return common_pb2.Empty()

    @translate_errors
    async def SubmitDpppPartialDecryptions(self, request, context):
        handle = self._rounds.get(request.session_id)
        rnd = handle.round
        max_bytes = 4 * ct.ciphertext_length(self.public_key.paillier)  # z is longer than n²
        partials = [convert.partial_from_proto(request.holder, share, max_bytes) for share in request.shares]
        rnd.accept_partials(sender_of(context), request.holder, partials)
        try:
            await asyncio.to_thread(rnd.verify_partials, request.holder, partials)
        except InvalidShare as error:
            log.warning("session %s: %s", request.session_id, error)
            raise
        finally:
            handle.changed.set()
        return common_pb2.Empty()


def _describe(error: BaseException) -> str:
    if isinstance(error, grpc.aio.AioRpcError):
        return f"{error.code().name}: {error.details()}"
    return repr(error)
