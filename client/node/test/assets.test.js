// Level geometry from Node against a real collide-server: a mesh uploaded from typed arrays or
// plain arrays, placed by a body, hit by rays that name their triangle and back face, listed and
// deleted; a heightfield with holes; bad content refused with its field path and nothing stored;
// the request's own checks; CRC-32C's known answers.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { crc32c } from '../src/index.js';
import { useServerAndClient, rejectsWith } from './helpers.js';

// A wall 4 wide (x from -2 to 2) and 4 high (z from 0 to 4) in the plane y = 0, its front facing
// -y: triangles (0 2 1) and (0 3 2).
const WALL_VERTICES = [-2, 0, 0, -2, 0, 4, 2, 0, 4, 2, 0, 0];
const WALL_INDICES = [0, 2, 1, 0, 3, 2];

describe('crc32c', () => {
  test('known answers (RFC 3720, B.4) and extension', () => {
    assert.equal(crc32c(new Uint8Array(32)), 0x8a9136aa);
    const digits = new TextEncoder().encode('123456789');
    assert.equal(crc32c(digits), 0xe3069283);
    assert.equal(crc32c(digits.subarray(5), crc32c(digits.subarray(0, 5))), 0xe3069283);
  });
});

describe('assets', () => {
  const ctx = useServerAndClient();

  test('a mesh is uploaded, placed, hit by triangle, listed and deleted', async () => {
    await ctx.client.createScene({ scene: 'mesh' });
    const up = await ctx.client.uploadMesh({ scene: 'mesh', name: 'wall',
      vertices: new Float32Array(WALL_VERTICES), indices: new Uint32Array(WALL_INDICES) },
    { chunkValues: 5 });
    assert.equal(up.already_present, false);
    assert.equal(up.asset.name, 'wall');
    assert.equal(up.asset.triangle_count, '2');
    assert.equal(up.asset.sha256.length, 64);
    const again = await ctx.client.uploadMesh({ scene: 'mesh', name: 'wall',
      vertices: WALL_VERTICES, indices: WALL_INDICES });
    assert.equal(again.already_present, true);
    assert.equal(again.asset.sha256, up.asset.sha256);

    await ctx.client.upsertBodies({ scene: 'mesh', bodies: [{ id: 7,
      shape: { mesh: { asset: 'wall', scale: 2 } }, pose: { position: { x: 0, y: 5, z: 0 } },
      kind: 'BODY_KIND_STATIC' }] });
    // Scaled by 2 the wall spans x in [-4, 4], z in [0, 8] at y = 5: (3, 1) lies in triangle 1,
    // (-3, 7) in triangle 0.
    let response = await ctx.client.raycast({ scene: 'mesh',
      ray: { origin: { x: 3, y: 0, z: 1 }, direction: { x: 0, y: 1, z: 0 }, max_distance: 100 } });
    assert.equal(response.hits.length, 1);
    assert.equal(response.hits[0].body_id, '7');
    assert.equal(response.hits[0].triangle, 1);
    assert.equal(response.hits[0].back_face, false);
    assert.equal(response.hits[0].distance, 5);
    response = await ctx.client.raycast({ scene: 'mesh',
      ray: { origin: { x: -3, y: 10, z: 7 }, direction: { x: 0, y: -1, z: 0 },
        max_distance: 100 } });
    assert.equal(response.hits[0].triangle, 0);
    assert.equal(response.hits[0].back_face, true);

    const listed = await ctx.client.listAssets({ scene: 'mesh' });
    assert.deepEqual(listed.map((a) => [a.name, a.body_count]), [['wall', '1']]);
    await rejectsWith(ctx.client.deleteAsset({ scene: 'mesh', name: 'wall' }),
      'FAILED_PRECONDITION', 'name');
    await ctx.client.removeBodies({ scene: 'mesh', ids: [7] });
    await ctx.client.deleteAsset({ scene: 'mesh', name: 'wall' });
    assert.deepEqual(await ctx.client.listAssets({ scene: 'mesh' }), []);
  });

  test('a heightfield with a hole is uploaded and placed', async () => {
    await ctx.client.createScene({ scene: 'field' });
    const up = await ctx.client.uploadHeightfield({ scene: 'field', name: 'ground', rows: 3,
      columns: 3, heights: new Float32Array(9), spacingX: 2, spacingZ: 2,
      holes: Uint8Array.of(0b1000) });
    assert.equal(up.asset.triangle_count, '8');
    await ctx.client.upsertBodies({ scene: 'field', bodies: [{ id: 1,
      shape: { heightfield: { asset: 'ground' } }, kind: 'BODY_KIND_STATIC' }] });
    const down = { x: 0, y: -1, z: 0 };
    const hit = await ctx.client.raycast({ scene: 'field',
      ray: { origin: { x: 1, y: 5, z: 1 }, direction: down, max_distance: 100 } });
    assert.equal(hit.hits.length, 1);
    assert.ok([0, 1].includes(hit.hits[0].triangle));
    // Through the hole (cell 3: x and z in [2, 4]): nothing.
    const none = await ctx.client.raycast({ scene: 'field',
      ray: { origin: { x: 3, y: 5, z: 3 }, direction: down, max_distance: 100 } });
    assert.equal(none.hits.length, 0);
  });

  test('bad content is refused with its field path and nothing is stored', async () => {
    await ctx.client.createScene({ scene: 'bad' });
    const nan = WALL_VERTICES.slice();
    nan[4] = NaN;
    await rejectsWith(ctx.client.uploadMesh({ scene: 'bad', name: 'wall', vertices: nan,
      indices: WALL_INDICES }), 'INVALID_ARGUMENT', 'vertices[1]');
    await rejectsWith(ctx.client.uploadMesh({ scene: 'bad', name: 'wall',
      vertices: WALL_VERTICES, indices: [0, 1, 0xffffffff] }), 'INVALID_ARGUMENT', 'indices[2]');
    // Checked before anything is sent.
    await rejectsWith(ctx.client.uploadMesh({ scene: 'bad', name: 'wall',
      vertices: WALL_VERTICES, indices: [0, -1, 2] }), 'INVALID_ARGUMENT', 'indices[1]');
    await rejectsWith(ctx.client.uploadMesh({ scene: 'bad', name: 'wall', vertices: [0, 0, 0, 1],
      indices: [0, 0, 0] }), 'INVALID_ARGUMENT', 'vertices');
    assert.deepEqual(await ctx.client.listAssets({ scene: 'bad' }), []);
  });
});
