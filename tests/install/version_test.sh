#!/usr/bin/env bash
# One version for every package: the CMake project version is the Python package's __version__
# (written by the build), the Node package's (package.json and package-lock.json), the Java
# artifact's (client/java/pom.xml; the Go module's is the build's, from CMake), the one
# pkg-config and CPack use (from CMake directly), and CHANGELOG.md has a section for it.
#   version_test.sh <source dir> <build dir> <CMake project version>
set -euo pipefail
source_dir=$1
build_dir=$2
version=$3
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "the CMake project version '$version' is not X.Y.Z"

python_file=$build_dir/client/python/collide/_version.py
if [ -f "$python_file" ]; then
  python_version=$(sed -nE 's/^__version__ = "(.*)"$/\1/p' "$python_file")
  [ "$python_version" = "$version" ] || fail "$python_file has __version__ '$python_version'"
fi

node_dir=$source_dir/client/node
for file in package.json package-lock.json; do
  # The package's own "version" entries: package.json's, and package-lock.json's top level and
  # its "" package (the first two "version" lines of the lockfile).
  count=1
  [ "$file" = package-lock.json ] && count=2
  mapfile -t found < <(grep -m "$count" -E '^ {2,6}"version": ' "$node_dir/$file" |
                       sed -E 's/.*"version": "([^"]*)".*/\1/')
  [ ${#found[@]} -eq "$count" ] || fail "client/node/$file: no version"
  for node_version in "${found[@]}"; do
    [ "$node_version" = "$version" ] || fail "client/node/$file has version '$node_version'"
  done
done

# The Java artifact's own <version> (the first one of pom.xml, after <artifactId>collide-client).
java_version=$(sed -n '/<artifactId>collide-client<\/artifactId>/,/<version>/{s/.*<version>\(.*\)<\/version>.*/\1/p}' \
  "$source_dir/client/java/pom.xml" | head -1)
[ "$java_version" = "$version" ] || fail "client/java/pom.xml has version '$java_version'"

grep -qE "^## $version( |\$)" "$source_dir/CHANGELOG.md" || fail "CHANGELOG.md has no '## $version' section"

if [ $failures -gt 0 ]; then
  echo "versions disagree with the CMake project version $version"
  exit 1
fi
echo "version $version: CMake, the Python package, the Node package, the Java artifact, CHANGELOG.md"
