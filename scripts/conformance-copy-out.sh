#!/usr/bin/env bash
# The conformance kit runs from a copy of conformance/ alone (conformance/README.md, "From a
# copy of the kit"): CI copies the folder to an empty temporary directory, installs the
# kit's own dependencies there from its own package-lock.json (npm ci, from the registry),
# and from there runs
#   1. the vector runner, every vector through svc-node's adapter (the one in this
#      repository: it answers from dist/), writing JUnit XML too;
#   2. the node runner, every scenario, against the built node and its devnet chain, given
#      as commands (--node-cmd, --chain-cmd), writing JUnit XML too.
# Nothing in the copy can reach this repository's node_modules, src/ or dist/ but through
# those commands. Needs `npm run build` first. Output: both runners' TAP (but the passing
# lines) and summaries; JUnit XML in $CONFORMANCE_JUNIT_DIR (default dist/):
# conformance-vectors.junit.xml and conformance-node.junit.xml.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
[ -f dist/src/main.js ] || { echo "conformance-copy-out: dist/src/main.js is missing: run npm run build first" >&2; exit 2; }
JUNIT_DIR="${CONFORMANCE_JUNIT_DIR:-$ROOT/dist}"
mkdir -p "$JUNIT_DIR"
JUNIT_DIR="$(cd "$JUNIT_DIR" && pwd)"
JUNIT="$JUNIT_DIR/conformance-node.junit.xml"

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
# A node_modules folder above the copy would let it resolve packages it does not declare.
for d in "$WORK" "$(dirname "$WORK")"; do
  [ ! -e "$d/node_modules" ] || { echo "conformance-copy-out: $d/node_modules exists; the copy would not be alone" >&2; exit 2; }
done
KIT="$WORK/conformance"
mkdir "$KIT"
# The tracked files of conformance/, nothing else (no node_modules, nothing built).
git ls-files -z conformance | (cd "$ROOT" && xargs -0 tar -cf - ) | tar -xf - -C "$WORK"
echo "# conformance kit copied to $KIT ($(find "$KIT" -type f | wc -l) files)"

t0=$(date +%s)
(cd "$KIT" && npm ci --no-audit --no-fund --loglevel=error)
echo "# npm ci in the copy: $(( $(date +%s) - t0 )) s"

cd "$KIT"
# Each runner's TAP to a file, shown without its passing lines (every failure keeps its
# YAML block and, for the node runner, the nodes' last log lines).
vectors=0
node run.mjs --adapter "node $ROOT/conformance/adapters/svc-node.mjs" --junit "$JUNIT_DIR/conformance-vectors.junit.xml" > "$WORK/vectors.tap" || vectors=$?
grep -v '^ok ' "$WORK/vectors.tap" || true
[ "$vectors" -eq 0 ] || { echo "conformance-copy-out: the vector runner failed (status $vectors)" >&2; exit 1; }

nodes=0
node node/run.mjs \
  --node-cmd "node $ROOT/dist/src/main.js" \
  --chain-cmd "node $ROOT/dist/src/devnet/chain-main.js --port 0 --initial-blocks 101" \
  --junit "$JUNIT" > "$WORK/node.tap" || nodes=$?
grep -v '^ok ' "$WORK/node.tap" || true
[ "$nodes" -eq 0 ] || { echo "conformance-copy-out: the node runner failed (status $nodes; JUnit XML: $JUNIT)" >&2; exit 1; }
echo "# conformance-copy-out: both runners passed from a copy of conformance/ alone (JUnit XML in $JUNIT_DIR)"
