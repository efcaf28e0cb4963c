# One image for every role; docker-compose.yml picks the command per service.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app

# Dependencies first (from pyproject), so code changes do not reinstall them.
COPY pyproject.toml README.md ./
RUN python - <<'PY' > /tmp/requirements.txt && pip install -r /tmp/requirements.txt
import tomllib
print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]))
PY

COPY cryptocore ./cryptocore
COPY mpdp_proto ./mpdp_proto
COPY sessions ./sessions
COPY wire ./wire
COPY privacy ./privacy
COPY learning ./learning
COPY dppp ./dppp
COPY pathak ./pathak
COPY party ./party
COPY curator ./curator
COPY aggregator ./aggregator
COPY launcher ./launcher
RUN pip install --no-deps . \
    && useradd --create-home --uid 10001 mpdp \
    && mkdir /deployment && chown mpdp /deployment

USER mpdp
# Roles override this per service with their own role and id; the default checks the aggregator.
HEALTHCHECK --interval=10s --timeout=30s --start-period=60s --retries=30 \
    CMD mpdp health --topology /deployment/topology.toml --role aggregator --id 0 --timeout 20
CMD ["mpdp", "--help"]
