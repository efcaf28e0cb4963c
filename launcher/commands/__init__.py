"""One module per `mpdp` command: its options and what it does (launcher/cli.py wires them into the parser)."""
