// The cross-language scenario program (examples/scenario.js) against a real collide-server: five
// JSON lines a..e whose hits match distances worked out by hand, every number the shortest decimal
// of a float32, and the scene gone afterwards.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { Client } from '../src/index.js';
import { shortestFloat32 } from '../src/proto.js';
import { ServerProcess } from './server.js';

const scenario = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'examples',
  'scenario.js',
);
let server;

before(async () => {
  server = await ServerProcess.start();
});

after(async () => {
  await server?.stop();
});

// Every number in a parsed line.
function numbers(value) {
  if (typeof value === 'number') return [value];
  if (Array.isArray(value)) return value.flatMap(numbers);
  if (value && typeof value === 'object') return Object.values(value).flatMap(numbers);
  return [];
}

test('the scenario prints queries a..e as JSON lines and deletes its scene', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [
    scenario,
    '--address',
    server.address,
    '--scene',
    'scenario-node',
  ]);
  const lines = stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.deepEqual(
    lines.map((line) => line.query),
    ['a', 'b', 'c', 'd', 'e'],
  );
  for (const line of lines) {
    assert.equal(line.version, 1);
    assert.deepEqual(Object.keys(line), ['query', 'version', 'hits']);
    for (const hit of line.hits) {
      assert.deepEqual(Object.keys(hit), [
        'body_id',
        'distance',
        'point',
        'normal',
        'depth',
        'start_overlapping',
      ]);
    }
    // The server sends float32 values: each printed as the shortest decimal of its float32.
    for (const value of numbers(line.hits)) {
      assert.equal(shortestFloat32(Math.fround(value)), value);
    }
  }
  const hits = (line) => line.hits.map((hit) => [hit.body_id, hit.distance]);
  const near = (got, expected) => {
    assert.deepEqual(
      got.map(([id]) => id),
      expected.map(([id]) => id),
    );
    got.forEach(([, distance], i) =>
      assert.ok(Math.abs(distance - expected[i][1]) < 1e-4, `${distance} vs ${expected[i][1]}`),
    );
  };
  const [a, b, c, d, e] = lines;
  // a: the static box's face at x = -4.5, the sphere's at -1, the rotated box's corner-free side
  //    at x = 4 (half height 0.5 / sin 30°), the capsule's side at 9.5.
  near(hits(a), [
    [5, 5.5],
    [1, 9],
    [2, 14],
    [3, 19.5],
  ]);
  // b: only body 4 is in category 2; its surface at y = 4.5.
  near(hits(b), [[4, 14.5]]);
  // c: a ball of 0.25 reaches the unit sphere at z = -1.25.
  near(hits(c), [[1, 8.75]]);
  assert.deepEqual(
    d.hits.map((hit) => hit.body_id),
    [2],
  );
  assert.ok(d.hits[0].depth > 0);
  // e: a ball of 0.4 at height 0.8 meets the static box's top edge (dx = sqrt(0.4² - 0.3²)),
  //    the sphere (radius 1.4: dx = sqrt(1.4² - 0.8²)), the rotated box, the capsule's side.
  const edge = 4.5 + Math.sqrt(0.16 - 0.09);
  const ball = 10 - Math.sqrt(1.96 - 0.64);
  assert.deepEqual(
    e.hits.map((hit) => hit.body_id),
    [5, 1, 2, 3],
  );
  near(
    [hits(e)[0], hits(e)[1], hits(e)[3]],
    [
      [5, 10 - edge],
      [1, ball],
      [3, 19.1],
    ],
  );

  const client = new Client(server.address);
  try {
    assert.deepEqual(
      (await client.listScenes()).map((scene) => scene.name),
      [],
    );
  } finally {
    client.close();
  }
});

test('the scenario reports a failed call and exits non-zero', async () => {
  await assert.rejects(
    promisify(execFile)(process.execPath, [
      scenario,
      '--address',
      server.address,
      '--scene',
      'bad name',
    ]),
    (error) => error.code === 1 && /INVALID_ARGUMENT: scene: /.test(error.stderr),
  );
});
