// Auth against a real collide-server started with a token file: the token travels as
// `authorization: Bearer <token>`; roles and scene prefixes decide what each call may do.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Client } from '../src/index.js';
import { rejectsWith } from './helpers.js';
import { ServerProcess, tempDir } from './server.js';

describe('auth', () => {
  let dir;
  let server;
  const clients = [];
  const as = (token) => {
    const client = new Client(server.address, token === undefined ? {} : { token });
    clients.push(client);
    return client;
  };

  before(async () => {
    dir = tempDir();
    const tokenFile = path.join(dir, 'tokens');
    fs.writeFileSync(
      tokenFile,
      [
        '# token role [prefixes]',
        'admin-token admin',
        'writer-token writer',
        'reader-token reader',
        '',
        'team-token writer team-,shared-',
      ].join('\n'),
    );
    server = await ServerProcess.start({ tokenFile });
  });

  after(async () => {
    for (const client of clients) client.close();
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('calls without a known token are UNAUTHENTICATED', async () => {
    await rejectsWith(as(undefined).listScenes(), 'UNAUTHENTICATED');
    await rejectsWith(as('wrong-token').getScene({ scene: 'x' }), 'UNAUTHENTICATED');
    await rejectsWith(as('wrong-token').serverStats(), 'UNAUTHENTICATED');
    // A query stream refused as a whole is final: not retried, its batches rejected.
    const stream = as('wrong-token').openQueryStream('x', { initialBackoffMs: 1 });
    let reconnecting = 0;
    stream.on('reconnecting', () => {
      reconnecting += 1;
    });
    const ray = { origin: { x: 0, y: 0, z: 0 }, direction: { x: 1, y: 0, z: 0 }, max_distance: 1 };
    const first = stream.query({ queries: [{ raycast: ray }] });
    const second = stream.query({ queries: [{ raycast: ray }] });
    await rejectsWith(first, 'UNAUTHENTICATED');
    await rejectsWith(second, 'UNAUTHENTICATED');
    assert.equal(reconnecting, 0);
    assert.throws(
      () => stream.send({ queries: [] }),
      (error) => error.codeName === 'UNAUTHENTICATED',
    );
  });

  test('each role may do its calls and no more', async () => {
    const admin = as('admin-token');
    const writer = as('writer-token');
    const reader = as('reader-token');
    const body = {
      id: 1,
      shape: { sphere: { radius: 1 } },
      pose: { position: { x: 0, y: 0, z: 0 } },
    };
    const ray = {
      origin: { x: -5, y: 0, z: 0 },
      direction: { x: 1, y: 0, z: 0 },
      max_distance: 10,
    };

    await rejectsWith(writer.createScene({ scene: 'roles' }), 'PERMISSION_DENIED');
    await admin.createScene({ scene: 'roles' });
    await rejectsWith(reader.upsertBodies({ scene: 'roles', bodies: [body] }), 'PERMISSION_DENIED');
    assert.equal((await writer.upsertBodies({ scene: 'roles', bodies: [body] })).version, '1');
    const { hits } = await reader.raycast({ scene: 'roles', ray });
    assert.equal(hits[0].distance, 4);
    assert.equal((await reader.getBodies({ scene: 'roles' })).bodies.length, 1);

    // A reader's update stream is refused as a whole: final, not retried.
    const refused = reader.openUpdateWriter('roles');
    await rejectsWith(
      refused.apply({ moves: { ids: [1], poses: [1, 0, 0, 0, 0, 0, 1] } }),
      'PERMISSION_DENIED',
    );
    await rejectsWith(refused.flush(), 'PERMISSION_DENIED');
    assert.equal(refused.pending, 1);

    const stream = writer.openUpdateWriter('roles');
    assert.equal((await stream.apply({ ops: [{ remove: 1 }] })).version, '2');
    await stream.close();
    await rejectsWith(writer.deleteScene({ scene: 'roles' }), 'PERMISSION_DENIED');
    await rejectsWith(writer.serverStats(), 'PERMISSION_DENIED');
    await rejectsWith(reader.serverStats(), 'PERMISSION_DENIED');
    assert.equal((await admin.serverStats()).scenes, 1);
    await admin.deleteScene({ scene: 'roles' });
  });

  test('a token limited to scene prefixes sees and writes only those scenes', async () => {
    const admin = as('admin-token');
    const team = as('team-token');
    for (const scene of ['team-a', 'shared-b', 'other-c']) await admin.createScene({ scene });
    const visible = (await team.listScenes()).map((scene) => scene.name);
    assert.deepEqual(visible, ['shared-b', 'team-a']);
    await rejectsWith(team.getScene({ scene: 'other-c' }), 'PERMISSION_DENIED');
    // Refused batch by batch: the stream goes on.
    const writer = team.openUpdateWriter('other-c');
    await rejectsWith(writer.apply({ ops: [{ remove: 1 }] }), 'PERMISSION_DENIED', 'scene');
    await writer.write({ ops: [{ remove: 2 }] });
    const [rejected] = await writer.close();
    assert.equal(rejected.error.codeName, 'PERMISSION_DENIED');
    assert.equal(rejected.sequence, '2');
    const allowed = team.openUpdateWriter('team-a');
    const ack = await allowed.apply({
      ops: [
        {
          upsert: {
            id: 9,
            shape: { sphere: { radius: 1 } },
            pose: { position: { x: 0, y: 0, z: 0 } },
          },
        },
      ],
    });
    assert.equal(ack.version, '1');
    await allowed.close();
    for (const scene of ['team-a', 'shared-b', 'other-c']) await admin.deleteScene({ scene });
  });
});
