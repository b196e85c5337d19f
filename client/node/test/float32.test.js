// Float32 fields as the client reads them: the shortest decimal that is the same float32
// (fat_margin 0.1, not 0.10000000149011612), checked against an exact interval oracle on random
// values, and through a real server (a scene's options, bodies and hits; encoded again, the same
// float32 bits).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Client } from '../src/index.js';
import { shortestFloat32 } from '../src/proto.js';
import { ServerProcess } from './server.js';

const SEED = 20261130;

// A float32's exact value as m * 2^e (m a BigInt), from its bits.
function exactOf(value) {
  const view = new DataView(new ArrayBuffer(4));
  view.setFloat32(0, Math.abs(value));
  const bits = view.getUint32(0);
  const exponent = bits >>> 23;
  const fraction = bits & 0x7fffff;
  return exponent === 0
    ? { m: BigInt(fraction), e: -149 }
    : { m: BigInt(fraction | 0x800000), e: exponent - 150 };
}

// a * 2^e / (b * 10^s) compared with 1, exactly: -1, 0 or 1.
function compare(a, e, k, s) {
  // a * 2^e  vs  k * 10^s, both sides scaled to integers.
  let left = a;
  let right = k;
  if (e >= 0) left <<= BigInt(e);
  else right <<= BigInt(-e);
  if (s >= 0) right *= 10n ** BigInt(s);
  else left *= 10n ** BigInt(-s);
  return left < right ? -1 : left > right ? 1 : 0;
}

// The fewest significant digits of a decimal strictly between the midpoints from `value` (a
// finite, nonzero float32) to its neighbours, with exact integer arithmetic.
function shortestInside(value) {
  const { m, e } = exactOf(value);
  // The midpoints, as (2m - 1) * 2^(e-1) and (2m + 1) * 2^(e-1) (the lower one nearer at a power
  // of two, where the float32 below is twice as near).
  const atPower = m === 0x800000n && e > -149;
  const low = atPower ? { m: 4n * m - 1n, e: e - 2 } : { m: 2n * m - 1n, e: e - 1 };
  const high = { m: 2n * m + 1n, e: e - 1 };
  const leading = Number(Math.abs(value).toExponential().split('e')[1]);
  for (let digits = 1; digits <= 12; digits++) {
    for (const top of [leading, leading + 1]) {
      const s = top - digits + 1;
      // The smallest k with k * 10^s > low: scan from an estimate.
      let k = BigInt(Math.max(0, Math.floor(Math.abs(value) / 10 ** s) - 2));
      while (compare(low.m, low.e, k, s) >= 0) k += 1n;
      if (compare(high.m, high.e, k, s) > 0) return digits;
    }
  }
  throw new Error(`no decimal inside the interval of ${value}`);
}

function significantDigits(number) {
  return Math.abs(number)
    .toExponential()
    .split('e')[0]
    .replace('.', '')
    .replace(/0+$/, '').length;
}

describe('shortestFloat32', () => {
  test('random float32 values read back exactly, in the fewest digits', () => {
    let state = SEED;
    const next = () => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return state / 2 ** 32;
    };
    for (let i = 0; i < 20000; i++) {
      const value = Math.fround((next() < 0.5 ? -1 : 1) * next() * 10 ** (next() * 78 - 40));
      if (value === 0) continue;
      const shortest = shortestFloat32(value);
      assert.equal(Math.fround(shortest), value, `seed ${SEED} case ${i}: ${value}`);
      assert.ok(
        significantDigits(shortest) <= shortestInside(value),
        `seed ${SEED} case ${i}: ${value} printed as ${shortest}, ` +
          `${shortestInside(value)} digits suffice`,
      );
    }
  });

  test('of two decimals equally near, the one whose last digit is even (as std::to_chars)', () => {
    // Between 2^20 and 2^21 a float32 step is 1/8: n + 1/4 lies exactly between n.2 and n.3, and
    // n + 3/4 between n.7 and n.8; both of each pair read back, no 7-digit decimal does.
    assert.equal(shortestFloat32(1703448.25), 1703448.2);
    assert.equal(shortestFloat32(-1703448.25), -1703448.2);
    let state = SEED;
    const next = () => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return state / 2 ** 32;
    };
    for (let i = 0; i < 2000; i++) {
      const n = 2 ** 20 + Math.floor(next() * 2 ** 20);
      const quarter = next() < 0.5 ? 0.25 : 0.75;
      const expected = Number(`${n}.${quarter === 0.25 ? 2 : 8}`);
      assert.equal(shortestFloat32(n + quarter), expected, `seed ${SEED} case ${i}: ${n + quarter}`);
    }
  });

  test('edge values', () => {
    assert.equal(shortestFloat32(Math.fround(0.1)), 0.1);
    assert.equal(shortestFloat32(Math.fround(0.7071068)), 0.7071068);
    assert.ok(Object.is(shortestFloat32(-0), -0));
    assert.equal(shortestFloat32(Math.fround(3.4028234663852886e38)), 3.4028235e38);
    assert.equal(shortestFloat32(1.401298464324817e-45), 1e-45);
    assert.equal(shortestFloat32(Infinity), Infinity);
    assert.ok(Number.isNaN(shortestFloat32(NaN)));
  });
});

describe('float32 fields read from a server', () => {
  let server;
  let client;

  before(async () => {
    server = await ServerProcess.start();
    client = new Client(server.address);
  });

  after(async () => {
    client?.close();
    await server?.stop();
  });

  test('read as their shortest decimals, and written back unchanged', async () => {
    const created = await client.createScene({ scene: 'f32', options: { fat_margin: 0.1 } });
    assert.equal(created.options.fat_margin, 0.1);
    assert.equal(String((await client.getScene({ scene: 'f32' })).options.fat_margin), '0.1');
    const body = {
      id: 1,
      shape: { sphere: { radius: 0.3 } },
      pose: {
        position: { x: 1.1, y: 0, z: 0 },
        rotation: { x: 0, y: 0, z: 0.7071068, w: 0.7071068 },
      },
    };
    await client.upsertBodies({ scene: 'f32', bodies: [body] });
    const [read] = (await client.getBodies({ scene: 'f32' })).bodies;
    assert.equal(read.shape.sphere.radius, 0.3);
    assert.equal(read.pose.position.x, 1.1);
    assert.equal(read.pose.rotation.z, 0.7071068);
    const hits = (
      await client.raycast({
        scene: 'f32',
        ray: {
          origin: { x: -10, y: 0.1, z: 0 },
          direction: { x: 1, y: 0, z: 0 },
          max_distance: 100,
        },
      })
    ).hits;
    assert.equal(hits.length, 1);
    // Query answers are the hot path: their floats are read as decoded (the float32's exact
    // value), and round to the shortest decimal on demand.
    assert.equal(hits[0].distance, Math.fround(hits[0].distance));
    assert.equal(Math.fround(shortestFloat32(hits[0].distance)), hits[0].distance);
    // Written back as read: the same float32 values, so the same body.
    await client.upsertBodies({ scene: 'f32', bodies: [{ ...read, id: 2 }] });
    const again = (await client.getBodies({ scene: 'f32' })).bodies.find((b) => b.id === '2');
    assert.deepEqual({ ...again, id: '1' }, read);
  });
});
