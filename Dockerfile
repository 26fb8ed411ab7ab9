# One image for both processes: the API (default CMD) and the Temporal worker
# (`node --import tsx worker/main.ts`). TypeScript runs through tsx, so there is no build step.

# Pinned Node 20 (package.json engines: >=20.3), Debian slim: glibc for the prebuilt
# native modules (@temporalio/core-bridge, @swc/core, @node-rs/argon2).
ARG NODE_IMAGE=node:20.19.5-bookworm-slim

# --- deps: install production dependencies from the lockfile only ---------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Runtime needs only `dependencies` (tsx is one of them). npm 10 (bundled with Node 20)
# ignores package.json's `allowScripts`; npm 11 honours it. No npm cache is kept.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# --- runtime ---------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    PORT=8000
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY . .
# The service keeps small local state under DATA_DIR (.data); it must be writable by the
# unprivileged user. The source itself stays root-owned (read-only to the process).
RUN mkdir -p /app/.data && chown node:node /app/.data
# `node` (uid 1000) ships with the official image.
USER node
EXPOSE 8000
# The API applies pending database migrations at start. The worker: `node --import tsx worker/main.ts`.
CMD ["node", "--import", "tsx", "api/main.ts"]
