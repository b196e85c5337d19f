#!/usr/bin/env bash
# The Go client as a module: what the build packages in <build>/client/go/proxy (a module proxy
# directory: collide.dev/collide/@v/v<version>.{info,mod,zip}) fetched by the go command through
# GOPROXY=file://..., the way `go get` fetches it from any proxy (the zip checked and hashed, the
# module extracted into a fresh module cache); then, in an empty directory outside the source and
# build trees, a program that requires collide.dev/collide v<version> is built and raycasts a
# body, writes through an UpdateWriter and reads a field path from a refused call, against a real
# collide-server. Offline: the program's other modules (gRPC, protobuf) are Debian's Go packages,
# linked as its vendor/ by the module's own scripts/vendor_debian.sh, and the downloaded module
# is vendored too. Compiled objects are cached in the checkout's .cache/go-build (content-addressed,
# shared with the build's own go commands).
#   go_test.sh <source dir> <build dir> <collide-server>
set -euo pipefail
source_dir=$1
build_dir=$2
server=$3

command -v go >/dev/null 2>&1 || { echo "go not found: skipped"; exit 77; }
test_name="go install test"
source "$(dirname "$0")/lib.sh"

version=$(sed -nE 's/^project\(collide VERSION ([0-9.]+).*/\1/p' "$source_dir/CMakeLists.txt")
[ -n "$version" ] || fail "no project version in CMakeLists.txt"
proxy=$build_dir/client/go/proxy
for file in list "v$version.info" "v$version.mod" "v$version.zip"; do
  [ -f "$proxy/collide.dev/collide/@v/$file" ] ||
    fail "the build did not package $proxy/collide.dev/collide/@v/$file"
done
[ "$(cat "$proxy/collide.dev/collide/@v/list")" = "v$version" ] || fail "@v/list does not give v$version"
if cmake -E tar tf "$proxy/collide.dev/collide/@v/v$version.zip" | grep -q '/vendor/'; then
  fail "the module zip carries vendor/"
fi

export GOPATH=$tmp/gopath GOMODCACHE=$tmp/gopath/pkg/mod GOCACHE=$source_dir/.cache/go-build
export GOPROXY=file://$proxy GONOSUMDB=collide.dev GOFLAGS=-modcacherw GO111MODULE=on
export CGO_ENABLED=0 GOTOOLCHAIN=local
step "GOPROXY=file://<build>/client/go/proxy go mod download collide.dev/collide@v$version"
(cd "$tmp" && go mod download -json "collide.dev/collide@v$version") >"$tmp/download.json" 2>&1 ||
  fail "go mod download failed: $(cat "$tmp/download.json")"
module_dir=$GOMODCACHE/collide.dev/collide@v$version
for file in go.mod client.go update_writer.go collidepb/collide.pb.go collidepb/collide_grpc.pb.go \
            scripts/vendor_debian.sh; do
  [ -f "$module_dir/$file" ] || fail "the downloaded module has no $file"
done
grep -q '"Sum": "h1:' "$tmp/download.json" || fail "no module hash: $(cat "$tmp/download.json")"

mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"
cat >go.mod <<EOF
module example.com/usecollide

go 1.16

require collide.dev/collide v$version
EOF
cat >main.go <<'GO'
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"collide.dev/collide"
	pb "collide.dev/collide/collidepb"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, err := collide.Dial(os.Args[1], nil)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	if _, err := client.CreateScene(ctx, "world", nil); err != nil {
		log.Fatal(err)
	}
	body := collide.NewBody(7, collide.SphereShape(1), collide.At(5, 0, 0))
	if _, err := client.UpsertBodies(ctx, "world", body); err != nil {
		log.Fatal(err)
	}
	ray := &pb.RaycastRequest{Scene: "world", Ray: collide.Ray(collide.V(0, 0, 0), collide.V(1, 0, 0), 100)}
	r, err := client.Raycast(ctx, ray)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("hit body %d at distance %s\n", r.Hits[0].BodyId, collide.FormatFloat32(r.Hits[0].Distance))

	writer, err := client.OpenUpdateWriter(ctx, "world", nil)
	if err != nil {
		log.Fatal(err)
	}
	ack, err := writer.Apply(ctx, collide.MoveBatch([]uint64{7}, []float32{8, 0, 0, 0, 0, 0, 1}))
	if err != nil {
		log.Fatal(err)
	}
	if err := writer.Close(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("ack version", ack.Version)

	_, err = client.UpsertBodies(ctx, "world", collide.NewBody(8, collide.SphereShape(-1), collide.At(0, 0, 0)))
	var cerr *collide.Error
	if !errors.As(err, &cerr) {
		log.Fatalf("not a *collide.Error: %v", err)
	}
	fmt.Println(cerr.Code, cerr.FieldPath)
}
GO
step "vendor/: Debian's Go packages (scripts/vendor_debian.sh of the module) and the module"
sh "$module_dir/scripts/vendor_debian.sh" "$tmp/elsewhere" >"$tmp/vendor.log" 2>&1 ||
  fail "vendor_debian.sh failed: $(cat "$tmp/vendor.log")"
mkdir -p vendor/collide.dev
ln -s "$module_dir" vendor/collide.dev/collide
step "cd <tmp>/elsewhere && go build -mod=vendor -trimpath"
GOPROXY=off go build -mod=vendor -trimpath -o usecollide . >"$tmp/build.log" 2>&1 ||
  fail "go build failed: $(cat "$tmp/build.log")"

step "start collide-server on port 0"
start_server "$tmp/port" "$tmp/server.log" "$server" --address=127.0.0.1:0 --port_file="$tmp/port" \
  --data_dir="$tmp/data" --log_level=warn
step "cd <tmp>/elsewhere && ./usecollide $address"
output=$(./usecollide "$address" 2>&1) || fail "the program failed: $output"
echo "$output"
expected="hit body 7 at distance 4
ack version 2
InvalidArgument bodies[0].shape.sphere.radius"
[ "$output" = "$expected" ] || fail "the program printed '$output', expected '$expected'"
echo "go install test: ok"
