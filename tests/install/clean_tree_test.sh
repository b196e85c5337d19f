#!/usr/bin/env bash
# The documented packaging and install commands (README.md, Install) leave no file in the source
# or the build tree: runs each as documented, with its outputs in a temporary directory,
#   cpack --config <build>/CPackConfig.cmake -G DEB -B <tmp>/packages
#   <venv>/bin/pip install --no-build-isolation --no-deps <build>/client/python
#   node client/node/scripts/pack.js <tmp>/node          (when node and npm are installed)
# and compares, before and after, `git status --porcelain --ignored` of the source tree (every
# path outside the build directories) and the listing of the build directory's top level and of
# the package directories the commands read (<build>/client/python, client/node). Run alone
# (ctest RUN_SERIAL), so that no other test writes meanwhile.
#   clean_tree_test.sh <source dir> <build dir> <python>
set -euo pipefail
source_dir=$1
build_dir=$2
python=$3

command -v git >/dev/null 2>&1 && git -C "$source_dir" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
  { echo "not a git checkout: skipped"; exit 77; }
test_name="clean tree test"
source "$(dirname "$0")/lib.sh"

build_real=$(cd "$build_dir" && pwd -P)
source_real=$(cd "$source_dir" && pwd -P)
# The build directory's path inside the source tree ("" when it is elsewhere).
case "$build_real/" in
  "$source_real"/*) build_in_tree=${build_real#"$source_real"/} ;;
  *) build_in_tree= ;;
esac

# Everything git sees in the source tree (tracked changes, untracked and ignored files, each
# listed), but what lies in a build directory (build*/, the test's own).
source_state() {
  git -C "$source_dir" status --porcelain --ignored --untracked-files=all |
    awk -v build="$build_in_tree" '{path = substr($0, 4)}
      path ~ /^build[^\/]*\// {next}
      build != "" && index(path, build "/") == 1 {next}
      {print}' | LC_ALL=C sort
}
# The build directory's top level (where CMake's install script writes its manifests) and the
# package directories the commands read.
build_state() {
  (cd "$build_dir" && find . -maxdepth 1 -not -name Testing | LC_ALL=C sort
   find client/python -path client/python/CMakeFiles -prune -o -print | LC_ALL=C sort)
  (cd "$source_dir/client/node" && find . -path ./node_modules -prune -o -print | LC_ALL=C sort)
}
check_unchanged() {  # check_unchanged WHAT BEFORE AFTER
  if [ "$2" != "$3" ]; then
    fail "$1 changed the trees:"$'\n'"$(diff <(echo "$2") <(echo "$3") | grep '^[<>]')"
  fi
  echo "  the source and build trees are as they were"
}

step "cpack --config <build>/CPackConfig.cmake -G DEB -B <tmp>/packages"
source_before=$(source_state)
build_before=$(build_state)
(cd "$source_dir" && cpack --config "$build_dir/CPackConfig.cmake" -G DEB -B "$tmp/packages" \
   >"$tmp/cpack.log" 2>&1) || fail "cpack failed: $(cat "$tmp/cpack.log")"
ls "$tmp/packages"/*.deb >/dev/null 2>&1 || fail "cpack made no package: $(ls "$tmp/packages")"
check_unchanged cpack "$source_before$build_before" "$(source_state)$(build_state)"

step "pip install --no-build-isolation --no-deps <build>/client/python (into a new venv)"
"$python" -m venv --system-site-packages "$tmp/venv" >"$tmp/venv.log" 2>&1 ||
  fail "venv failed: $(cat "$tmp/venv.log")"
(cd "$source_dir" && PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 "$tmp/venv/bin/pip" install \
   --no-build-isolation --no-deps "$build_dir/client/python" >"$tmp/pip.log" 2>&1) ||
  fail "pip install failed: $(cat "$tmp/pip.log")"
check_unchanged "pip install" "$source_before$build_before" "$(source_state)$(build_state)"

if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  step "node client/node/scripts/pack.js <tmp>/node"
  (cd "$source_dir" && node client/node/scripts/pack.js "$tmp/node" >"$tmp/pack.log" 2>&1) ||
    fail "pack.js failed: $(cat "$tmp/pack.log")"
  ls "$tmp/node"/collide-client-*.tgz >/dev/null 2>&1 || fail "pack.js made no tarball"
  check_unchanged pack.js "$source_before$build_before" "$(source_state)$(build_state)"
else
  echo "node or npm is not installed: the Node package is not packed"
fi
echo "clean tree test: ok"
