"""`mpdp compose --parties K`: the docker-compose file for a K-party deployment.

The committed docker-compose.yml is this output for K = 5 (a test keeps them
equal). A one-shot `keygen` service writes one bundle per role identity, each
into that role's own named volume, hands each to its role's uid and exits; every
role then serves over mutual TLS in its own container, which mounts only its own
bundle (the aggregator's and Charlie's hold no key share and no party data);
`demo`, the client, mounts only the client's bundle and runs DPPP, Pathak, Hamm
and Du once every role is healthy.

With `--keygen distributed` no process deals the key: `prepare` writes the bundles without one, each key
holder's `holder-J` container (party J's uid, party J's volume only, reachable as party-J) serves the
`keygen` protocol once and writes its own share and the public key into its own bundle, `open-keygen` (the
client's bundle, plus the aggregator's and Charlie's for the public key) opens the ceremony and writes the key
the holders agree on; then every role starts as before.
"""

from __future__ import annotations

from launcher.deployment import compose_network, compose_observe
from launcher.deployment.compose_names import PORT, service_name
from launcher.deployment.keygen import DEFERRED, committee_size, default_method
from mpdp.cryptocore.paillier.keyfiles import PUBLIC_KEY_FILE
from mpdp.wire.profiles import NetworkProfile

PREPARE = "prepare"  # the one-shot that writes the bundles when no dealer makes the key
# A key-generation service: runs once after `prepare`, is never restarted and has no health to check.
ONE_SHOT_AFTER_PREPARE = (
    "    depends_on:",
    f"      {PREPARE}:",
    "        condition: service_completed_successfully",
    '    restart: "no"',
    "    healthcheck:",
    "      disable: true",
)
BUNDLES = "/bundles"  # keygen's view: every volume, one directory each
BUNDLE = "/bundle"  # a role's view: its own volume only
TOPOLOGY = f"{BUNDLE}/topology.toml"
CLIENT_DATA = f"{BUNDLE}/client.npz"
CLIENT_BUNDLE = "client"
# One uid per role (none is the image's user or root), so a volume mounted by mistake is still unreadable.
CLIENT_UID = 10002
AGGREGATOR_UID = 10010
CURATOR_UID = 10011
PARTY_UID_BASE = 10100


def bundle_name(service: str) -> str:
    """The bundle (launcher/deployment/bundles.py) a service mounts: its own, the client's for `demo`."""
    return CLIENT_BUNDLE if service == "demo" else service


def volume_name(service: str) -> str:
    return f"bundle-{bundle_name(service)}"


def uid(service: str) -> int:
    if service == "demo":
        return CLIENT_UID
    if service.startswith("party-"):
        return PARTY_UID_BASE + int(service.removeprefix("party-"))
    return {"aggregator": AGGREGATOR_UID, "curator": CURATOR_UID}[service]


def _list(items: list[str]) -> str:
    return "[" + ", ".join(f'"{item}"' for item in items) + "]"


def _roles(parties: int) -> list[tuple[str, int]]:
    return [("aggregator", 0), ("curator", 0)] + [("party", number) for number in range(1, parties + 1)]


def _services(parties: int) -> list[str]:
    return [service_name(role, number) for role, number in _roles(parties)] + ["demo"]


def keygen_command(parties: int, keygen: str = "dealer", bits: int | None = None) -> list[str]:
    # --keep-existing: a deployment's volumes keep its keys; `compose run demo` or `up` again starts this one-shot
    # again, and it must not deal a new key under the running roles (`compose down -v` starts afresh).
    command = ["mpdp", "prepare", "--parties", str(parties), "--out", BUNDLES, "--listen-host", "0.0.0.0",
               "--keep-existing"]
    # prepare's own default is the holders' ceremony; here it would run inside this one container
    command += ["--keygen", DEFERRED if keygen == "distributed" else "dealer"]
    if bits is not None:
        command += ["--bits", str(bits)]
    for role, number in _roles(parties):
        command += ["--address", f"{role}/{number}={service_name(role, number)}:{PORT}"]
    for service in _services(parties):
        command += ["--owner", f"{bundle_name(service)}={uid(service)}"]
    return command


def serve_command(role: str, number: int) -> list[str]:
    return ["mpdp", "serve", role, "--topology", TOPOLOGY, "--id", str(number)]


def holder_command(number: int) -> list[str]:
    return serve_command("party", number) + ["--keygen-only", "--once"]


# Parties beyond the key holders (at most 16 hold shares) hold no share and take no part in the ceremony: the
# public key reaches them through a volume that holds nothing else, mounted read-only.
PUBLIC_KEY_VOLUME = "public-key"
PUBLIC_KEY_MOUNT = "/public"


