// prepack: copies the repository's proto/collide/v1/collide.proto into the package, where
// src/proto.js looks first, so that a packed collide-client loads its API without the repository.
// postpack (--remove): deletes the copy again, so that a checkout always loads the repository's.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const copy = path.join(root, 'proto');
if (process.argv.includes('--remove')) {
  fs.rmSync(copy, { recursive: true, force: true });
} else {
  const source = path.join(root, '..', '..', 'proto', 'collide', 'v1', 'collide.proto');
  const target = path.join(copy, 'collide', 'v1', 'collide.proto');
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.copyFileSync(source, target);
}
