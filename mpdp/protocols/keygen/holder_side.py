"""A key holder's side of the `keygen` protocol: a mpdp.cryptocore.dkg Holder fed from the wire.

The client opens the session at every holder; from then on the holders talk to each other only.
Messages of the stage after the current one are kept until that stage starts (a holder that got
everything earlier may be one stage ahead, never more), so buffering is bounded by one stage.
Commit (docs/distributed-keygen.md, "Commit"): once the confirmation checked the whole key and every
holder acknowledged the same digest, the share is prepared (kept in memory, prepared.PreparedShares)
and the side is DONE, publishing the public key and digest to the client. Nothing is written here:
the client's commit, in its own session (commit_side), writes it. From then on only the client may
abort this side, which drops the prepared share: no other holder can withdraw it from one holder
and not from the others. An abort before (a DkgAborted from any check, a refused message, a
holder gone past the deadline) ends the session at every holder and prepares nothing.
"""

from __future__ import annotations

import enum

from mpdp.cryptocore.dkg.errors import DkgAborted
from mpdp.cryptocore.dkg.holder import MAX_BATCH, MAX_HOLDERS, MIN_HOLDERS, Holder
from mpdp.cryptocore.dkg.messages import BROADCAST, Message
from mpdp.cryptocore.keys.key_checks import MAX_KEY_BITS
from mpdp.proto.v1 import keygen_pb2
from mpdp.protocols.keygen import codec
from mpdp.protocols.keygen.prepared import PreparedShares
from mpdp.sessions.errors import ProtocolError, aborted, denied, invalid
from mpdp.sessions.identity import CLIENT, Identity, party
from mpdp.sessions.outbound import Outbound
from mpdp.sessions.side import RoleSide, handles
from mpdp.threshold_sum import quorums

MAX_BITS = 4096  # an 8192-bit key would take hours
DEFAULT_STEP_DEADLINE_S = 60.0  # a stage's messages come within seconds of each other, even at 2048 bits under load
MAX_STEP_DEADLINE_S = 600


class State(enum.Enum):
    OPEN = "open"
    RUNNING = "running"
    DONE = "done"
    ABORTED = "aborted"


