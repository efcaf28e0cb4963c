# One image for every role; docker-compose.yml picks the command per service.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app

# Dependencies first (from pyproject), so code changes do not reinstall them. No heredoc: Docker ≥ 20.10
# builds this with or without BuildKit.
COPY pyproject.toml README.md ./
# The observe extra too: compose's roles serve /metrics and send spans when asked (docs/observe.md).
RUN python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; print(chr(10).join(p['dependencies'] + p['optional-dependencies']['observe']))" \
        > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt && rm /tmp/requirements.txt

# Every package pyproject names (.dockerignore keeps tests, docs and caches out).
COPY . .
# A role mounts its own bundle at /bundle (compose runs each role as its own uid; keygen as root writes
# every bundle under /bundles and hands each to its role).
RUN pip install --no-deps . \
    && useradd --create-home --uid 10001 mpdp \
    && mkdir -m 0700 /bundles

USER mpdp
# Roles override this per service with their own role and id; the default checks the aggregator.
HEALTHCHECK --interval=10s --timeout=30s --start-period=60s --retries=30 \
    CMD mpdp health --topology /bundle/topology.toml --role aggregator --id 0 --timeout 20
CMD ["mpdp", "--help"]
