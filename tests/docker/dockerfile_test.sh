#!/usr/bin/env bash
# Checks docker/Dockerfile without a Docker engine (none runs on the build machines):
#  1. its build stage builds only through the repository's scripts: the packages come from the
#     scripts/lib/setup.sh installers that scripts/test calls (the same set), the build is
#     ./scripts/test, the command CI (.ci/run) starts with, and the Debian packages are made by
#     the cpack command tests/install/deb_test.sh runs (the build's CPackConfig.cmake, -G DEB);
#     no RUN step calls a compiler or build tool itself;
#  2. every binary it copies out of the build stage is one the build makes (so a renamed
#     target breaks this test, not only the image);
#  3. the runtime stage is debian:12-slim plus the collide-server package and nothing else: it
#     copies only the .deb cpack makes (its file name pattern) out of the build stage, installs it
#     with apt-get as its only package, adds only docker/entrypoint.sh, runs as the user the
#     package's postinst creates, keeps its data in a VOLUME at the server's --data_dir, and its
#     HEALTHCHECK runs the package's health probe. tests/docker/image_package_test.sh checks the
#     paths against the built package and runs the entrypoint with its binaries.
# Usage: dockerfile_test.sh <repository root> <build dir>
set -euo pipefail
root=$1
build=$2
dockerfile=$root/docker/Dockerfile
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The Dockerfile with continuation lines joined and comments dropped: one instruction a line.
instructions=$(sed -e '/^[[:space:]]*#/d' "$dockerfile" | sed -e ':a' -e '/\\$/N; s/\\\n//; ta' |
               tr -s ' ')
stage() { awk -v name="$1" '$1 == "FROM" && $3 == "AS" {on = ($4 == name); next} on' <<<"$instructions"; }

# ---- 1. the build stage runs the scripts and cpack, and nothing else builds ---------------
build_stage=$(stage build)
mapfile -t runs < <(grep -E '^RUN ' <<<"$build_stage" | sed -E 's/^RUN +//')
[ ${#runs[@]} -gt 0 ] || fail "the build stage has no RUN step"
# The installers scripts/test calls (they need root when something is missing, so the image
# runs them as root before ./scripts/test runs as the build user).
installers=$(grep -oE '^collide_install_[a-z_]+' "$root/scripts/test" | sort -u | tr '\n' ' ')
[ -n "$installers" ] || fail "scripts/test calls no collide_install_* function"
install_pattern="^bash -c 'source scripts/lib/setup.sh( && collide_install_[a-z_]+)+'\$"
# The packages: the same cpack invocation as tests/install/deb_test.sh, on the build directory
# ./scripts/test builds (build/), into /src/packages.
cpack_run='cpack --config build/CPackConfig.cmake -G DEB -B /src/packages'
grep -qF 'cpack --config "$build_dir/CPackConfig.cmake" -G DEB -B ' "$root/tests/install/deb_test.sh" ||
  fail "tests/install/deb_test.sh no longer makes the packages with 'cpack --config <build>/CPackConfig.cmake -G DEB'"
grep -qE '^dir=build$' "$root/scripts/test" || fail "scripts/test no longer builds in build/"
saw_install=0
saw_test=0
saw_cpack=0
for run in "${runs[@]}"; do
  if [[ $run =~ $install_pattern ]]; then
    saw_install=1
    called=$(grep -oE 'collide_install_[a-z_]+' <<<"$run" | sort -u | tr '\n' ' ')
    [ "$called" = "$installers" ] ||
      fail "the image runs the installers '$called', scripts/test runs '$installers'"
    continue
  fi
  case "$run" in
    './scripts/test ${COLLIDE_CTEST_ARGS}') saw_test=1 ;;
    "$cpack_run") saw_cpack=1 ;;
    useradd\ *) ;;  # the build user
    *) fail "build stage step is neither a repository script, cpack nor the build user: RUN $run" ;;
  esac
done
[ $saw_install -eq 1 ] || fail "the build stage does not install through scripts/lib/setup.sh"
[ $saw_test -eq 1 ] || fail "the build stage does not run ./scripts/test"
[ $saw_cpack -eq 1 ] || fail "the build stage does not make the packages with: $cpack_run"
# CI's first step is the same script (run bare or through .ci/run's timing wrapper `stage`).
grep -qxE '(stage )?\./scripts/test' "$root/.ci/run" || fail ".ci/run no longer runs ./scripts/test"
# No step anywhere invokes a compiler or build tool directly (the cpack step aside).
tools='cmake|make|ninja|g\+\+|gcc|c\+\+|clang|clang\+\+|protoc|ctest'
if grep -E '^RUN ' <<<"$instructions" | grep -vxF "RUN $cpack_run" | grep -Ew "$tools" >/dev/null; then
  fail "a RUN step calls a build tool itself: $(grep -E '^RUN ' <<<"$instructions" |
        grep -vxF "RUN $cpack_run" | grep -Ew "$tools" | head -1)"
fi

# ---- 2. what is copied out of the build exists there -----------------------------------------
mapfile -t copied < <(grep -E '^COPY --from=build ' <<<"$instructions" |
                      tr ' ' '\n' | grep -E '^/src/build/' | sed 's|^/src/build/||')
