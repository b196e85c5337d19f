#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, then, from outside the source tree: a program built
# with find_package(collide CONFIG) (tests/install/consumer) run against the installed
# collide-server, the installed health probe and CLI against the same server, and a one-file
# program built with `pkg-config --cflags --libs collide-client` alone.
#   install_test.sh <source dir> <build dir>
set -euo pipefail
source_dir=$1
build_dir=$2

test_name="install test"
source "$(dirname "$0")/lib.sh"

prefix=$tmp/prefix
step "cmake --install $build_dir --prefix <tmp>/prefix"
cmake --install "$build_dir" --prefix "$prefix" >"$tmp/install.log" ||
  fail "cmake --install failed: $(cat "$tmp/install.log")"
libdir=$(cd "$prefix" && dirname "$(find . -name collide-client.pc -path '*/pkgconfig/*' | head -1)")
libdir=${libdir%/pkgconfig}
for file in bin/collide-server bin/collide bin/collide-health-probe \
            include/collide/client/cpp/client.h include/collide/collide/v1/collide.pb.h \
            include/collide/collide/v1/collide.grpc.pb.h \
            "$libdir/libcollide_client.a" "$libdir/libcollide_proto.a" \
            "$libdir/cmake/collide/collideConfig.cmake" \
            "$libdir/cmake/collide/collideConfigVersion.cmake" \
            "$libdir/cmake/collide/collideTargets.cmake" "$libdir/pkgconfig/collide-client.pc"; do
  [ -f "$prefix/$file" ] || fail "not installed: $file (installed: $(cd "$prefix" && find . -type f))"
done
# The server's on-disk format is not part of the client's interface.
storage=$(cd "$prefix" && find . -name 'storage.*')
[ -z "$storage" ] || fail "the server's storage format was installed: $storage"
# The service files have absolute destinations and belong to the Debian package only.
[ ! -e "$prefix/etc" ] || fail "a plain install wrote etc/"
if grep -rq -- "$source_dir\|$build_dir" "$prefix/$libdir/cmake" "$prefix/$libdir/pkgconfig"; then
  fail "installed CMake or pkg-config files name the source or build tree"
fi
find "$prefix" -type f | sed "s|^$prefix/|  |" | sort

# Outside the source tree: a copy of the consumer, configured against the prefix only. ccache
# (when present) with the temporary directory as its base, so repeated runs hit the cache.
launcher=()
compiler=(c++)
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  compiler=(ccache c++)
  export CCACHE_BASEDIR=$tmp
fi
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
cp -r "$source_dir/tests/install/consumer" "$tmp/consumer"
step "configure and build tests/install/consumer against the prefix"
(cd "$tmp" && cmake -S consumer -B consumer-build "${generator[@]}" "${launcher[@]}" \
   -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/configure.log" 2>&1) ||
  fail "configuring the consumer failed: $(cat "$tmp/configure.log")"
grep -q "collide_DIR:PATH=$prefix/" "$tmp/consumer-build/CMakeCache.txt" ||
  fail "find_package(collide) did not find the installed package: $(grep collide_DIR "$tmp/consumer-build/CMakeCache.txt")"
(cd "$tmp" && cmake --build consumer-build >"$tmp/build.log" 2>&1) ||
  fail "building the consumer failed: $(cat "$tmp/build.log")"

step "start the installed collide-server on port 0"
start_server "$tmp/port" "$tmp/server.log" "$prefix/bin/collide-server" --address=127.0.0.1:0 \
  --port_file="$tmp/port" --data_dir="$tmp/data" --log_level=warn

step "installed collide-health-probe --address=$address"
"$prefix/bin/collide-health-probe" --address="$address" || fail "the health probe failed"

step "consumer $address"
output=$("$tmp/consumer-build/consumer" "$address") || fail "the consumer failed: $output"
echo "$output"
[ "$output" = "hit body 7 at distance 4" ] || fail "consumer printed '$output'"

step "installed collide --address=$address scene list"
"$prefix/bin/collide" --address="$address" scene list || fail "the installed CLI failed"

step "pkg-config --cflags --libs collide-client"
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
[ "$(pkg-config --modversion collide-client)" = "$(sed -n 's/^Version: //p' "$prefix/$libdir/pkgconfig/collide-client.pc")" ] ||
  fail "pkg-config --modversion"
cp "$source_dir/tests/install/pkg_config_consumer.cc" "$tmp/one.cc"
read -r -a flags <<<"$(pkg-config --cflags --libs collide-client)"
(cd "$tmp" && "${compiler[@]}" -std=c++20 -O1 one.cc -o one "${flags[@]}" >"$tmp/one.log" 2>&1) ||
  fail "building with pkg-config failed: $(cat "$tmp/one.log")"
output=$("$tmp/one") || fail "the pkg-config program failed: $output"
echo "$output"
[ "$output" = "connect: ok" ] || fail "the pkg-config program printed '$output'"
echo "install test: ok"
