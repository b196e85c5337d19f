// What the client puts on the wire around each request: the scene header, the token and the
// deadline, as seen by an in-process gRPC server that records every call's metadata.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import grpc from '@grpc/grpc-js';

import { Client, DEFAULT_DEADLINE_MS, SCENE_HEADER } from '../src/index.js';
import { service } from '../src/proto.js';

// Per rpc: the metadata and deadline of each call, as the server saw them.
const calls = [];
let server;
let address;

function record(rpc, call) {
  calls.push({
    rpc,
    scene: call.metadata.get(SCENE_HEADER),
    authorization: call.metadata.get('authorization'),
    deadline: call.getDeadline(),
  });
}

// Answers every rpc with an empty response; streams answer each message with an empty one.
function recordingService() {
  const implementation = {};
  for (const [rpc, method] of Object.entries(service)) {
    if (method.responseStream && !method.requestStream) {
      implementation[rpc] = (call) => {
        record(rpc, call);
        call.end();
      };
    } else if (method.requestStream) {
      implementation[rpc] = (call) => {
        record(rpc, call);
        call.on('data', () => call.write({}));
        call.on('end', () => call.end());
      };
    } else {
      implementation[rpc] = (call, callback) => {
        record(rpc, call);
        callback(null, {});
      };
    }
  }
  return implementation;
}

before(async () => {
  server = new grpc.Server();
  server.addService(service, recordingService());
  const port = await new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  address = `127.0.0.1:${port}`;
});

after(() => server.forceShutdown());

function lastCall(rpc) {
  const found = calls.filter((call) => call.rpc === rpc);
  assert.ok(found.length > 0, `no ${rpc} call recorded`);
  return found[found.length - 1];
}

test('every call that names a scene carries the x-collide-scene header and the token', async () => {
  const client = new Client(address, { token: 's3cret' });
  const ray = { origin: { x: 0, y: 0, z: 0 }, direction: { x: 1, y: 0, z: 0 }, max_distance: 1 };
  await client.createScene({ scene: 'a' });
  await client.deleteScene({ scene: 'a' });
  await client.getScene({ scene: 'a' });
  await client.upsertBodies({ scene: 'a', bodies: [] });
  await client.removeBodies({ scene: 'a', ids: [] });
  await client.getBodies({ scene: 'a' });
  await client.raycast({ scene: 'a', ray });
  await client.sphereCast({ scene: 'a', cast: { ...ray, radius: 1 } });
  await client.overlap({ scene: 'a', overlap: {} });
  await client.listScenes();
  const stream = client.openQueryStream('a');
  await stream.query({ queries: [] });
  await stream.close();
  const writer = client.openUpdateWriter('a');
  // The recording server echoes empty acks: client_sequence '0' is not the batch's.
  await assert.rejects(writer.apply({}), (error) => error.codeName === 'DATA_LOSS');
  client.close();

  const rpcs = [
    'CreateScene',
    'DeleteScene',
    'ListScenes',
    'GetScene',
    'UpsertBodies',
    'RemoveBodies',
    'GetBodies',
    'UpdateStream',
    'QueryStream',
    'Raycast',
    'SphereCast',
    'Overlap',
  ];
  for (const rpc of rpcs) {
    const call = lastCall(rpc);
    assert.deepEqual(call.authorization, ['Bearer s3cret'], rpc);
    assert.deepEqual(call.scene, rpc === 'ListScenes' ? [] : ['a'], rpc);
  }
});

test('a scene name that is not valid goes without the header (the server explains the name)', async () => {
  const client = new Client(address);
  for (const scene of ['a b', 'é', 'x'.repeat(129), '']) {
    await client.getScene({ scene });
    assert.deepEqual(lastCall('GetScene').scene, [], JSON.stringify(scene.slice(0, 10)));
  }
  await client.getScene({ scene: 'Valid_name-1.2' });
  assert.deepEqual(lastCall('GetScene').scene, ['Valid_name-1.2']);
  client.close();
});

test('unary calls carry the client deadline or their own; streams none', async () => {
  const client = new Client(address);
  const start = Date.now();
  await client.getScene({ scene: 'b' });
  const byDefault = lastCall('GetScene').deadline;
  await client.getScene({ scene: 'b' }, { deadlineMs: 1234 });
  const overridden = lastCall('GetScene').deadline;
  const stream = client.openQueryStream('b');
  await stream.query({ queries: [] });
  await stream.close();
  client.close();
  const end = Date.now();

  // The server sees the deadline as a Date or as milliseconds since the epoch.
  const within = (deadline, ms) => {
    const at = deadline instanceof Date ? deadline.getTime() : deadline;
    return at >= start + ms - 1000 && at <= end + ms + 1000;
  };
  assert.ok(within(byDefault, DEFAULT_DEADLINE_MS), `default deadline ${byDefault}`);
  assert.ok(within(overridden, 1234), `overridden deadline ${overridden}`);
  assert.equal(lastCall('QueryStream').deadline, Infinity);
  assert.deepEqual(lastCall('GetScene').authorization, []);
});
