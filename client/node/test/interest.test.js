// The interest stream against a real collide-server: full sets then deltas as bodies move,
// observers added, changed and removed on the open stream, the sets kept from the messages and
// checked against a brute force over the bodies, a bad observer's field path, the events, and a
// server killed and restarted under the stream (reopened, resubscribed, full sets again).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { Client, CollideError } from '../src/index.js';
import { FAST_RECONNECT, rejectsWith, useServerAndClient } from './helpers.js';
import { random } from './oracle.js';
import { ServerProcess } from './server.js';

const SEED = 31;

function line(count) {
  return Array.from({ length: count }, (_, i) => ({
    id: i + 1,
    shape: { sphere: { radius: 0.5 } },
    pose: { position: { x: 3 * (i + 1), y: 0, z: 0 } },
  }));
}

/** Sorted ids (decimal strings) of a Set, for comparing. */
function sorted(set) {
  return [...(set ?? [])].map(Number).sort((a, b) => a - b);
}

/**
 * Brute force: the set of a fixed observer at `center` with enter radius `enter`, leave radius
 * `leave`, at most `max` nearest (ties by id), given the set it held before and body positions.
 * Positions are multiples of 1/8, so float32 and double agree.
 */
function bruteForce(center, enter, leave, max, held, positions) {
  const eligible = [];
  for (const [id, p] of positions) {
    const d2 = (p.x - center.x) ** 2 + (p.y - center.y) ** 2 + (p.z - center.z) ** 2;
    if (d2 <= enter * enter || (held.has(id) && d2 <= leave * leave)) eligible.push([d2, id]);
  }
  eligible.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return eligible.slice(0, max).map(([, id]) => id).sort((a, b) => a - b);
}

/** Reads messages until `count` of the stream's requests are in effect. */
async function untilApplied(messages, count) {
  for (;;) {
    const { value } = await messages.next();
    const body = value.snapshot ?? value.update;
    if (Number(body.requests_applied) >= count) return value;
  }
}

/**
 * Sends empty messages until one is answered at `version` or later, and returns the count of
 * requests sent so far. Sets are evaluated away from the writer: a client message takes effect
 * at the version the evaluation has reached, which may be before a batch just acknowledged.
 * Updates come in version order, so every delta up to `version` has been read by then.
 */
async function untilVersion(stream, messages, requests, version) {
  for (let attempt = 0; attempt < 1000; attempt++) {
    stream.upsert([]);
    requests += 1;
    const value = await untilApplied(messages, requests);
    const body = value.snapshot ?? value.update;
    if (BigInt(body.version) >= BigInt(version)) return requests;
  }
  throw new Error(`the sets never reached version ${version}`);
}

