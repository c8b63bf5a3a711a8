#!/bin/sh
# The Dockerfile's build stage, after `npm prune --omit=dev`: leaves in node_modules only
# what the image's own Node on its own platform loads. The native packages ship every
# platform's binaries (uWebSockets.js: 24, one per OS, CPU and Node ABI; RocksDB: the
# C++ sources, a zip of prebuilds and a darwin build), about 170 MB of which this
# platform loads 20 MB. Type declarations, source maps and the packages' own tests are
# never loaded at run time either. Fails when the binary this platform needs is missing,
# so a base image of another platform or Node line cannot produce an image that only
# fails at start.
# Usage (in /app): sh scripts/prune-image.sh
set -eu
abi=$(node -p 'process.platform + "_" + process.arch + "_" + process.versions.modules')
platform=$(node -p 'process.platform + "-" + process.arch')

uws=node_modules/uWebSockets.js/dist/bin
[ -f "$uws/uws_$abi.node" ] || { echo "prune-image: uWebSockets.js has no binary for $abi" >&2; exit 1; }
find "$uws" -name '*.node' ! -name "uws_$abi.node" -delete

rocks=node_modules/@nxtedition/rocksdb
[ -f "$rocks/prebuilds/$platform/@nxtedition+rocksdb.node" ] || { echo "prune-image: @nxtedition/rocksdb has no prebuild for $platform" >&2; exit 1; }
find "$rocks/prebuilds" -mindepth 1 -maxdepth 1 ! -name "$platform" -exec rm -rf {} +
rm -rf "$rocks/deps" "$rocks/prebuilds.zip" "$rocks/binding.cc" "$rocks/binding.gyp" "$rocks/build.sh" "$rocks"/*.h

find node_modules -type d \( -name test -o -name tests -o -name __tests__ \) -prune -exec rm -rf {} +
find node_modules -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' \) -delete
# The workspace's packages keep only their package.json and compiled JavaScript.
rm -rf packages/*/src packages/*/tsconfig.json packages/*/dist/.tsbuildinfo
find packages -type f \( -name '*.d.ts' -o -name '*.map' \) -delete
rm -f scripts/prune-image.sh
