"""`mpdp prepare`: key ceremony, certificates, data split and topology for roles that run elsewhere, one bundle per role."""

from __future__ import annotations

import os
from pathlib import Path

from launcher.common.dataset_options import add_dataset_options, load_dataset, teacher_as_model
from launcher.common.deployment_options import add_keygen_method_option, keygen_method
from launcher.common.options import key_bits, warn_small_key
from mpdp.cryptocore.keys.key_sizes import DEFAULT_KEY_BITS


def _addresses(values: list[str]) -> dict:
    from mpdp.sessions.identity import Identity

    addresses = {}
    for value in values or []:
        identity, _, address = value.partition("=")
        if not address:
            raise SystemExit(f"mpdp: error: --address takes ROLE/ID=HOST:PORT, not {value!r}")
        addresses[Identity.parse(identity)] = address
    return addresses


def _owners(values: list[str] | None, parties: int) -> dict[str, int]:
    """`--owner BUNDLE=UID`: checked before any work."""
    names = {"aggregator", "curator", "client", *(f"party-{j}" for j in range(1, parties + 1))}
    owners = {}
    for value in values or []:
        name, _, uid = value.partition("=")
        if name not in names or not uid.isdigit():
            raise SystemExit(f"mpdp: error: --owner takes BUNDLE=UID with BUNDLE one of {', '.join(sorted(names))}, not {value!r}")
        owners[name] = int(uid)
    if owners and os.getuid() != 0:
        raise SystemExit("mpdp: error: --owner needs root (it hands each bundle to its role's uid)")
    return owners


def command(args) -> int:
    from launcher.deployment import bundles, processes
    from mpdp.sessions.identity import AGGREGATOR, CURATOR, party

    teacher_as_model(args)
    warn_small_key(args.bits)
    addresses = _addresses(args.address)
    expected = {AGGREGATOR, CURATOR, *(party(j) for j in range(1, args.parties + 1))}
    if set(addresses) != expected:
        raise SystemExit(f"mpdp: error: --address must name exactly: {', '.join(sorted(map(str, expected)))}")
    owners = _owners(args.owner, args.parties)
    if args.keep_existing and args.force:
        raise ValueError("--keep-existing and --force contradict each other")
    if args.keep_existing and processes.prepared(args.out, list(addresses)):
        print(f"kept {args.out}: it already holds a deployment (its keys are never replaced here; "
              "`docker compose down -v` removes a compose deployment's volumes, and with them its keys)")
        return 0
    topology = processes.prepare(args.out, args.parties, args.bits, load_dataset(args), addresses, args.seed,
                                 args.model, split=args.split, insecure=args.insecure, listen_host=args.listen_host,
                                 overwrite=args.force, aux_fraction=args.aux_fraction, keygen=keygen_method(args))
    run = processes.RunDirectory(args.out)
    for name, uid in owners.items():
        bundles.give(run.path / name, uid)
    names = sorted(path.name for path in run.path.iterdir() if path.is_dir())
    key = "no key yet (the key holders make it)" if keygen_method(args) == "deferred" else "threshold key"
    print(f"prepared {args.out}: {key}, {'no certificates (insecure)' if topology.insecure else 'CA and certificates'}, "
          f"{len(topology.parties)} party data files; one bundle per role (copy each to its host only): "
          f"{', '.join(names)}")
    return 0


def add_command(commands) -> None:
    prepare = commands.add_parser("prepare", help="key ceremony, certificates, data split and topology for roles "
                                                  "that run elsewhere (compose, other hosts)")
    prepare.add_argument("--parties", type=int, required=True)
    prepare.add_argument("--out", type=Path, required=True)
    prepare.add_argument("--address", action="append", help="ROLE/ID=HOST:PORT, once per role (peers dial it)")
    prepare.add_argument("--listen-host", help="servers bind this host (e.g. 0.0.0.0 in containers) on their port")
    prepare.add_argument("--bits", type=key_bits, default=DEFAULT_KEY_BITS)
    prepare.add_argument("--model", help="teachers' model")
    prepare.add_argument("--teacher", metavar="MODULE:CLASS",
                    help="the parties' local model (the voting protocols' teachers) is this scikit-learn classifier, "
                         "e.g. sklearn.ensemble:RandomForestClassifier: each party imports it and fits it with its "
                         "defaults on its own rows (docs/data-and-metrics.md)")
    prepare.add_argument("--insecure", action="store_true", help="no certificates: plaintext deployment")
    prepare.add_argument("--force", action="store_true", help="replace existing key files (atomically)")
    prepare.add_argument("--keep-existing", action="store_true",
                         help="if --out already holds a deployment (every bundle's topology), keep it and exit 0: a "
                              "one-shot that runs again (compose) never replaces the keys under running roles")
    prepare.add_argument("--owner", action="append", metavar="BUNDLE=UID",
                         help="give a bundle (aggregator, curator, client, party-J) to this uid (root only; compose)")
    add_keygen_method_option(prepare, deferred=True)
    add_dataset_options(prepare)
    prepare.set_defaults(handler=command)
