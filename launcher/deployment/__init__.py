"""Deployment: role processes (`up`/`down`/`serve`), `prepare`, compose, certificates, bundles, the key ceremony, health checks and topology files."""