def open_keygen_command(bits: int | None, parties: int = 0) -> list[str]:
    command = ["mpdp", "open-keygen", "--topology", TOPOLOGY]
    if bits is not None:
        command += ["--bits", str(bits)]
    paths = [BUNDLE, f"{BUNDLES}/aggregator", f"{BUNDLES}/curator"]
    if parties > committee_size(parties):
        paths.append(f"{BUNDLES}/{PUBLIC_KEY_VOLUME}")
    for path in paths:
        command += ["--public-out", f"{path}/{PUBLIC_KEY_FILE}"]
    return command


def _beyond_the_holders(role: str, number: int, parties: int, keygen: str) -> bool:
    return keygen == "distributed" and role == "party" and number > committee_size(parties)


def _serve(role: str, number: int, parties: int, keygen: str) -> list[str]:
    if not _beyond_the_holders(role, number, parties, keygen):
        return serve_command(role, number)
    return ["sh", "-c", f"cp {PUBLIC_KEY_MOUNT}/{PUBLIC_KEY_FILE} {BUNDLE}/{PUBLIC_KEY_FILE} && exec "
            + " ".join(serve_command(role, number))]


# A check costs ~0.2 CPU-s; on a busy 2-core machine a role doing 2048-bit work can take seconds to answer,
# so the check waits up to HEALTH_RPC_S and Docker up to HEALTH_TIMEOUT_S before calling it a failure.
HEALTH_RPC_S = 20
HEALTH_TIMEOUT_S = 30


def health_command(role: str, number: int) -> list[str]:
    """Run in the role's own container: it checks itself with its own certificate (it holds no client's)."""
    return ["mpdp", "health", "--topology", TOPOLOGY, "--role", role, "--id", str(number),
            "--timeout", str(HEALTH_RPC_S)]


def demo_flags(protocol: str, instead: str = "") -> str:
    """The `mpdp demo` settings of a protocol (launcher/protocol.py, DemoSettings) as `run` flags, then `instead`
    (flags that replace a demo setting: the demo runs with no budget, compose within the default one)."""
    from launcher.registry import PROTOCOLS

    entry = PROTOCOLS[protocol]
    if entry.demo_settings is None:
        return f" {instead}" if instead else ""
    flags = {option.destination: option.name for option in entry.options()}
    replaced = {word.removeprefix("--") for word in instead.split() if word.startswith("--")}
    return "".join(f" --{flags[dest]}" if value is True else f" --{flags[dest]} {value}"
                   for dest, value in entry.demo_settings.options.items()
                   if value is not False and flags[dest] not in replaced) + (f" {instead}" if instead else "")


def demo_command() -> list[str]:
    """Every protocol with a compose line, in registry order, at settings the check before spending lets run and
    that learn at M = 5 (measured on the real engine: docs/deployment.md), whose charges fit each party's default
    budget (ε = 20, δ = 2e-5 per data set; docs/privacy-budget.md) twice, so that a second run on one deployment is
    admitted (composed: ε ≈ 18.2, δ = 7e-6). Each protocol's entry says why its flags (`compose_demo`)."""
    from launcher.registry import PROTOCOLS

    run = f"--topology {TOPOLOGY} --client-data {CLIENT_DATA}"
    lines = [f"mpdp run {name} {run}{demo_flags(name, entry.compose_demo)}" for name, entry in PROTOCOLS.items()
             if entry.compose_demo is not None]
    return ["sh", "-c", " && ".join(lines)]


def _own_bundle(service: str) -> list[str]:
    return [f'    user: "{uid(service)}"', "    volumes:", f"      - {volume_name(service)}:{BUNDLE}"]


def _distributed_keygen(parties: int, bits: int | None) -> list[str]:
    lines = []
    for number in range(1, committee_size(parties) + 1):
        service = service_name("party", number)
        lines += [
            f"  holder-{number}:",
            "    <<: *mpdp",
            f"    command: {_list(holder_command(number))}",
            *_own_bundle(service),
            "    networks:",
            "      mpdp:",
            f"        aliases: [{service}]",  # the address every bundle's topology gives party J
            *ONE_SHOT_AFTER_PREPARE,
        ]
    lines += [
        "  open-keygen:",
        "    <<: *mpdp",
        f"    command: {_list(open_keygen_command(bits, parties))}",
        '    user: "0"',  # writes the public key into the aggregator's and Charlie's bundles too; no share is there
        "    volumes:",
        f"      - {volume_name('demo')}:{BUNDLE}",
        f"      - {volume_name('aggregator')}:{BUNDLES}/aggregator",
        f"      - {volume_name('curator')}:{BUNDLES}/curator",
        *([f"      - {PUBLIC_KEY_VOLUME}:{BUNDLES}/{PUBLIC_KEY_VOLUME}"] if parties > committee_size(parties) else []),
        *ONE_SHOT_AFTER_PREPARE,
    ]
    return lines


