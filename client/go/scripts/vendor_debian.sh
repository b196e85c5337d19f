#!/bin/sh
# Builds a Go module offline against Debian's Go packages (golang-google-grpc-dev and its
# dependencies, in /usr/share/gocode/src): writes MODULE_DIR/vendor/ as symbolic links to those
# sources, and vendor/modules.txt from MODULE_DIR/go.mod (every requirement marked explicit, with
# the replacement of each replaced one), so that `go build -mod=vendor` needs no module proxy.
# A module that `replace`s collide.dev/collide with a directory gets that directory vendored.
#   vendor_debian.sh MODULE_DIR [GOCODE_SRC]
# Elsewhere, with a module proxy, none of this is needed: `go mod tidy` fetches the same modules.
set -eu
module_dir=$1
gocode=${2:-/usr/share/gocode/src}
go_mod=$module_dir/go.mod
[ -f "$go_mod" ] || { echo "vendor_debian.sh: no $go_mod" >&2; exit 1; }
[ -d "$gocode/google.golang.org/grpc" ] ||
  { echo "vendor_debian.sh: no $gocode/google.golang.org/grpc (apt-get install golang-google-grpc-dev)" >&2; exit 1; }

vendor=$module_dir/vendor
rm -rf "$vendor"
mkdir -p "$vendor"
# The modules gRPC and protobuf import, linked from Debian's tree.
for module in google.golang.org/grpc google.golang.org/protobuf google.golang.org/genproto \
  github.com/golang/protobuf golang.org/x/net golang.org/x/sys golang.org/x/text; do
  mkdir -p "$vendor/$(dirname "$module")"
  ln -s "$gocode/$module" "$vendor/$module"
done

# `require` lines (in a block or single) and `replace` lines of go.mod.
requires=$(sed -n -e '/^require (/,/^)/{/^require (/d;/^)/d;p;}' -e 's/^require \([^(].*\)/\1/p' "$go_mod" |
  sed -e 's,//.*,,' | awk 'NF == 2 {print $1, $2}')
replaces=$(sed -n -e '/^replace (/,/^)/{/^replace (/d;/^)/d;p;}' -e 's/^replace \([^(].*\)/\1/p' "$go_mod" |
  sed -e 's,//.*,,' | awk 'NF >= 3 {print}')
{
  echo "$requires" | while read -r path version; do
    [ -n "$path" ] || continue
    target=$(echo "$replaces" | awk -v p="$path" '$1 == p {print $NF}')
    if [ -n "$target" ]; then
      echo "# $path $version => $target"
      case $target in
        /*) dir=$target ;;
        *) dir=$(cd "$module_dir/$target" && pwd) ;;
      esac
      rm -rf "${vendor:?}/$path"
      mkdir -p "$vendor/$(dirname "$path")"
      ln -s "$dir" "$vendor/$path"
    else
      echo "# $path $version"
    fi
    echo "## explicit"
  done
  echo "$replaces" | while read -r path arrow target; do
    [ -n "$path" ] || continue
    echo "# $path => $target"
  done
} >"$vendor/modules.txt"
