"""Progress lines for long runs, on standard error so reports on standard output stay clean."""

import sys


def progress(message: str) -> None:
    print(f"  … {message}", file=sys.stderr, flush=True)
