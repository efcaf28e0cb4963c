"""Charlie's side of a Hamm session (hamm.md steps 1, 3 and 4), free of gRPC.

COUNTING --aggregate and every asked holder answered (or the deadline)--> DONE; any --abort--> ABORTED.
Charlie sends its public X_aux to the aggregator, receives the aggregate of the encrypted votes from the
aggregator and proven partial decryptions from the key holders, combines them into the vote counts
(which stay here), trains the global classifier and publishes only w_p = w_s + η to the client.
"""

from __future__ import annotations

import enum
import random

import numpy as np

from curator.resources import CuratorResources
from mpdp.cryptocore.errors import CryptoError
from mpdp.cryptocore.keys.key_checks import check_key_id
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.proto.v1 import hamm_pb2, threshold_sum_pb2
from mpdp.protocols.hamm.charlie import eta_source, train_and_release
from mpdp.protocols.hamm.parameters import HammParameters
from mpdp.protocols.hamm.release import Release
from mpdp.protocols.hamm.votes import counts_from_sums, feasible
from mpdp.sessions.errors import Kind, ProtocolError, aborted, clean_reason, denied, invalid, precondition
from mpdp.sessions.identity import AGGREGATOR, CLIENT, CURATOR, Identity, party
from mpdp.sessions.matrices import matrix_to_proto
from mpdp.sessions.outbound import Outbound
from mpdp.sessions.protocol import RoleProtocol
from mpdp.sessions.side import RoleSide, handles
from mpdp.sessions.stages import StageTimer
from mpdp.threshold_sum.binding import ContributionKeys, SumSlot
from mpdp.threshold_sum.combiner import SumCombiner
from mpdp.threshold_sum.context import proof_context
from mpdp.threshold_sum.decryption import check_request
from mpdp.threshold_sum.release_check import evidence_of, lie

MAX_DEADLINE_S = 3600.0


class State(enum.Enum):
    COUNTING = "counting votes"
    DONE = "done"
    ABORTED = "aborted"


