# Multi-stage build of the validator node, on Node 22 (Debian 12 "bookworm" slim).
# Node 20 reached its end of life in April 2026; the uWebSockets.js build the node uses
# (uws-pack 20.0.8) ships binaries for Node 18 to 22 only, so 22 (maintained until April
# 2027) is the newest line it runs on (docs/OPERATING.md, "Node versions").
# Build stage: install everything, compile the node (without tests and benchmarks).
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No compiler: every native dependency ships prebuilt binaries for Node 22 on glibc
# (@nxtedition/rocksdb, uWebSockets.js). The optional dependency is the earlier storage
# binding (rocksdb 5.2.1), used only by `npm run migrate-store` under Node 20; it cannot
# load under Node 22, so the image leaves it out.
RUN npm ci --no-audit --no-fund --omit=optional
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY workers ./workers
RUN npx tsc -p tsconfig.build.json && npm prune --omit=dev --omit=optional

# Run stage: compiled code, production dependencies, a non-root user, data in a volume.
FROM node:22-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    SVC_DB_PATH=/data/svc-node \
    SVC_REST_ADDRESS=0.0.0.0:8080 \
    SVC_BIND_ADDRESS=0.0.0.0:50051
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json config.toml ./
COPY proto ./proto
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080 50051
# Readiness on the configured REST address (SVC_REST_ADDRESS or config.toml), not a fixed
# port: unhealthy while the core or gossip does not serve or the node is halted. The
# start period covers opening a large database.
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 CMD ["node", "dist/src/healthcheck.js"]
CMD ["node", "dist/src/main.js"]
