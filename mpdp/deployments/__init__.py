"""How a deployment is laid out: which role runs where, with which files (above the transport, below the launcher)."""
