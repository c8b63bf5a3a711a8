#!/usr/bin/env bash
# The container image, built and run with a real Docker engine. Starts its own
# dockerd (Debian's docker.io) in the background, with every path under a temporary
# directory and no networking of its own (--bridge=none, no iptables): builds and
# containers use the host's network, on loopback addresses and free ports only. No
# container registry is reachable, so the base images the Dockerfiles name are built as
# stand-ins first (scripts/image-base.sh). Then, as an operator would:
#   1. the image builds unchanged; it holds no tests, dev dependencies, compilers or other
#      platforms' binaries, runs as a non-root user, and its app layers' size is reported;
#   2. its HEALTHCHECK passes and the node follows a devnet chain (run on the host);
#   3. a contract is compiled, deployed and called with the compiler and the svc CLI
#      inside the running container;
#   4. state survives docker stop/start;
#   5. `docker stop` during a catch-up of thousands of blocks ends within Docker's stop
#      timeout with exit code 0 and the database closed (the next start finds it closed);
#   6. docker-compose.yml as compose renders it (with host networking for its ports): a
#      .env's settings all reach the node, REST is published on loopback only unless
#      opened, logs rotate, state survives `down` and `up`;
#   7. the migrate-store service moves a data volume of the earlier storage engine.
# Whatever it started (engine, containers, images including the stand-ins, volumes, the
# devnet chain, its temporary directory) is stopped and removed at the end, also when a
# step fails. Needs dist/ built (npm run build) for the devnet chain.
# Usage: scripts/image-ci.sh
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
cd "$REPO"
T0=$(date +%s)
say() { echo "image-ci [$(($(date +%s) - T0))s]: $*"; }
fail() { echo "image-ci: FAILED: $*" >&2; exit 1; }
# Checks capture a command's output before matching it: under pipefail, a `grep -q` that
# leaves at its first match can kill the writer (docker logs) with SIGPIPE and fail a
# check whose line was there.

# --- tools (Debian's packages; docker-compose v1 because no `docker compose` plugin is
# packaged for Debian 12) ------------------------------------------------------------------
need=()
[ -x /usr/sbin/dockerd ] && [ -x /usr/bin/docker ] || need+=(docker.io)
command -v debootstrap >/dev/null || need+=(debootstrap)
[ -x /usr/bin/docker-compose ] || need+=(docker-compose)
command -v curl >/dev/null || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# Debian's client, the engine's own version (another client on PATH may be newer).
DOCKER=/usr/bin/docker
COMPOSE=/usr/bin/docker-compose

# --- the engine --------------------------------------------------------------------------
WORK="$(mktemp -d /tmp/svc-image-ci.XXXXXX)"
export DOCKER_HOST="unix://$WORK/docker.sock"
CHAIN_PID=""
DOCKERD_PID=""
cleanup() {
  local rc=$?
  set +e
  [ -n "$CHAIN_PID" ] && kill "$CHAIN_PID" 2>/dev/null && wait "$CHAIN_PID" 2>/dev/null
  if [ -n "$DOCKERD_PID" ] && kill -0 "$DOCKERD_PID" 2>/dev/null; then
    ids=$($DOCKER ps -aq); [ -n "$ids" ] && $DOCKER rm -f $ids >/dev/null
    # Every image (the stand-in bases too), volume and build cache.
    $DOCKER system prune -af --volumes >/dev/null
    kill "$DOCKERD_PID"
    for _ in $(seq 1 100); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$DOCKERD_PID" 2>/dev/null
  fi
  # Anything the engine left mounted under its root, deepest first.
  grep -o " $WORK[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null
  rm -rf "$WORK" "$WORK.dockerd.log"
  exit $rc
}
trap cleanup EXIT
/usr/sbin/dockerd --bridge=none --iptables=false --ip-forward=false --ip-masq=false \
  --data-root "$WORK/root" --exec-root "$WORK/exec" --pidfile "$WORK/dockerd.pid" \
  -H "$DOCKER_HOST" >"$WORK.dockerd.log" 2>&1 &
