# Shared set-up for scripts/run and scripts/test: installs the Debian packages the build needs
# (only those missing, after one apt-get update) and configures a CMake build directory.
# Sourced, not run.

COLLIDE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Everything the build, the tests and the benchmark peer need, from Debian 12 (python3-*: the
# Python client, its tests and examples, run with /usr/bin/python3, and its package built with pip; clang-14 and libclang-rt-14-dev:
# the libFuzzer targets of scripts/fuzz; dpkg-dev and lintian: the Debian packages, their
# dependencies computed by dpkg-shlibdeps and their check; prometheus-cpp-dev: the server's
# /metrics endpoint; prometheus: promtool and the Prometheus server of the metrics tests;
# libbullet-dev and libembree-dev: the peers of collide-bench-core; libcivetweb-dev: the HTTP
# server of the browser viewer, --viewer_address; haproxy: the router in front of the shards in
# the scale-out test, as docker/haproxy.cfg; libtinyobjloader-dev: the OBJ reader of
# `collide mesh upload`, libassimp-dev its reader of glTF and the other mesh formats, libpng-dev
# the PNG heightmap reader of `collide heightfield upload`; python3-numpy: the Python client's
# uploads from numpy arrays, tested; libnats-dev: the NATS C client of replicated scenes
# (server/replication/); nats-server: the three-node JetStream cluster the replication
# tests start on loopback ports; golang-go, protoc-gen-go, protoc-gen-go-grpc and
# Debian's Go gRPC sources: the Go client, built offline (golang-github-golang-protobuf-1-5-dev,
# not the 1-3 one gRPC would otherwise pull in: the generated code needs protobuf's APIv2);
# default-jdk-headless, maven, libgrpc-java, the grpc-java plugin, libprotobuf-java, junit5,
# netty and the Maven plugins: the Java client, built with Maven offline against
# /usr/share/maven-repo; gson, perfmark, animal-sniffer and the common protos are in grpc-java's
# POMs there without being dependencies of the libgrpc-java package).
COLLIDE_PACKAGES=(
  g++ cmake ninja-build ccache pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev libbullet-dev libembree-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libspdlog-dev libfmt-dev libcli11-dev
  openssl
  prometheus-cpp-dev prometheus libcivetweb-dev
  python3 python3-grpcio python3-protobuf python3-yaml python3-venv python3-pip python3-setuptools
  python3-numpy
  clang-14 libclang-rt-14-dev
  dpkg-dev lintian
  haproxy
  libtinyobjloader-dev libassimp-dev libpng-dev
  golang-go protoc-gen-go protoc-gen-go-grpc golang-google-grpc-dev golang-google-protobuf-dev
  golang-github-golang-protobuf-1-5-dev
  default-jdk-headless maven libgrpc-java protobuf-compiler-grpc-java-plugin libprotobuf-java
  libnetty-java junit5 libmaven-compiler-plugin-java libmaven-resources-plugin-java
  libmaven-jar-plugin-java libmaven-install-plugin-java libsurefire-java
  libbuild-helper-maven-plugin-java libmaven-dependency-plugin-java
  libgoogle-gson-java libperfmark-java libanimal-sniffer-java libgoogle-common-protos-java
  libnats-dev nats-server
)

collide_log() { echo "[collide] $*" >&2; }

# collide_apt_install <package...>: installs the given Debian packages (after one apt-get update),
# through sudo when not root.
collide_apt_install() {
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      collide_log "missing packages: $*; run as root or install sudo"
      return 1
    fi
  fi
  collide_log "installing $*"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "$@" >/dev/null
}

# Installs whichever of COLLIDE_PACKAGES is missing; silent when nothing is.
collide_install_packages() {
  local missing=()
  local pkg
  for pkg in "${COLLIDE_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$pkg")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  collide_apt_install "${missing[@]}"
}

# Node.js and npm for the Node client's tests: Debian's nodejs and npm, only when the commands
# are missing (a Node.js installed another way, with its own npm, is kept).
collide_install_node() {
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 && return 0
  collide_apt_install nodejs npm
}

# Debian's Chromium for the viewer's browser test (client/viewer/test/browser.test.js), only
# when missing.
collide_install_chromium() {
  command -v chromium >/dev/null 2>&1 && return 0
  collide_apt_install chromium
}

# collide_npm_ci [dir]: installs the npm dependencies of client/node (or of `dir`, e.g.
# client/viewer) from its committed lockfile (`npm ci`) when node_modules is missing or was
# installed from a different lockfile.
collide_npm_ci() {
  local dir="${1:-$COLLIDE_ROOT/client/node}"
  [ -f "$dir/package-lock.json" ] || return 0
  local stamp="$dir/node_modules/.collide-lockfile-sha256"
  local want
  want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    return 0
  fi
  collide_log "npm ci in ${dir#"$COLLIDE_ROOT"/}"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) || return 1
  echo "$want" >"$stamp"
}

# ccache keys on paths relative to the checkout, not on the checkout's folder: a second clone
# (CI's fresh one, a worktree) reuses the objects of the first. Paths given with -D (the test
# helpers' paths to the programs they run) stay absolute and keep such objects apart.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$COLLIDE_ROOT}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}

# collide_configure <build dir> [cmake args...]: configures (Ninja, ccache) when needed.
collide_configure() {
  local dir=$1
  shift
  local generator=()
  command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
  if [ ! -f "$COLLIDE_ROOT/$dir/CMakeCache.txt" ]; then
    cmake -S "$COLLIDE_ROOT" -B "$COLLIDE_ROOT/$dir" "${generator[@]}" "$@" >/dev/null
  else
    cmake -S "$COLLIDE_ROOT" -B "$COLLIDE_ROOT/$dir" "$@" >/dev/null
  fi
}

collide_jobs() { nproc 2>/dev/null || echo 2; }