describe('Interest', () => {
  const ctx = useServerAndClient();

  test('full sets, deltas, changes on the open stream, then NOT_FOUND', async () => {
    const scene = 'players';
    await ctx.client.createScene({ scene, options: { durability: 'DURABILITY_NONE' } });
    await ctx.client.upsertBodies({ scene, bodies: line(6) });
    const stream = ctx.client.interest({
      scene,
      observers: [
        { id: 10, enter_radius: 10, leave_radius: 12, max_relevant: 2 },
        { id: 11, enter_radius: 4, attached_to: 1 },
        { id: 12, enter_radius: 100, attached_to: 99 },
      ],
    });
    const messages = stream[Symbol.asyncIterator]();
    const first = (await messages.next()).value;
    assert.equal(first.reconnected, false);
    assert.equal(first.snapshot.resync, false);
    assert.deepEqual(
      first.snapshot.sets.map((s) => [s.observer_id, s.body_ids]),
      [['10', ['1', '2']], ['11', ['2']], ['12', []]],
    );
    const writer = ctx.client.openUpdateWriter(scene);
    const ack = await writer.apply({
      moves: { ids: [1, 5], poses: [15, 1, 0, 0, 0, 0, 1, 0.5, 0, 0, 0, 0, 0, 1] },
    });
    const update = (await messages.next()).value.update;
    assert.equal(update.version, ack.version);
    const delta = update.deltas.find((d) => d.observer_id === '10');
    assert.deepEqual([delta.entered, delta.left], [['5'], ['1']]);
    assert.deepEqual(sorted(stream.sets.get('10')), [2, 5]);
    assert.deepEqual(sorted(stream.sets.get('11')), [4, 6]);
    // Changed, added and removed on the open stream.
    stream.upsert([
      { id: 10, enter_radius: 1, max_relevant: 2 },
      { id: 13, enter_radius: 7, cone: { direction: { x: -1 }, half_angle: 0.5 } },
    ]);
    stream.remove([12]);
    await untilApplied(messages, 3);
    assert.deepEqual(sorted(stream.sets.get('10')), [5]);
    assert.deepEqual(sorted(stream.sets.get('13')), []);  // everything is behind it
    assert.equal(stream.sets.has('12'), false);
    await writer.close();
    await ctx.client.deleteScene({ scene });
    await rejectsWith(messages.next(), 'NOT_FOUND');
  });

  test('the sets kept from the messages equal a brute force over random walks', async () => {
    const scene = 'walk';
    await ctx.client.createScene({ scene, options: { durability: 'DURABILITY_NONE' } });
    const next = random(SEED);
    const grid = () => Math.round((next() * 40 - 20) * 8) / 8;
    const positions = new Map();
    const bodies = [];
    for (let id = 1; id <= 60; id++) {
      const p = { x: grid(), y: grid(), z: grid() };
      positions.set(id, p);
      bodies.push({ id, shape: { sphere: { radius: 0.25 } }, pose: { position: p } });
    }
    await ctx.client.upsertBodies({ scene, bodies });
    const observers = [
      { id: 1, center: { x: 0, y: 0, z: 0 }, enter: 8, leave: 10, max: 5 },
      { id: 2, center: { x: 5, y: -5, z: 2 }, enter: 12, leave: 12, max: 1024 },
    ];
    const stream = ctx.client.interest({
      scene,
      observers: observers.map((o) => ({
        id: o.id, pose: { position: o.center }, enter_radius: o.enter, leave_radius: o.leave,
        max_relevant: o.max === 1024 ? 0 : o.max,
      })),
    });
    const held = new Map(observers.map((o) => [o.id, new Set()]));
    let changed = 0;
    const expect = () => {
      let any = false;
      for (const o of observers) {
        const set = bruteForce(o.center, o.enter, o.leave, o.max, held.get(o.id), positions);
        any ||= set.join() !== sorted(held.get(o.id)).join();
        held.set(o.id, new Set(set));
      }
      if (any) changed += 1;
    };
    expect();
    const messages = stream[Symbol.asyncIterator]();
    await messages.next();
    let requests = 1;
    const writer = ctx.client.openUpdateWriter(scene);
    for (let batch = 0; batch < 80; batch++) {
      const ids = [];
      const poses = [];
      for (let k = 0; k < 10; k++) {
        const id = 1 + Math.floor(next() * 60);
        if (ids.includes(id)) continue;
        const p = positions.get(id);
        const moved = {
          x: Math.max(-20, Math.min(20, p.x + Math.round((next() - 0.5) * 32) / 8)),
          y: Math.max(-20, Math.min(20, p.y + Math.round((next() - 0.5) * 32) / 8)),
          z: p.z,
        };
        positions.set(id, moved);
        ids.push(id);
        poses.push(moved.x, moved.y, moved.z, 0, 0, 0, 1);
      }
      const ack = await writer.apply({ moves: { ids, poses } });
      expect();
      requests = await untilVersion(stream, messages, requests, ack.version);
      for (const o of observers) {
        assert.deepEqual(
          sorted(stream.sets.get(String(o.id))),
          sorted(held.get(o.id)),
          `seed ${SEED}, batch ${batch}, observer ${o.id}`,
        );
      }
    }
    // The sets changed with many batches (the test compares moving sets, not empty ones).
    assert.ok(changed > 20, `the sets changed with only ${changed} of 80 batches`);
    await writer.close();
    // close() ends the iteration after what was received.
    stream.close();
    let left = 0;
    while (!(await messages.next()).done) left += 1;
    assert.ok(left < 3, `${left} messages after the last batch's`);
    assert.throws(() => stream.upsert([]), CollideError);
  });

  test('a bad observer fails the stream with its field path, at the start and later', async () => {
    await ctx.client.createScene({ scene: 'bad', options: { durability: 'DURABILITY_NONE' } });
    const bad = ctx.client.interest({
      scene: 'bad',
      observers: [{ id: 1, enter_radius: 5, leave_radius: 4 }],
    });
    await rejectsWith(
      bad[Symbol.asyncIterator]().next(),
      'INVALID_ARGUMENT',
      'messages[0].observers[0].leave_radius',
    );
    const later = ctx.client.interest({ scene: 'bad', observers: [{ id: 1, enter_radius: 5 }] });
    const errors = [];
    later.on('error', (error) => errors.push(error));
    const messages = later[Symbol.asyncIterator]();
    await messages.next();
    later.upsert([{ id: 2, enter_radius: Number.NaN }]);
    await rejectsWith(messages.next(), 'INVALID_ARGUMENT', 'messages[1].observers[0].enter_radius');
    assert.equal(errors.length, 1);
    assert.throws(() => later.upsert([{ id: 3, enter_radius: 1 }]), CollideError);
    // What does not fit the proto is refused before anything is sent.
    assert.throws(
      () => ctx.client.interest({ scene: 'bad', observers: [{ id: -1, enter_radius: 1 }] }),
      CollideError,
    );
  });
});

describe('Interest across a restart', () => {
  test('reopens after the server is killed and restarted, with every observer', async () => {
    const server = await ServerProcess.start();
    const client = new Client(server.address, { channelOptions: FAST_RECONNECT });
    try {
      await client.createScene({ scene: 'world' }); // durable: it survives the restart
      await client.upsertBodies({
        scene: 'world',
        bodies: [
          { id: 1, shape: { sphere: { radius: 1 } }, pose: { position: { x: 1 } } },
          { id: 2, shape: { sphere: { radius: 1 } }, pose: { position: { x: 50 } } },
        ],
      });
      const stream = client.interest(
        { scene: 'world', observers: [{ id: 7, enter_radius: 5 }] },
        { initialBackoffMs: 20, maxBackoffMs: 200 },
      );
      let reconnecting = 0;
      stream.on('reconnecting', () => {
        reconnecting += 1;
      });
      const messages = stream[Symbol.asyncIterator]();
      await messages.next();
      stream.upsert([{ id: 8, enter_radius: 100 }]);
      await untilApplied(messages, 2);
      assert.deepEqual(sorted(stream.sets.get('7')), [1]);
      assert.deepEqual(sorted(stream.sets.get('8')), [1, 2]);
      await server.kill();
      await server.restart();
      const message = (await messages.next()).value;
      assert.equal(message.reconnected, true);
      assert.deepEqual(
        message.snapshot.sets.map((s) => [s.observer_id, s.body_ids]),
        [['7', ['1']], ['8', ['1', '2']]],
      );
      assert.equal(message.snapshot.requests_applied, '1');
      assert.ok(stream.reconnects >= 1);
      assert.ok(reconnecting >= 1);
      stream.cancel();
      await rejectsWith(messages.next(), 'CANCELLED');
    } finally {
      client.close();
      await server.stop();
    }
  });
});
