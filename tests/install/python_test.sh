#!/usr/bin/env bash
# The Python client as a package: `pip install` of the package the build assembles
# (<build>/client/python: pyproject.toml, the sources, the generated stubs, _version.py) into a
# fresh venv on Debian's interpreter (--system-site-packages: grpcio and protobuf from Debian; no
# index is reached: --no-build-isolation --no-deps), then, from a directory outside the source and
# build trees, a script importing it raycasts a body against a real collide-server, and a second
# one does it with the asyncio client (collide.aio), a watch and an update writer.
#   python_test.sh <source dir> <build dir> <collide-server> <python>
set -euo pipefail
source_dir=$1
build_dir=$2
server=$3
python=$4

test_name="python install test"
source "$(dirname "$0")/lib.sh"

package=$build_dir/client/python
for file in pyproject.toml setup.py collide/__init__.py collide/py.typed collide/_version.py \
            collide/v1/collide_pb2.py collide/v1/collide_pb2_grpc.py; do
  [ -f "$package/$file" ] || fail "the build did not assemble $package/$file"
done
version=$(sed -nE 's/^project\(collide VERSION ([0-9.]+).*/\1/p' "$source_dir/CMakeLists.txt")
[ -n "$version" ] || fail "no project version in CMakeLists.txt"

step "$python -m venv --system-site-packages <tmp>/venv"
"$python" -m venv --system-site-packages "$tmp/venv" >"$tmp/venv.log" 2>&1 ||
  fail "venv failed: $(cat "$tmp/venv.log")"
step "pip install --no-build-isolation --no-deps <build>/client/python"
# As documented, from the build tree itself: setuptools' work files (build/, *.egg-info) go to a
# temporary directory (setup.py), so the package directory is left as it was.
package_state() { (cd "$package" && find . | LC_ALL=C sort); }
before=$(package_state)
(cd "$tmp" && PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 venv/bin/pip install \
   --no-build-isolation --no-deps "$package" >"$tmp/pip.log" 2>&1) ||
  fail "pip install failed: $(cat "$tmp/pip.log")"
after=$(package_state)
[ "$before" = "$after" ] ||
  fail "pip install changed $package: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]')"
(cd "$tmp" && venv/bin/pip show -f collide) >"$tmp/show.txt" || fail "pip show collide failed"
sed -n '/^Name:/p;/^Version:/p;/^Files:/,$p' "$tmp/show.txt" | grep -v __pycache__
grep -qx "Version: $version" "$tmp/show.txt" || fail "pip show does not give version $version"
for file in collide/py.typed collide/_version.py collide/v1/collide_pb2.py \
            collide/v1/collide_pb2_grpc.py collide/aio/__init__.py collide/aio/client.py; do
  grep -qx "  $file" "$tmp/show.txt" || fail "not installed: $file"
done

step "start collide-server on port 0"
start_server "$tmp/port" "$tmp/server.log" "$server" --address=127.0.0.1:0 --port_file="$tmp/port" \
  --data_dir="$tmp/data" --log_level=warn

mkdir -p "$tmp/elsewhere"
cat >"$tmp/elsewhere/use_collide.py" <<'PY'
import sys

import collide
from collide import Body, Pose, Raycast, Sphere

print("collide", collide.__version__)
with collide.Client(sys.argv[1]) as client:
    client.create_scene("world")
    client.upsert_bodies("world", [Body(7, Sphere(1.0), Pose((5.0, 0.0, 0.0)))])
    hits = client.raycast("world", Raycast((0.0, 0.0, 0.0), (1.0, 0.0, 0.0), 100.0)).hits
    print(f"hit body {hits[0].body_id} at distance {hits[0].distance:g}")
PY
step "cd <tmp>/elsewhere && venv/bin/python use_collide.py $address"
# No PYTHONPATH: the package comes from the venv only.
output=$(cd "$tmp/elsewhere" && env -u PYTHONPATH "$tmp/venv/bin/python" use_collide.py "$address" 2>&1) ||
  fail "the script failed: $output"
echo "$output"
where=$(cd "$tmp/elsewhere" && env -u PYTHONPATH "$tmp/venv/bin/python" -c 'import collide; print(collide.__file__)')
case "$where" in
  "$tmp/venv/"*) ;;
  *) fail "collide was imported from $where, not the venv" ;;
esac
expected="collide $version
hit body 7 at distance 4"
[ "$output" = "$expected" ] || fail "the script printed '$output', expected '$expected'"

cat >"$tmp/elsewhere/use_collide_aio.py" <<'PY'
import asyncio
import sys

import collide.aio
from collide import Body, Fence, Pose, Raycast, Sphere


async def main(address: str) -> None:
    async with collide.aio.Client(address) as client:
        await client.create_scene("aio")
        await client.upsert_bodies("aio", [Body(3, Sphere(0.5), Pose((5.0, 0.0, 0.0)))])
        async with client.watch("aio", [Fence(1, Sphere(1.0))]) as watch:
            snapshot = (await watch.__anext__()).snapshot
            print("fence holds", list(snapshot.fences[0].body_ids))
            async with client.update_writer("aio") as writer:
                ack = await (await writer.send(moves=([3], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])))
            print("ack version", ack.version)
            event = (await watch.__anext__()).update.events[0]
            print("event", event.kind.name, "body", event.body_id)
        ray = Raycast((-10.0, 0.0, 0.0), (1.0, 0.0, 0.0), 100.0)
        hit = (await client.raycast("aio", ray, min_version=ack.version)).hits[0]
        print(f"hit body {hit.body_id} at distance {hit.distance:g}")
        print("scenes", (await client.server_stats()).scenes)


asyncio.run(main(sys.argv[1]))
PY
step "cd <tmp>/elsewhere && venv/bin/python use_collide_aio.py $address"
output=$(cd "$tmp/elsewhere" && env -u PYTHONPATH "$tmp/venv/bin/python" use_collide_aio.py "$address" 2>&1) ||
  fail "the asyncio script failed: $output"
echo "$output"
expected="fence holds []
ack version 2
event ENTER body 3
hit body 3 at distance 9.5
scenes 2"
[ "$output" = "$expected" ] || fail "the asyncio script printed '$output', expected '$expected'"
echo "python install test: ok"
