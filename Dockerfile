# syntax=docker/dockerfile:1
# Node 24, the current LTS (package.json "engines" and .nvmrc say which Node versions are proven).
ARG NODE_IMAGE=node:24-bookworm-slim

# Build: compile TypeScript with every dependency installed.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV SCARF_ANALYTICS=false
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ormconfig.ts ./
COPY src ./src
RUN npm run build

# Production dependencies only, installed on their own (no compiler needed: nothing builds from source).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
ENV SCARF_ANALYTICS=false
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

# Run: what the service runs and nothing else (package.json, production node_modules, the compiled dist/);
# no TypeScript, no dev dependencies, not root. `node dist/src/cli.js` and `node dist/src/database/migrate.js`
# are the user and migration commands inside it (docs/containers.md).
FROM ${NODE_IMAGE}
# glibc's allocator: two arenas, and blocks of 128 KiB or more always mapped apart, so the memory of a large answer
# goes back to the system when it is freed instead of staying in the process (docs/performance.md, sixth round).
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0 \
    DATA_DIR=/data \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY --from=deps --chown=root:root /app/package.json ./
COPY --from=deps --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/api/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Node receives SIGTERM directly (exec form) and shuts down gracefully.
CMD ["node", "dist/src/main.js"]
