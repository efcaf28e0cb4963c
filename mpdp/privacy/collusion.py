"""Whose noise a decrypted sum can count on (spec README, threat model: an active aggregator and one malicious
principal).

A key holder decrypts a sum of at least max(2, ⌈τK⌉) signed contributions. The aggregator may choose which ones,
and the malicious principal's may be among them. A principal (one process, one certificate, one data owner) may
host c logical contributors (`mpdp up --teachers-per-party` or `--parties-per-process`); it knows all c noise
shares and can subtract them. So the noise every sum is calibrated on is that of its contributors but c:
m = max(2, ⌈τK⌉), and each share carries 1/(max(c + 1, m) − c) of the noise. c = 1 is one malicious party."""

MIN_CONTRIBUTORS = 2  # a single contribution is never decryptable, however the request is phrased
COLLUDING_CONTRIBUTORS = 1  # one malicious party hosting one contributor


def decryptable_minimum(min_contributors: int) -> int:
    """The fewest contributions a key holder decrypts a sum of."""
    return max(MIN_CONTRIBUTORS, min_contributors)


def check_colluding(min_contributors: int, colluding: int) -> None:
    """ValueError unless a decryptable sum keeps at least one share the colluding principal does not know:
    m − c ≥ 1 (always so with c = 1, since m ≥ 2)."""
    if colluding < 1:
        raise ValueError(f"the contributors one principal controls must be at least 1, not {colluding}")
    minimum = decryptable_minimum(min_contributors)
    if minimum - colluding < 1:
        raise ValueError(f"one principal controls {colluding} contributors and a decryptable sum needs only "
                         f"{minimum}: no share would be unknown to it; raise τ or host fewer contributors per "
                         "principal")


def noise_bearing(contributors: int, colluding: int = COLLUDING_CONTRIBUTORS) -> int:
    """Contributors whose noise shares neither the aggregator nor the malicious principal knows."""
    return max(1, contributors - colluding)


def calibrated_contributors(min_contributors: int, colluding: int = COLLUDING_CONTRIBUTORS) -> int:
    """The contributors each share's noise is divided among, max(c + 1, m) − c: any decryptable sum holds at
    least this many shares unknown to the coalition."""
    return max(colluding + 1, decryptable_minimum(min_contributors)) - colluding
