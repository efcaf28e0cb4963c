"""Versioned JSON files for threshold keys: one per key holder plus the public key.

Integers are hex strings; no pickle. A public key is validated when loaded (its
constructor checks every parameter) and must match the key id the file states; a
share file carries the public key it belongs to and is checked against its
verification key. Files are written through `secret_files` (mode 0600 from the
first byte, no symlinks followed, no overwriting unless asked).
"""

from __future__ import annotations

import json
from pathlib import Path

import gmpy2

from mpdp.cryptocore.errors import InvalidKey
from mpdp.cryptocore.keys import secret_files
from mpdp.cryptocore.paillier.threshold import KeyShare, ThresholdPublicKey

FORMAT_VERSION = 1
PUBLIC_KEY_FORMAT = "mpdp/threshold-paillier/public-key"
KEY_SHARE_FORMAT = "mpdp/threshold-paillier/key-share"
PUBLIC_KEY_FILE = "public_key.json"


def share_file_name(index: int) -> str:
    return f"key_share_{index}.json"


def _check_header(data: dict, expected_format: str) -> None:
    if data.get("format") != expected_format:
        raise ValueError(f"not a {expected_format} file (format {data.get('format')!r})")
    if data.get("version") != FORMAT_VERSION:
        raise ValueError(f"unsupported {expected_format} version {data.get('version')!r}")


def public_key_to_dict(public: ThresholdPublicKey) -> dict:
    return {
        "format": PUBLIC_KEY_FORMAT,
        "version": FORMAT_VERSION,
        "key_id": public.key_id.hex(),
        "n": hex(public.n),
        "threshold": public.threshold,
        "holders": public.holders,
        "hs": hex(public.hs),
        "v": hex(public.verification_base),
        "verification_keys": [hex(v) for v in public.verification_keys],
    }


def public_key_from_dict(data: dict) -> ThresholdPublicKey:
    _check_header(data, PUBLIC_KEY_FORMAT)
    public = ThresholdPublicKey(
        n=int(data["n"], 16),
        threshold=int(data["threshold"]),
        verification_base=int(data["v"], 16),
        verification_keys=tuple(int(v, 16) for v in data["verification_keys"]),
        hs=int(data["hs"], 16),
    )
    if public.holders != int(data["holders"]):
        raise InvalidKey("number of verification keys does not match the number of holders")
    if bytes.fromhex(data["key_id"]) != public.key_id:
        raise InvalidKey("key id does not match the key's parameters")
    return public


def key_share_to_dict(share: KeyShare) -> dict:
    return {
        "format": KEY_SHARE_FORMAT,
        "version": FORMAT_VERSION,
        "index": share.index,
        "secret": hex(share.secret),
        "public_key": public_key_to_dict(share.public),
    }


def key_share_from_dict(data: dict) -> KeyShare:
    _check_header(data, KEY_SHARE_FORMAT)
    public = public_key_from_dict(data["public_key"])
    share = KeyShare(int(data["index"]), int(data["secret"], 16), public)
    if not 0 < share.secret < public.share_bound:
        raise InvalidKey(f"key share {share.index} is out of range")
    expected = public.verification_key(share.index)
    if gmpy2.powmod(public.verification_base, public.delta * share.secret, public.paillier.nsquare) != expected:
        raise ValueError(f"key share {share.index} does not match its verification key")
    return share


def _encode(data: dict) -> bytes:
    return json.dumps(data, indent=2).encode()


def check_writable(directory: Path, holders: int, overwrite: bool) -> None:
    """Refuse early (before key generation) if key files exist and replacing them was not asked for."""
    names = [PUBLIC_KEY_FILE] + [share_file_name(i) for i in range(1, holders + 1)]
    existing = [name for name in names if (Path(directory) / name).is_symlink() or (Path(directory) / name).exists()]
    if existing and not overwrite:
        raise FileExistsError(f"{directory} already holds key files ({existing[0]}, …); refusing to overwrite them")


def write_key_files(directory: Path, public: ThresholdPublicKey, shares: list[KeyShare],
                    overwrite: bool = False) -> list[Path]:
    directory = Path(directory)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    check_writable(directory, len(shares), overwrite)
    paths = [secret_files.write_file(directory / PUBLIC_KEY_FILE, _encode(public_key_to_dict(public)),
                                     mode=secret_files.PUBLIC_MODE, overwrite=overwrite)]
    for share in shares:
        paths.append(secret_files.write_file(directory / share_file_name(share.index), _encode(key_share_to_dict(share)),
                                             overwrite=overwrite))
    return paths


def load_public_key(path: Path) -> ThresholdPublicKey:
    return public_key_from_dict(json.loads(Path(path).read_text()))


def load_key_share(path: Path) -> KeyShare:
    return key_share_from_dict(json.loads(Path(path).read_text()))
