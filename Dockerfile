# Multi-stage build of the validator node, on Node 22 (Debian 12 "bookworm" slim).
# Node 20 reached its end of life in April 2026; the uWebSockets.js build the node uses
# (uws-pack 20.0.8) ships binaries for Node 18 to 22 only, so 22 (maintained until April
# 2027) is the newest line it runs on (docs/OPERATING.md, "Node versions").
#
# The base is pinned to an exact Node release, so a rebuild gets the Node this file was
# tested with. It carries no @sha256 digest: no container registry is reachable from
# where this file is built and tested (CI builds a stand-in of this very tag from
# Debian's repository and the npm registry: scripts/image-base.sh), so no digest could be
# read or checked here. Where a registry is reachable, pin it as
# node:22.23.3-bookworm-slim@sha256:<digest of `docker buildx imagetools inspect` for it>.
# Build stage: install everything, compile the node (without tests and benchmarks), then
# keep only what the run stage loads.
FROM node:22.23.3-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The workspace's packages (@svc-node/protocol, @svc-node/client): npm ci links them.
COPY packages/protocol/package.json ./packages/protocol/
COPY packages/client/package.json ./packages/client/
# No compiler: every native dependency ships prebuilt binaries for Node 22 on glibc
# (@nxtedition/rocksdb, uWebSockets.js). The optional dependency is the earlier storage
# binding (rocksdb 5.2.1), used only by `migrate-store`, which cannot load under Node 22:
# its own image is Dockerfile.migrate-store.
RUN npm ci --no-audit --no-fund --omit=optional
COPY tsconfig.json tsconfig.build.json ./
COPY packages ./packages
COPY src ./src
COPY workers ./workers
COPY scripts/prune-image.sh ./scripts/
RUN npx tsc -b tsconfig.build.json \
 && npm prune --omit=dev --omit=optional --no-audit --no-fund \
 && sh scripts/prune-image.sh

# Run stage: compiled code, production dependencies, a non-root user, data in a volume.
FROM node:22.23.3-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    SVC_DB_PATH=/data/svc-node \
    SVC_REST_ADDRESS=0.0.0.0:8080 \
    SVC_BIND_ADDRESS=0.0.0.0:50051
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/packages ./packages
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
# SIGTERM (docker stop) drains the node: it finishes the block in hand, closes RocksDB
# and exits 0 within 10 s, or exits 1 if it had to kill a part of itself. Give
# `docker stop` that long (compose: stop_grace_period), not the default 10 s on the dot.
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/main.js"]
