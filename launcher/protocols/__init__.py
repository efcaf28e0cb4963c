"""Each protocol's launcher side: its client, its registry entry and commands, experiment, bench."""
