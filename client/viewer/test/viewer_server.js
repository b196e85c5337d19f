/**
 * A collide-server with the viewer on (--viewer_address), for the viewer's tests: the Node
 * client's ServerProcess (client/node/test/server.js) plus the viewer's port, a small HTTP
 * helper, and the comparison of a viewer's answer (protobuf's JSON mapping) with the gRPC
 * answer as protobuf messages.
 */

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { service } from '../../node/src/proto.js';
import { ServerProcess, tempDir } from '../../node/test/server.js';

export { Client } from '../../node/src/index.js';

/** A server with the viewer on; `viewer` is http://127.0.0.1:PORT. */
export async function startViewerServer(args = []) {
  const dir = tempDir('collide-viewer-');
  const portFile = path.join(dir, 'viewer_port');
  const server = await ServerProcess.start({
    args: ['--viewer_address=127.0.0.1:0', `--viewer_port_file=${portFile}`, ...args],
  });
  // The viewer's port file is written before the gRPC one, which start() waited for.
  for (let i = 0; i < 100 && !fs.existsSync(portFile); i++) await sleep(50);
  const port = Number(fs.readFileSync(portFile, 'utf8').trim());
  server.viewer = `http://127.0.0.1:${port}`;
  server.viewerPort = port;
  const stop = server.stop.bind(server);
  server.stop = async () => {
    await stop();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return server;
}

/** GET `url`: {status, json (when JSON), text, headers}. */
export async function get(url, init = {}) {
  const response = await fetch(url, init);
  const text = await response.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: response.status, json, text, headers: response.headers };
}

/**
 * `message` encoded as the response of `rpc` (protobufjs, as the Node client decodes it): the
 * viewer's JSON and the gRPC client's object are the same message when these bytes are equal
 * (floats compared as the float32 the wire holds).
 */
export function encodedAnswer(rpc, message) {
  return Buffer.from(service[rpc].responseSerialize(message));
}

/** The viewer's JSON answer and the gRPC answer of `rpc` are the same message, byte for byte. */
export function assertSameAnswer(rpc, viewerJson, grpcAnswer, label = rpc) {
  const viewer = encodedAnswer(rpc, viewerJson);
  const grpc = encodedAnswer(rpc, grpcAnswer);
  assert.ok(viewer.equals(grpc), `${label}: the viewer's ${JSON.stringify(viewerJson)} is not ` +
    `the gRPC answer ${JSON.stringify(grpcAnswer)}`);
}

/**
 * The query string of a cast whose request is `request` (JSON in the `request` parameter; NaN
 * and the infinities as protobuf's JSON mapping spells them, "NaN", "Infinity", "-Infinity").
 */
export function castQuery(request) {
  const json = JSON.stringify(request,
    (key, value) => (typeof value === 'number' && !Number.isFinite(value) ? String(value) : value));
  return `request=${encodeURIComponent(json)}`;
}

/** A scene of known bodies: a red ball (category 1) of radius 5 at the origin, a green box
 * (category 2) turned 90 degrees about Z at (-25, 0, 0), a blue capsule (category 4) at
 * (0, -25, 0) and a static box far behind. */
export const KNOWN_BODIES = [
  {
    id: 1,
    shape: { sphere: { radius: 5 } },
    pose: { position: { x: 0, y: 0, z: 0 } },
    category: 1,
  },
  {
    id: 2,
    shape: { box: { half_extents: { x: 3, y: 2, z: 1 } } },
    pose: {
      position: { x: -25, y: 0, z: 0 },
      rotation: { x: 0, y: 0, z: Math.SQRT1_2, w: Math.SQRT1_2 },
    },
    category: 2,
  },
  {
    id: 3,
    shape: { capsule: { radius: 1.5, half_height: 3 } },
    pose: { position: { x: 0, y: -25, z: 0 } },
    category: 4,
  },
  {
    id: 4,
    shape: { box: { half_extents: { x: 4, y: 4, z: 4 } } },
    pose: { position: { x: 25, y: 20, z: -40 } },
    kind: 'BODY_KIND_STATIC',
  },
];
