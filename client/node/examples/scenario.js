#!/usr/bin/env node
// The cross-language scenario: creates a scene, upserts five bodies in one call, runs five
// queries through unary calls and prints one JSON object per query (in order a..e), then deletes
// the scene. The C++, Python, Go and Java programs print the same bytes for the same server.
//
//   node examples/scenario.js --address 127.0.0.1:50051 --scene scenario-node
//
// Numbers are printed as the shortest decimal that is the same float32 (shortestFloat32: the
// client reads query answers' floats as decoded, their exact float32 values) in the notation
// C++'s std::to_chars picks (number); uint64 values (version, body_id) are printed as received.

import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

import { Client, shortestFloat32 } from '../src/index.js';

const vec = (x, y, z) => ({ x, y, z });
const at = (x, y, z) => ({ position: vec(x, y, z) });

/** The scenario's bodies, upserted in one call. */
const BODIES = [
  { id: 1, shape: { sphere: { radius: 1 } }, pose: at(0, 0, 0) },
  {
    id: 2,
    shape: { box: { half_extents: vec(1, 0.5, 2) } },
    pose: { position: vec(5, 0, 0), rotation: { x: 0, y: 0, z: 0.25881904, w: 0.96592583 } },
  },
  { id: 3, shape: { capsule: { radius: 0.5, half_height: 1 } }, pose: at(10, 0, 0) },
  { id: 4, shape: { sphere: { radius: 0.5 } }, pose: at(0, 5, 0), category: 2 },
  {
    id: 5,
    shape: { box: { half_extents: vec(0.5, 0.5, 0.5) } },
    pose: at(-4, 0, 0),
    kind: 'BODY_KIND_STATIC',
  },
];

/** The scenario's queries a..e: the client method and its request (without the scene). */
const QUERIES = [
  [
    'a',
    'raycast',
    {
      ray: { origin: vec(-10, 0, 0), direction: vec(1, 0, 0), max_distance: 100 },
      mode: 'MODE_ALL',
    },
  ],
  [
    'b',
    'raycast',
    {
      ray: { origin: vec(0, -10, 0), direction: vec(0, 1, 0), max_distance: 100 },
      mode: 'MODE_CLOSEST',
      filter: { mask: 2 },
    },
  ],
  [
    'c',
    'sphereCast',
    {
      cast: { origin: vec(0, 0, -10), direction: vec(0, 0, 1), max_distance: 20, radius: 0.25 },
      mode: 'MODE_ALL',
    },
  ],
  [
    'd',
    'overlap',
    {
      overlap: { shape: { sphere: { radius: 1.5 } }, pose: at(4.5, 0.5, 0) },
      detail: true,
      mode: 'MODE_ALL',
    },
  ],
  [
    'e',
    'sphereCast',
    {
      cast: { origin: vec(-10, 0.8, 0), direction: vec(1, 0, 0), max_distance: 30, radius: 0.4 },
      mode: 'MODE_ALL',
    },
  ],
];

/**
 * A float32 as JSON: the shortest decimal that is the same float32 (shortestFloat32's digits), as
 * C++'s std::to_chars prints it: fixed, or d.ddde+XX when that is shorter (a tie: fixed); the
 * fixed form of an integer has all its digits (6528615424, not 6528615400).
 */
export function number(value) {
  if (!Number.isFinite(value)) throw new Error(`not a finite number: ${value}`);
  const sign = value < 0 || Object.is(value, -0) ? '-' : '';
  const magnitude = Math.abs(value);
  if (magnitude === 0) return `${sign}0`;
  // JavaScript's shortest text: 1703448.2, 0.1, 1e-7, 1.5e-7, 3.4e+38.
  const [, whole, fraction = '', power = '0'] = String(shortestFloat32(magnitude)).match(
    /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/,
  );
  let digits = (whole + fraction).replace(/^0+/, '');
  let exponent = Number(power) - fraction.length; // magnitude = digits x 10^exponent
  const trailing = digits.length - digits.replace(/0+$/, '').length;
  digits = digits.slice(0, digits.length - trailing);
  exponent += trailing;
  const n = digits.length;
  let fixed;
  if (exponent >= 0) {
    fixed = BigInt(magnitude).toString();
  } else if (-exponent < n) {
    fixed = `${digits.slice(0, n + exponent)}.${digits.slice(n + exponent)}`;
  } else {
    fixed = `0.${'0'.repeat(-exponent - n)}${digits}`;
  }
  const scientificPower = n - 1 + exponent;
  const scientific =
    `${digits[0]}${n > 1 ? `.${digits.slice(1)}` : ''}e${scientificPower < 0 ? '-' : '+'}` +
    String(Math.abs(scientificPower)).padStart(2, '0');
  return sign + (fixed.length <= scientific.length ? fixed : scientific);
}

function vector(v) {
  const { x, y, z } = v ?? { x: 0, y: 0, z: 0 };
  return `[${number(x)}, ${number(y)}, ${number(z)}]`;
}

/**
 * One query's line: uint64 values unquoted as received (a decimal string may exceed 2^53).
 * @param {string} name
 * @param {import('../src/client.js').QueryResponse} response
 */
export function formatLine(name, response) {
  const hits = response.hits.map(
    (hit) =>
      `{"body_id": ${hit.body_id}, "distance": ${number(hit.distance)}, ` +
      `"point": ${vector(hit.point)}, "normal": ${vector(hit.normal)}, ` +
      `"depth": ${number(hit.depth)}, "start_overlapping": ${hit.start_overlapping}}`,
  );
  const query = JSON.stringify(name);
  return `{"query": ${query}, "version": ${response.version}, "hits": [${hits.join(', ')}]}`;
}

async function main() {
  const { values } = parseArgs({
    options: {
      address: { type: 'string' },
      scene: { type: 'string' },
      numbers: { type: 'boolean' },
    },
  });
  if (values.numbers) {
    // Instead of the scenario: each float32 of stdin (its bits, 8 hex digits a line), printed
    // as the scenario prints numbers (a test compares the programs).
    const view = new DataView(new ArrayBuffer(4));
    const lines = [];
    for await (const line of createInterface({ input: process.stdin })) {
      if (!line.trim()) continue;
      view.setUint32(0, parseInt(line.trim(), 16));
      lines.push(number(view.getFloat32(0)));
    }
    process.stdout.write(lines.map((line) => `${line}\n`).join(''));
    return 0;
  }
  if (!values.address || !values.scene) {
    process.stderr.write('usage: scenario.js --address host:port --scene NAME\n');
    return 2;
  }
  const client = new Client(values.address);
  const scene = values.scene;
  try {
    await client.createScene({ scene });
    try {
      await client.upsertBodies({ scene, bodies: BODIES });
      for (const [name, method, request] of QUERIES) {
        const response = await client[method]({ scene, ...request });
        process.stdout.write(`${formatLine(name, response)}\n`);
      }
    } finally {
      await client.deleteScene({ scene });
    }
  } finally {
    client.close();
  }
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`scenario: ${error.codeName ?? error.name}: ${error.message}\n`);
    process.exitCode = 1;
  },
);
