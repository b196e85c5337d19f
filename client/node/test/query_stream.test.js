// QueryStream against a real collide-server: batches answered in order and checked against a
// brute-force oracle, per-query and whole-batch errors, the async iterator, min_version and
// past ticks inside a stream.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { Client, CollideError } from '../src/index.js';
import { compareCast, random } from './oracle.js';
import { randomBalls, randomRay, rejectsWith, useServerAndClient } from './helpers.js';
import { ServerProcess } from './server.js';

const SEED = 424242;

describe('QueryStream', () => {
  const ctx = useServerAndClient();

  test('answers batches in order, agreeing with a brute-force oracle', async () => {
    const { balls, bodies } = randomBalls(SEED, 250);
    await ctx.client.createScene({ scene: 'stream' });
    const { version } = await ctx.client.upsertBodies({ scene: 'stream', bodies });
    const next = random(SEED + 1);
    const stream = ctx.client.openQueryStream('stream');
    const batches = [];
    for (let b = 0; b < 8; b++) {
      const queries = [];
      for (let q = 0; q < 25; q++) {
        const ray = randomRay(next);
        const radius = q % 2 === 0 ? 0 : Math.round(next() * 2 * 64) / 64;
        queries.push(
          radius === 0
            ? { request_id: b * 1000 + q, raycast: ray, mode: 'MODE_ALL', max_hits: 1000 }
            : {
                request_id: b * 1000 + q,
                sphere_cast: { ...ray, radius },
                mode: 'MODE_ALL',
                max_hits: 1000,
              },
        );
      }
      batches.push(queries);
    }
    // All batches in flight at once; each promise gets its own batch's answer.
    const answers = await Promise.all(batches.map((queries) => stream.query({ queries })));
    await stream.close();
    answers.forEach((answer, b) => {
      assert.equal(answer.version, version);
      assert.equal(answer.error, null);
      answer.results.forEach((result, q) => {
        const query = batches[b][q];
        assert.equal(result.request_id, String(query.request_id));
        assert.equal(result.error, null);
        const cast = query.raycast ?? query.sphere_cast;
        const difference = compareCast(
          result.hits,
          balls,
          cast.origin,
          cast.direction,
          cast.max_distance,
          cast.radius ?? 0,
          undefined,
        );
        assert.equal(difference, null, `${difference} (seed ${SEED}, batch ${b}, query ${q})`);
      });
    });
    await ctx.client.deleteScene({ scene: 'stream' });
  });

  test('a bad query is an error in its result; a bad batch rejects; the stream goes on', async () => {
    await ctx.client.createScene({ scene: 'errors' });
    await ctx.client.upsertBodies({
      scene: 'errors',
      bodies: [
        { id: 1, shape: { sphere: { radius: 1 } }, pose: { position: { x: 0, y: 0, z: 0 } } },
      ],
    });
    const ray = {
      origin: { x: -5, y: 0, z: 0 },
      direction: { x: 1, y: 0, z: 0 },
      max_distance: 10,
    };
    const stream = ctx.client.openQueryStream('errors');
    const answer = await stream.query({
      queries: [
        { raycast: ray },
        { raycast: { ...ray, direction: { x: 0, y: 0, z: 0 } } },
        { point: { point: { x: 0, y: 0, z: 0 }, radius: -1 } },
        { aabb: { region: { min: { x: -1, y: -1, z: -1 }, max: { x: 1, y: 1, z: 1 } } } },
        {},
      ],
    });
    assert.equal(answer.results[0].hits[0].distance, 4);
    assert.equal(answer.results[1].error.code, 3);
    assert.ok(answer.results[1].error.message.startsWith('queries[1].raycast.direction: '));
    assert.ok(answer.results[2].error.message.startsWith('queries[2].point.radius: '));
    assert.deepEqual(
      answer.results[3].hits.map((hit) => hit.body_id),
      ['1'],
    );
    assert.equal(answer.results[4].error.code, 3);
    assert.ok(
      answer.results[4].error.message.startsWith('queries[4]'),
      answer.results[4].error.message,
    );

    // Refused by the client before sending; the stream is untouched.
    assert.throws(
      () => stream.send({ queries: [{ raycast: { ...ray, orign: ray.origin } }] }),
      (error) => error instanceof CollideError && error.fieldPath === 'queries[0].raycast.orign',
    );
    assert.throws(
      () => stream.send({ scene: 'other', queries: [] }),
      (error) => error.fieldPath === 'scene',
    );
    assert.equal((await stream.query({ queries: [{ raycast: ray }] })).results[0].hits.length, 1);
    await stream.close();

    const unknown = ctx.client.openQueryStream('nope');
    await rejectsWith(unknown.query({ queries: [{ raycast: ray }] }), 'NOT_FOUND', 'scene');
    await ctx.client.createScene({ scene: 'nope' });
    const late = await unknown.query({ queries: [{ raycast: ray }] });
    assert.deepEqual(late.results[0].hits, []);
    await unknown.close();
    await ctx.client.deleteScene({ scene: 'nope' });
    await ctx.client.deleteScene({ scene: 'errors' });
  });

  test('the async iterator yields the answers to sent batches in order', async () => {
    await ctx.client.createScene({ scene: 'iterate' });
    const bodies = [1, 2, 3].map((id) => ({
      id,
      shape: { sphere: { radius: 0.5 } },
      pose: { position: { x: 10 * id, y: 0, z: 0 } },
    }));
    await ctx.client.upsertBodies({ scene: 'iterate', bodies });
    const stream = ctx.client.openQueryStream('iterate');
    // Batch k asks for the bodies within k * 10 of the origin: k bodies.
    for (let k = 1; k <= 3; k++) {
      stream.send({
        queries: [
          {
            request_id: k,
            point: { point: { x: 0, y: 0, z: 0 }, radius: 10 * k },
            mode: 'MODE_ALL',
          },
        ],
      });
    }
    // A query() in between is answered through its promise, not the iterator.
    const between = stream.query({
      queries: [
        {
          aabb: { region: { min: { x: 0, y: -1, z: -1 }, max: { x: 100, y: 1, z: 1 } } },
          mode: 'MODE_ALL',
        },
      ],
    });
    stream.send({
      queries: [{ request_id: 4, point: { point: { x: 0, y: 0, z: 0 }, radius: 0 } }],
    });
    const closed = stream.close();
    const seen = [];
    for await (const answer of stream) {
      const [result] = answer.results;
      seen.push([result.request_id, result.hits.map((hit) => hit.body_id)]);
    }
    await closed;
    assert.deepEqual(seen, [
      ['1', ['1']],
      ['2', ['1', '2']],
      ['3', ['1', '2', '3']],
      ['4', []],
    ]);
    assert.equal((await between).results[0].hits.length, 3);
    assert.throws(
      () => stream.send({ queries: [] }),
      (error) => error.codeName === 'FAILED_PRECONDITION',
    );
    await ctx.client.deleteScene({ scene: 'iterate' });
  });

  test('min_version waits for a writer on another connection; at_tick reads the past', async () => {
    await ctx.client.createScene({ scene: 'versions' });
    const writerClient = new Client(ctx.server.address);
    const writer = writerClient.openUpdateWriter('versions');
    const body = {
      id: 1,
      shape: { sphere: { radius: 1 } },
      pose: { position: { x: 0, y: 0, z: 0 } },
    };
    await writer.apply({ ops: [{ upsert: body }], tick: 1 });
    const ray = {
      origin: { x: -20, y: 0, z: 0 },
      direction: { x: 1, y: 0, z: 0 },
      max_distance: 100,
    };
    const stream = ctx.client.openQueryStream('versions');
    // Asked before the writer has got there: answered once it has.
    const waiting = stream.query({ queries: [{ raycast: ray }], min_version: 5 });
    for (let tick = 2; tick <= 5; tick++) {
      await writer.write({ moves: { ids: [1], poses: [tick, 0, 0, 0, 0, 0, 1] }, tick });
    }
    const answer = await waiting;
    assert.ok(BigInt(answer.version) >= 5n, answer.version);
    await writer.close();
    assert.equal(answer.results[0].hits[0].distance, 20 + 5 - 1);

    const past = await stream.query({
      queries: [
        { raycast: ray, at_tick: 2 },
        { raycast: ray, at_tick: 3, tick_fraction: 0.25 },
        { raycast: ray, at_tick: 900 },
      ],
    });
    assert.equal(past.results[0].hits[0].distance, 20 + 2 - 1);
    assert.equal(past.results[1].hits[0].distance, 20 + 3.25 - 1);
    assert.equal(past.results[2].error.code, 11); // OUT_OF_RANGE
    assert.ok(past.results[2].error.message.startsWith('queries[2].at_tick: '));
    await stream.close();
    writerClient.close();
    await ctx.client.deleteScene({ scene: 'versions' });
  });
  test('a stream whose server dies and stays down rejects its unanswered batches and takes no more', async () => {
    const own = await ServerProcess.start({ args: ['--max_version_wait_ms=60000'] });
    const ownClient = new Client(own.address);
    try {
      await ownClient.createScene({ scene: 'dies' });
      // It reconnects for reconnectTimeoutMs without an answer, then gives up.
      const stream = ownClient.openQueryStream('dies', {
        reconnectTimeoutMs: 300,
        initialBackoffMs: 10,
        maxBackoffMs: 50,
      });
      let reconnecting = 0;
      stream.on('reconnecting', () => {
        reconnecting += 1;
      });
      const ray = {
        origin: { x: 0, y: 0, z: 0 },
        direction: { x: 1, y: 0, z: 0 },
        max_distance: 1,
      };
      assert.equal((await stream.query({ queries: [{ raycast: ray }] })).version, '0');
      // Waits for a version that never comes, until the server is killed.
      const waiting = rejectsWith(
        stream.query({ queries: [{ raycast: ray }], min_version: 10 }),
        'UNAVAILABLE',
      );
      await own.kill();
      await waiting;
      assert.ok(reconnecting >= 1, 'the stream never tried to reconnect');
      assert.equal(stream.pending, 0);
      assert.throws(
        () => stream.send({ queries: [] }),
        (error) => error.codeName === 'UNAVAILABLE',
      );
      await assert.rejects(stream.close(), (error) => error.codeName === 'UNAVAILABLE');
    } finally {
      ownClient.close();
      await own.stop();
    }
  });
});