def _after(role: str, number: int, parties: int, keygen: str) -> str:
    """What a role's container waits for: the dealer's one-shot, or (distributed) the key made without one."""
    if keygen != "distributed":
        return "keygen"
    if role == "party" and number <= committee_size(parties):
        return f"holder-{number}"
    return "open-keygen"


def _environment() -> list[str]:
    return [
        "    HOME: /tmp",  # the per-role uids have no home directory in the image
        *compose_observe.environment(),
        "    MPDP_DEPLOYMENT: compose",  # a fix line then says how to run again here (launcher/common/rerun.py)
    ]


def _linked(network: NetworkProfile | None) -> list[str]:
    """A role's or demo's lines after its volumes: with a network, the link table's mount and MPDP_NETWORK."""
    if network is None:
        return []
    return [*compose_network.mount(), *compose_network.environment(_environment())]


def render(parties: int, keygen: str = "dealer", bits: int | None = None, network: NetworkProfile | None = None) -> str:
    """The compose file; with `network`, every link between roles goes through the relay service
    (launcher/deployment/compose_network.py), whose link table `network.json` lies beside the file."""
    prepare = "keygen" if keygen == "dealer" else PREPARE
    options = "" if keygen == default_method(parties) else f" --keygen {keygen}"  # the header's command remakes this file
    options += "" if bits is None else f" --bits {bits}"
    options += "" if network is None else compose_network.flags(network)
    lines = [
        f"# Generated by `mpdp compose --parties {parties}{options}`; edit the generator, not this file",
        "# (tests/test_compose.py checks that they agree). Each service mounts only its own bundle's volume.",
        # `--exit-code-from` implies `--abort-on-container-exit` over the attached containers; without the service
        # name every service is attached and the key one-shot's exit (code 0) stops the whole run before the demo.
        "# Run: `docker compose up --exit-code-from demo demo` (the key, the roles, then the demo; returns the demo's",
        "# exit code, the roles keep serving); again: `docker compose run --rm demo`; `docker compose down -v` ends it.",
        "# `docker compose --profile observe up` adds Prometheus, Grafana and Jaeger (docs/observe.md).",
        *compose_network.header(network),
        "",
        "x-mpdp: &mpdp",
        "  build: .",
        "  image: mpdp:latest",
        "  environment:",
        *_environment(),
        "  networks: [mpdp]",
        "",
        "services:",
        f"  {prepare}:",
        "    <<: *mpdp",
        f"    command: {_list(keygen_command(parties, keygen, bits))}",
        '    user: "0"',  # writes every bundle, then gives each to its role's uid (--owner)
        "    volumes:",
        *[f"      - {volume_name(service)}:{BUNDLES}/{bundle_name(service)}" for service in _services(parties)],
        '    restart: "no"',
        "    healthcheck:",
        "      disable: true",
    ]
    if keygen == "distributed":
        lines += _distributed_keygen(parties, bits)
    if network is not None:
        lines += compose_network.service()
    for role, number in _roles(parties):
        service = service_name(role, number)
        lines += [
            f"  {service}:",
            "    <<: *mpdp",
            f"    command: {_list(_serve(role, number, parties, keygen))}",
            *_own_bundle(service),
            *([f"      - {PUBLIC_KEY_VOLUME}:{PUBLIC_KEY_MOUNT}:ro"] if _beyond_the_holders(role, number, parties, keygen)
              else []),
            *_linked(network),
            "    depends_on:",
            f"      {_after(role, number, parties, keygen)}:",
            "        condition: service_completed_successfully",
            "    healthcheck:",
            f"      test: {_list(['CMD', *health_command(role, number)])}",
            "      interval: 10s",
            f"      timeout: {HEALTH_TIMEOUT_S}s",
            "      retries: 30",
            "      start_period: 60s",
            *compose_observe.role_network(),
        ]
    lines += [
        "  demo:",
        "    <<: *mpdp",
        f"    command: {_list(demo_command())}",
        *_own_bundle("demo"),
        *_linked(network),
        "    healthcheck:",
        "      disable: true",
        "    depends_on:",
        *(compose_network.depends() if network is not None else []),
    ]
    for role, number in _roles(parties):
        lines += [f"      {service_name(role, number)}:", "        condition: service_healthy"]
    lines += compose_observe.services()
    public = [f"  {PUBLIC_KEY_VOLUME}: {{}}"] if keygen == "distributed" and parties > committee_size(parties) else []
    lines += ["", "volumes:", *[f"  {volume_name(service)}: {{}}" for service in _services(parties)], *public,
              "", "networks:", "  mpdp: {}", ""]
    return "\n".join(lines)
