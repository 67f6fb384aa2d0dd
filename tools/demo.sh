#!/usr/bin/env bash
# The README's main job: set up, build, and run the demo.
# For now the demo is the allocator benchmark (tools/umem-bench); it becomes the xdp-fwd demo on
# veth namespaces once the forwarder lands.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] && tools/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >build.configure.log 2>&1 || { cat build.configure.log; exit 1; }
cmake --build build -j "$(nproc)" >build.log 2>&1 || { cat build.log; exit 1; }
exec build/tools/umem-bench/umem-bench "$@"
