"""The joint coin, commit then reveal (mpdp/vote_proofs/joint_coin.py), and the noise pool's order
(mpdp/vote_proofs/noise_pool.py): a share opens only its own commitment; the coin depends on every entry and
share; a colluder that learns the others' shares after its commitment is fixed cannot change the coin without
failing its opening; a pool position is spent once, in order."""

import pytest

from mpdp.sessions.errors import ProtocolError
from mpdp.vote_proofs import joint_coin
from mpdp.vote_proofs.assurance import Assurance
from mpdp.vote_proofs.noise_pool import NoisePool

SESSION = "s"


def _round(holders=(1, 2, 3)):
    shares = {h: joint_coin.draw_share() for h in holders}
    entries = [joint_coin.Entry(h, bytes([h]) * 32, joint_coin.commitment(SESSION, h, shares[h])) for h in holders]
    return entries, shares


def test_the_coin_depends_on_every_entry_and_share():
    entries, shares = _round()
    coin = joint_coin.coin(SESSION, entries, shares)
    assert joint_coin.coin(SESSION, list(reversed(entries)), shares) == coin
    for index, entry in enumerate(entries):
        changed = list(entries)
        changed[index] = joint_coin.Entry(entry.holder, b"\0" * 32, entry.coin_commitment)
        assert joint_coin.coin(SESSION, changed, shares) != coin
    assert joint_coin.coin("t", [joint_coin.Entry(e.holder, e.commitment_digest,
                                                  joint_coin.commitment("t", e.holder, shares[e.holder]))
                                 for e in entries], shares) != coin
    with pytest.raises(ProtocolError):
        joint_coin.coin(SESSION, [*entries, entries[0]], shares)
    with pytest.raises(ProtocolError):  # a share missing
        joint_coin.coin(SESSION, entries, {h: s for h, s in shares.items() if h != 2})


def test_the_coin_changes_with_any_one_revealed_share(monkeypatch):
    """The revealed shares are what makes the coin unknown until every entry is fixed: a coin of the entries alone
    is known to the last holder to commit, which could grind its entry for the coin it wants (and the verifiable
    noise would be its choice). With the openings set aside, changing one holder's share alone changes the coin,
    for each holder."""
    entries, shares = _round(holders=(1, 2, 3, 4))
    monkeypatch.setattr(joint_coin, "check_reveal", lambda session_id, entry, share: None)
    coin = joint_coin.coin(SESSION, entries, shares)
    coins = {coin}
    for holder in shares:
        for changed in (joint_coin.draw_share(), bytes(a ^ b for a, b in zip(shares[holder], b"\x01" + bytes(31)))):
            coins.add(joint_coin.coin(SESSION, entries, {**shares, holder: changed}))
    assert len(coins) == 1 + 2 * len(shares)


def test_a_share_opens_only_its_own_commitment():
    entries, shares = _round()
    assert all(joint_coin.opens(SESSION, e, shares[e.holder]) for e in entries)
    assert not joint_coin.opens(SESSION, entries[0], shares[2])  # another holder's share
    assert not joint_coin.opens("other", entries[0], shares[1])  # another session
    assert not joint_coin.opens(SESSION, entries[0], shares[1][:31])


def _unchecked_coin(entries, shares):
    """The coin's hash without the openings checked: what a colluder grinds on."""
    fields = [SESSION.encode()]
    for e in sorted(entries, key=lambda e: e.holder):
        fields += [e.holder.to_bytes(4, "big"), e.commitment_digest, e.coin_commitment, shares[e.holder]]
    return joint_coin._hash(joint_coin.COIN_TAG, fields)


def test_a_colluder_that_sees_the_others_shares_cannot_choose_the_coin():
    """Holder 3 colludes with the aggregator: it is shown the honest holders' shares as early as they exist (once
    every entry is fixed) and grinds a replacement share for a coin whose first byte is 0. The replacement fails
    its opening, so the coin refuses it (the aggregator aborts the round; an honest holder signs nothing). An
    aggregator that replaces an honest holder's entry instead leaves out the entry that holder kept."""
    entries, shares = _round()
    honest_coin = joint_coin.coin(SESSION, entries, shares)
    ground = next(r for r in (i.to_bytes(32, "big") for i in range(1 << 16))
                  if _unchecked_coin(entries, {**shares, 3: r})[0] == 0)
    with pytest.raises(joint_coin.RevealMismatch):
        joint_coin.coin(SESSION, entries, {**shares, 3: ground})
    replaced = [e if e.holder != 1 else joint_coin.Entry(1, e.commitment_digest, joint_coin.commitment(SESSION, 1, ground))
                for e in entries]
    assert entries[0] not in replaced
    with pytest.raises(joint_coin.RevealMismatch):  # holder 1's own share does not open the substitute
        joint_coin.coin(SESSION, replaced, shares)
    assert joint_coin.coin(SESSION, entries, shares) == honest_coin


