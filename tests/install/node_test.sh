#!/usr/bin/env bash
# The Node client as a package: `node client/node/scripts/pack.js DIR`, the documented command
# (`npm pack` of a staging copy that carries proto/collide/v1/collide.proto; the source tree is
# left as it was, which is checked), checks of the tarball (the proto inside and identical to
# proto/, the version the CMake project's), then `npm install` of the tarball into an empty
# directory outside the source tree (dependencies from the npm cache when it has them, else the
# registry) and a script there that raycasts a body against a real collide-server. A plain
# `npm pack` in client/node is refused and writes nothing.
#   node_test.sh <source dir> <collide-server>
set -euo pipefail
source_dir=$1
server=$2

for tool in node npm; do
  command -v "$tool" >/dev/null 2>&1 || { echo "$tool not found: skipped"; exit 77; }
done
test_name="node install test"
source "$(dirname "$0")/lib.sh"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

version=$(sed -nE 's/^project\(collide VERSION ([0-9.]+).*/\1/p' "$source_dir/CMakeLists.txt")
[ -n "$version" ] || fail "no project version in CMakeLists.txt"
package_version=$(node -p "require('$source_dir/client/node/package.json').version")
[ "$package_version" = "$version" ] ||
  fail "client/node/package.json has version $package_version, the CMake project $version"
[ "$(node -p "require('$source_dir/client/node/package.json').private === true")" = false ] ||
  fail "client/node/package.json is private"

# What client/node holds (its node_modules/ aside), to check that packing changes nothing there.
tree_state() {
  (cd "$source_dir/client/node" && find . -path ./node_modules -prune -o -print | LC_ALL=C sort)
}
before=$(tree_state)
step "node client/node/scripts/pack.js <tmp>"
node "$source_dir/client/node/scripts/pack.js" "$tmp" >"$tmp/pack.log" 2>&1 ||
  fail "pack.js failed: $(cat "$tmp/pack.log")"
step "npm pack in client/node itself: refused"
if (cd "$source_dir/client/node" && npm pack --dry-run >"$tmp/plain.log" 2>&1); then
  fail "npm pack of the source tree was not refused: $(cat "$tmp/plain.log")"
fi
grep -q 'scripts/pack.js' "$tmp/plain.log" || fail "the refusal does not name scripts/pack.js"
after=$(tree_state)
[ "$before" = "$after" ] ||
  fail "packing changed client/node: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]')"
tarball=$(find "$tmp" -maxdepth 1 -name 'collide-client-*.tgz')
[ "$(basename "$tarball")" = "collide-client-$version.tgz" ] || fail "npm pack made '$tarball'"
tar -tzf "$tarball" | sort | sed 's/^/  /'
mkdir "$tmp/unpacked"
tar -xzf "$tarball" -C "$tmp/unpacked"
for file in package.json src/index.js src/index.d.ts proto/collide/v1/collide.proto; do
  [ -f "$tmp/unpacked/package/$file" ] || fail "the tarball has no $file"
done
cmp -s "$tmp/unpacked/package/proto/collide/v1/collide.proto" \
  "$source_dir/proto/collide/v1/collide.proto" || fail "the packed proto differs from proto/"
if tar -tzf "$tarball" | grep -q '^package/\(test\|node_modules\|scripts\)/'; then
  fail "the tarball carries test/, node_modules/ or scripts/"
fi

step "npm install <tarball> into an empty directory"
mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"
echo '{"name": "uses-collide", "version": "1.0.0", "private": true, "type": "module"}' >package.json
npm install --prefer-offline --no-save "$tarball" >"$tmp/install.log" 2>&1 ||
  fail "npm install failed: $(cat "$tmp/install.log")"
[ -f node_modules/collide-client/proto/collide/v1/collide.proto ] ||
  fail "the installed package has no proto"

step "start collide-server on port 0"
start_server "$tmp/port" "$tmp/server.log" "$server" --address=127.0.0.1:0 --port_file="$tmp/port" \
  --data_dir="$tmp/data" --log_level=warn

cat >use_collide.js <<'JS'
import { createRequire } from 'node:module';

import { Client } from 'collide-client';

const { version } = createRequire(import.meta.url)('collide-client/package.json');
console.log(`collide-client ${version}`);
const client = new Client(process.argv[2]);
try {
  await client.createScene({ scene: 'world' });
  await client.upsertBodies({
    scene: 'world',
    bodies: [{ id: 7, shape: { sphere: { radius: 1 } }, pose: { position: { x: 5, y: 0, z: 0 } } }],
  });
  const { hits } = await client.raycast({
    scene: 'world',
    ray: { origin: { x: 0, y: 0, z: 0 }, direction: { x: 1, y: 0, z: 0 }, max_distance: 100 },
  });
  console.log(`hit body ${hits[0].body_id} at distance ${hits[0].distance}`);
} finally {
  client.close();
}
JS
step "cd <tmp>/elsewhere && node use_collide.js $address"
output=$(node use_collide.js "$address" 2>&1) || fail "the script failed: $output"
echo "$output"
expected="collide-client $version
hit body 7 at distance 4"
[ "$output" = "$expected" ] || fail "the script printed '$output', expected '$expected'"
echo "node install test: ok"
