// prepack: a package of collide-client must carry its proto (proto/collide/v1/collide.proto),
// which only the staging copy that scripts/pack.js makes has; packing the source tree itself
// would leave it out. Stops `npm pack` there, saying what to run instead.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
if (!fs.existsSync(path.join(root, 'proto', 'collide', 'v1', 'collide.proto'))) {
  console.error(
    'collide-client: pack with `node client/node/scripts/pack.js DIR` (it packs a staging copy ' +
      'that carries proto/collide/v1/collide.proto and writes nothing into the source tree)',
  );
  process.exit(1);
}
