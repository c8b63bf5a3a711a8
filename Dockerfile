# Multi-stage build of the validator node.
# Build stage: install everything, compile TypeScript.
FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY workers ./workers
COPY proto ./proto
COPY bench ./bench
COPY test ./test
RUN npx tsc -p tsconfig.json && npm prune --omit=dev

# Run stage: compiled code, production dependencies, a non-root user, data in a volume.
FROM node:20-bookworm-slim
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
HEALTHCHECK --interval=30s --timeout=5s CMD node -e "fetch('http://127.0.0.1:8080/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/src/main.js"]
