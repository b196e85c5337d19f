// Packs collide-client without writing into the source tree: copies what the package holds
// (package.json, src/, examples/) into a temporary staging directory together with the
// repository's proto/collide/v1/collide.proto (under proto/, where src/proto.js looks first), runs
// `npm pack` there and removes the staging directory.
//
//   node client/node/scripts/pack.js DIR     # DIR/collide-client-<version>.tgz

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
if (process.argv.length !== 3) {
  console.error('usage: node client/node/scripts/pack.js DIR (where the tarball goes)');
  process.exit(2);
}
const destination = path.resolve(process.argv[2]);
fs.mkdirSync(destination, { recursive: true });
const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'collide-client-pack-'));
try {
  for (const entry of ['package.json', 'src', 'examples']) {
    fs.cpSync(path.join(root, entry), path.join(stage, entry), { recursive: true });
  }
  const proto = path.join('proto', 'collide', 'v1', 'collide.proto');
  fs.mkdirSync(path.dirname(path.join(stage, proto)), { recursive: true });
  fs.copyFileSync(path.join(root, '..', '..', proto), path.join(stage, proto));
  // The staging copy carries the proto: the prepack check (scripts/check_packable.js, which
  // stops a pack of the source tree itself) has nothing to say here.
  const output = execFileSync(
    'npm',
    ['pack', '--ignore-scripts', '--pack-destination', destination],
    { cwd: stage, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const tarball = output.trim().split('\n').pop();
  console.log(path.join(destination, tarball));
} finally {
  fs.rmSync(stage, { recursive: true, force: true });
}
