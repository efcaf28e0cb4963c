"""`mpdp keygen`: the trusted-dealer threshold key ceremony (crypto.md)."""

from __future__ import annotations

from pathlib import Path

from cryptocore import keyfiles
from cryptocore.threshold import generate_threshold_key
from dppp.parameters import default_threshold

MAX_COMMITTEE = 16


def committee_size(parties: int) -> int:
    """All parties up to 16 hold key shares, else a committee of 16 (parties 1..16)."""
    return min(parties, MAX_COMMITTEE)


METHODS = ("dealer", "distributed")  # docs/distributed-keygen.md says why the dealer is the default


def ceremony(parties: int, directory: Path, bits: int, threshold: int | None = None,
             overwrite: bool = False, method: str = "dealer") -> tuple[list[Path], int, int]:
    holders = committee_size(parties)
    threshold = threshold or default_threshold(holders)
    if method == "distributed":
        return distributed(holders, threshold, directory, bits, overwrite)
    keyfiles.check_writable(directory, holders, overwrite)  # before the expensive key generation
    public, shares = generate_threshold_key(bits, threshold, holders)
    return keyfiles.write_key_files(directory, public, shares, overwrite=overwrite), threshold, holders


def distributed(holders: int, threshold: int, directory: Path, bits: int,
                overwrite: bool = False) -> tuple[list[Path], int, int]:
    """The key holders' own ceremony, each holder its own process (launcher/distributed_keygen.py)."""
    from launcher import distributed_keygen
    from launcher.progress import progress

    paths, figures = distributed_keygen.ceremony(holders, threshold, directory, bits, overwrite)
    sent = ", ".join(f"{holder} {entry['messages']} messages {entry['bytes'] / 1e6:.1f} MB"
                     for holder, entry in sorted(figures["sent_by_holder"].items()))
    progress(f"distributed key generation: {figures['seconds']} s, holders' CPU {figures['holders_cpu_s']} s, "
             f"{figures['candidates_tried']} candidates; sent: {sent}")
    return paths, threshold, holders