DOCKERD_PID=$!
for _ in $(seq 1 150); do $DOCKER version >/dev/null 2>&1 && break; sleep 0.2; done
$DOCKER version --format 'engine {{.Server.Version}}' >/dev/null || { tail -20 "$WORK.dockerd.log"; fail "dockerd did not start"; }
say "engine $($DOCKER version --format '{{.Server.Version}}'), storage $($DOCKER info --format '{{.Driver}}'), compose $($COMPOSE version --short)"

# --- stand-in bases and the images ---------------------------------------------------------
mkdir -p "$WORK/base"
DOCKER="$DOCKER" scripts/image-base.sh "$WORK/base" Dockerfile Dockerfile.migrate-store
say "stand-in base images built"
IMAGE=svc-node:0.1.0
tb=$(date +%s)
$DOCKER build --network host -t "$IMAGE" . >"$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log"; fail "docker build"; }
say "image built in $(($(date +%s) - tb))s"
base=$(sed -n 's/^FROM[[:space:]]\{1,\}\(node:[^[:space:]]*\).*/\1/p' Dockerfile | tail -1)
size=$($DOCKER image inspect -f '{{.Size}}' "$IMAGE")
base_size=$($DOCKER image inspect -f '{{.Size}}' "$base")
say "image $((size / 1000000)) MB, of which app layers $(((size - base_size) / 1000000)) MB over $base"

