"""How a compose project names its role services and the port each serves on: shared by the compose file's
generator and the relay container that resolves a link's target to its service."""

PORT = 50051


def service_name(role: str, number: int) -> str:
    return f"party-{number}" if role == "party" else role