class HammCuratorSide(RoleSide):
    State = State

    def __init__(self, session_id: str, parameters: HammParameters, aux_features: np.ndarray, deadline_s: float,
                 public_key: ThresholdPublicKey, parties: list[int], key_holders: list[int], source: random.Random,
                 test_mode: bool, client_signature: threshold_sum_pb2.ContributionSignature | None = None,
                 keys: ContributionKeys | None = None):
        super().__init__(session_id, State.COUNTING)
        self.identity = CURATOR
        # the client's signature on the opening, forwarded unchanged: no party answers without it (sessions.opening)
        self.client_signature = client_signature or threshold_sum_pb2.ContributionSignature()
        self.parameters = parameters
        self.aux_features = aux_features
        self.query_deadline_s = deadline_s
        # The vote collection, then the partial decryptions; with verifiable noise the reveals and flips between.
        self.deadline_seconds = (4 if parameters.verifiable_noise else 2) * deadline_s + 30
        self.public_key = public_key
        self.parties = list(parties)
        self.key_holders = list(key_holders)
        self.source = source
        self.test_mode = test_mode
        self.keys = keys
        self.layout = parameters.layout(public_key.n)
        self.combiner: SumCombiner | None = None
        self.contributors: list[int] = []
        self.counted = threshold_sum_pb2.DecryptionRequest()  # the signed votes of C, for the client's transcript
        self.rejected_votes: list[threshold_sum_pb2.RejectedShare] = []
        self.early: dict[int, threshold_sum_pb2.PartialDecryptions] = {}  # shares that overtook the aggregate
        self.unreachable: dict[int, str] = {}  # notices that overtook it
        self.released: hamm_pb2.HammResult | None = None
        self.drawn: hamm_pb2.HammTestRecord | None = None
        self.timer = StageTimer()
        self._opened = False

    @property
    def participants(self) -> list[Identity]:
        return [AGGREGATOR] + [party(h) for h in self.key_holders]

    def may_abort(self, sender: Identity) -> bool:
        return sender in (CLIENT, AGGREGATOR)  # a key holder that leaves is given up on, not the end

    @handles("open")
    def send_queries(self, sender: Identity, body) -> list[Outbound]:
        """Step 1: the public X_aux to the aggregator."""
        if sender != CLIENT:
            raise denied(f"{sender} may not open a Hamm session")
        if self._opened:
            raise precondition("the session is already open (replay)")
        self._opened = True
        queries = hamm_pb2.HammQueries(parameters=self.parameters.to_proto(),
                                       features=matrix_to_proto(self.aux_features),
                                       deadline_seconds=self.query_deadline_s, client_signature=self.client_signature)
        return [Outbound(AGGREGATOR, "queries", queries)]

    @handles("aggregate")
    def take_aggregate(self, sender: Identity, body: hamm_pb2.HammAggregate) -> list[Outbound]:
        """Step 3: what the key holders were asked to decrypt; C is computed here from the signed votes."""
        if sender != AGGREGATOR:
            raise denied(f"{sender} may not send the aggregate; the aggregator does")
        self._on_aggregate(body)
        return self.poll()

    @handles("partial_decryptions")
    def combine_partials(self, sender: Identity, body: threshold_sum_pb2.PartialDecryptions) -> list[Outbound]:
        """Step 3: a key holder's proven partial decryptions, kept until the aggregate arrives if they overtake it."""
        if sender.role != "party" or sender.id not in self.key_holders:
            raise denied(f"{sender} holds no key share")
        self._require(State.COUNTING, "partial decryptions")
        if self.combiner is None:
            if sender.id in self.early:
                raise precondition(f"key holder {sender.id} already answered (replay)")
            self.early[sender.id] = body  # verified once the aggregate is known
        else:
            self.combiner.accept(sender.id, body)
        return self.poll()

    def _on_aggregate(self, body: hamm_pb2.HammAggregate) -> None:
        self._require(State.COUNTING, "the aggregate")
        if self.combiner is not None:
            raise precondition("the aggregate arrived twice (replay)")
        p = self.parameters
        if list(body.asked) != self.key_holders:
            raise invalid("the aggregate was not sent to every key holder")
        # C from the votes the holders were sent, each signed by its sender: Charlie releases, so it counts only
        # contributors it verified itself (docs/client-checks.md); another C fails the holders' proofs.
        try:
            aggregate, self.contributors = check_request(self.public_key, body.request,
                                                         SumSlot.of("hamm", self.session_id, p), self.keys, p.parties,
                                                         p.min_contributors, self.layout.plaintexts_needed(p.values))
        except (ProtocolError, CryptoError) as error:
            self.fail(str(lie("aggregator", f"the votes it forwarded do not verify ({error})")))
        self.rejected_votes = self._blame(body.rejected_votes)
        self.counted = evidence_of(body.request, {}).request  # signatures and ciphertexts; no proofs, no partials
        self.combiner = SumCombiner(self.public_key, self.key_holders, aggregate,
                                    proof_context("hamm", self.session_id))
        self.timer.lap("collect_votes")
        early, self.early = self.early, {}
        for holder, shares in sorted(early.items()):
            try:
                self.combiner.accept(holder, shares)
            except (ProtocolError, CryptoError) as error:  # the others may still combine
                if holder not in self.combiner.rejected:
                    self.combiner.mark_absent(holder, f"malformed partial decryptions: {error}")
        for holder, reason in self.unreachable.items():  # no-op for a holder that did answer
            self.combiner.mark_absent(holder, reason)

    def _blame(self, claimed) -> list[threshold_sum_pb2.RejectedShare]:
        """Voters the aggregator names as failing: never counted, and named in the release only as its word (their
        votes do not reach Charlie, so it repeats no check). A claim that cannot be true fails the session: a
        blame where votes carry no proof, or of a voter whose signed votes were counted."""
        named = sorted(r.holder for r in claimed)
        if named and not self.parameters.proven_votes:
            self.fail(str(lie("aggregator", f"it named voters {named} as failing a vote check, and unproven votes "
                                            "have none")))
        counted = sorted(set(named) & set(self.contributors))
        if counted:
            self.fail(str(lie("aggregator", f"it named voters {counted} as failing and forwarded their votes")))
        return [threshold_sum_pb2.RejectedShare(holder=r.holder, reason=f"the aggregator's word, not repeated by "
                                                                         f"Charlie: {r.reason}") for r in claimed]

    @handles("holder_unreachable")
    def give_up_on_holder(self, sender: Identity, body: hamm_pb2.HolderUnreachable) -> list[Outbound]:
        """The aggregator could not deliver the request to a holder: stop waiting for it (an aggregator that
        lies can only do what dropping the request does: make the session fail)."""
        if sender != AGGREGATOR:
            raise denied(f"{sender} may not report key holders; the aggregator does")
        if body.holder not in self.key_holders:
            raise invalid(f"party {body.holder} holds no key share")
        self._require(State.COUNTING, "an unreachable key holder")
        reason = f"unreachable: {clean_reason(body.reason)}"
        if self.combiner is None:
            self.unreachable[body.holder] = reason
        else:
            self.combiner.mark_absent(body.holder, reason)
        return self.poll()

    def poll(self) -> list[Outbound]:
        if self.state is State.COUNTING and self.combiner is not None and self.combiner.settled:
            self._finish()
        return []

    def on_deadline(self) -> list[Outbound]:
        if self.state is State.COUNTING and self.combiner is not None:
            self._finish()  # with the holders that answered, if t did
            return []
        raise aborted(f"session timed out after {self.deadline_seconds:.0f} s")

    def on_undeliverable(self, to: Identity, kind: str, reason: str) -> list[Outbound]:
        raise aborted(self.unreachable_reason(to))

    def _finish(self) -> None:
        """Step 4: combine, check, count, train, perturb, publish w_p."""
        assert self.combiner is not None
        self.timer.lap("partial_decryptions")
        try:
            plaintexts, decryptors = self.combiner.combine()
        except ProtocolError as error:
            if error.kind is Kind.ABORTED:
                self.fail(str(error))
            raise
        p, voters = self.parameters, len(self.contributors)
        try:
            sums = self.layout.unpack(plaintexts, p.values, biased_summands=voters)
        except CryptoError as error:
            self.fail(f"the aggregate does not decrypt to valid counts: {error}")
        problem = feasible(sums, p.aux_points, p.classes, voters, p.share_range)
        if problem is not None:
            self.fail(f"{problem}: a party's votes are malformed")
        counts = counts_from_sums(sums, p.aux_points, p.classes, voters, voters * (p.share_range // 2))
        self.timer.lap("combine")
        release = Release(p, voters)
        outcome = train_and_release(p, self.aux_features, counts, voters, self.source)
        # No training time in the result: Newton's step count depends on the counts (a side channel).
        weights = outcome.released
        self.released = hamm_pb2.HammResult(
            weights=weights.ravel().tolist(), rows=1 if weights.ndim == 1 else weights.shape[0], voters=voters,
            contributors=self.contributors, decryptors=decryptors,
            rejected=[threshold_sum_pb2.RejectedShare(holder=h, reason=r) for h, r in sorted(self.combiner.rejected.items())],
            timing=self.timer.to_proto(), rejected_votes=self.rejected_votes,
            tosses_per_party=p.tosses_per_party, noise_norm_scale=release.norm_scale, votes=self.counted,
        )
        if self.test_mode:
            self.drawn = hamm_pb2.HammTestRecord(counts=counts.ravel().tolist(), eta=outcome.eta.ravel().tolist())
        self._advance(State.COUNTING, State.DONE, "releasing w_p")

    def result(self) -> tuple[str, object] | None:
        return ("result", self.released) if self.released is not None and self.state is State.DONE else None

    def test_record(self) -> tuple[str, object] | None:
        return ("test_record", self.drawn) if self.drawn is not None else None

    def _forget(self) -> None:
        if self.combiner is not None:
            self.combiner.forget()
        self.early.clear()


def protocol(own: CuratorResources) -> RoleProtocol:
    """Charlie's registry entry: the client's `open` starts a session on Charlie's auxiliary data."""

    def open_side(session_id: str, me: Identity, sender: Identity, kind: str, body) -> HammCuratorSide:
        if sender != CLIENT:
            raise denied(f"{sender} may not open a Hamm session")
        public_key, parties, aux_features = own.public_key, own.parties, own.aux()
        if public_key is None or aux_features is None:
            raise precondition("Charlie holds no threshold key or no auxiliary data for Hamm")
        parameters = HammParameters.from_proto(body.parameters)
        check_key_id(public_key.key_id, parameters.key_id)  # cheap checks before any expensive work
        if parameters.parties != len(parties):
            raise invalid(f"the session declares {parameters.parties} parties; this topology has {len(parties)}")
        if (parameters.aux_points, parameters.dimension) != aux_features.shape:
            raise invalid(f"the session declares X_aux of {parameters.aux_points}×{parameters.dimension}; Charlie "
                          f"holds {aux_features.shape[0]}×{aux_features.shape[1]}")
        if not 0 < body.deadline_seconds <= MAX_DEADLINE_S:
            raise invalid(f"deadline must be in (0, {MAX_DEADLINE_S}] seconds")
        if body.noise_seed and not own.test_mode:
            raise invalid("a noise seed is for test mode only")
        parameters.calibrate()
        parameters.layout(public_key.n)
        return HammCuratorSide(session_id, parameters, aux_features, body.deadline_seconds, public_key, parties,
                           own.key_holders, eta_source(body.noise_seed), own.test_mode,
                           client_signature=body.client_signature, keys=own.contribution_keys)

    return RoleProtocol("hamm", hamm_pb2.HammMessage, frozenset({"open"}), open_side, (HammCuratorSide,),
                        frozenset({"open", "aggregate", "partial_decryptions", "holder_unreachable"}))
