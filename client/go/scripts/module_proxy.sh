#!/bin/sh
# Packages the assembled Go module (sources and generated collidepb, without vendor/) as a module
# proxy directory, the layout `go get` reads through GOPROXY (https:// or file://):
#   OUT_DIR/collide.dev/collide/@v/list            "vX.Y.Z"
#   OUT_DIR/collide.dev/collide/@v/vX.Y.Z.info     {"Version": "vX.Y.Z"}
#   OUT_DIR/collide.dev/collide/@v/vX.Y.Z.mod      the module's go.mod
#   OUT_DIR/collide.dev/collide/@v/vX.Y.Z.zip      every file under collide.dev/collide@vX.Y.Z/
# so that, elsewhere, `GOPROXY=file://OUT_DIR,https://proxy.golang.org GONOSUMDB=collide.dev
# go get collide.dev/collide@vX.Y.Z` fetches it (and its dependencies from the public proxy).
#   module_proxy.sh MODULE_DIR OUT_DIR VERSION CMAKE
set -eu
module_dir=$1
out_dir=$2
version=v$3
cmake=$4
module=collide.dev/collide
[ -f "$module_dir/go.mod" ] || { echo "module_proxy.sh: no $module_dir/go.mod" >&2; exit 1; }
grep -qx "module $module" "$module_dir/go.mod" ||
  { echo "module_proxy.sh: $module_dir/go.mod is not module $module" >&2; exit 1; }

staging=$out_dir.staging
rm -rf "$out_dir" "$staging"
mkdir -p "$out_dir/$module/@v" "$staging/$module@$version"
# Regular files only: vendor/ (links to the build machine's Go packages) stays out.
(cd "$module_dir" && find . -path ./vendor -prune -o -type f -print) | sort | while read -r file; do
  mkdir -p "$staging/$module@$version/$(dirname "$file")"
  cp "$module_dir/$file" "$staging/$module@$version/$file"
done
(cd "$staging" && "$cmake" -E tar cf "$out_dir/$module/@v/$version.zip" --format=zip \
   --mtime=2000-01-01 "$module@$version")
cp "$module_dir/go.mod" "$out_dir/$module/@v/$version.mod"
printf '{"Version": "%s"}\n' "$version" >"$out_dir/$module/@v/$version.info"
printf '%s\n' "$version" >"$out_dir/$module/@v/list"
rm -rf "$staging"
