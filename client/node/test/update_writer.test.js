// UpdateWriter against a real collide-server: pipelining, rejected batches, deduplication by
// (client id, sequence), exactly-once application across a server killed and restarted in the
// middle of the stream, and across an owner of a replicated scene refusing writes while its
// lease runs out (a real nats-server stopped and continued).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client } from '../src/index.js';
import { FAST_RECONNECT } from './helpers.js';
import { LossyProxy } from './proxy.js';
import { ServerProcess, tempDir } from './server.js';

const sphere = (id, x, y = 0) => ({
  id,
  shape: { sphere: { radius: 0.5 } },
  pose: { position: { x, y, z: 0 } },
  user_data: id * 10,
});
const move = (id, x, y) => ({ ids: [id], poses: [x, y, 0, 0, 0, 0, 1] });

/** @returns {string|null} The nats-server binary (on PATH, else Debian's), or null. */
function natsServerBinary() {
  const candidates = (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => dir !== '')
    .map((dir) => path.join(dir, 'nats-server'));
  for (const candidate of [...candidates, '/usr/sbin/nats-server']) {
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // Not there: the next one.
    }
  }
  return null;
}

/**
 * A nats-server with JetStream on a free port of 127.0.0.1, in a temporary directory: `url` to
 * connect to, `signal()` to stop and continue it, `stop()` to kill it and remove its directory.
 */
