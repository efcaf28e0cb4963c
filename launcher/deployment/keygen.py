"""`mpdp keygen` / `prepare`: the trusted-dealer threshold key ceremony (crypto.md).

The dealer's secrets (p, q, φ(n), d and the sharing polynomial's coefficients) exist only inside
`mpdp.cryptocore.paillier.threshold.deal`'s frame and are dropped there; what leaves it is the public key and one share per
holder, and each share is written only into its holder's bundle and then dropped too. Python cannot overwrite
an int in place: dropping every reference is what it can do, after which the memory is freed and reused.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Sequence
from pathlib import Path

from launcher.deployment import bundles
from mpdp.cryptocore.keys import secret_files
from mpdp.cryptocore.paillier import keyfiles
from mpdp.cryptocore.paillier.threshold import generate_threshold_key
from mpdp.threshold_sum import quorums
from mpdp.threshold_sum.quorums import default_threshold

MAX_COMMITTEE = 16


def committee_size(parties: int) -> int:
    """All parties up to 16 hold key shares, else a committee of 16 (parties 1..16)."""
    return min(parties, MAX_COMMITTEE)


METHODS = ("dealer", "distributed")
DKG_MIN_HOLDERS = 3  # BGW needs an honest majority of at least two (mpdp.cryptocore.dkg.holder.MIN_HOLDERS)


def default_method(parties: int, one_process_decrypts: bool = False) -> str:
    """`up`, `prepare` and `compose` without --keygen: the holders' own ceremony whenever it can run (3 or more
    key holders; 2048 bits among 5 takes about a minute of CPU, docs/performance-dkg.md), the dealer for 2, and
    the dealer where one process on the launcher's own machine would hold a decrypting quorum of the shares
    anyway (`quorum_in_one_host`)."""
    if committee_size(parties) < DKG_MIN_HOLDERS or one_process_decrypts:
        return "dealer"
    return "distributed"


def quorum_in_one_host(holder_hosts: Sequence[Hashable]) -> bool:
    """Whether one process would hold at least t of the shares (t the default threshold of a single operator's
    simulation, c = 1: processes.check_quorum_hosts). Only `--single-operator` lays parties out so. That process
    then decrypts alone whoever made the key, so the holders' ceremony protects nothing against its operator,
    who also runs the launcher that would deal it: a dealer loses nothing there and saves the ceremony's minutes
    (4 365 candidate pairs on average among 16 holders at 2048 bits, docs/performance-dkg.md)."""
    return quorums.most_shares(holder_hosts) >= default_threshold(len(holder_hosts), 1)
# `prepare` only: bundles without a key; the key holders' own containers generate it (compose, distributed)
DEFERRED = "deferred"


def check_threshold(threshold: int, holders: int, colluding: int = 1) -> None:
    """2t > ℓ + c, before any key exists (mpdp.threshold_sum.quorums): any two decrypting sets of holders share an
    honest one, who decrypts once per slot, whatever the c shares of one principal do."""
    quorums.check(threshold, holders, colluding)


def ceremony(parties: int, directory: Path, bits: int, threshold: int | None = None,
             overwrite: bool = False, method: str = "dealer") -> tuple[list[Path], int, int]:
    """Every share in one 0700 directory: the dealer's output of `mpdp keygen`, handed out one file per holder
    (`method` "distributed": the holders' own ceremony writes them). Each party gets its own certificate, so the
    most shares one principal holds is the malicious party's one (c = 1)."""
    holders = committee_size(parties)
    threshold = threshold or default_threshold(holders)
    check_threshold(threshold, holders)
    if method == "distributed":
        return distributed(holders, threshold, directory, bits, overwrite)
    keyfiles.check_writable(directory, holders, overwrite)  # before the expensive key generation
    bundles.private_directory(Path(directory))
    public, shares = generate_threshold_key(bits, threshold, holders)
    paths = keyfiles.write_key_files(directory, public, shares, overwrite=overwrite)
    shares.clear()
    return paths, threshold, holders


def _encode(data: dict) -> bytes:
    return json.dumps(data, indent=2).encode()


def deal_into_bundles(parties: int, bits: int, holder_bundles: dict[int, Path], public_bundles: list[Path],
                      threshold: int | None = None, overwrite: bool = False, method: str = "dealer",
                      colluding: int = 1) -> tuple[int, int]:
    """The public key into every bundle, share j only into holder j's; returns (t, holders). `colluding`: the
    most shares one principal's bundles hold."""
    holders = committee_size(parties)
    threshold = threshold or default_threshold(holders, colluding)
    check_threshold(threshold, holders, colluding)
    if sorted(holder_bundles) != list(range(1, holders + 1)):
        raise ValueError(f"key holders are parties 1..{holders}")
    targets = [holder_bundles[j] / keyfiles.share_file_name(j) for j in holder_bundles]
    targets += [Path(d) / keyfiles.PUBLIC_KEY_FILE for d in public_bundles]
    existing = [path for path in targets if path.is_symlink() or path.exists()]
    if existing and not overwrite:  # before the expensive key generation
        raise FileExistsError(f"{existing[0]} exists; refusing to overwrite key files")
    if method == DEFERRED:  # a key left over from an earlier deployment must not meet the fresh certificates
        for path in targets:
            path.unlink(missing_ok=True)
        return threshold, holders
    if method == "distributed":
        _distributed({j: holder_bundles[j] / keyfiles.share_file_name(j) for j in holder_bundles},
                     [Path(d) / keyfiles.PUBLIC_KEY_FILE for d in public_bundles], threshold, bits, overwrite)
        return threshold, holders
    public, shares = generate_threshold_key(bits, threshold, holders)
    public_bytes = _encode(keyfiles.public_key_to_dict(public))
    for directory in public_bundles:
        secret_files.write_file(Path(directory) / keyfiles.PUBLIC_KEY_FILE, public_bytes, overwrite=overwrite)
    while shares:
        share = shares.pop()
        secret_files.write_file(holder_bundles[share.index] / keyfiles.share_file_name(share.index),
                                _encode(keyfiles.key_share_to_dict(share)), overwrite=overwrite)
        del share
    return threshold, holders


def distributed(holders: int, threshold: int, directory: Path, bits: int,
                overwrite: bool = False) -> tuple[list[Path], int, int]:
    """The key holders' own ceremony into one directory (`mpdp keygen --keygen distributed`)."""
    keyfiles.check_writable(directory, holders, overwrite)
    bundles.private_directory(Path(directory))
    shares = {j: Path(directory) / keyfiles.share_file_name(j) for j in range(1, holders + 1)}
    public = Path(directory) / keyfiles.PUBLIC_KEY_FILE
    _distributed(shares, [public], threshold, bits, overwrite)
    return [public, *shares.values()], threshold, holders


def _distributed(shares: dict[int, Path], public_paths: list[Path], threshold: int, bits: int,
                 overwrite: bool) -> None:
    """Each holder's own process writes its share; the public key they agree on goes to every public path
    (launcher/deployment/distributed_keygen.py)."""
    from launcher.common.progress import progress
    from launcher.deployment import distributed_keygen

    figures = distributed_keygen.ceremony(shares, public_paths, threshold, bits, overwrite)
    sent = ", ".join(f"{holder} {entry['messages']} messages {entry['bytes'] / 1e6:.1f} MB"
                     for holder, entry in sorted(figures["sent_by_holder"].items()))
    progress(f"distributed key generation: {figures['seconds']} s, holders' CPU {figures['holders_cpu_s']} s, "
             f"{figures['candidates_tried']} candidates; sent: {sent}; of which the acknowledgements "
             f"{figures['acknowledgement']}, then the commit {figures['commit']}")
