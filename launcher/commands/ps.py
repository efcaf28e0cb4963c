"""`mpdp ps`: the caller's role servers on this host, and a run directory's Ray actors."""

from __future__ import annotations

from pathlib import Path

from launcher.common.options import DEFAULT_RUN_DIR


def command(args) -> int:
    from launcher.deployment import processes

    servers = processes.running_servers()
    for command, pid in sorted(servers.items(), key=lambda item: item[1]):
        print(f"{pid:>8}  {command}")
    print(f"{len(servers)} mpdp role servers of yours running" + ("; `mpdp down --all` stops them" if servers else ""))
    args.json_report = {"servers": [{"pid": pid, "command": command} for command, pid in sorted(servers.items(),
                                                                                              key=lambda item: item[1])]}
    if (processes.RunDirectory(args.run_dir).path / "ray.json").exists():
        from launcher.deployment import ray_hosts

        actors = ray_hosts.describe(args.run_dir)
        args.json_report["ray_actors"] = actors
        for actor in actors:
            memory = f"{actor['rss_kb'] / 1024:.0f} MiB (peak {actor['peak_kb'] / 1024:.0f})" if "rss_kb" in actor else ""
            print(f"  {actor['principal']:<14} {'running' if actor['running'] else 'NOT RUNNING':<12} "
                  f"{actor.get('address') or '':<22} {memory}")
        print(f"{sum(a['running'] for a in actors)}/{len(actors)} Ray actors of {args.run_dir} running")
    return 0


def add_command(commands) -> None:
    ps = commands.add_parser("ps", help="list your mpdp role servers running on this machine, and a run directory's "
                                        "Ray actors")
    ps.add_argument("--run-dir", type=Path, default=DEFAULT_RUN_DIR)
    ps.set_defaults(handler=command)