async function startNats(binary) {
  const dir = tempDir('collide-node-nats-');
  const args = ['-js', '-a', '127.0.0.1', '-p', '-1', '-m', '-1', '-sd', path.join(dir, 'js')];
  const child = spawn(binary, [...args, '--ports_file_dir', dir], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // A test process that dies leaves no nats-server behind.
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  let exitedHow = null;
  const exited = new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      process.off('exit', killOnExit);
      exitedHow = { code, signal };
      resolve(exitedHow);
    }),
  );
  const nats = {
    url: '',
    signal(name) {
      if (exitedHow === null) child.kill(name);
    },
    async stop() {
      if (exitedHow === null) {
        // A stopped process is continued first, so that it dies at once.
        child.kill('SIGCONT');
        child.kill('SIGKILL');
      }
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  // The ports file may be read while it is half written: parsed again until it is whole.
  const portsFile = path.join(dir, `${path.basename(binary)}_${child.pid}.ports`);
  for (let waited = 0; waited < 20_000; waited += 20) {
    if (exitedHow) {
      await nats.stop();
      throw new Error(`nats-server exited (${JSON.stringify(exitedHow)}): ${stderr}`);
    }
    try {
      const [url] = JSON.parse(fs.readFileSync(portsFile, 'utf8')).nats;
      if (url) {
        nats.url = url;
        return nats;
      }
    } catch {
      // Not written yet, or not whole.
    }
    await sleep(20);
  }
  await nats.stop();
  throw new Error(`nats-server wrote no ports file in 20 s: ${stderr}`);
}

describe('UpdateWriter', () => {
  let server;
  let client;

  before(async () => {
    server = await ServerProcess.start();
    client = new Client(server.address, { channelOptions: FAST_RECONNECT });
  });

  after(async () => {
    client?.close();
    await server?.stop();
  });

  test('pipelines batches within maxPending and reports rejected ones with field paths', async () => {
    await client.createScene({ scene: 'pipeline' });
    const writer = client.openUpdateWriter('pipeline', { maxPending: 4 });
    assert.match(writer.clientId, /^[1-9][0-9]*$/);
    await writer.write({ ops: [{ upsert: sphere(1, 0) }] });
    const rejectedEvents = [];
    writer.on('rejected', (rejected) => rejectedEvents.push(rejected.sequence));
    const bad = {
      5: [{ moves: { ids: [1], poses: [1, 2, 3] } }, 'INVALID_ARGUMENT', 'moves.poses'],
      9: [{ moves: move(77, 0, 0) }, 'NOT_FOUND', 'moves.ids[0]'],
      13: [
        {
          ops: [
            {
              set_pose: {
                id: 1,
                pose: { position: { x: 0, y: 0, z: 0 }, rotation: { x: 0, y: 0, z: 0, w: 0 } },
              },
            },
          ],
        },
        'INVALID_ARGUMENT',
        'ops[0].set_pose.pose.rotation',
      ],
      17: [{ ops: [{ remove: 55 }] }, 'NOT_FOUND', 'ops[0].remove'],
    };
    let most = 0;
    for (let i = 2; i <= 40; i++) {
      const sequence = await writer.write(bad[i]?.[0] ?? { moves: move(1, i, 0) });
      assert.equal(sequence, String(i));
      most = Math.max(most, writer.pending);
    }
    assert.ok(most <= 4, `${most} batches pending`);
    const rejected = await writer.flush();
    assert.equal(writer.pending, 0);
    assert.deepEqual(
      rejected.map((r) => r.sequence),
      ['5', '9', '13', '17'],
    );
    assert.deepEqual(rejectedEvents, ['5', '9', '13', '17']);
    for (const r of rejected) {
      const [, codeName, path] = bad[Number(r.sequence)];
      assert.equal(r.error.codeName, codeName, r.error.message);
      assert.ok(r.error.message.startsWith(`${path}: `), r.error.message);
      assert.equal(r.error.sequence, r.sequence);
    }
    // 40 batches, 4 rejected: 36 applied.
    assert.equal(writer.version, '36');
    assert.deepEqual(await writer.close(), []);
    const scene = await client.getScene({ scene: 'pipeline' });
    assert.equal(scene.stats.version, '36');
    const { bodies } = await client.getBodies({ scene: 'pipeline', ids: [1] });
    assert.deepEqual(bodies[0].pose.position, { x: 40, y: 0, z: 0 });
    await assert.rejects(writer.write({}), (error) => error.codeName === 'FAILED_PRECONDITION');
    await client.deleteScene({ scene: 'pipeline' });
  });

  test('apply resolves with the ack, or rejects with the code and field path', async () => {
    await client.createScene({ scene: 'apply' });
    const writer = client.openUpdateWriter('apply');
    const ack = await writer.apply({ ops: [{ upsert: sphere(1, 0) }], tick: 3 });
    assert.deepEqual(ack, {
      client_sequence: '1',
      version: '1',
      durable: true,
      duplicate: false,
      error: null,
    });
    await assert.rejects(
      writer.apply({
        ops: [
          { upsert: { ...sphere(2, 0), shape: { box: { half_extents: { x: -1, y: 1, z: 1 } } } } },
        ],
      }),
      (error) => {
        assert.equal(error.codeName, 'INVALID_ARGUMENT');
        assert.equal(error.fieldPath, 'ops[0].upsert.shape.box.half_extents');
        assert.equal(error.sequence, '2');
        return true;
      },
    );
    await assert.rejects(
      writer.apply({ moves: move(1, 0, 0), tick: 2 }),
      (error) => error.fieldPath === 'tick',
    );
    await assert.rejects(writer.apply({ scene: 'other' }), (error) => error.fieldPath === 'scene');
    await assert.rejects(
      writer.apply({ client_sequence: 9 }),
      (error) => error.fieldPath === 'client_sequence',
    );
    // Rejected before sending: no sequence was used.
    assert.equal((await writer.apply({ moves: move(1, 1, 0) })).client_sequence, '4');
    assert.deepEqual(await writer.close(), []);
    // A name no header may carry: the stream opens and the server answers each batch.
    const odd = client.openUpdateWriter('not a name');
    await assert.rejects(
      odd.apply({ ops: [{ remove: 1 }] }),
      (error) => error.fieldPath === 'scene',
    );
    assert.deepEqual(await odd.close(), []);
    await client.deleteScene({ scene: 'apply' });
  });

  test('bad options are refused with their name', () => {
    for (const [options, name] of [
      [{ maxPending: 0 }, 'maxPending'],
      [{ maxPending: -1 }, 'maxPending'],
      [{ maxPending: 1.5 }, 'maxPending'],
      [{ maxPending: 2 ** 64 }, 'maxPending'],
      [{ initialBackoffMs: NaN }, 'initialBackoffMs'],
      [{ maxBackoffMs: -1 }, 'maxBackoffMs'],
      [{ reconnectTimeoutMs: Infinity }, 'reconnectTimeoutMs'],
      [{ reconnectTimeoutMs: '5' }, 'reconnectTimeoutMs'],
    ]) {
      assert.throws(
        () => client.openUpdateWriter('any', options),
        (error) => error.codeName === 'INVALID_ARGUMENT' && error.fieldPath === name,
        JSON.stringify(options),
      );
    }
  });

  test('a batch is taken as it was at write(): the caller may reuse its arrays at once', async () => {
    await client.createScene({ scene: 'reuse' });
    const writer = client.openUpdateWriter('reuse');
    await writer.write({ ops: [{ upsert: sphere(1, 0) }, { upsert: sphere(2, 0) }] });
    const moves = { ids: [1], poses: [5, 0, 0, 0, 0, 0, 1] };
    await writer.write({ moves });
    // Reused for the next body before the first batch is acknowledged.
    moves.ids[0] = 2;
    moves.poses[0] = 7;
    await writer.write({ moves });
    moves.poses[0] = 99;
    assert.deepEqual(await writer.close(), []);
    const { bodies } = await client.getBodies({ scene: 'reuse', ids: [1, 2] });
    assert.deepEqual(
      bodies.map((body) => body.pose.position.x),
      [5, 7],
    );
    await client.deleteScene({ scene: 'reuse' });
  });

  test('a writer with the same client id resending the same sequences is acknowledged as duplicate', async () => {
    await client.createScene({ scene: 'dedup' });
    // Above 2^53: the id must travel exactly.
    const clientId = '12345678901234567891';
    const batches = [1, 2, 3, 4, 5].map((i) => ({ ops: [{ upsert: sphere(i, i) }] }));
    const first = client.openUpdateWriter('dedup', { clientId: BigInt(clientId) });
    assert.equal(first.clientId, clientId);
    for (const batch of batches) await first.write(batch);
    await first.close();

    const again = client.openUpdateWriter('dedup', { clientId, firstSequence: 1 });
    for (const batch of batches) {
      const ack = await again.apply(batch);
      assert.equal(ack.duplicate, true, JSON.stringify(ack));
      assert.equal(ack.version, '5');
    }
    const fresh = await again.apply({ ops: [{ remove: 5 }] });
    assert.deepEqual([fresh.client_sequence, fresh.version, fresh.duplicate], ['6', '6', false]);
    await again.close();
    assert.equal((await client.getScene({ scene: 'dedup' })).stats.version, '6');
    await client.deleteScene({ scene: 'dedup' });
  });

  test('a batch answered with moved_to is sent again until it applies, once, never rejected', async () => {
    await client.createScene({ scene: 'redirected' });
    const mark = (destination, clear = false) =>
      client.unary('SetSceneMoving', { scene: 'redirected', destination, clear });
    const writer = client.openUpdateWriter('redirected', { maxBackoffMs: 100 });
    assert.equal((await writer.apply({ ops: [{ upsert: sphere(1, 0) }] })).version, '1');
    const rejected = [];
    writer.on('rejected', (batch) => rejected.push(batch));
    const redirects = [];
    writer.on('redirected', (info) => redirects.push(info));
    // Marked as moving, the server answers the scene's batches with Error.moved_to (as a
    // follower of a replicated scene names its owner) and applies none.
    await mark('10.0.0.4:50051');
    const moved = writer.apply({ ops: [{ upsert: sphere(1, 5) }] });
    await writer.write({ ops: [{ upsert: sphere(2, 0) }] });
    for (let i = 0; i < 500 && writer.redirected < 2; i += 1) await sleep(20);
    assert.ok(writer.redirected >= 2, `redirected ${writer.redirected}`);
    assert.deepEqual(redirects[0], { sequence: '2', movedTo: '10.0.0.4:50051' });
    assert.equal(writer.pending, 2);
    assert.equal((await client.getScene({ scene: 'redirected' })).stats.version, '1');
    // The mark cleared: the batches apply, each once.
    await mark('', true);
    const ack = await moved;
    assert.deepEqual([ack.client_sequence, ack.version, ack.duplicate], ['2', '2', false]);
    assert.deepEqual(await writer.flush(), []);
    assert.deepEqual(rejected, []);
    assert.equal(writer.version, '3');
    await writer.close();
    const { bodies } = await client.getBodies({ scene: 'redirected', ids: [1, 2] });
    assert.deepEqual(
      bodies.map((body) => body.pose.position.x),
      [5, 0],
    );
    assert.equal((await client.getScene({ scene: 'redirected' })).stats.version, '3');
    await client.deleteScene({ scene: 'redirected' });
  });

  test('a writer answered with moved_to for longer than reconnectTimeoutMs fails naming the server', async () => {
    await client.createScene({ scene: 'gone' });
    await client.unary('SetSceneMoving', { scene: 'gone', destination: '10.0.0.4:50051' });
    const writer = client.openUpdateWriter('gone', { maxBackoffMs: 100, reconnectTimeoutMs: 1000 });
    const answer = writer.apply({ ops: [{ upsert: sphere(1, 0) }] });
    await assert.rejects(answer, (error) => {
      assert.equal(error.codeName, 'FAILED_PRECONDITION');
      assert.equal(error.movedTo, '10.0.0.4:50051');
      assert.match(error.message, /moved to 10\.0\.0\.4:50051/);
      return true;
    });
    assert.ok(writer.redirected >= 2, `redirected ${writer.redirected}`);
    assert.equal((await client.getScene({ scene: 'gone' })).stats.version, '0');
  });

  test('batches an owner refuses UNAVAILABLE while its lease ran out are sent again until each applies once, never rejected', async (t) => {
    const binary = natsServerBinary();
    if (binary === null) {
      t.skip("nats-server not found: scripts/lib/setup.sh installs Debian's nats-server");
      return;
    }
    const nats = await startNats(binary);
    let owner = null;
    let own = null;
    try {
      // A lease of 600 ms: stopping the nats-server for 1.8 s lets it run out, and the owner
      // refuses writes UNAVAILABLE until the owners' bucket answers again.
      owner = await ServerProcess.start({
        args: [
          `--nats_url=${nats.url}`,
          '--replication_replicas=1',
          '--replication_lease_ms=600',
          '--replication_publish_timeout_ms=1000',
        ],
      });
      own = new Client(owner.address, { channelOptions: FAST_RECONNECT });
      // The server may still be connecting to NATS: UNAVAILABLE until it is.
      const options = { durability: 'DURABILITY_REPLICATED' };
      for (const deadline = Date.now() + 20_000; ; await sleep(100)) {
        try {
          await own.createScene({ scene: 'stalled', options });
          break;
        } catch (error) {
          if (error.codeName !== 'UNAVAILABLE' || Date.now() > deadline) throw error;
        }
      }
      const before = BigInt((await own.getScene({ scene: 'stalled' })).stats.version);

      const writer = own.openUpdateWriter('stalled', {
        initialBackoffMs: 10,
        maxBackoffMs: 100,
        reconnectTimeoutMs: 30_000,
      });
      const applied = new Set();
      writer.on('ack', (ack) => {
        if (!ack.error) applied.add(ack.client_sequence);
      });
      const batches = 150;
      for (let i = 0; i < batches; i++) {
        if (i === 30) nats.signal('SIGSTOP');
        if (i === 120) nats.signal('SIGCONT');
        await writer.write({ ops: [{ upsert: sphere(1 + i, 1 + i) }] });
        await sleep(20);
      }
      const closed = writer.close();
      const timeout = sleep(30_000, 'timeout', { ref: false });
      const rejected = await Promise.race([closed, timeout]);
      assert.notEqual(rejected, 'timeout', `${writer.pending} batches unacknowledged after 30 s`);
      t.diagnostic(
        `${writer.unavailable} answered UNAVAILABLE, ${writer.redirected} redirected, ` +
          `${writer.reconnects} reconnects`,
      );
      assert.deepEqual(
        rejected.map(
          (batch) => `${batch.sequence}: ${batch.error.codeName}: ${batch.error.message}`,
        ),
        [],
      );
      assert.equal(applied.size, batches);
      assert.ok(writer.unavailable >= 1, 'no batch was sent while the lease had run out');
      // Each batch applied once: one version each.
      const scene = await own.getScene({ scene: 'stalled' });
      assert.equal(BigInt(scene.stats.version) - before, BigInt(batches));
      const { bodies } = await own.getBodies({ scene: 'stalled' });
      const ids = new Set(bodies.map((body) => Number(body.id)));
      for (let id = 1; id <= batches; id++) assert.ok(ids.has(id), `body ${id} is missing`);
    } finally {
      own?.close();
      // Continued first: the owner stops without waiting for its replicated log.
      nats.signal('SIGCONT');
      await owner?.stop();
      await nats.stop();
    }
  });

  test('after the server is killed and restarted mid-stream, every batch is applied exactly once', async (t) => {
    // Batch i creates body i + 1 at (i, 0) and moves body 1 to (0, i).
    const batch = (i) => ({
      ops: [{ upsert: sphere(i + 1, i) }],
      moves: i > 0 ? move(1, 0, i) : undefined,
    });
    const third = 100;
    await client.createScene({ scene: 'restart' });
    // The writer reaches the server through a proxy that can lose the server's answers.
    const proxy = await LossyProxy.start(server.port);
    const proxied = new Client(proxy.address, { channelOptions: FAST_RECONNECT });
    const writer = proxied.openUpdateWriter('restart', { maxPending: 2 * third });
    const acked = new Map();
    let duplicates = 0;
    writer.on('ack', (ack) => {
      acked.set(ack.client_sequence, (acked.get(ack.client_sequence) ?? 0) + 1);
      if (ack.duplicate) duplicates += 1;
    });
    try {
      for (let i = 0; i < third; i++) await writer.write(batch(i));
      assert.deepEqual(await writer.flush(), []);

      // The second third reaches the server, is applied and logged, but its acks are lost (the
      // writer's next connection, after the restart, is not lossy).
      proxy.freeze();
      for (let i = third; i < 2 * third; i++) await writer.write(batch(i));
      while ((await client.getScene({ scene: 'restart' })).stats.version !== String(2 * third)) {
        await sleep(10);
      }
      // Applied is not yet logged: a durable write after them, in the same log, covers them.
      await client.createScene({ scene: 'restart-mark' });
      const mark = await client.upsertBodies({ scene: 'restart-mark', bodies: [sphere(1, 0)] });
      assert.equal(mark.durable, true);
      assert.equal(writer.pending, third);
      await server.kill();
      const restarted = server.restart();
      // The last third is written while the server comes back: kept, sent after the resent ones.
      for (let i = 2 * third; i < 3 * third; i++) await writer.write(batch(i));
      await restarted;
      assert.deepEqual(await writer.flush(), []);
      await writer.close();
    } finally {
      // A fresh channel for the checks: the old one may still be backing off from the restart.
      client.close();
      client = new Client(server.address);
      proxied.close();
      await proxy.close();
    }

    t.diagnostic(`${writer.reconnects} reconnects, ${duplicates} acknowledged as duplicates`);
    assert.ok(writer.reconnects >= 1, 'the writer never reconnected');
    assert.equal(acked.size, 3 * third);
    for (const [sequence, count] of acked)
      assert.equal(count, 1, `sequence ${sequence} acked ${count} times`);
    const scene = await client.getScene({ scene: 'restart' });
    assert.equal(scene.stats.version, String(3 * third));
    // Every batch whose ack was lost was resent and recognised as applied.
    assert.equal(duplicates, third);
    assert.equal(scene.stats.body_count, 3 * third);
    const { bodies } = await client.getBodies({ scene: 'restart' });
    assert.equal(bodies.length, 3 * third);
    for (const body of bodies) {
      const id = Number(body.id);
      const expected = id === 1 ? { x: 0, y: 3 * third - 1, z: 0 } : { x: id - 1, y: 0, z: 0 };
      assert.deepEqual(body.pose.position, expected, `body ${id}`);
      assert.equal(body.user_data, String(id * 10));
    }
    await client.deleteScene({ scene: 'restart' });
    await client.deleteScene({ scene: 'restart-mark' });
  });

  test('cancel stops the writer and keeps the unacknowledged batches', async () => {
    await client.createScene({ scene: 'cancel' });
    const writer = client.openUpdateWriter('cancel');
    await writer.write({ ops: [{ upsert: sphere(1, 0) }] });
    writer.cancel();
    assert.equal(writer.unacknowledged().length, 1);
    assert.equal(writer.unacknowledged()[0].client_sequence, '1');
    await assert.rejects(writer.flush(), (error) => error.codeName === 'CANCELLED');
    await assert.rejects(writer.write({}), (error) => error.codeName === 'CANCELLED');
    await client.deleteScene({ scene: 'cancel' });
  });
  test('closing the client stops its writer, which keeps its unacknowledged batches', async () => {
    await client.createScene({ scene: 'closed' });
    const own = new Client(server.address);
    const writer = own.openUpdateWriter('closed');
    await writer.write({ ops: [{ upsert: sphere(1, 0) }] });
    own.close();
    await assert.rejects(writer.flush(), (error) => error.codeName === 'FAILED_PRECONDITION');
    assert.equal(writer.unacknowledged().length, 1);
    await assert.rejects(
      own.getScene({ scene: 'closed' }),
      (error) => error.codeName === 'FAILED_PRECONDITION',
    );
    await client.deleteScene({ scene: 'closed' });
  });
});
