// Watch against a real collide-server: the starting snapshot, a fast body swept through a thin
// fence (enter then exit in one update), a bad fence's field path, and the end of the stream
// when the scene is deleted.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { CollideError } from '../src/index.js';
import { useServerAndClient } from './helpers.js';

describe('Watch', () => {
  const ctx = useServerAndClient();

  test('streams enter then exit for a fast body crossing a thin fence', async () => {
    await ctx.client.createScene({ scene: 'sweep', options: { durability: 'DURABILITY_NONE' } });
    await ctx.client.upsertBodies({
      scene: 'sweep',
      bodies: [
        { id: 1, shape: { sphere: { radius: 0.05 } }, pose: { position: { x: -50, y: 0.5 } } },
      ],
    });
    const watch = ctx.client.watch({
      scene: 'sweep',
      fences: [{ id: 7, shape: { box: { half_extents: { x: 0.01, y: 2, z: 2 } } }, pose: {} }],
    });
    const messages = watch[Symbol.asyncIterator]();
    const first = (await messages.next()).value;
    assert.deepEqual(
      first.snapshot.fences.map((f) => [f.fence_id, f.body_ids]),
      [['7', []]],
    );
    const writer = ctx.client.openUpdateWriter('sweep');
    const ack = await writer.apply({
      moves: { ids: [1], poses: [50, 0.5, 0, 0, 0, 0, 1] },
    });
    const update = (await messages.next()).value.update;
    assert.equal(update.version, ack.version);
    assert.deepEqual(
      update.events.map((e) => [e.kind, e.fence_id, e.body_id]),
      [
        ['KIND_ENTER', '7', '1'],
        ['KIND_EXIT', '7', '1'],
      ],
    );
    assert.ok(Math.abs(update.events[0].point.x + 0.01) < 1e-4);
    await writer.close();
    await ctx.client.deleteScene({ scene: 'sweep' });
    await assert.rejects(messages.next(), (error) => {
      assert.ok(error instanceof CollideError);
      assert.equal(error.code, 5); // NOT_FOUND
      return true;
    });
  });

  test('a bad fence ends the stream with its field path', async () => {
    await ctx.client.createScene({ scene: 'bad', options: { durability: 'DURABILITY_NONE' } });
    const watch = ctx.client.watch({
      scene: 'bad',
      fences: [{ id: 1, shape: { sphere: { radius: -1 } }, pose: {} }],
    });
    await assert.rejects(watch[Symbol.asyncIterator]().next(), (error) => {
      assert.ok(error instanceof CollideError);
      assert.equal(error.code, 3); // INVALID_ARGUMENT
      assert.ok(error.message.startsWith('fences[0].shape.sphere.radius: '), error.message);
      return true;
    });
  });
});
