#!/usr/bin/env bash
# The Docker image's build and start, without Docker (CI has no daemon and no registry
# for base images): the Dockerfile's build-stage commands in a scratch directory under
# the Node given as $1 (Node 22, the image's line), then the node started from that
# directory as the image starts it, against a devnet chain, until the image's HEALTHCHECK
# command (dist/src/healthcheck.js) reports it ready. Keep the commands in step with the
# Dockerfile. Usage: scripts/image-smoke.sh /path/to/node
set -euo pipefail
NODE_BIN="$1"
REPO="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d)"
trap 'kill $NODE_PID $CHAIN_PID 2>/dev/null || true; rm -rf "$WORK"' EXIT
export PATH="$(dirname "$NODE_BIN"):$PATH"
node --version

# Build stage (Dockerfile): package files, npm ci without optional dependencies, compile,
# prune to production dependencies.
mkdir -p "$WORK/app"
cp "$REPO/package.json" "$REPO/package-lock.json" "$REPO/tsconfig.json" "$REPO/tsconfig.build.json" "$REPO/config.toml" "$WORK/app/"
cp -r "$REPO/src" "$REPO/workers" "$REPO/proto" "$WORK/app/"
cd "$WORK/app"
npm ci --no-audit --no-fund --omit=optional >/dev/null
npx tsc -p tsconfig.build.json
npm prune --omit=dev --omit=optional >/dev/null
rm -rf src workers tsconfig.json tsconfig.build.json
test ! -e node_modules/rocksdb && test ! -e node_modules/typescript

# Run stage: a devnet chain from the checkout, the node from the pruned directory.
CHAIN_PORT=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
REST_PORT=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
GRPC_PORT=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
node "$REPO/dist/src/devnet/chain-main.js" --port "$CHAIN_PORT" >"$WORK/chain.log" 2>&1 &
CHAIN_PID=$!
NODE_ENV=production SVC_DB_PATH="$WORK/data/db" SVC_REST_ADDRESS="127.0.0.1:$REST_PORT" SVC_BIND_ADDRESS="127.0.0.1:$GRPC_PORT" \
  SVC_ESPLORA_URL="http://127.0.0.1:$CHAIN_PORT" SVC_BLOCK_CHECK_INTERVAL_S=0.2 node dist/src/main.js >"$WORK/node.log" 2>&1 &
NODE_PID=$!
for _ in $(seq 1 100); do
  if SVC_REST_ADDRESS="127.0.0.1:$REST_PORT" node dist/src/healthcheck.js >/dev/null 2>&1; then
    echo "image smoke: the node built as the image builds it is ready under $(node --version)"
    exit 0
  fi
  kill -0 $NODE_PID 2>/dev/null || break
  sleep 0.2
done
echo "image smoke: the node did not become ready; its log:" >&2
tail -20 "$WORK/node.log" >&2
exit 1
