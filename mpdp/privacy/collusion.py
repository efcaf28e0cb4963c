"""Whose noise a decrypted sum can count on (spec README, threat model: an active aggregator and one malicious party).

A key holder decrypts a sum of at least max(2, ⌈τK⌉) signed contributions. The aggregator may choose which ones,
and the malicious party may be among them; that party knows its own noise share and can subtract it. So the noise
every sum is calibrated on is that of its contributors but one."""

MIN_CONTRIBUTORS = 2  # a single contribution is never decryptable, however the request is phrased
COLLUDING_CONTRIBUTORS = 1  # the one malicious party the threat model allows


def decryptable_minimum(min_contributors: int) -> int:
    """The fewest contributions a key holder decrypts a sum of."""
    return max(MIN_CONTRIBUTORS, min_contributors)


def noise_bearing(contributors: int) -> int:
    """Contributors whose noise shares neither the aggregator nor the malicious party knows."""
    return max(1, contributors - COLLUDING_CONTRIBUTORS)


def calibrated_contributors(min_contributors: int) -> int:
    """The contributors each share's noise is divided among: any decryptable sum holds at least this many
    shares unknown to the coalition."""
    return noise_bearing(decryptable_minimum(min_contributors))