for path in "${copied[@]}"; do
  if [ -x "$build/$path" ] && [ -f "$build/$path" ]; then
    :
  else
    fail "the Dockerfile copies build/$path, which the build did not make"
  fi
done

# ---- 3. the runtime stage: the package and the entrypoint, nothing else ----------------------
[ "$(grep -E '^FROM ' <<<"$instructions" | tail -1)" = "FROM debian:12-slim AS runtime" ] ||
  fail "the last stage (docker build's default target) is not 'FROM debian:12-slim AS runtime'"
runtime_stage=$(stage runtime)
# cpack's file name (CPACK_DEBIAN_FILE_NAME DEB-DEFAULT): <package>_<version>-<release>_<arch>.deb.
deb_glob=/src/packages/collide-server_*.deb
grep -qE '^set\(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT\)$' "$root/cmake/CollidePackaging.cmake" ||
  fail "cmake/CollidePackaging.cmake no longer names the packages <name>_<version>_<arch>.deb"
grep -qE '^set\(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME collide-server\)$' \
  "$root/cmake/CollidePackaging.cmake" || fail "the runtime package is no longer collide-server"
mapfile -t runtime_copies < <(grep -E '^COPY ' <<<"$runtime_stage")
deb_dir=""
for copy in "${runtime_copies[@]}"; do
  case "$copy" in
    "COPY --from=build $deb_glob "*/) deb_dir=${copy##* } ;;
    "COPY docker/entrypoint.sh /usr/local/bin/collide-entrypoint") ;;
    *) fail "the runtime stage copies more than the package and the entrypoint: $copy" ;;
  esac
done
[ -n "$deb_dir" ] || fail "the runtime stage does not copy $deb_glob out of the build stage"
mapfile -t installs < <(grep -oE 'apt-get install [^&]*' <<<"$runtime_stage")
if [ ${#installs[@]} -ne 1 ]; then
  fail "the runtime stage runs apt-get install ${#installs[@]} times, not once"
else
  packages=$(tr ' ' '\n' <<<"${installs[0]#apt-get install }" | grep -vE '^(-.*|)$' | tr '\n' ' ')
  [ "$packages" = "${deb_dir}collide-server_*.deb " ] ||
    fail "the runtime stage's apt-get install installs '$packages', not only ${deb_dir}collide-server_*.deb"
fi
grep -qE '^RUN apt-get update' <<<"$runtime_stage" || fail "the runtime stage does not apt-get update"
if grep -E '^RUN ' <<<"$runtime_stage" | grep -E 'dpkg -i|apt install|curl|wget' >/dev/null; then
  fail "the runtime stage installs by other means than apt-get install of the package"
fi
# The user: the one the package's postinst makes.
package_user=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$root/packaging/postinst" |
               grep -E '^ *adduser --system ' | awk '{print $NF}' | head -1)
[ -n "$package_user" ] || fail "packaging/postinst makes no system user"
[ "$(grep -E '^USER ' <<<"$runtime_stage" | tail -1)" = "USER $package_user" ] ||
  fail "the runtime stage does not run as the package's user $package_user"
# The data: the server's --data_dir (COLLIDE_DATA_DIR) is the VOLUME, made for the package's user
# by the package's postinst (one place: the Dockerfile does not make it again).
data_dir=$(grep -oE 'COLLIDE_DATA_DIR=[^ ]+' <<<"$runtime_stage" | cut -d= -f2)
[ -n "$data_dir" ] || fail "the runtime stage sets no COLLIDE_DATA_DIR"
grep -qxF "VOLUME [\"$data_dir\"]" <<<"$runtime_stage" || fail "$data_dir is not the VOLUME"
grep -qE "^ *install -d -o $package_user -g $package_user -m 0700 $data_dir\$" "$root/packaging/postinst" ||
  fail "packaging/postinst does not make $data_dir for $package_user (mode 0700)"
! grep -qE "(mkdir|chown|chmod)[^&]* $data_dir" <<<"$runtime_stage" ||
  fail "the runtime stage makes $data_dir itself, beside the package's postinst"
grep -qF "/var/lib/collide" "$root/packaging/collide-server.service" && [ "$data_dir" = /var/lib/collide ] ||
  fail "the image's data directory $data_dir is not the package's (/var/lib/collide)"
health=$(grep -E '^HEALTHCHECK ' <<<"$runtime_stage")
[[ $health =~ CMD\ \[\"(/usr/bin/collide-health-probe)\" ]] ||
  fail "the HEALTHCHECK does not run the package's /usr/bin/collide-health-probe: $health"
grep -qxF 'ENTRYPOINT ["collide-entrypoint"]' <<<"$runtime_stage" ||
  fail "the runtime stage's ENTRYPOINT is not collide-entrypoint"

if [ $failures -gt 0 ]; then
  echo "$failures problem(s) in docker/Dockerfile"
  exit 1
fi
echo "docker/Dockerfile: builds through ./scripts/test and cpack only; the runtime stage is" \
     "debian:12-slim + apt-get install of the collide-server .deb, user $package_user, VOLUME $data_dir"
