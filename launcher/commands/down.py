"""`mpdp down`: stop what `up` started (or every role server of the caller's)."""

from __future__ import annotations

from pathlib import Path

from launcher.common.options import DEFAULT_RUN_DIR


def command(args) -> int:
    from launcher.deployment import processes

    if args.all:
        stopped = processes.stop(processes.running_servers())
    else:
        from launcher.deployment import network

        stopped = network.down(args.run_dir)  # the roles, and the link relays of `up --network`
    if not args.all and (processes.RunDirectory(args.run_dir).path / "ray.json").exists():
        from launcher.deployment import ray_hosts

        actors = ray_hosts.down(args.run_dir)
        print(f"down: ended {len(actors)} Ray actors and their servers" if actors else "down: no Ray actor was left")
        return 0
    print(f"down: stopped {len(stopped)} processes" if stopped else "nothing to stop")
    return 0


def add_command(commands) -> None:
    down = commands.add_parser("down", help="stop the processes `up` started")
    down.add_argument("--run-dir", type=Path, default=DEFAULT_RUN_DIR)
    down.add_argument("--all", action="store_true",
                      help="stop every mpdp role server of yours on this machine (e.g. after their run directory was "
                           "deleted); other users' stay")
    down.set_defaults(handler=command)
