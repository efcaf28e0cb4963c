"""The launcher side of the `hamm` protocol: its client, entry, experiment and bench."""
