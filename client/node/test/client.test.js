// The unary rpcs of the Node client against a real collide-server: every rpc, answers checked
// against a brute-force oracle, errors with their codes and field paths, deadlines, the server's
// statistics.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Client } from '../src/index.js';
import { packageDefinition } from '../src/proto.js';
import { compareCast, overlapAll, random } from './oracle.js';
import { randomBalls, randomRay, rejectsWith } from './helpers.js';
import { ServerProcess } from './server.js';

const SEED = 20261123;

describe('Client', () => {
  let server;
  let client;

  before(async () => {
    // A long server-side cap on min_version waits, so only the call's deadline ends them.
    server = await ServerProcess.start({ args: ['--max_version_wait_ms=60000'] });
    client = new Client(server.address);
  });

  after(async () => {
    client?.close();
    await server?.stop();
  });

  test('creates, lists, gets and deletes scenes', async () => {
    const created = await client.createScene({
      scene: 'scenes-a',
      options: { fat_margin: 0.25, max_bodies: 100, durability: 'DURABILITY_PERIODIC' },
    });
    assert.equal(created.name, 'scenes-a');
    assert.equal(created.options.fat_margin, 0.25);
    assert.equal(created.options.max_bodies, 100);
    assert.equal(created.options.durability, 'DURABILITY_PERIODIC');
    assert.equal(created.stats.version, '0');
    await client.createScene({ scene: 'scenes-b' });

    const names = (await client.listScenes()).map((scene) => scene.name);
    assert.deepEqual(
      names.filter((name) => name.startsWith('scenes-')),
      ['scenes-a', 'scenes-b'],
    );
    const got = await client.getScene({ scene: 'scenes-a' });
    assert.equal(got.options.max_bodies, 100);

    await client.deleteScene({ scene: 'scenes-a' });
    await rejectsWith(client.getScene({ scene: 'scenes-a' }), 'NOT_FOUND', 'scene');
    await rejectsWith(client.createScene({ scene: 'scenes-b' }), 'ALREADY_EXISTS');
    await client.deleteScene({ scene: 'scenes-b' });
  });

  test('upserts, reads and removes bodies, with uint64 ids and versions exact', async () => {
    await client.createScene({ scene: 'bodies' });
    const bigId = '18446744073709551615'; // 2^64 - 1
    const written = await client.upsertBodies({
      scene: 'bodies',
      bodies: [
        {
          id: bigId,
          shape: { box: { half_extents: { x: 1, y: 2, z: 3 } } },
          pose: { position: { x: 1, y: 2, z: 3 }, rotation: { x: 0, y: 0, z: 0, w: 1 } },
          user_data: 9007199254740993n, // 2^53 + 1: no number holds it
          kind: 'BODY_KIND_STATIC',
          category: 6,
          mask: 3,
        },
        {
          id: 7,
          shape: { capsule: { radius: 0.5, half_height: 1 } },
          pose: { position: { x: -4, y: 0, z: 0 } },
        },
      ],
    });
    assert.deepEqual(written, { version: '1', durable: true });

    const read = await client.getBodies({ scene: 'bodies', ids: [bigId, 7, 8] });
    assert.equal(read.version, '1');
    assert.deepEqual(read.missing_ids, ['8']);
    assert.equal(read.bodies.length, 2);
    const [big, capsule] = read.bodies;
    assert.equal(big.id, bigId);
    assert.equal(big.user_data, '9007199254740993');
    assert.equal(big.kind, 'BODY_KIND_STATIC');
    assert.equal(big.category, 6);
    assert.equal(big.mask, 3);
    assert.deepEqual(big.shape.box.half_extents, { x: 1, y: 2, z: 3 });
    assert.deepEqual(big.pose.position, { x: 1, y: 2, z: 3 });
    assert.equal(capsule.id, '7');
    assert.deepEqual(capsule.shape.capsule, { radius: 0.5, half_height: 1 });

    const all = await client.getBodies({ scene: 'bodies' });
    assert.deepEqual(
      all.bodies.map((body) => body.id),
      ['7', bigId],
    );

    const removed = await client.removeBodies({ scene: 'bodies', ids: [7] });
    assert.equal(removed.version, '2');
    const after = await client.getBodies({ scene: 'bodies', ids: [7] });
    assert.deepEqual(after.missing_ids, ['7']);
    assert.equal((await client.getScene({ scene: 'bodies' })).stats.body_count, 1);
    await client.deleteScene({ scene: 'bodies' });
  });

  test('ray casts, sphere casts and overlaps agree with a brute-force oracle', async () => {
    const { balls, bodies } = randomBalls(SEED, 300);
    await client.createScene({ scene: 'oracle' });
    const { version } = await client.upsertBodies({ scene: 'oracle', bodies });
    const next = random(SEED + 1);
    for (let i = 0; i < 60; i++) {
      const ray = randomRay(next);
      const filter = i % 3 === 0 ? { mask: 5 } : undefined;
      const context = `seed ${SEED}, query ${i}`;
      const rays = await client.raycast({
        scene: 'oracle',
        ray,
        filter,
        mode: 'MODE_ALL',
        max_hits: 1000,
      });
      assert.equal(rays.version, version);
      assert.equal(rays.truncated, false);
      const rayDifference = compareCast(
        rays.hits,
        balls,
        ray.origin,
        ray.direction,
        ray.max_distance,
        0,
        filter,
      );
      assert.equal(rayDifference, null, `raycast: ${rayDifference} (${context})`);

      const radius = Math.round(next() * 3 * 64) / 64;
      const cast = { ...ray, radius };
      const casts = await client.sphereCast({
        scene: 'oracle',
        cast,
        filter,
        mode: 'MODE_ALL',
        max_hits: 1000,
      });
      const castDifference = compareCast(
        casts.hits,
        balls,
        ray.origin,
        ray.direction,
        ray.max_distance,
        radius,
        filter,
      );
      assert.equal(castDifference, null, `sphere cast: ${castDifference} (${context})`);

      const closest = await client.raycast({ scene: 'oracle', ray, filter, mode: 'MODE_CLOSEST' });
      assert.ok(closest.hits.length <= 1);
      if (rays.hits.length > 0) assert.deepEqual(closest.hits[0], rays.hits[0], context);

      const center = ray.origin;
      const ballRadius = 2 + Math.round(next() * 10 * 64) / 64;
      const overlaps = await client.overlap({
        scene: 'oracle',
        overlap: { shape: { sphere: { radius: ballRadius } }, pose: { position: center } },
        filter,
        mode: 'MODE_ALL',
        max_hits: 1000,
      });
      const expected = overlapAll(balls, center, ballRadius, filter);
      const loose = new Set(overlapAll(balls, center, ballRadius + 1e-3, filter));
      const strict = overlapAll(balls, center, ballRadius - 1e-3, filter);
      const got = overlaps.hits.map((hit) => Number(hit.body_id));
      for (const id of strict) assert.ok(got.includes(id), `overlap misses ${id} (${context})`);
      for (const id of got)
        assert.ok(loose.has(id), `overlap has ${id}, oracle ${expected} (${context})`);
    }
    await client.deleteScene({ scene: 'oracle' });
  });

  test('overlap with detail reports depth and a separating normal', async () => {
    await client.createScene({ scene: 'detail' });
    await client.upsertBodies({
      scene: 'detail',
      bodies: [
        { id: 1, shape: { sphere: { radius: 1 } }, pose: { position: { x: 0, y: 0, z: 0 } } },
      ],
    });
    const { hits } = await client.overlap({
      scene: 'detail',
      overlap: { shape: { sphere: { radius: 1 } }, pose: { position: { x: 1.5, y: 0, z: 0 } } },
      detail: true,
    });
    assert.equal(hits.length, 1);
    // Two unit balls 1.5 apart overlap by 0.5 along x.
    assert.ok(Math.abs(hits[0].depth - 0.5) < 1e-5, `depth ${hits[0].depth}`);
    assert.ok(Math.abs(Math.abs(hits[0].normal.x) - 1) < 1e-5, JSON.stringify(hits[0].normal));
    await client.deleteScene({ scene: 'detail' });
  });

  test('answers past ticks with at_tick and tick_fraction, and waits for min_version', async () => {
    await client.createScene({ scene: 'ticks' });
    const writer = client.openUpdateWriter('ticks');
    const body = {
      id: 1,
      shape: { sphere: { radius: 1 } },
      pose: { position: { x: 0, y: 0, z: 0 } },
    };
    await writer.apply({ ops: [{ upsert: body }], tick: 10 });
    await writer.apply({ moves: { ids: [1], poses: [10, 0, 0, 0, 0, 0, 1] }, tick: 11 });
    await writer.close();
    const scene = await client.getScene({ scene: 'ticks' });
    assert.equal(scene.stats.tick, '11');

    const ray = {
      origin: { x: -20, y: 0, z: 0 },
      direction: { x: 1, y: 0, z: 0 },
      max_distance: 100,
    };
    const now = await client.raycast({ scene: 'ticks', ray });
    assert.equal(now.hits[0].distance, 29); // centre 10: the surface at x = 9
    const past = await client.raycast({ scene: 'ticks', ray, at_tick: 10 });
    assert.equal(past.hits[0].distance, 19); // centre 0: the surface at x = -1
    const between = await client.sphereCast({
      scene: 'ticks',
      cast: { ...ray, radius: 0 },
      at_tick: 10,
      tick_fraction: 0.5,
    });
    assert.equal(between.hits[0].distance, 24); // centre 5
    const overlap = await client.overlap({
      scene: 'ticks',
      overlap: { shape: { sphere: { radius: 0.5 } }, pose: { position: { x: 0, y: 0, z: 0 } } },
      at_tick: 10,
    });
    assert.deepEqual(
      overlap.hits.map((hit) => hit.body_id),
      ['1'],
    );
    await rejectsWith(
      client.raycast({ scene: 'ticks', ray, at_tick: 500 }),
      'OUT_OF_RANGE',
      'at_tick',
    );

    const ready = await client.raycast({ scene: 'ticks', ray, min_version: scene.stats.version });
    assert.equal(ready.version, scene.stats.version);
    await client.deleteScene({ scene: 'ticks' });
  });

  test('a min_version the scene does not reach fails with DEADLINE_EXCEEDED at the call deadline', async () => {
    await client.createScene({ scene: 'deadline' });
    const ray = { origin: { x: 0, y: 0, z: 0 }, direction: { x: 1, y: 0, z: 0 }, max_distance: 1 };
    await rejectsWith(
      client.raycast({ scene: 'deadline', ray, min_version: 1000 }, { deadlineMs: 200 }),
      'DEADLINE_EXCEEDED',
    );
    const impatient = new Client(server.address, { deadlineMs: 200 });
    try {
      await rejectsWith(
        impatient.raycast({ scene: 'deadline', ray, min_version: 1000 }),
        'DEADLINE_EXCEEDED',
      );
    } finally {
      impatient.close();
    }
    await client.deleteScene({ scene: 'deadline' });
  });

  test('bad requests fail with the code and the field path', async () => {
    await client.createScene({ scene: 'errors' });
    const sphere = (radius) => ({ sphere: { radius } });
    const at = (x) => ({ position: { x, y: 0, z: 0 } });
    await client.upsertBodies({
      scene: 'errors',
      bodies: [{ id: 1, shape: sphere(1), pose: at(0) }],
    });
    const ray = { origin: { x: 0, y: 0, z: 0 }, direction: { x: 1, y: 0, z: 0 }, max_distance: 1 };
    const cases = [
      [() => client.createScene({ scene: 'no spaces' }), 'INVALID_ARGUMENT', 'scene'],
      [
        () => client.createScene({ scene: 'x', options: { fat_margin: -1 } }),
        'INVALID_ARGUMENT',
        'options.fat_margin',
      ],
      [() => client.getScene({ scene: 'nope' }), 'NOT_FOUND', 'scene'],
      // Names no header may carry: the call still reaches the server.
      [() => client.getScene({ scene: 'bad\nname' }), 'NOT_FOUND', 'scene'],
      [() => client.createScene({ scene: 'é' }), 'INVALID_ARGUMENT', 'scene'],
      [() => client.deleteScene({ scene: 'nope' }), 'NOT_FOUND', 'scene'],
      [
        () =>
          client.upsertBodies({
            scene: 'errors',
            bodies: [
              { id: 2, shape: sphere(1), pose: at(0) },
              { id: 3, shape: sphere(-1), pose: at(0) },
            ],
          }),
        'INVALID_ARGUMENT',
        'bodies[1].shape.sphere.radius',
      ],
      [
        () =>
          client.upsertBodies({
            scene: 'errors',
            bodies: [
              {
                id: 2,
                shape: sphere(1),
                pose: { position: { x: 0, y: 0, z: 0 }, rotation: { x: 0, y: 0, z: 0, w: 0 } },
              },
            ],
          }),
        'INVALID_ARGUMENT',
        'bodies[0].pose.rotation',
      ],
      [() => client.removeBodies({ scene: 'errors', ids: [1, 99] }), 'NOT_FOUND', 'ids[1]'],
      [() => client.getBodies({ scene: 'nope' }), 'NOT_FOUND', 'scene'],
      [
        () => client.raycast({ scene: 'errors', ray: { ...ray, direction: { x: 0, y: 0, z: 0 } } }),
        'INVALID_ARGUMENT',
        'ray.direction',
      ],
      [
        () => client.raycast({ scene: 'errors', ray: { ...ray, max_distance: -1 } }),
        'INVALID_ARGUMENT',
        'ray.max_distance',
      ],
      [
        () => client.raycast({ scene: 'errors', ray, mode: 'MODE_ALL', max_hits: 1_000_000 }),
        'INVALID_ARGUMENT',
        'max_hits',
      ],
      [
        () => client.sphereCast({ scene: 'errors', cast: { ...ray, radius: -1 } }),
        'INVALID_ARGUMENT',
        'cast.radius',
      ],
      [
        () => client.overlap({ scene: 'errors', overlap: { pose: at(0) } }),
        'INVALID_ARGUMENT',
        'overlap.shape',
      ],
      [
        () => client.overlap({ scene: 'nope', overlap: { shape: sphere(1), pose: at(0) } }),
        'NOT_FOUND',
        'scene',
      ],
      // Refused by the client before sending: values the encoder would silently change.
      [
        () => client.upsertBodies({ scene: 'errors', bodies: [{ id: 2 ** 53, shape: sphere(1) }] }),
        'INVALID_ARGUMENT',
        'bodies[0].id',
      ],
      [
        () => client.removeBodies({ scene: 'errors', ids: [1, '-3'] }),
        'INVALID_ARGUMENT',
        'ids[1]',
      ],
      [
        () => client.raycast({ scene: 'errors', ray: { ...ray, max_distnce: 5 } }),
        'INVALID_ARGUMENT',
        'ray.max_distnce',
      ],
      [
        () => client.raycast({ scene: 'errors', ray, mode: 'MODE_SOME' }),
        'INVALID_ARGUMENT',
        'mode',
      ],
    ];
    for (const [call, code, path] of cases) await rejectsWith(call(), code, path);
    // Nothing of the rejected writes was applied.
    assert.equal((await client.getScene({ scene: 'errors' })).stats.version, '1');
    await client.deleteScene({ scene: 'errors' });
  });

  test('serverStats answers GetServerStatsResponse as a plain object that follows the server', async () => {
    const fields = packageDefinition['collide.v1.GetServerStatsResponse'].type.field;
    const before = await client.serverStats();
    assert.equal(Object.getPrototypeOf(before), Object.prototype);
    assert.deepEqual(Object.keys(before).sort(), fields.map((field) => field.name).sort());
    for (const field of fields) {
      const value = before[field.name];
      if (field.type === 'TYPE_UINT64') assert.match(value, /^[0-9]+$/, field.name);
      else if (field.type === 'TYPE_UINT32') assert.ok(Number.isInteger(value), field.name);
    }
    assert.equal(before.writable, true);
    assert.equal(before.write_error, '');

    await client.createScene({ scene: 'stats' });
    const stream = client.openQueryStream('stats');
    await stream.query({ queries: [{ point: { point: { x: 0, y: 0, z: 0 }, radius: 1 } }] });
    const during = await client.serverStats({ deadlineMs: 10_000 });
    assert.equal(during.scenes, before.scenes + 1);
    assert.equal(during.query_streams, before.query_streams + 1);
    assert.equal(BigInt(during.streams_opened), BigInt(before.streams_opened) + 1n);
    await stream.close();
    await client.deleteScene({ scene: 'stats' });
    const closed = new Client(server.address);
    closed.close();
    await rejectsWith(closed.serverStats(), 'FAILED_PRECONDITION');
  });
});
