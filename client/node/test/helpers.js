/** Shared pieces of the Node client tests. */

import assert from 'node:assert/strict';
import { after, before } from 'node:test';

import { Client, CollideError } from '../src/index.js';
import { random } from './oracle.js';
import { ServerProcess } from './server.js';

/** Channel options that let a test's client reconnect quickly after a server restart. */
export const FAST_RECONNECT = {
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1000,
};

/**
 * Asserts that `promise` rejects with a CollideError of `codeName` whose message starts with
 * `fieldPath`.
 */
export async function rejectsWith(promise, codeName, fieldPath) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof CollideError, `not a CollideError: ${error}`);
    assert.equal(error.codeName, codeName, error.message);
    if (fieldPath !== undefined) {
      assert.ok(
        error.message.startsWith(`${fieldPath}: `),
        `"${error.message}" names no ${fieldPath}`,
      );
      assert.equal(error.fieldPath, fieldPath);
    }
    return true;
  });
}

/**
 * `count` random balls in a cube of side 100 about the origin (seeded), as oracle balls and as
 * collide bodies. Categories cycle through 1, 2, 4.
 */
export function randomBalls(seed, count) {
  const next = random(seed);
  const balls = [];
  for (let i = 0; i < count; i++) {
    // Coordinates and radii on a 1/64 grid are exact in float32.
    const coordinate = () => Math.round((next() * 100 - 50) * 64) / 64;
    balls.push({
      id: i + 1,
      center: { x: coordinate(), y: coordinate(), z: coordinate() },
      radius: Math.round((0.5 + next() * 2.5) * 64) / 64,
      category: 1 << (i % 3),
    });
  }
  const bodies = balls.map((ball) => ({
    id: ball.id,
    shape: { sphere: { radius: ball.radius } },
    pose: { position: ball.center },
    category: ball.category,
  }));
  return { balls, bodies };
}

/** A random ray aimed near the origin, with float32-exact components (seeded generator). */
export function randomRay(next) {
  const coordinate = () => Math.round((next() * 160 - 80) * 64) / 64;
  const origin = { x: coordinate(), y: coordinate(), z: coordinate() };
  const target = { x: coordinate() / 4, y: coordinate() / 4, z: coordinate() / 4 };
  const direction = { x: target.x - origin.x, y: target.y - origin.y, z: target.z - origin.z };
  return { origin, direction, max_distance: 60 + Math.round(next() * 100) };
}

/**
 * Registers before/after hooks in the calling describe() that start a collide-server and a client
 * of it, then close both. Returns the object whose `server` and `client` the hooks fill.
 */
export function useServerAndClient() {
  const ctx = {};
  before(async () => {
    ctx.server = await ServerProcess.start();
    ctx.client = new Client(ctx.server.address);
  });
  after(async () => {
    ctx.client?.close();
    await ctx.server?.stop();
  });
  return ctx;
}
