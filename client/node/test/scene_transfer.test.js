// exportScene and importScene against a real collide-server: an export's messages (header,
// bounded chunks, trailer) imported under a new name give the same scene; an existing name is
// refused unless replaced; a message that does not fit the proto, an error thrown by the source
// and a cut stream import nothing; an unknown scene is NOT_FOUND; stopping the iteration early
// ends the export on the server.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { useServerAndClient, rejectsWith } from './helpers.js';

const BODIES = 700;

function bodies() {
  const list = [];
  for (let i = 0; i < BODIES; i++) {
    const shape = i % 3 === 0 ? { sphere: { radius: 0.5 } }
      : i % 3 === 1 ? { box: { half_extents: { x: 0.5, y: 0.25, z: 0.75 } } }
        : { capsule: { radius: 0.25, half_height: 0.5 } };
    list.push({
      id: 1 + 2 * i,
      shape,
      pose: { position: { x: (i % 30) * 2, y: Math.floor(i / 30) * 2, z: 0 },
        rotation: { x: 0, y: 0.6, z: 0, w: 0.8 } },
      category: 1 << (i % 4),
      user_data: String(i * 1000003),
      kind: i % 4 === 0 ? 'BODY_KIND_STATIC' : 'BODY_KIND_DYNAMIC',
    });
  }
  return list;
}

async function collect(stream) {
  const messages = [];
  for await (const message of stream) messages.push(message);
  return messages;
}

