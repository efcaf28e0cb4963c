"""The launcher side of the `du` protocol: its client, entry, experiment and bench."""
