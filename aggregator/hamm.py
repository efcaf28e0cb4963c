"""The aggregator's side of a Hamm session (hamm.md steps 1–3), free of gRPC.

COLLECTING --all votes in, or the deadline--> HANDED_ON --the deadline again--> DONE; any --abort--> ABORTED.
With verifiable noise (aggregator/ballots.py, shared with DPPP): COLLECTING --all commitments in, or the deadline-->
REVEALING --every committed party's coin share in--> FLIPPING --every signed flipped contribution in, or the
deadline--> HANDED_ON; a committed party that reveals no share, or one that does not open its commitment, aborts
the session.
While HANDED_ON it tells Charlie about a key holder the request could not reach. It forwards Charlie's public
X_aux to every party, sums the encrypted votes (a threshold sum), and hands the identical aggregate to
every key holder and to Charlie. The key holders answer Charlie, not the aggregator, so the aggregator
never holds more than ciphertexts: the counts go to Charlie and to no one else.
"""

from __future__ import annotations

import enum

from aggregator.ballots import BallotCollectorSide
from mpdp.cryptocore.keys.key_checks import check_key_id
from mpdp.cryptocore.paillier.threshold import ThresholdPublicKey
from mpdp.proto.v1 import hamm_pb2, threshold_sum_pb2
from mpdp.protocols.hamm.parameters import HammParameters
from mpdp.sessions.errors import Kind, ProtocolError, denied, invalid, precondition
from mpdp.sessions.identity import CLIENT, CURATOR, Identity, party
from mpdp.sessions.matrices import matrix_from_proto
from mpdp.sessions.outbound import Outbound
from mpdp.sessions.protocol import RoleProtocol
from mpdp.sessions.side import handles
from mpdp.threshold_sum.binding import ContributionKeys, SumSlot
from mpdp.threshold_sum.collector import SumCollector
from mpdp.vote_proofs import well_formed

MAX_DEADLINE_S = 3600.0


class State(enum.Enum):
    COLLECTING = "collecting votes"
    REVEALING = "collecting coin shares"
    FLIPPING = "flipping noise bits"
    HANDED_ON = "aggregate handed on"
    DONE = "done"
    ABORTED = "aborted"


class HammAggregatorSide(BallotCollectorSide):
    """The shared ballot and verifiable-noise phases (aggregator/ballots.py) with Hamm's own: Charlie's X_aux
    forwarded, and the aggregate handed to the key holders and Charlie."""

    State = State
    protocol = "hamm"
    title = "Hamm"

    def __init__(self, session_id: str, parameters: HammParameters, queries: hamm_pb2.HammQueries,
                 public_key: ThresholdPublicKey, voters: list[int], key_holders: list[int],
                 keys: ContributionKeys | None = None):
        collector = SumCollector(public_key, voters, parameters.layout(public_key.n).plaintexts_needed(parameters.values),
                                 parameters.min_contributors, SumSlot.of("hamm", session_id, parameters), keys)
        super().__init__(session_id, State.COLLECTING, parameters, public_key, voters, collector,
                         queries.deadline_seconds)
        self.queries = queries
        self.key_holders = list(key_holders)
        self._forwarded = False

    @property
    def ballot_shape(self) -> tuple[int, int]:
        return self.parameters.aux_points, self.parameters.vote_width

    @property
    def min_contributors(self) -> int:
        return self.parameters.min_contributors

    @property
    def participants(self) -> list[Identity]:
        return [CURATOR] + [party(number) for number in sorted(set(self.voters) | set(self.key_holders))]

    def may_abort(self, sender: Identity) -> bool:
        return sender in (CURATOR, CLIENT)  # a party that leaves is a dropout, not the end of the session

    @handles("queries")
    def forward_queries(self, sender: Identity, body) -> list[Outbound]:
        """Step 1: Charlie's X_aux to every party."""
        if sender != CURATOR:
            raise denied(f"{sender} may not send X_aux; Charlie does")
        if self._forwarded:
            raise precondition("X_aux was already forwarded (replay)")
        self._forwarded = True
        return [Outbound(party(number), "queries", self.queries) for number in self.voters]

    def on_deadline(self) -> list[Outbound]:
        if self.state is State.HANDED_ON:  # every delivery has been tried by now
            self._advance(State.HANDED_ON, State.DONE, "finishing")
            return []
        return super().on_deadline()

    def on_undeliverable(self, to: Identity, kind: str, reason: str) -> list[Outbound]:
        if kind == "aggregate":  # Charlie is gone: no one could combine
            self.abort(self.unreachable_reason(to))
        if kind == "decryption_request" and self.state is State.HANDED_ON:
            # Charlie would otherwise wait for this holder until its deadline.
            notice = hamm_pb2.HolderUnreachable(holder=to.id, reason=reason[:200])
            return [Outbound(CURATOR, "holder_unreachable", notice)]
        return super().on_undeliverable(to, kind, reason)

    def _close_collection(self) -> list[Outbound]:
        """Step 3: the signed votes of S to every key holder and to Charlie; each computes C = Π_{i∈S} Enc_i."""
        try:
            request: threshold_sum_pb2.DecryptionRequest = self.collector.close()
        except ProtocolError as error:
            if error.kind is Kind.ABORTED:
                self.abort(str(error))
            raise
        self._with_coin(request)
        self._advance(self.state, State.HANDED_ON, "handing the aggregate on")
        self.collector.forget()
        aggregate = hamm_pb2.HammAggregate(request=request, asked=self.key_holders, rejected_votes=[
            threshold_sum_pb2.RejectedShare(holder=v, reason=r) for v, r in sorted(self.rejected_votes.items())])
        return ([Outbound(party(h), "decryption_request", request) for h in self.key_holders]
                + [Outbound(CURATOR, "aggregate", aggregate)])


def protocol(public_key: ThresholdPublicKey, voters: list[int], key_holders: list[int],
             keys: ContributionKeys | None = None) -> RoleProtocol:
    """The aggregator's registry entry: Charlie's `queries` (step 1) opens a session."""

    def open_side(session_id: str, me: Identity, sender: Identity, kind: str, body) -> HammAggregatorSide:
        if sender != CURATOR:
            raise denied(f"{sender} may not open a Hamm session at the aggregator; Charlie does")
        parameters = HammParameters.from_proto(body.parameters)
        check_key_id(public_key.key_id, parameters.key_id)  # cheap checks before any expensive work
        if parameters.parties != len(voters):
            raise invalid(f"the session declares {parameters.parties} parties; this topology has {len(voters)}")
        features = matrix_from_proto(body.features)
        if features.shape != (parameters.aux_points, parameters.dimension):
            raise invalid(f"X_aux is {features.shape[0]}×{features.shape[1]}; the session declares "
                          f"{parameters.aux_points}×{parameters.dimension}")
        if not 0 < body.deadline_seconds <= MAX_DEADLINE_S:
            raise invalid(f"deadline must be in (0, {MAX_DEADLINE_S}] seconds")
        parameters.calibrate()
        parameters.check_verifiable_size()
        if parameters.proven_votes:  # before any work: the holders' request must fit one message
            well_formed.check_size(public_key, parameters.parties, parameters.aux_points, parameters.vote_width,
                                   parameters.values * parameters.share_range if parameters.verifiable_noise else 0,
                                   parameters.holders_check_bits)
        return HammAggregatorSide(session_id, parameters, body, public_key, voters, key_holders, keys)

    return RoleProtocol("hamm", hamm_pb2.HammMessage, frozenset({"queries"}), open_side, (HammAggregatorSide,),
                        frozenset({"queries", "votes", "reveal", "flipped"}))
