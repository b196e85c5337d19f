// QueryStream's bound and reconnects against real collide-server processes: a client that sends
// faster than answers arrive holds at most maxPending batches and maxPendingBytes bytes unanswered
// (query() waits, send() refuses), and a server killed and restarted on the same port and data
// directory mid-stream loses no batch: every query() resolves once, with its own answer, and the
// iterator yields each send() answer once.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { Client } from '../src/index.js';
import { encodeRequest } from '../src/proto.js';
import { FAST_RECONNECT, randomBalls, randomRay, useServerAndClient } from './helpers.js';
import { compareCast, random } from './oracle.js';
import { ServerProcess } from './server.js';

const SEED = 515151;

/** A point query of batch `k` that waits for `minVersion`. */
const waitingBatch = (k, minVersion) => ({
  queries: [{ request_id: k, point: { point: { x: 0, y: 0, z: 0 }, radius: 1 }, mode: 'MODE_ALL' }],
  min_version: minVersion,
});

/** A body far from every query of these tests: writing it only moves the scene's version on. */
const farBody = (id) => ({
  id,
  shape: { sphere: { radius: 1 } },
  pose: { position: { x: 100_000, y: 0, z: 0 } },
});

describe('QueryStream bound', () => {
  const ctx = useServerAndClient();

  test('query() waits beyond maxPending batches; send() refuses; answers free room in order', async () => {
    await ctx.client.createScene({ scene: 'bound' });
    const { version } = await ctx.client.upsertBodies({ scene: 'bound', bodies: [farBody(1)] });
    const base = Number(version);
    const maxPending = 4;
    const count = 20;
    const stream = ctx.client.openQueryStream('bound', { maxPending });
    const seen = [];
    // Batch k waits on the server for version base + k: no answer comes before the next write.
    const answers = [];
    for (let k = 1; k <= count; k++) {
      answers.push(
        stream.query(waitingBatch(k, base + k)).then((answer) => {
          seen.push({ k, pending: stream.pending, waiting: stream.waiting });
          return answer;
        }),
      );
    }
    assert.equal(stream.pending, maxPending);
    assert.equal(stream.waiting, count - maxPending);
    assert.throws(
      () => stream.send(waitingBatch(0, 0)),
      (error) => error.codeName === 'RESOURCE_EXHAUSTED' && /maxPending 4/.test(error.message),
    );
    let ready = false;
    const readyPromise = stream.ready().then(() => {
      ready = true;
    });
    for (let j = 1; j <= count; j++) {
      const written = await ctx.client.upsertBodies({ scene: 'bound', bodies: [farBody(1 + j)] });
      assert.equal(Number(written.version), base + j);
      const answer = await answers[j - 1];
      assert.equal(answer.results[0].request_id, String(j));
      assert.ok(Number(answer.version) >= base + j, answer.version);
      // Batch j + 1 waits for a version not yet written: exactly one answer came, one waiting
      // batch took its place.
      assert.equal(stream.pending, Math.min(maxPending, count - j), `after answer ${j}`);
      assert.equal(stream.waiting, Math.max(0, count - maxPending - j), `after answer ${j}`);
      assert.equal(ready, j > count - maxPending, `ready() after answer ${j}`);
    }
    await readyPromise;
    assert.deepEqual(
      seen.map((s) => s.k),
      Array.from({ length: count }, (_, i) => i + 1),
    );
    for (const s of seen) assert.ok(s.pending <= maxPending, JSON.stringify(s));
    await stream.close();
    await ctx.client.deleteScene({ scene: 'bound' });
  });

  test('query() waits beyond maxPendingBytes', async () => {
    await ctx.client.createScene({ scene: 'bytes' });
    const { version } = await ctx.client.upsertBodies({ scene: 'bytes', bodies: [farBody(1)] });
    const base = Number(version);
    // Every batch encodes to the same size (request ids and versions below 128: one byte each).
    const size = encodeRequest('QueryStream', { ...waitingBatch(1, base + 1), scene: 'bytes' })
      .length;
    const count = 12;
    assert.ok(base + count < 128);
    const stream = ctx.client.openQueryStream('bytes', {
      maxPending: 1000,
      maxPendingBytes: 3 * size + Math.floor(size / 2),
    });
    const answers = [];
    for (let k = 1; k <= count; k++) answers.push(stream.query(waitingBatch(k, base + k)));
    assert.equal(stream.pending, 3);
    assert.equal(stream.pendingBytes, 3 * size);
    assert.equal(stream.waiting, count - 3);
    for (let j = 1; j <= count; j++) {
      await ctx.client.upsertBodies({ scene: 'bytes', bodies: [farBody(1 + j)] });
      assert.equal((await answers[j - 1]).results[0].request_id, String(j));
      assert.equal(stream.pending, Math.min(3, count - j));
      assert.equal(stream.pendingBytes, Math.min(3, count - j) * size);
    }
    // One batch larger than the bound goes alone.
    const big = {
      queries: Array.from({ length: 8 }, (_, i) => ({
        request_id: i,
        point: { point: { x: 0, y: 0, z: 0 }, radius: 1 },
      })),
    };
    assert.equal((await stream.query(big)).results.length, 8);
    await stream.close();
    await ctx.client.deleteScene({ scene: 'bytes' });
  });

  test('bad options are refused with their name', () => {
    for (const [options, name] of [
      [{ maxPending: 0 }, 'maxPending'],
      [{ maxPending: -1 }, 'maxPending'],
      [{ maxPending: 1.5 }, 'maxPending'],
      [{ maxPendingBytes: NaN }, 'maxPendingBytes'],
      [{ maxPendingBytes: 2 ** 64 }, 'maxPendingBytes'],
      [{ reconnectTimeoutMs: -1 }, 'reconnectTimeoutMs'],
      [{ initialBackoffMs: Infinity }, 'initialBackoffMs'],
      [{ deadlineMs: NaN }, 'deadlineMs'],
    ]) {
      assert.throws(
        () => ctx.client.openQueryStream('any', options),
        (error) => error.codeName === 'INVALID_ARGUMENT' && error.fieldPath === name,
        JSON.stringify(options),
      );
    }
  });
});