def test_a_pool_position_is_spent_once_and_in_order():
    aggregator, teacher = NoisePool(capacity=10), NoisePool(capacity=10)
    teacher.append(0, [11, 12, 13, 14], [1, 0, 1, 1])
    aggregator.append(0, [11, 12, 13, 14])
    spent = teacher.take_next(2)
    assert spent is not None and (spent.first, spent.bits, spent.values) == (0, [1, 0], [11, 12])
    assert aggregator.take(0, 2).values == [11, 12]
    with pytest.raises(ProtocolError):  # the same positions again
        aggregator.take(0, 2)
    with pytest.raises(ProtocolError):  # beyond what the pool holds
        aggregator.take(2, 3)
    assert teacher.take_next(3) is None  # too few left: the round makes its bits inline
    with pytest.raises(ProtocolError):  # only at the end, so no gap or overlap
        aggregator.append(5, [1])
    with pytest.raises(ProtocolError):  # bounded
        aggregator.append(4, list(range(9)))
    aggregator.append(4, [15])
    assert aggregator.take(3, 2).values == [14, 15] and aggregator.available == 0 and aggregator.next == 5
    teacher.restart_at(3)  # the aggregator asks from 3: the teacher's unaccepted position 3 is void
    assert teacher.available == 1 and teacher.next == 3
    teacher.restart_at(0)  # the aggregator lost its pool: everything held is void
    assert teacher.available == 0 and teacher.next == 0


def test_the_aggregator_spends_pooled_positions_once_across_rounds(threshold_key):
    """Teacher 1's pool holds one round's bits; a round spends them; a second round naming the same positions
    excludes the teacher by name before its bits go anywhere."""
    import numpy as np

    from aggregator.dppp import DpppAggregatorSide
    from mpdp.proto.v1 import dppp_pb2
    from mpdp.protocols.dppp.parameters import DpppParameters
    from mpdp.sessions.identity import CLIENT, party
    from mpdp.sessions.matrices import matrix_to_proto
    from mpdp.vote_proofs import noise_bits, noise_pool
    from mpdp.vote_proofs import votes as vote_proofs
    from mpdp.vote_proofs.noise_pool import Pools

    public, _ = threshold_key
    queries, classes = 2, 2
    parameters = DpppParameters.with_minimal_noise(10.0, 1e-5, queries, classes, 3, 2 / 3, True, public.key_id,
                                                   assurance=Assurance.VERIFIABLE_NOISE)
    count = parameters.values * parameters.share_range
    pools = Pools()
    _, values = noise_bits.commit(public, np.ones(count, dtype=int), noise_pool.context(public.key_id, 1, 0))
    pools.of(1).append(0, values)
    layout = parameters.layout(public.n)

    def round_(session: str) -> DpppAggregatorSide:
        side = DpppAggregatorSide(session, parameters, matrix_to_proto(np.zeros((queries, 3))), 60.0, public,
                                  [1, 2, 3], [1, 2, 3], pools=pools)
        side.receive(CLIENT, "open", None)
        proven = vote_proofs.cast(public, layout, np.eye(classes, dtype=int)[[0, 1]],
                                  vote_proofs.context("dppp", session, 1))
        side.receive(party(1), "votes", dppp_pb2.DpppVotes(tosses=parameters.share_range, proven=proven, pooled=True,
                                                           pool_first=0, coin_commitment=b"c" * 32))
        return side

    first = round_("first")
    assert 1 in first.committed and first.rejected_votes == {} and pools.of(1).available == 0
    second = round_("second")
    assert 1 not in second.committed and "spent" in second.rejected_votes[1]


