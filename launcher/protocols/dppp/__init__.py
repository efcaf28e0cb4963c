"""The launcher side of the `dppp` protocol: its client, entry, experiment and bench."""
