#!/usr/bin/env bash
# Checks the layer table of ARCHITECTURE.md: every #include in a layer's sources names either a
# standard header or a header of a layer it may depend on. Prints each violation.
set -u
root=${1:-.}
status=0
# POSIX headers the store layer may include (it is the one layer that talks to the file system).
posix_headers="dirent.h fcntl.h unistd.h sys/file.h sys/stat.h sys/types.h"
check() {  # check <folder> <allowed project prefixes...>; angle includes must be std headers
  local dir=$1
  shift
  local allowed="$*"
  [ -d "$root/$dir" ] || return 0
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
      # The mesh layer asks for huge pages for its large arrays (src/mesh/internal/).
      [[ $dir == src/mesh && $header == sys/mman.h ]] && ok=1
    else
      for prefix in $allowed; do [[ $header == "$prefix"/* ]] && ok=1; done
    fi
    if [ $ok -eq 0 ]; then
      echo "layering: $file includes $header, outside what $dir may use ($allowed + std)"
      status=1
    fi
  done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include' "$root/$dir" --include='*.h' --include='*.cc' | sed -E 's/:[0-9]+:/:/')
}
# The base layer: Abseil and the standard library only.
check src/base base absl
check src/geom geom
check src/bvh geom bvh
# The asset layer (meshes, heightfields) sits on geometry and the tree layer's instruction sets.
check src/mesh geom bvh mesh
check src/query geom bvh query
# The history layer (lag compensation: past-tick states and queries) sits on the query layer.
check src/history geom bvh query history
# The scene layer may also use Abseil; the store adds the generated protobuf code.
check src/scene base geom bvh query history scene absl
# The watch layer (standing queries) sits on the scene layer.
check src/watch base geom bvh query history scene watch absl
check src/store base geom bvh query history scene store absl collide/v1 google/protobuf
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
[ $status -eq 0 ] && echo "layering: all includes within their layers"
exit $status
