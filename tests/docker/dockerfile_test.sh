#!/usr/bin/env bash
# Checks docker/Dockerfile without a Docker engine (none runs on the build machines):
#  1. its build stage builds only through the repository's scripts: the packages come from the
#     scripts/lib/setup.sh installers that scripts/test calls (the same set), and the build is
#     ./scripts/test, the command CI (.ci/run) starts with; no RUN step calls a compiler or
#     build tool itself;
#  2. every binary it copies out of the build stage is one the build makes (so a renamed
#     target breaks this test, not only the image);
#  3. the runtime stage installs the Debian package of every shared library those binaries
#     load (ldd + dpkg -S on this Debian 12 machine, the image's base).
# Usage: dockerfile_test.sh <repository root> <build dir>
set -euo pipefail
root=$1
build=$2
dockerfile=$root/docker/Dockerfile
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The Dockerfile with continuation lines joined and comments dropped: one instruction a line.
instructions=$(sed -e '/^[[:space:]]*#/d' "$dockerfile" | sed -e ':a' -e '/\\$/N; s/\\\n//; ta')

# ---- 1. the build stage runs the scripts, and nothing else builds -------------------------
build_stage=$(awk '/^FROM .* AS build$/{on=1; next} /^FROM /{on=0} on' <<<"$instructions")
mapfile -t runs < <(grep -E '^RUN ' <<<"$build_stage" | sed -E 's/^RUN +//')
[ ${#runs[@]} -gt 0 ] || fail "the build stage has no RUN step"
# The installers scripts/test calls (they need root when something is missing, so the image
# runs them as root before ./scripts/test runs as the build user).
installers=$(grep -oE '^collide_install_[a-z_]+' "$root/scripts/test" | sort -u | tr '\n' ' ')
[ -n "$installers" ] || fail "scripts/test calls no collide_install_* function"
install_pattern="^bash -c 'source scripts/lib/setup.sh( && collide_install_[a-z_]+)+'\$"
saw_install=0
saw_test=0
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
    useradd\ *) ;;  # the build user
    *) fail "build stage step is neither a repository script nor the build user: RUN $run" ;;
  esac
done
[ $saw_install -eq 1 ] || fail "the build stage does not install through scripts/lib/setup.sh"
[ $saw_test -eq 1 ] || fail "the build stage does not run ./scripts/test"
# CI's first step is the same script (run bare or through .ci/run's timing wrapper `stage`).
grep -qxE '(stage )?\./scripts/test' "$root/.ci/run" || fail ".ci/run no longer runs ./scripts/test"
# No step anywhere invokes a compiler or build tool directly.
if grep -E '^RUN ' <<<"$instructions" |
   grep -Ew 'cmake|make|ninja|g\+\+|gcc|c\+\+|clang|clang\+\+|protoc|ctest' >/dev/null; then
  fail "a RUN step calls a build tool itself: $(grep -E '^RUN ' <<<"$instructions" |
        grep -Ew 'cmake|make|ninja|g\+\+|gcc|c\+\+|clang|clang\+\+|protoc|ctest' | head -1)"
fi

# ---- 2. the binaries copied out of the build exist in the build -----------------------------
mapfile -t copied < <(grep -E '^COPY --from=build ' <<<"$instructions" |
                      tr ' ' '\n' | grep -E '^/src/build/' | sed 's|^/src/build/||')
[ ${#copied[@]} -gt 0 ] || fail "nothing is copied out of the build stage"
binaries=()
for path in "${copied[@]}"; do
  if [ "$path" = examples/arena/cpp/collide-arena ] && [ ! -d "$root/examples/arena/cpp" ]; then
    echo "note: $path not checked: examples/arena/cpp is not in this tree yet"
    continue
  fi
  if [ -x "$build/$path" ] && [ -f "$build/$path" ]; then
    binaries+=("$build/$path")
  else
    fail "the Dockerfile copies build/$path, which the build did not make"
  fi
done

# ---- 3. the runtime stage installs the libraries' packages -----------------------------------
runtime_stage=$(awk '/^FROM .* AS runtime$/{on=1; next} /^FROM /{on=0} on' <<<"$instructions")
installed=" $(grep -E '^RUN .*apt-get install' <<<"$runtime_stage" |
              grep -oE '(lib|zlib)[a-z0-9.+-]+' | tr '\n' ' ') "
# In every Debian image (the essential packages need them).
base=" libc6 libgcc-s1 "
# Every library any of the binaries loads, with the paths dpkg may know it by (merged /usr: the
# loader's /lib path, its real path, the /usr/lib path); then one dpkg -S for all of them.
declare -A users=()
for binary in "${binaries[@]}"; do
  while read -r library; do
    users[$library]+="$(basename "$binary") "
  done < <(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// {print $3}')
done
declare -A owners=()
if [ ${#users[@]} -gt 0 ]; then
  candidates=()
  for library in "${!users[@]}"; do
    candidates+=("$library" "$(realpath "$library")" "/usr$library")
  done
  while IFS= read -r line; do
    owners[${line#*: }]=${line%%: *}
  done < <(dpkg -S "${candidates[@]}" 2>/dev/null | grep -v '^diversion' || true)
fi
for library in "${!users[@]}"; do
  owner=""
  for candidate in "$library" "$(realpath "$library")" "/usr$library"; do
    owner=${owners[$candidate]:-}
    [ -n "$owner" ] && break
  done
  owner=${owner%%:*}  # drop an architecture qualifier (libfoo:amd64)
  if [[ $owner =~ ^lib(a|ub|t|l|hwa)san[0-9] ]]; then
    # A sanitizer runtime: this build is instrumented (scripts/test --sanitize); the image is
    # built by plain ./scripts/test, whose binaries do not load it.
    echo "note: ${users[$library]}load the sanitizer runtime $owner (not shipped)"
  elif [ -z "$owner" ]; then
    fail "${users[$library]}load $library, which no Debian package owns"
  elif [[ $installed != *" $owner "* && $base != *" $owner "* ]]; then
    fail "${users[$library]}load $library from $owner, which the runtime stage does not install"
  fi
done

if [ $failures -gt 0 ]; then
  echo "$failures problem(s) in docker/Dockerfile"
  exit 1
fi
echo "docker/Dockerfile: builds through ./scripts/test only; ${#binaries[@]} binaries and their libraries covered"
