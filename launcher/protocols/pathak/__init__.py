"""The launcher side of the `pathak` protocol: its client, entry, experiment and bench."""
