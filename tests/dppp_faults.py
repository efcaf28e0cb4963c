"""Fault configurations of the shared deployments (the pool keys them by faults)."""

TAMPERER = 2
FAULTS_K5 = {TAMPERER: "tamper-partial-decryption"}
CRASH = "kill-on:Step/dppp/decryption_request"  # the key holder dies on the aggregator's request
FAULTS_K8 = {1: CRASH, 2: CRASH}  # among the t holders asked first