class KeygenHolderSide(RoleSide):
    State = State
    deadline_seconds = 3600.0  # the modulus search is random: minutes at 2048 bits
    step_deadline_seconds = DEFAULT_STEP_DEADLINE_S  # a holder that stopped answering is named within it

    def __init__(self, session_id: str, me: Identity, committee: list[int], prepared: PreparedShares):
        super().__init__(session_id, State.OPEN)
        self.identity, self.committee, self.prepared = me, committee, prepared
        self.holder: Holder | None = None
        self._pending: dict[int, list[Message]] = {}
        self._seen: set[tuple[int, int, bool]] = set()  # (round, sender, broadcast)
        self._public: keygen_pb2.KeygenPublicKey | None = None

    @property
    def participants(self) -> list[Identity]:
        return [party(j) for j in self.committee if j != self.identity.id]

    def may_abort(self, sender: Identity) -> bool:
        """Once prepared, the client's decision alone: a holder's late abort would drop this share and not the
        others' (the split the commit exists to prevent)."""
        if self.state is State.DONE:
            return sender == CLIENT
        return super().may_abort(sender)

    def _forget(self) -> None:
        self.prepared.drop(self.identity, self.session_id)
        self._public = None

    @handles("open")
    def start_keygen(self, sender: Identity, body) -> list[Outbound]:
        """The client's request: this holder's first round."""
        if sender != CLIENT:
            raise denied(f"{sender} may not open a key generation")
        if body.holders != len(self.committee) or not MIN_HOLDERS <= body.holders <= MAX_HOLDERS:
            raise invalid(f"this committee has {len(self.committee)} key holders, the request says {body.holders}")
        try:  # 2t > ℓ + 1: two decrypting sets share an honest holder, even with the malicious party's share
            quorums.check(body.threshold, body.holders)
        except quorums.QuorumError as error:
            raise invalid(str(error)) from None
        if body.bits > min(MAX_BITS, MAX_KEY_BITS) or body.batch > MAX_BATCH:
            raise invalid(f"at most {MAX_BITS}-bit keys and {MAX_BATCH} candidates per attempt")
        if body.step_deadline_seconds > MAX_STEP_DEADLINE_S:
            raise invalid(f"a step deadline of at most {MAX_STEP_DEADLINE_S} s")
        try:
            holder = Holder(self.identity.id, body.holders, body.threshold, body.bits, body.batch or None)
        except ValueError as error:
            raise invalid(str(error)) from None
        self._advance(State.OPEN, State.RUNNING, "open")
        self.holder = holder
        self.step_deadline_seconds = float(body.step_deadline_seconds or DEFAULT_STEP_DEADLINE_S)
        return self._send(holder.start()) + self._advance_rounds()

    @handles("round")
    def take_round(self, sender: Identity, body) -> list[Outbound]:
        """A holder that got the client's opening first may send its first round before this holder got it:
        that round is kept (round 1 only) until the opening arrives."""
        if sender.role != "party" or sender.id not in self.committee or sender == self.identity:
            raise denied(f"{sender} is not another key holder of this committee")
        message = codec.round_from_proto(sender.id, self.identity.id, body)
        holder = self.holder
        if self.state is State.OPEN:
            if message.round != 1:
                raise invalid(f"round {message.round} before this holder was opened")
        else:
            self._require(State.RUNNING, "round")
            assert holder is not None
            if message.round not in (holder.round, holder.round + 1):
                raise invalid(f"round {message.round} while this holder is at round {holder.round}")
        key = (message.round, sender.id, message.recipient == BROADCAST)
        if key in self._seen:
            raise invalid(f"a second message of round {message.round} from {sender}")
        self._seen.add(key)
        self._pending.setdefault(message.round, []).append(message)
        return self._advance_rounds() if holder is not None else []

    def on_step_deadline(self) -> list[Outbound]:
        """Named: the holders whose message of the current stage has not come (a stopped process, a cut link)."""
        waited = f"within {self.step_deadline_seconds:.0f} s"
        if self.holder is None:
            raise aborted(f"the client's opening did not arrive {waited}")
        current = self.holder.round
        heard = {message.sender for message in self._pending.get(current, ())}
        silent = [str(party(j)) for j in self.committee if j != self.identity.id and j not in heard]
        raise aborted(f"no round-{current} message from {', '.join(silent) or 'the other holders'} "
                      f"{waited}")

    def _advance_rounds(self) -> list[Outbound]:
        """Every stage whose messages are all in, then the share once the key is confirmed."""
        holder = self.holder
        assert holder is not None
        outbound: list[Outbound] = []
        while holder.result is None and len(self._pending.get(holder.round, ())) == holder.expected_messages:
            try:
                outbound += self._send(holder.receive(self._pending.pop(holder.round)))
            except DkgAborted as error:
                self.fail(str(error))
        if holder.result is not None and self.state is State.RUNNING:
            assert holder.digest is not None
            try:
                self.prepared.put(self.identity, self.session_id, holder.result, holder.digest)
            except ProtocolError as error:
                self.fail(str(error))
            public = codec.public_key_to_proto(holder.result.public, holder.candidates_tried)
            public.digest = holder.digest
            try:
                self._advance(State.RUNNING, State.DONE, "acknowledgement")
            except ProtocolError:  # aborted meanwhile: its _forget ran before the share was put
                self.prepared.drop(self.identity, self.session_id)
                raise
            self._public = public
        return outbound

    def _send(self, messages: list[Message]) -> list[Outbound]:
        outbound = []
        for message in messages:
            proto = codec.round_to_proto(message)
            recipients = self.participants if message.recipient == BROADCAST else [party(message.recipient)]
            outbound += [Outbound(recipient, "round", proto) for recipient in recipients]
        return outbound

    def result(self):
        return ("public_key", self._public) if self._public is not None and self.state is State.DONE else None