def test_an_honest_teacher_refuses_a_coin_whose_shares_the_aggregator_replaced(threshold_key):
    """The teacher's side as it runs: it reveals only once it holds every entry, refuses entries that leave out its
    own commitment as sent, and signs nothing when a share does not open the entry it kept; given the true shares
    it signs."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    from mpdp.protocols.dppp.parameters import DpppParameters
    from mpdp.sessions.identity import AGGREGATOR
    from party.dppp import DpppTeacherSide
    from party.resources import PartyResources
    from party.voter import State

    public, shares_of_key = threshold_key
    queries, classes = 2, 2
    parameters = DpppParameters.with_minimal_noise(10.0, 1e-5, queries, classes, 3, 2 / 3, True, public.key_id,
                                                   assurance=Assurance.VERIFIABLE_NOISE)
    features = np.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.2], [0.1, 0.9]])
    model = LogisticRegression().fit(features, [0, 1, 1, 0])
    own = PartyResources(1, public, shares_of_key[0], model, features, np.array([0, 1, 1, 0]))
    side = DpppTeacherSide("s", own, parameters, features[:queries], 60.0)
    side.cast_votes()
    mine = side.commitments.entry("s", 1)
    others, others_shares = [], {}
    for holder in (2, 3):
        others_shares[holder] = joint_coin.draw_share()
        others.append(joint_coin.Entry(holder, bytes([holder]) * 32, joint_coin.commitment("s", holder, others_shares[holder])))
    altered = joint_coin.Entry(1, mine.commitment_digest, joint_coin.commitment("s", 1, b"x" * 32))
    with pytest.raises(ProtocolError):  # its own entry replaced
        side.receive(AGGREGATOR, "coin", joint_coin.entries_to_proto([altered, *others]))
    (reveal,) = side.receive(AGGREGATOR, "coin", joint_coin.entries_to_proto([mine, *others]))
    shares = {1: bytes(reveal.body.share), **others_shares}
    replaced = {**shares, 2: joint_coin.draw_share()}  # chosen by the aggregator after seeing teacher 1's share
    with pytest.raises(ProtocolError):
        side.receive(AGGREGATOR, "shares", joint_coin.shares_to_proto(replaced))
    assert side.state is State.REVEALED  # nothing signed
    (flipped,) = side.receive(AGGREGATOR, "shares", joint_coin.shares_to_proto(shares))
    assert flipped.kind == "flipped" and side.state is State.VOTED


def test_the_aggregator_keeps_a_reveal_only_from_a_committed_holder_once_and_only_if_it_opens():
    share, other = joint_coin.draw_share(), joint_coin.draw_share()
    entries = {1: joint_coin.Entry(1, b"d" * 32, joint_coin.commitment("s", 1, share))}
    revealed: dict[int, bytes] = {}
    with pytest.raises(ProtocolError, match="committed to no coin share"):
        joint_coin.take_reveal("s", entries, revealed, 2, share)
    assert joint_coin.take_reveal("s", entries, revealed, 1, other) is False and revealed == {}
    assert joint_coin.take_reveal("other-session", entries, revealed, 1, share) is False and revealed == {}
    assert joint_coin.take_reveal("s", entries, revealed, 1, share) is True and revealed == {1: share}
    with pytest.raises(ProtocolError, match="replay"):
        joint_coin.take_reveal("s", entries, revealed, 1, share)
    assert revealed == {1: share}


def test_the_aggregator_admits_a_voters_commitments_once_and_only_from_a_voter_of_the_session():
    """The guards DPPP's and Hamm's aggregators share: each refusal names its reason and nothing is kept."""
    from mpdp.sessions.errors import Kind

    voters, excluded, committed = [1, 2, 3], {2: "vote proof failed"}, {3}
    joint_coin.admit_commitment(1, voters, excluded, committed, 0, b"c" * 32)
    cases = [((4, 0, b"c" * 32), Kind.PERMISSION_DENIED, "does not contribute"),
             ((2, 0, b"c" * 32), Kind.FAILED_PRECONDITION, "was excluded: vote proof failed"),
             ((3, 0, b"c" * 32), Kind.FAILED_PRECONDITION, "already committed"),
             ((1, 1, b"c" * 32), Kind.INVALID_ARGUMENT, "no noise ciphertexts"),
             ((1, 0, b"c" * 31), Kind.INVALID_ARGUMENT, "32-byte coin commitment")]
    for (voter, noise, coin_commitment), kind, reason in cases:
        with pytest.raises(ProtocolError, match=reason) as raised:
            joint_coin.admit_commitment(voter, voters, excluded, committed, noise, coin_commitment)
        assert raised.value.kind is kind
    assert excluded == {2: "vote proof failed"} and committed == {3}