describe('QueryStream reconnect', () => {
  test('a server killed and restarted mid-stream: every batch is answered once, rightly', async (t) => {
    const server = await ServerProcess.start({ args: ['--max_version_wait_ms=60000'] });
    const client = new Client(server.address, { channelOptions: FAST_RECONNECT });
    let writer = null;
    try {
      const { balls, bodies } = randomBalls(SEED, 120);
      await client.createScene({ scene: 'restart' });
      const { version } = await client.upsertBodies({ scene: 'restart', bodies });
      const base = BigInt(version);
      const next = random(SEED + 1);
      const count = 60;
      const blocker = 20;
      const sent = [21, 22, 23];
      const batches = Array.from({ length: count }, (_, b) => ({
        queries: [0, 1, 2].map((q) => ({
          request_id: b * 10 + q,
          raycast: randomRay(next),
          mode: 'MODE_ALL',
          max_hits: 1000,
        })),
        // The blocker waits for a version only written after the restart: the batches behind it
        // are unanswered when the server dies.
        min_version: b === blocker ? String(base + 1n) : undefined,
      }));
      const maxPending = 8;
      const stream = client.openQueryStream('restart', { maxPending, initialBackoffMs: 20 });
      let reconnecting = 0;
      stream.on('reconnecting', () => {
        reconnecting += 1;
      });
      const settled = new Array(count).fill(0);
      let mostPending = 0;
      const query = (b) =>
        stream.query(batches[b]).then((answer) => {
          settled[b] += 1;
          mostPending = Math.max(mostPending, stream.pending);
          return answer;
        });
      const answers = new Map();
      for (let b = 0; b < blocker; b++) answers.set(b, query(b));
      await Promise.all(answers.values());
      answers.set(blocker, query(blocker));
      for (const b of sent) {
        await stream.ready();
        stream.send(batches[b]);
      }
      for (let b = sent.at(-1) + 1; b < count; b++) answers.set(b, query(b));
      assert.equal(stream.pending, maxPending);
      assert.equal(stream.waiting, count - blocker - maxPending);

      await server.kill();
      await server.restart();
      // The blocker's version, written on a channel of its own (the stream's may be backing off).
      writer = new Client(server.address);
      const written = await writer.upsertBodies({ scene: 'restart', bodies: [farBody(100_000)] });
      assert.equal(BigInt(written.version), base + 1n);

      const closed = stream.close();
      const iterated = [];
      for await (const answer of stream) iterated.push(answer);
      await closed;
      const all = new Map(answers);
      sent.forEach((b, i) => all.set(b, Promise.resolve(iterated[i])));
      assert.equal(iterated.length, sent.length);
      for (let b = 0; b < count; b++) {
        const answer = await all.get(b);
        assert.equal(answer.error, null);
        assert.ok(BigInt(answer.version) >= (b === blocker ? base + 1n : base), `batch ${b}`);
        answer.results.forEach((result, q) => {
          const query = batches[b].queries[q];
          assert.equal(result.request_id, String(query.request_id), `batch ${b} query ${q}`);
          assert.equal(result.error, null);
          const ray = query.raycast;
          const difference = compareCast(
            result.hits,
            balls,
            ray.origin,
            ray.direction,
            ray.max_distance,
            0,
            undefined,
          );
          assert.equal(difference, null, `${difference} (seed ${SEED}, batch ${b}, query ${q})`);
        });
      }
      for (let b = 0; b < count; b++) {
        const times = sent.includes(b) ? 0 : 1;
        assert.equal(settled[b], times, `batch ${b} settled ${settled[b]} times`);
      }
      t.diagnostic(`${stream.reconnects} reconnects, ${reconnecting} reconnecting events`);
      assert.ok(stream.reconnects >= 1, 'the stream never reconnected');
      assert.ok(mostPending <= maxPending, `${mostPending} batches pending`);
    } finally {
      writer?.close();
      client.close();
      await server.stop();
    }
  });
});