describe('exportScene / importScene', () => {
  const ctx = useServerAndClient();

  async function expectSameScene(copy, original) {
    const [a, b] = await Promise.all([ctx.client.getScene({ scene: copy }),
      ctx.client.getScene({ scene: original })]);
    assert.equal(a.stats.version, b.stats.version);
    assert.equal(a.stats.tick, b.stats.tick);
    assert.equal(a.stats.body_count, b.stats.body_count);
    assert.deepEqual(a.options, b.options);
    const [ba, bb] = await Promise.all([ctx.client.getBodies({ scene: copy }),
      ctx.client.getBodies({ scene: original })]);
    assert.deepEqual(ba.bodies, bb.bodies);
  }

  async function expectNoScene(scene) {
    await rejectsWith(ctx.client.getScene({ scene }), 'NOT_FOUND', 'scene');
  }

  test('a round trip under a new name keeps the scene', async () => {
    await ctx.client.createScene({ scene: 'src', options: { fat_margin: 0.25, history_ticks: 8 } });
    await ctx.client.upsertBodies({ scene: 'src', bodies: bodies() });
    const writer = ctx.client.openUpdateWriter('src', { clientId: '77' });
    await writer.apply({ tick: 5, moves: { ids: [1], poses: [1, 2, 3, 0, 0, 0, 1] } });
    await writer.close();

    const messages = await collect(ctx.client.exportScene({ scene: 'src',
      max_bodies_per_chunk: 100 }));
    assert.ok(messages[0].header);
    assert.equal(messages[0].header.scene, 'src');
    assert.deepEqual(messages[0].header.clients.map((c) => [c.client_id, c.sequence]),
      [['77', '1']]);
    const chunks = messages.slice(1, -1);
    assert.ok(chunks.every((m) => m.chunk && m.chunk.bodies.length <= 100));
    assert.equal(chunks.reduce((n, m) => n + m.chunk.bodies.length, 0), BODIES);
    const trailer = messages.at(-1).trailer;
    assert.equal(trailer.body_count, String(BODIES));
    assert.equal(trailer.chunk_count, String(chunks.length));

    const info = await ctx.client.importScene(messages, { scene: 'copy' });
    assert.equal(info.name, 'copy');
    await expectSameScene('copy', 'src');
    // Straight from another export (an async iterable), replacing the copy.
    await rejectsWith(ctx.client.importScene(ctx.client.exportScene({ scene: 'src' }),
      { scene: 'copy' }), 'ALREADY_EXISTS');
    const replaced = await ctx.client.importScene(ctx.client.exportScene({ scene: 'src' }),
      { scene: 'copy', replace: true });
    assert.equal(replaced.stats.body_count, BODIES);
    await expectSameScene('copy', 'src');
    // An edited header is refused: the trailer's checksum covers it (a new name goes in
    // options.scene, as above).
    await ctx.client.deleteScene({ scene: 'copy' });
    await rejectsWith(
      ctx.client.importScene(
        messages.map((m) => (m.header ? { header: { ...m.header, scene: 'copy' } } : m))),
      'DATA_LOSS',
      'trailer.crc32c',
    );
    await rejectsWith(ctx.client.getScene({ scene: 'copy' }), 'NOT_FOUND', 'scene');
    // Under the header's name, once free.
    await ctx.client.deleteScene({ scene: 'src' });
    const named = await ctx.client.importScene(messages);
    assert.equal(named.name, 'src');
  });

  test('bad messages and bad sources import nothing', async () => {
    await ctx.client.createScene({ scene: 'small' });
    await ctx.client.upsertBodies({ scene: 'small', bodies: bodies().slice(0, 50) });
    const messages = await collect(ctx.client.exportScene({ scene: 'small' }));
    // A field the proto does not have, with its place in the stream.
    await rejectsWith(
      ctx.client.importScene([messages[0], { chunk: { bodies: [{ id: 1, size: 3 }] } }],
        { scene: 'bad' }),
      'INVALID_ARGUMENT', 'messages[1].chunk.bodies[0].size');
    await expectNoScene('bad');
    // A negative id.
    await rejectsWith(
      ctx.client.importScene([messages[0], { chunk: { bodies: [{ id: -1 }] } }],
        { scene: 'bad' }),
      'INVALID_ARGUMENT', 'messages[1].chunk.bodies[0].id');
    // The server checks what the proto cannot: a negative radius, with its path.
    const broken = structuredClone(messages);
    broken[1].chunk.bodies[0].shape.sphere.radius = -1;
    await assert.rejects(ctx.client.importScene(broken, { scene: 'bad' }),
      (error) => error.codeName === 'INVALID_ARGUMENT' && /radius/.test(error.message));
    await expectNoScene('bad');
    // A source that throws midway: its error, and nothing imported.
    async function* failing() {
      yield messages[0];
      throw new Error('disk gone');
    }
    await assert.rejects(ctx.client.importScene(failing(), { scene: 'bad' }), /disk gone/);
    await expectNoScene('bad');
    // A stream cut before its trailer.
    await rejectsWith(ctx.client.importScene(messages.slice(0, -1), { scene: 'bad' }),
      'DATA_LOSS');
    await expectNoScene('bad');
    for (const [source, options] of [[42, {}], [null, {}], [messages, { scene: 7 }],
      [messages, { replace: 'yes' }]]) {
      await rejectsWith(ctx.client.importScene(source, options), 'INVALID_ARGUMENT');
    }
    await expectNoScene('bad');
  });

  test('unknown scenes and bad requests are refused', async () => {
    await rejectsWith(collect(ctx.client.exportScene({ scene: 'nope' })), 'NOT_FOUND', 'scene');
    await rejectsWith(collect(ctx.client.exportScene({ scene: '../x' })), 'INVALID_ARGUMENT',
      'scene');
    assert.throws(() => ctx.client.exportScene({ scene: 'src', max_bodies: 3 }),
      (error) => error.codeName === 'INVALID_ARGUMENT' && error.fieldPath === 'max_bodies');
  });

  test('leaving the iteration early ends the export on the server', async () => {
    for await (const message of ctx.client.exportScene({ scene: 'src', max_bodies_per_chunk: 10 })) {
      assert.ok(message.header);
      break;
    }
    let stats = await ctx.client.serverStats();
    for (let i = 0; i < 500 && stats.export_streams !== 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      stats = await ctx.client.serverStats();
    }
    assert.equal(stats.export_streams, 0);
    assert.ok(Number(stats.streams_opened) >= 1);
  });
});
