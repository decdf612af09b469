#!/usr/bin/env bash
# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

# Build the golden driver: robot_localization's UNMODIFIED ekf.cpp, ukf.cpp, filter_base.cpp and
# filter_utilities.cpp, extracted at build time from ../shared/ros2_sources/robot_localization.tar.gz
# (never copied into the repository), compiled with the system g++ against Eigen 3 together with
# driver.cpp and the stand-in headers in standins/ (rclcpp Time/Duration, angles, std_msgs Header).
#
# The result is cached outside the clone, keyed by the hash of the tarball, of this directory's
# sources and of the compiler version:
#   ${XDG_CACHE_HOME:-~/.cache}/vepd_ros/rl_golden/<key>/driver
# A second run costs a hash. Prints the driver's path on stdout (last line).
# Exit 0: built or reused. Exit 77: skipped (no ../shared, no g++ or no Eigen), with the reason.
# Any other non-zero exit: the build failed (compiler output above).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
TARBALL="${RL_SOURCES_TARBALL:-$REPO/../shared/ros2_sources/robot_localization.tar.gz}"
CXX="${CXX:-g++}"
EIGEN="${EIGEN_INCLUDE:-/usr/include/eigen3}"

skip() { echo "rl_golden build skipped: $*" >&2; exit 77; }
[ -f "$TARBALL" ] || skip "$TARBALL not found (../shared beside the clone holds the upstream sources)"
command -v "$CXX" >/dev/null || skip "no C++ compiler ($CXX) on PATH"
[ -f "$EIGEN/Eigen/Dense" ] || skip "Eigen 3 headers not found in $EIGEN (apt-get install libeigen3-dev)"

KEY="$( { sha256sum "$TARBALL" | cut -d' ' -f1; \
          (cd "$HERE" && find driver.cpp build.sh standins -type f | LC_ALL=C sort | xargs sha256sum); \
          "$CXX" --version | head -1; echo "$EIGEN"; } | sha256sum | cut -c1-16)"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/vepd_ros/rl_golden"
OUT="$CACHE/$KEY"
if [ -x "$OUT/driver" ]; then
    echo "rl_golden: reusing $OUT/driver" >&2
    echo "$OUT/driver"
    exit 0
fi
start=$(date +%s.%N)
mkdir -p "$CACHE"
WORK="$(mktemp -d "$CACHE/.build.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
UPSTREAM=robot_localization
tar -xzf "$TARBALL" -C "$WORK" \
    "$UPSTREAM/include" \
    "$UPSTREAM/src/ekf.cpp" "$UPSTREAM/src/ukf.cpp" \
    "$UPSTREAM/src/filter_base.cpp" "$UPSTREAM/src/filter_utilities.cpp"
FLAGS=(-O2 -std=c++17 -DGOLDEN_WITH_UKF -I"$HERE/standins" -I"$WORK/$UPSTREAM/include" -I"$EIGEN")
echo "rl_golden: compiling upstream ekf.cpp ukf.cpp filter_base.cpp filter_utilities.cpp" \
     "+ driver.cpp ($("$CXX" --version | head -1), -O2)" >&2
pids=()
for src in ekf ukf filter_base filter_utilities; do
    "$CXX" "${FLAGS[@]}" -c "$WORK/$UPSTREAM/src/$src.cpp" -o "$WORK/$src.o" &
    pids+=($!)
done
"$CXX" "${FLAGS[@]}" -c "$HERE/driver.cpp" -o "$WORK/driver.o"
for pid in "${pids[@]}"; do
    wait "$pid" || { echo "rl_golden: compiling upstream sources failed (above)" >&2; exit 1; }
done
mkdir -p "$WORK/out"
"$CXX" -o "$WORK/out/driver" "$WORK"/*.o
sha256sum "$TARBALL" > "$WORK/out/SOURCES.sha256"
rm -rf "$OUT"
mv "$WORK/out" "$OUT"
echo "rl_golden: built $OUT/driver in $(echo "$(date +%s.%N) - $start" | bc | xargs printf '%.1f') s" >&2
echo "$OUT/driver"