# --- 1. what the image holds ---------------------------------------------------------------
$DOCKER run --rm --network none --entrypoint sh "$IMAGE" -c '
  set -eu
  test "$(id -u)" != 0 || { echo "runs as root"; exit 1; }
  for c in gcc cc c++ g++ make python3 tsc node-gyp; do
    if command -v "$c" >/dev/null; then echo "a compiler or build tool in the image: $c"; exit 1; fi
  done
  test ! -e dist/test && test ! -e dist/bench || { echo "tests or benchmarks in the image"; exit 1; }
  test ! -e .env && test ! -e src || { echo ".env or sources in the image"; exit 1; }
  node -e "
    const fs = require(\"fs\"), path = require(\"path\");
    const pkg = JSON.parse(fs.readFileSync(\"package.json\", \"utf8\"));
    const fail = (m) => { console.error(m); process.exit(1); };
    // npm marks what only dev (or the optional earlier binding) needs in its hidden lockfile;
    // a dev dependency that a production one also needs (@types/node) stays, pruned.
    const lock = JSON.parse(fs.readFileSync(\"node_modules/.package-lock.json\", \"utf8\")).packages;
    const devOnly = Object.entries(lock).filter(([, p]) => p.dev || p.optional).map(([k]) => k);
    if (devOnly.length) fail(\"dev-only or optional packages in the image: \" + devOnly.join(\", \"));
    for (const d of Object.keys(pkg.devDependencies))
      if (fs.existsSync(path.join(\"node_modules\", d)) && !lock[\"node_modules/\" + d]) fail(\"dev dependency in the image: \" + d);
    for (const d of [\"typescript\", \"rocksdb\"]) if (fs.existsSync(path.join(\"node_modules\", d))) fail(d + \" in the image\");
    // Every native binary is an ELF for this machine; none of another platform is shipped.
    const want = { x64: 62, arm64: 183 }[process.arch];
    const natives = [], leftovers = [];
    const walk = (dir) => { for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) { if ([\"test\", \"tests\", \"__tests__\", \"deps\"].includes(e.name)) leftovers.push(p); walk(p); }
      else if (p.endsWith(\".node\")) natives.push(p);
      else if (/\\.(d\\.[cm]?ts|map|zip|cc|gyp)$/.test(e.name)) leftovers.push(p);
    } };
    walk(\"node_modules\");
    if (leftovers.length) fail(\"tests, sources, archives or typings in node_modules: \" + leftovers.slice(0, 5).join(\", \"));
    for (const f of natives) {
      const b = fs.readFileSync(f);
      if (b.readUInt32BE(0) !== 0x7f454c46 || b.readUInt16LE(18) !== want) fail(\"not a \" + process.platform + \"-\" + process.arch + \" binary: \" + f);
    }
    if (natives.length !== 2) fail(\"expected 2 native binaries (uWebSockets.js, RocksDB), found: \" + natives.join(\", \"));
    console.log(\"native binaries: \" + natives.join(\", \"));
  "
'
say "1. the image holds no tests, dev dependencies, compilers or other platforms' binaries; runs as uid 1000"

# --- a devnet chain on the host's loopback ---------------------------------------------------
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
CHAIN_PORT=$(free_port)
REST_PORT=$(free_port)
GRPC_PORT=$(free_port)
CHAIN="http://127.0.0.1:$CHAIN_PORT"
REST="http://127.0.0.1:$REST_PORT"
node dist/src/devnet/chain-main.js --port "$CHAIN_PORT" >"$WORK/chain.log" 2>&1 &
CHAIN_PID=$!
for _ in $(seq 1 100); do curl -sf "$CHAIN/devnet/info" >/dev/null && break; sleep 0.1; done
mine() { curl -sf -X POST -H 'content-type: application/json' -d "{\"blocks\":$1}" "$CHAIN/devnet/mine" >/dev/null; }
chain_height() { curl -sf "$CHAIN/blocks/tip/height"; }
status_field() { curl -sf "$1/node_status" | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(JSON.parse(s)['$2']))"; }
# Waits (up to $3 s) until the node at $1 has processed height $2.
wait_height() {
  for _ in $(seq 1 $(($3 * 5))); do
    h=$(status_field "$1" processed_height 2>/dev/null || true)
    [ "$h" = "$2" ] && return 0
    sleep 0.2
  done
  fail "the node at $1 did not reach height $2 (at ${h:-?})"
}
wait_healthy() {
  for _ in $(seq 1 $(($2 * 2))); do
    s=$($DOCKER inspect -f '{{.State.Health.Status}}' "$1")
    [ "$s" = healthy ] && return 0
    [ "$($DOCKER inspect -f '{{.State.Running}}' "$1")" = true ] || break
    sleep 0.5
  done
  $DOCKER logs --tail 20 "$1" >&2
  fail "$1 is not healthy ($s)"
}

# --- 2. HEALTHCHECK, following the chain -----------------------------------------------------
NODE_ENV_ARGS=(-e "SVC_REST_ADDRESS=127.0.0.1:$REST_PORT" -e "SVC_BIND_ADDRESS=127.0.0.1:$GRPC_PORT"
  -e "SVC_PUBLIC_URL=http://127.0.0.1:$GRPC_PORT" -e "SVC_ESPLORA_URL=$CHAIN" -e SVC_BLOCK_CHECK_INTERVAL_S=0.2
  -e SVC_ESPLORA_REQUESTS_PER_HOUR=7200000 -e SVC_ESPLORA_BURST=2000 -e SVC_ESPLORA_MAX_CONCURRENT=16 -e SVC_WORKERS_POOL_SIZE=1)
# The image's own HEALTHCHECK command, checked every second instead of every 30 s.
$DOCKER run -d --name svc-ci-node --network host --health-interval 1s -v svc-ci-data:/data "${NODE_ENV_ARGS[@]}" "$IMAGE" >/dev/null
wait_healthy svc-ci-node 60
mine 3
wait_height "$REST" "$(chain_height)" 60
say "2. healthy (the image's HEALTHCHECK), follows the devnet to height $(chain_height)"

# --- 3. a contract compiled, deployed and called from inside the image -----------------------
KEY=$(node -e "console.log(require('crypto').randomBytes(32).toString('hex'))")
in_image() { $DOCKER exec -i -e "SVC_NODE_URL=$REST" -e "SVC_ESPLORA_URL=$CHAIN" -e "SVC_WALLET_KEY=$KEY" svc-ci-node "$@"; }
in_image node dist/src/cli/svc.js devnet fund >/dev/null
in_image sh -c 'cat > /tmp/counter.svc' <test/fixtures/contracts/counter.svc
in_image node dist/src/compiler/cli.js /tmp/counter.svc -o /tmp/counter.json >/dev/null
CONTRACT=$(in_image node dist/src/cli/svc.js deploy /tmp/counter.json --json | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(JSON.parse(s).contract_id))")
mine 1
in_image node dist/src/cli/svc.js contract "$CONTRACT" --wait --interval 0.2 --timeout 60 >/dev/null 2>&1 || fail "the deploy did not become active"
CALL=$(in_image node dist/src/cli/svc.js call "$CONTRACT" bump u64:5 --json | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(JSON.parse(s).txid))")
mine 1
in_image node dist/src/cli/svc.js status "$CALL" --wait --interval 0.2 --timeout 60 >/dev/null 2>&1 || fail "the call was not executed"
count() { curl -sf "$REST/v2/$CONTRACT/count" | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(JSON.parse(s).value))"; }
[ "$(count)" = 5 ] || fail "the counter reads $(count), not 5"
say "3. contract $CONTRACT compiled, deployed and called from inside the image: count = 5"

# --- 4. state survives docker stop/start ------------------------------------------------------
root=$(status_field "$REST" state_root)
height=$(status_field "$REST" processed_height)
$DOCKER stop svc-ci-node >/dev/null
[ "$($DOCKER inspect -f '{{.State.ExitCode}}' svc-ci-node)" = 0 ] || fail "docker stop: exit code $($DOCKER inspect -f '{{.State.ExitCode}}' svc-ci-node)"
$DOCKER start svc-ci-node >/dev/null
wait_healthy svc-ci-node 60
wait_height "$REST" "$height" 30
[ "$(status_field "$REST" state_root)" = "$root" ] && [ "$(count)" = 5 ] || fail "state changed across stop/start"
say "4. state survives docker stop/start (height $height, count 5)"

# --- 5. docker stop during a catch-up of thousands of blocks ----------------------------------
# The catch-up runs as on a public endpoint, its budget paced (20 requests a second, a
# burst of 10): the 300 header pages of 3,000 blocks take ~15 s, so the stop lands in
# the middle of the walk on any machine. Unpaced, a light node walks them in a moment and
# applies its header-only blocks in runs, and the catch-up could end between two looks.
$DOCKER stop svc-ci-node >/dev/null && $DOCKER rm svc-ci-node >/dev/null
mine 3000
tip=$(chain_height)
$DOCKER run -d --name svc-ci-node --network host --health-interval 1s -v svc-ci-data:/data "${NODE_ENV_ARGS[@]}" \
  -e SVC_ESPLORA_REQUESTS_PER_HOUR=72000 -e SVC_ESPLORA_BURST=10 "$IMAGE" >/dev/null
header_height() { curl -sf "$REST/node_status" | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(JSON.parse(s).chain.header_height ?? 0))"; }
# Well into the catch-up (300 headers walked), far from its end.
for _ in $(seq 1 300); do
  at=$(header_height 2>/dev/null || echo 0)
  [ "$at" -gt $((height + 300)) ] 2>/dev/null && break
  sleep 0.1
done
[ "$at" -gt $((height + 300)) ] && [ "$at" -lt $((tip - 500)) ] || fail "the stop would not land in the catch-up (headers at $at of $tip)"
ts=$(date +%s%N)
$DOCKER stop svc-ci-node >/dev/null # Docker's default timeout: 10 s, then SIGKILL (exit 137)
stop_ms=$((($(date +%s%N) - ts) / 1000000))
code=$($DOCKER inspect -f '{{.State.ExitCode}}' svc-ci-node)
$DOCKER logs svc-ci-node >"$WORK/stop.log" 2>&1
[ "$code" = 0 ] || { tail -20 "$WORK/stop.log"; fail "docker stop during the catch-up: exit code $code after $stop_ms ms"; }
grep -q '"msg":"database closed"' "$WORK/stop.log" || fail "no 'database closed' line"
! grep -q 'killing it' "$WORK/stop.log" || fail "a child was killed"
# The next start finds the database closed (the writer warns when the last run left it open).
$DOCKER start svc-ci-node >/dev/null
wait_healthy svc-ci-node 60
! grep -q 'did not close the database' <<<"$($DOCKER logs svc-ci-node 2>&1)" || fail "the database was left open"
wait_height "$REST" "$tip" 180
[ "$(count)" = 5 ] || fail "state lost across the stop during the catch-up"
$DOCKER stop svc-ci-node >/dev/null
say "5. docker stop at header $at of $tip (catch-up): exit 0 in $stop_ms ms, database closed; the catch-up then finished at $tip"

# --- 6. docker-compose.yml: every setting passes through, state survives down/up ---------------
# Compose runs its own rendering of docker-compose.yml (`config`: .env read, variables
# checked and filled in), with the published ports replaced by the host's network for
# containers and builds: this engine gives them no other network, and compose 1.x
# refuses ports with it. The ports are checked in the rendering instead. The rendering
# lives in a directory of its own, so builds are pointed back at the checkout; the
# image's HEALTHCHECK runs every second instead of every 30 s.
compose_project() {
  mkdir -p "$WORK/$1"
  cp docker-compose.yml "$WORK/$1/"
  cat >"$WORK/$1/.env"
  (cd "$WORK/$1" && $COMPOSE -f docker-compose.yml config >rendered.yml) || fail "compose config ($1)"
  python3 -c '
import sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
for name, s in c["services"].items():
    s.pop("ports", None)
    s["network_mode"] = "host"
    if name == "node":
        s["healthcheck"] = {"interval": "1s"}
    if "build" in s:
        s["build"]["context"] = sys.argv[3]
        s["build"]["network"] = "host"
yaml.safe_dump(c, open(sys.argv[2], "w"))' "$WORK/$1/rendered.yml" "$WORK/$1/run.yml" "$REPO"
}
compose() { local p="$1"; shift; (cd "$WORK/$p" && $COMPOSE -p "$p" -f run.yml "$@"); }
ports_of() { python3 -c '
import sys, yaml
for p in yaml.safe_load(open(sys.argv[1]))["services"]["node"]["ports"]:
    print(p if isinstance(p, str) else "%s:%s:%s" % (p.get("host_ip", "*"), p["published"], p["target"]))' "$WORK/$1/rendered.yml" | tr '\n' ' '; }
GOSSIP_KEY=$(node -e "console.log(require('crypto').randomBytes(32).toString('hex'))")
# Settings compose used to drop (rate limits, interval, start height) go in .env.
compose_project svcci <<EOF
SVC_PUBLIC_URL=http://127.0.0.1:$GRPC_PORT
SVC_GOSSIP_PRIVATE_KEY=$GOSSIP_KEY
SVC_NODE_ID=compose-ci
SVC_REST_ADDRESS=127.0.0.1:$REST_PORT
SVC_BIND_ADDRESS=127.0.0.1:$GRPC_PORT
SVC_ESPLORA_URL=$CHAIN
SVC_ESPLORA_REQUESTS_PER_HOUR=7200000
SVC_ESPLORA_BURST=2000
SVC_ESPLORA_MAX_CONCURRENT=16
SVC_BLOCK_CHECK_INTERVAL_S=0.2
SVC_WORKERS_POOL_SIZE=1
SVC_START_HEIGHT=$(chain_height)
EOF
[ "$(ports_of svcci)" = "127.0.0.1:8080:8080/tcp *:50051:50051 " ] || fail "compose publishes $(ports_of svcci), not REST on loopback and gRPC on every interface"
compose_project svcports <<EOF
SVC_PUBLIC_URL=http://127.0.0.1:$GRPC_PORT
SVC_GOSSIP_PRIVATE_KEY=$GOSSIP_KEY
REST_PUBLISH=0.0.0.0:8080
EOF
[ "$(ports_of svcports)" = "0.0.0.0:8080:8080/tcp *:50051:50051 " ] || fail "REST_PUBLISH does not open REST: $(ports_of svcports)"
mkdir -p "$WORK/svcbad" && cp docker-compose.yml "$WORK/svcbad/" && : >"$WORK/svcbad/.env"
(cd "$WORK/svcbad" && $COMPOSE config >/dev/null 2>&1) && fail "compose accepted an .env without SVC_PUBLIC_URL and SVC_GOSSIP_PRIVATE_KEY"
compose svcci up -d --no-build node 2>"$WORK/compose.log" || { cat "$WORK/compose.log"; fail "compose up"; }
cname=$(compose svcci ps -q node)
wait_healthy "$cname" 60
[ "$(status_field "$REST" node_id)" = compose-ci ] || fail "SVC_NODE_ID did not reach the node"
for v in SVC_ESPLORA_REQUESTS_PER_HOUR=7200000 SVC_BLOCK_CHECK_INTERVAL_S=0.2 SVC_START_HEIGHT=; do
  grep -q "^$v" <<<"$($DOCKER exec "$cname" env)" || fail "$v from .env did not reach the node"
done
[ "$($DOCKER inspect -f '{{.HostConfig.LogConfig.Type}} {{.HostConfig.LogConfig.Config}}' "$cname")" = "json-file map[max-file:5 max-size:20m]" ] || fail "no log rotation"
mine 2
wait_height "$REST" "$(chain_height)" 60
croot=$(status_field "$REST" state_root)
cheight=$(status_field "$REST" processed_height)
compose svcci down 2>>"$WORK/compose.log" || { cat "$WORK/compose.log"; fail "compose down"; }
compose svcci up -d --no-build node 2>>"$WORK/compose.log" || { cat "$WORK/compose.log"; fail "compose up (again)"; }
old_cname=$cname
cname=$(compose svcci ps -q node)
[ "$cname" != "$old_cname" ] || { cat "$WORK/compose.log"; fail "compose down left the node's container $cname running"; }
wait_healthy "$cname" 60
clog=$($DOCKER logs "$cname" 2>&1)
grep -q "\"msg\":\"database open\".*\"processed_height\":$cheight" <<<"$clog" || {
  head -20 <<<"$clog"; cat "$WORK/compose.log"; fail "compose up did not resume from the volume at height $cheight"; }
[ "$(status_field "$REST" state_root)" = "$croot" ] || fail "state changed across compose down/up"
compose svcci down -v 2>>"$WORK/compose.log"
say "6. compose $($COMPOSE version --short): .env settings reach the node, REST on loopback ($(ports_of svcci)), logs rotate (5 x 20m), state survives down/up at height $cheight"

# --- 7. migrate-store from the image, on a volume of the earlier storage engine ----------------
compose_project svcmig <"$WORK/svcci/.env"
tb=$(date +%s)
compose svcmig build migrate-store >"$WORK/build-migrate.log" 2>&1 || { tail -30 "$WORK/build-migrate.log"; fail "building the migrate-store image"; }
say "migrate-store image built in $(($(date +%s) - tb))s"
# An old volume: the node's image makes /data the node user's; the old store goes in it.
$DOCKER run --rm -v svcmig_svc-data:/data -v "$REPO/test/fixtures/legacy-store/db:/fixture:ro" --user root --entrypoint sh "$IMAGE" \
  -c 'cp -r /fixture /data/svc-node && chown -R node:node /data'
compose svcmig run --rm migrate-store >"$WORK/migrate.log" 2>&1 || { cat "$WORK/migrate.log"; fail "migrate-store"; }
grep -q '^migrated /data/svc-node' "$WORK/migrate.log" || { cat "$WORK/migrate.log"; fail "migrate-store did not migrate"; }
# The node's image opens the migrated store at the fixture's tip.
want=$(node -e "const e=require('./test/fixtures/legacy-store/expected.json');console.log(e.processed_height+' '+e.processed_hash)")
got=$($DOCKER run --rm -v svcmig_svc-data:/data --network none --entrypoint node "$IMAGE" -e "(async () => {
  const { Db } = await import('/app/dist/src/writer/db.js');
  const { meta } = await import('/app/dist/src/writer/store/index.js');
  const db = await Db.open('/data/svc-node');
  const t = meta.tip.decode(await db.get(meta.tip.key));
  await db.close();
  console.log(t.height + ' ' + t.hash);
})()")
[ "$got" = "$want" ] || fail "the migrated store's tip is $got, not $want"
compose svcmig down -v 2>/dev/null
say "7. migrate-store (Node 20.11.1 image) moved an old volume; the node's image reads its tip $got"

say "all image checks passed in $(($(date +%s) - T0))s"
