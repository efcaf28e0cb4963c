"""Distributed generation of a threshold Paillier key among ℓ key holders, without a dealer.

crypto.md, "Distributed key generation"; construction, citations and assumptions in
docs/distributed-keygen.md. Each holder is a `holder.Holder` state machine that exchanges
`messages.Message`s with the others; `ceremony.run_in_process` routes them inside one
process, a transport routes them between processes. No holder ever holds p, q, φ(n) or d.
"""
