"""The cryptography, free of gRPC, in groups that import only the groups before them: `errors`, `arithmetic`,
`keys`, `encodings`, `paillier`, `proofs`, `comparison`, `dkg` (docs/crypto.md). Import the modules by their
paths; this package exports nothing itself."""
