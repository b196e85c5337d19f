#!/usr/bin/env bash
# Checks the layer table of ARCHITECTURE.md: every #include in a layer's sources names either a
# standard header or a header of a layer it may depend on. Prints each violation.
set -u
root=${1:-.}
status=0
# POSIX headers the store layer may include (it is the one layer that talks to the file system).
posix_headers="dirent.h fcntl.h unistd.h sys/file.h sys/stat.h sys/types.h"
# Project folders an angle include must never name (the server's own may name system headers).
project_re='^(server|client|src|base|geom|bvh|query|history|scene|watch|store|proto|collide)/'
check() {  # check <folder or file> <allowed prefixes or files...>; angle includes: std headers
  local dir=$1
  shift
  local allowed="$*"
  [ -e "$root/$dir" ] || return 0
  while IFS= read -r line; do
    file=${line%%:*}
    # (A bash match, not a sed per line: thousands of lines, and this runs in every ctest.)
    include_re='#[[:space:]]*include[[:space:]]*[<"]([^>"]+)[>"]'
    header=""
    [[ ${line#*:} =~ $include_re ]] && header=${BASH_REMATCH[1]}
    ok=0
    if [[ ${line#*:} == *"<"* ]]; then
      # Standard headers have no extension (plus the C headers cmath and friends have none too).
      [[ $header != */* && $header != *.* ]] && ok=1
      [[ $header == immintrin.h || $header == xmmintrin.h || $header == emmintrin.h ||
         $header == smmintrin.h ]] && ok=1
      if [ "$dir" = src/store ]; then
        for posix in $posix_headers; do [[ $header == "$posix" ]] && ok=1; done
      fi
      # The server's layers talk to sockets, signals and gRPC's C core: any system header.
      [[ $dir == server* && ! $header =~ $project_re ]] && ok=1
      # The mesh layer asks for huge pages for its large arrays (src/mesh/internal/).
      [[ $dir == src/mesh && $header == sys/mman.h ]] && ok=1
      # The base layer's SHA-256 (asset contents' names) is OpenSSL's.
      [[ $dir == src/base && $header == openssl/evp.h ]] && ok=1
    else
      # A prefix allows its folder; a name with an extension allows that one header.
      for prefix in $allowed; do
        [[ $header == "$prefix"/* || ($prefix == *.h && $header == "$prefix") ]] && ok=1
      done
    fi
    if [ $ok -eq 0 ]; then
      echo "layering: $file includes $header, outside what $dir may use ($allowed + std)"
      status=1
    fi
  done < <(grep -rHnE '^[[:space:]]*#[[:space:]]*include' "$root/$dir" --include='*.h' --include='*.cc' | sed -E 's/:[0-9]+:/:/')
}
# The base layer: Abseil, the standard library and OpenSSL's digests only.
check src/base base absl
check src/geom geom
check src/bvh geom bvh
# The asset layer (meshes, heightfields) sits on geometry and the tree layer's instruction sets.
check src/mesh geom bvh mesh
# The query layer calls the asset layer for the narrow phase of mesh and heightfield bodies.
check src/query geom bvh mesh query
# The history layer (lag compensation: past-tick states and queries) sits on the query layer.
check src/history geom bvh mesh query history
# The scene layer may also use Abseil; the store adds the generated protobuf code.
check src/scene base geom bvh mesh query history scene absl
# The watch layer (standing queries) sits on the scene layer.
check src/watch base geom bvh mesh query history scene watch absl
check src/store base geom bvh mesh query history scene store absl collide/v1 google/protobuf

# The server (server/), bottom up: rpc -> convert -> the core, and infra never up to the server
# that assembles it. Each list is what the folder's files may include besides system headers.
core="base geom bvh mesh query history scene watch store"
# infra: auth, the stream registry, logs, listeners (listen_address, http_listener over civetweb),
# /metrics (prometheus-cpp). Never the options, the rpcs, the converters or the server.
check server/infra $core absl grpc grpcpp google/protobuf collide/v1 collide/version.h spdlog \
  prometheus civetweb.h server/infra
# The options (ServerOptions, ServiceLimits, Validate) and the service context the rpcs share.
for file in server/service_options.h server/service_options.cc server/service_context.h; do
  check $file $core absl server/infra server/service_options.h
done
# convert: messages to core types and back; never the rpcs or infra.
check server/convert $core absl grpc grpcpp google/protobuf collide/v1 server/convert \
  server/service_options.h
# replication: replicated scenes on NATS JetStream (the NATS C client, nats/nats.h) and the
# routers' map; the store sees it only as its ReplicationHook. Never gRPC, the options or the rpcs.
check server/replication $core absl nats spdlog collide/v1 server/replication \
  server/infra/replication_control.h server/infra/haproxy_runtime.h
# rpc: the service and its streams.
check server/rpc $core absl grpc grpcpp google/protobuf collide/v1 collide/version.h spdlog \
  server/rpc server/convert server/infra server/service_context.h server/service_options.h
# viewer: the browser viewer's HTTP API, on infra's listener; requests and answers as the API's
# messages (and its own, collide/viewer) through convert, printed by protobuf's JSON mapping.
check server/viewer $core absl civetweb.h collide/v1 collide/viewer google/protobuf \
  server/viewer server/infra server/convert server/service_options.h
# The server that assembles them, and the binaries.
for file in server/server.h server/server.cc; do
  check $file $core absl grpc grpcpp google/protobuf collide/v1 spdlog server/rpc server/infra \
    server/replication server/service_options.h server/service_context.h server/server.h
done
check server/main.cc $core absl spdlog collide/version.h server/infra server/viewer \
  server/server.h server/service_options.h
check server/health_probe absl grpc grpcpp client/health base/program_flags.h collide/version.h
# Every file of server/ is in one of the layers above.
while IFS= read -r file; do
  case ${file#"$root"/} in
    server/infra/* | server/convert/* | server/rpc/* | server/viewer/* | server/health_probe/*) ;;
    server/replication/*) ;;
    server/service_options.h | server/service_options.cc | server/service_context.h) ;;
    server/server.h | server/server.cc | server/main.cc) ;;
    *)
      echo "layering: ${file#"$root"/} is in no layer of tests/layering_test.sh"
      status=1
      ;;
  esac
done < <(find "$root/server" \( -name '*.h' -o -name '*.cc' \) 2>/dev/null)
# A layer's internal/ headers are its own: no file outside the layer's folder includes them.
for layer in geom bvh mesh; do
  while IFS= read -r line; do
    echo "layering: ${line%%:*} includes ${layer}/internal/, private to src/${layer}"
    status=1
  done < <(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"${layer}/internal/" "$root" \
             --include='*.h' --include='*.cc' --exclude-dir=build --exclude-dir='build-*' \
             --exclude-dir=.git --exclude-dir=node_modules | grep -v "^$root/src/${layer}/")
done
# The clients (client/) stand on the generated API, gRPC and Abseil: none of their sources
# includes a header of the server or of the core layers, and none of their CMake targets links
# one of those layers' libraries.
while IFS= read -r line; do
  echo "layering: ${line%%:*} includes a server or core header: ${line#*:}"
  status=1
done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"(server|src|base|geom|bvh|query|history|scene|watch|store)/' \
           "$root/client" --include='*.h' --include='*.cc' 2>/dev/null | sed -E 's/:[0-9]+:/:/')
server_libs='collide_(service|store|watch|scene|history|query|bvh|geom|base)([^_[:alnum:]]|$)'
while IFS= read -r line; do
  echo "layering: ${line%%:*} links a server or core library: ${line#*:}"
  status=1
done < <(grep -rnE "$server_libs" "$root/client" --include=CMakeLists.txt 2>/dev/null |
           grep -vE '^[^:]*:[0-9]+:[[:space:]]*#' | sed -E 's/:[0-9]+:/:/')
# Every lock outside src/base is base's annotated Mutex or RwMutex (ARCHITECTURE.md, "Threads and
# locks"): no bare absl::Mutex or std mutex, whose members the annotations or ThreadSanitizer
# would not see.
while IFS= read -r line; do
  echo "layering: ${line%%:*} uses a lock other than collide::Mutex / RwMutex: ${line#*:}"
  status=1
done < <(grep -rnE 'absl::Mutex([^L]|$)|std::(recursive_|shared_|timed_)?mutex' "$root/src" \
           "$root/server" --include='*.h' --include='*.cc' 2>/dev/null |
           grep -v "^$root/src/base/" | grep -vE '^[^:]*:[0-9]+:[[:space:]]*//' |
           sed -E 's/:[0-9]+:/:/')
[ $status -eq 0 ] && echo "layering: all includes within their layers"
exit $status
