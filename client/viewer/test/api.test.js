// The viewer's HTTP API against a real collide-server: the page and its files, scene lists,
// bodies (paged, now or at a past tick), ray and sphere casts (now or at a past tick) compared
// with the gRPC Raycast, SphereCast and Overlap, the live stream, and refusals of
// bad input (each names its parameter, never a crash), tokens, methods that would write.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { tempDir } from '../../node/test/server.js';
import {
  Client, KNOWN_BODIES, assertSameAnswer, castQuery, get, startViewerServer,
} from './viewer_server.js';

// Reads server-sent events from `url` until `until(events)` is true; returns the events.
async function readEvents(url, until, { timeoutMs = 20000 } = {}) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const events = [];
  try {
    // A stream of an earlier test may hold a slot under --viewer_max_streams until the server's
    // next write to it fails (a keep-alive each second): wait for the slot.
    let response = await fetch(url, { signal: controller.signal });
    for (let i = 0; i < 20 && response.status === 503; i++) {
      await response.text();
      await sleep(500);
      response = await fetch(url, { signal: controller.signal });
    }
    assert.equal(response.status, 200, await (response.ok ? '' : response.text()));
    assert.match(response.headers.get('content-type'), /text\/event-stream/);
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body) {
      buffer += decoder.decode(chunk, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = { event: 'message', data: '', bytes: block.length + 2 };
        for (const line of block.split('\n')) {
          if (line.startsWith('event: ')) event.event = line.slice(7);
          if (line.startsWith('data: ')) event.data += line.slice(6);
        }
        if (event.data) {
          event.json = JSON.parse(event.data);
          events.push(event);
        }
        if (until(events)) return events;
      }
    }
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return events;
}

// A scene 'level' of assets larger than one page of /viewer/api/asset: a mesh 'city' of
// LEVEL_MESH_TRIANGLES random triangles (three pages of 32,768), a heightfield 'terrain' of
// 300 x 1000 samples with holes (three pages of 131 rows), a two-triangle mesh 'wall', and bodies
// placing them.
const LEVEL_MESH_TRIANGLES = 70000;
const LEVEL = {};

function random(seed) {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

async function uploadLevel(client) {
  await client.createScene({ scene: 'level' });
  const next = random(29);
  const vertices = new Float32Array(LEVEL_MESH_TRIANGLES * 3);  // a vertex per triangle, shared
  for (let i = 0; i < vertices.length; i++) vertices[i] = (next() - 0.5) * 200;
  const indices = new Uint32Array(LEVEL_MESH_TRIANGLES * 3);
  for (let i = 0; i < indices.length; i++) indices[i] = Math.floor(next() * LEVEL_MESH_TRIANGLES);
  LEVEL.city = { vertices, indices };
  await client.uploadMesh({ scene: 'level', name: 'city', vertices, indices });
  const rows = 300;
  const columns = 1000;
  const heights = new Float32Array(rows * columns);
  for (let i = 0; i < heights.length; i++) heights[i] = Math.sin(i / 97) * 10 + next();
  const cells = (rows - 1) * (columns - 1);
  const holes = new Uint8Array(Math.ceil(cells / 8));
  const holeCells = [];
  for (let c = 0; c < cells; c += 997 + (c % 13)) {
    holes[c >> 3] |= 1 << (c & 7);
    holeCells.push(c);
  }
  LEVEL.terrain = { rows, columns, heights, holeCells, spacingX: 0.5, spacingZ: 2 };
  await client.uploadHeightfield({
    scene: 'level', name: 'terrain', rows, columns, heights, holes, spacingX: 0.5, spacingZ: 2,
  });
  await client.uploadMesh({
    scene: 'level', name: 'wall',
    vertices: [0, -2, 0, 0, 2, 0, 0, 2, 4, 0, -2, 4], indices: [0, 3, 2, 0, 2, 1],
  });
  await client.upsertBodies({
    scene: 'level',
    bodies: [
      { id: 1, shape: { heightfield: { asset: 'terrain' } }, pose: { position: { x: -250, y: -20, z: -300 } }, kind: 'BODY_KIND_STATIC' },
      { id: 2, shape: { mesh: { asset: 'wall', scale: 2 } }, pose: { position: { x: 6, y: 0, z: 3 } }, kind: 'BODY_KIND_STATIC' },
    ],
  });
}

// Every page of asset `asset` of 'level', in order.
async function assetPages(base, asset) {
  const pages = [];
  let offset = null;
  for (let i = 0; i < 100; i++) {
    const query = offset === null ? '' : `&offset=${offset}`;
    const { status, json, text } = await get(`${base}/api/asset?name=level&asset=${asset}${query}`);
    assert.equal(status, 200, text);
    pages.push(json);
    offset = json.next_offset ?? null;
    if (offset === null) return pages;
  }
  assert.fail(`${asset}: more than 100 pages`);
}

describe('viewer API', () => {
  let server;
  let client;
  let base;

  before(async () => {
    server = await startViewerServer(['--viewer_max_streams=2']);
    client = new Client(server.address);
    base = `${server.viewer}/viewer`;
    await client.createScene({ scene: 'known' });
    await client.upsertBodies({ scene: 'known', bodies: KNOWN_BODIES });
    await uploadLevel(client);
  });

  after(async () => {
    client?.close();
    await server?.stop();
  });

  test('serves the page, its script and three.js, and redirects / to it', async () => {
    const page = await get(`${base}/`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type'), /text\/html/);
    assert.match(page.text, /<script type="module" src="viewer.js">/);
    const script = await get(`${base}/viewer.js`);
    assert.equal(script.status, 200);
    assert.match(script.headers.get('content-type'), /javascript/);
    const three = await get(`${base}/three/three.module.js`);
    assert.equal(three.status, 200);
    assert.match(three.text, /WebGLRenderer/);
    const root = await fetch(`${server.viewer}/`, { redirect: 'manual' });
    assert.equal(root.status, 302);
    assert.equal(root.headers.get('location'), '/viewer/');
    for (const missing of ['/viewer/nope.js', '/viewer/../etc/passwd', '/viewer/three/%00',
      '/elsewhere']) {
      const answer = await get(`${server.viewer}${missing}`);
      assert.ok(answer.status === 404 || answer.status === 400, `${missing}: ${answer.status}`);
    }
  });

  test('lists scenes as the gRPC ListScenes does', async () => {
    const { status, json } = await get(`${base}/api/scenes`);
    assert.equal(status, 200);
    assert.deepEqual(Object.keys(json), ['scenes']);
    const known = json.scenes.find((scene) => scene.name === 'known');
    assert.equal(known.stats.body_count, KNOWN_BODIES.length);
    assert.equal(known.options.fat_margin, 0.1);  // as protobuf prints a float, not 0.100000001
    assertSameAnswer('ListScenes', json, { scenes: await client.listScenes() });
  });

  test('returns bodies with shapes, poses, category and kind as the gRPC GetBodies does', async () => {
    const { status, json } = await get(`${base}/api/scene?name=known`);
    assert.equal(status, 200);
    assert.equal(json.scene, 'known');
    assert.equal(json.body_count, String(KNOWN_BODIES.length));
    assert.equal(json.next_after, undefined);
    assert.equal(json.at_tick, undefined);
    // The answering server (the address it listens on: no --advertise_address here); no
    // replication for a scene that is not replicated (tests/integration/replication_test.cc
    // covers an owner and a follower).
    assert.equal(json.server_address, server.address);
    assert.equal(json.replication, undefined);
    const grpc = await client.getBodies({ scene: 'known' });
    assert.equal(json.version, grpc.version);
    assertSameAnswer('GetBodies', { version: json.version, bodies: json.bodies }, grpc);
    const box = json.bodies.find((b) => b.id === '2');
    assert.deepEqual(box.shape, { box: { half_extents: { x: 3, y: 2, z: 1 } } });
    assert.equal(box.kind, 'BODY_KIND_DYNAMIC');
    const capsule = json.bodies.find((b) => b.id === '3');
    assert.deepEqual(capsule.shape, { capsule: { radius: 1.5, half_height: 3 } });
    assert.equal(json.bodies.find((b) => b.id === '4').kind, 'BODY_KIND_STATIC');
  });

  test('pages bodies by id with after and limit', async () => {
    const ids = [];
    let after = null;
    for (let pages = 0; pages < 10; pages++) {
      const query = after === null ? 'limit=3' : `limit=3&after=${after}`;
      const { status, json } = await get(`${base}/api/scene?name=known&${query}`);
      assert.equal(status, 200);
      assert.ok(json.bodies.length <= 3);
      ids.push(...json.bodies.map((b) => b.id));
      after = json.next_after ?? null;
      if (after === null) break;
    }
    assert.deepEqual(ids, KNOWN_BODIES.map((b) => String(b.id)));
    const last = await get(`${base}/api/scene?name=known&after=18446744073709551615`);
    assert.deepEqual(last.json.bodies, []);
  });

  test('casts a ray with the gRPC Raycast\'s answer, from JSON and from parameters', async () => {
    const rays = [
      { origin: [0, 0, 50], direction: [0, 0, -1] },
      { origin: [-25, 40, 0], direction: [0, -1, 0] },
      { origin: [3, -40, 0.5], direction: [0, 1, 0.01] },
      { origin: [100, 100, 100], direction: [1, 0, 0] },
      { origin: [0.1, 0.2, 0.3], direction: [0.7, -0.3, 0.1] },
    ];
    const vec = ([x, y, z]) => ({ x, y, z });
    for (const ray of rays) {
      const request = {
        scene: 'known',
        ray: { origin: vec(ray.origin), direction: vec(ray.direction), max_distance: 1e6 },
      };
      const grpc = await client.raycast(request);
      const json = await get(`${base}/api/raycast?${castQuery(request)}`);
      assert.equal(json.status, 200, json.text);
      assertSameAnswer('Raycast', json.json, grpc, JSON.stringify(ray));
      const params = await get(`${base}/api/raycast?name=known&origin=${ray.origin}` +
        `&direction=${ray.direction}&max_distance=1e6`);
      assert.equal(params.status, 200, params.text);
      assertSameAnswer('Raycast', params.json, grpc, JSON.stringify(ray));
    }
    // Every hit of MODE_ALL with a filter and max_hits, as the rpc answers it.
    const all = {
      scene: 'known',
      ray: { origin: { x: -60, y: 0, z: 0 }, direction: { x: 1, y: 0, z: 0 }, max_distance: 200 },
      mode: 'MODE_ALL',
      max_hits: 1,
      filter: { mask: 3, excluded_ids: ['9'] },
    };
    const answer = await get(`${base}/api/raycast?${castQuery(all)}`);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.json.truncated, true);
    assertSameAnswer('Raycast', answer.json, await client.raycast(all));
  });

  test('answers bodies, ray and sphere casts at a past tick as the gRPC does', async () => {
    await client.createScene({ scene: 'ticks', options: { history_ticks: 16 } });
    const writer = client.openUpdateWriter('ticks');
    const ball = { id: 1, shape: { sphere: { radius: 1 } }, pose: { position: { x: 0, y: 0, z: 0 } } };
    const box = {
      id: 7,
      shape: { box: { half_extents: { x: 1, y: 2, z: 3 } } },
      pose: { position: { x: 0, y: 20, z: 0 } },
      category: 2,
    };
    await writer.apply({ ops: [{ upsert: ball }], tick: 10 });
    await writer.apply({ moves: { ids: [1], poses: [10, 0, 0, 0, 0, 0, 1] }, tick: 11 });
    await writer.apply({ ops: [{ upsert: box }], tick: 12 });
    await writer.apply({ ops: [{ remove: 7 }], tick: 13 });
    await writer.apply({ moves: { ids: [1], poses: [-10, 5, 0, 0, 0, 0, 1] }, tick: 14 });
    await writer.close();
    const stats = (await client.getScene({ scene: 'ticks' })).stats;

    // Every retained tick (and a few before anything was written) against gRPC Overlap at it.
    const now = await get(`${base}/api/scene?name=ticks`);
    assert.equal(now.status, 200, now.text);
    assert.equal(now.json.at_tick, undefined);
    assert.equal(now.json.tick, stats.tick);
    assert.equal(now.json.oldest_tick, stats.oldest_tick);
    assert.equal(now.json.retained_ticks, 16);
    const listed = (await get(`${base}/api/scenes`)).json.scenes.find((x) => x.name === 'ticks');
    assert.equal(listed.stats.oldest_tick, stats.oldest_tick);
    const positions = {};
    for (let t = Number(stats.oldest_tick); t <= Number(stats.tick); t++) {
      const { status, json } = await get(`${base}/api/scene?name=ticks&at_tick=${t}`);
      assert.equal(status, 200, JSON.stringify(json));
      assert.equal(json.at_tick, String(t));
      const grpc = await client.overlap({
        scene: 'ticks',
        overlap: { shape: { sphere: { radius: 1000 } }, pose: { position: { x: 0, y: 0, z: 0 } } },
        mode: 'MODE_ALL',
        max_hits: 100,
        at_tick: t,
      });
      assert.deepEqual(json.bodies.map((b) => b.id), grpc.hits.map((h) => String(h.body_id)).sort(),
        `tick ${t}`);
      positions[t] = Object.fromEntries(json.bodies.map((b) => {
        const p = b.pose.position;
        return [b.id, [p.x, p.y, p.z]];
      }));
    }
    // What was written, tick by tick (the last batch of a tick wins).
    assert.deepEqual(positions[9], {});
    assert.deepEqual(positions[10], { 1: [0, 0, 0] });
    assert.deepEqual(positions[11], { 1: [10, 0, 0] });
    assert.deepEqual(positions[12], { 1: [10, 0, 0], 7: [0, 20, 0] });
    assert.deepEqual(positions[13], { 1: [10, 0, 0] });
    assert.deepEqual(positions[14], { 1: [-10, 5, 0] });
    const past = await get(`${base}/api/scene?name=ticks&at_tick=12&limit=1`);
    assert.deepEqual(past.json.bodies.map((b) => b.id), ['1']);
    assert.equal(past.json.next_after, '1');
    const rest = await get(`${base}/api/scene?name=ticks&at_tick=12&after=1`);
    assert.deepEqual(rest.json.bodies.map((b) => [b.id, b.shape, b.category]),
      [['7', { box: { half_extents: { x: 1, y: 2, z: 3 } } }, 2]]);
    assert.equal(rest.json.next_after, undefined);

    // Casts: now and at past ticks, rays and spheres, from JSON and from parameters, against
    // the gRPC answers to the same requests.
    const casts = [
      { origin: [-30, 0, 0], direction: [1, 0, 0], radius: 0 },
      { origin: [-30, 0, 0], direction: [1, 0, 0], radius: 2.5 },
      { origin: [0, 40, 0], direction: [0, -1, 0], radius: 0.5 },
      { origin: [0, 40, 0], direction: [0, -1, 0.2], radius: 3 },
      { origin: [-10, 5, 30], direction: [0, 0, -1], radius: 1 },
      { origin: [50, 50, 50], direction: [1, 1, 1], radius: 1 },
    ];
    const vec = ([x, y, z]) => ({ x, y, z });
    let hits = 0;
    for (const tick of [undefined, 10, 11, 12, 13, 14]) {
      for (const cast of casts) {
        const at = tick === undefined ? {} : { at_tick: String(tick) };
        const label = `tick ${tick} ${JSON.stringify(cast)}`;
        const sphereRequest = {
          scene: 'ticks',
          cast: { origin: vec(cast.origin), direction: vec(cast.direction), max_distance: 1e6, radius: cast.radius },
          ...at,
        };
        const grpc = await client.sphereCast(sphereRequest);
        const sphere = await get(`${base}/api/spherecast?${castQuery(sphereRequest)}`);
        assert.equal(sphere.status, 200, sphere.text);
        assertSameAnswer('SphereCast', sphere.json, grpc, label);
        const tickParam = tick === undefined ? '' : `&at_tick=${tick}`;
        const common = `name=ticks&origin=${cast.origin}&direction=${cast.direction}&max_distance=1e6${tickParam}`;
        const params = await get(`${base}/api/spherecast?${common}&radius=${cast.radius}`);
        assert.equal(params.status, 200, params.text);
        assertSameAnswer('SphereCast', params.json, grpc, label);
        if (cast.radius === 0) {
          const rayRequest = {
            scene: 'ticks',
            ray: { origin: vec(cast.origin), direction: vec(cast.direction), max_distance: 1e6 },
            ...at,
          };
          const grpcRay = await client.raycast(rayRequest);
          const ray = await get(`${base}/api/raycast?${castQuery(rayRequest)}`);
          assert.equal(ray.status, 200, ray.text);
          assertSameAnswer('Raycast', ray.json, grpcRay, label);
          assertSameAnswer('Raycast', (await get(`${base}/api/raycast?${common}`)).json, grpcRay, label);
        }
        if (grpc.hits.length > 0) hits += 1;
      }
    }
    assert.ok(hits >= 12, `${hits} hits`);
    // A ray along x at tick 10 meets the ball at the origin; at tick 14 it has moved away.
    const tick10 = await get(`${base}/api/raycast?name=ticks&origin=-30,0,0&direction=1,0,0&at_tick=10`);
    assert.equal(tick10.json.hits[0].distance, 29);
    const tick14 = await get(`${base}/api/raycast?name=ticks&origin=-30,0,0&direction=1,0,0&at_tick=14`);
    assert.deepEqual(tick14.json.hits, []);
    // A tick not retained: 400 naming it and the retained range, as gRPC's OUT_OF_RANGE does.
    const later = Number(stats.tick) + 1;
    const why = `at_tick: tick ${later} is not retained (retained: ${stats.oldest_tick}..${stats.tick})`;
    for (const call of ['scene?', 'raycast?origin=0,0,0&direction=1,0,0&', 'spherecast?origin=0,0,0&direction=1,0,0&radius=1&']) {
      const answer = await get(`${base}/api/${call}name=ticks&at_tick=${later}`);
      assert.equal(answer.status, 400, answer.text);
      assert.deepEqual(answer.json, { error: why, code: 'OUT_OF_RANGE' });
    }
    const request = {
      scene: 'ticks',
      ray: { origin: vec([0, 0, 0]), direction: vec([1, 0, 0]), max_distance: 1 },
      at_tick: String(later),
    };
    const answer = await get(`${base}/api/raycast?${castQuery(request)}`);
    assert.deepEqual(answer.json, { error: why, code: 'OUT_OF_RANGE' });
    await assert.rejects(client.raycast(request), (error) => error.message.includes(why));
    await client.deleteScene({ scene: 'ticks' });
  });

  test('pages a mesh asset\'s triangles as uploaded, each page bounded', async () => {
    const pages = await assetPages(base, 'city');
    assert.equal(pages.length, Math.ceil(LEVEL_MESH_TRIANGLES / 32768));
    const [info] = (await client.listAssets({ scene: 'level' })).filter((a) => a.name === 'city');
    const { vertices, indices } = LEVEL.city;
    let t = 0;
    for (const page of pages) {
      assert.equal(page.scene, 'level');
      assert.equal(page.asset.name, 'city');
      assert.equal(page.asset.kind, 'ASSET_KIND_MESH');
      assert.equal(page.asset.sha256, info.sha256);
      assert.equal(page.asset.triangle_count, String(LEVEL_MESH_TRIANGLES));
      assert.equal(page.offset, String(t));
      assert.ok(page.positions.length <= 9 * 32768, `${page.positions.length} floats`);
      assert.equal(page.positions.length % 9, 0);
      assert.deepEqual(page.heights, []);
      for (let k = 0; k < page.positions.length; k += 9, t++) {
        for (let c = 0; c < 3; c++) {
          for (let a = 0; a < 3; a++) {
            const want = vertices[3 * indices[3 * t + c] + a];
            const got = Math.fround(page.positions[k + 3 * c + a]);
            if (got !== want) assert.fail(`triangle ${t} corner ${c}[${a}]: ${got}, uploaded ${want}`);
          }
        }
      }
    }
    assert.equal(t, LEVEL_MESH_TRIANGLES);
    assert.equal(pages.at(-1).next_offset, undefined);
    // A page from any triangle; the last triangle alone.
    const last = await get(`${base}/api/asset?name=level&asset=city&offset=${LEVEL_MESH_TRIANGLES - 1}`);
    assert.equal(last.status, 200, last.text);
    assert.equal(last.json.positions.length, 9);
    assert.equal(last.json.next_offset, undefined);
  });

  test('pages a heightfield\'s rows, overlapping by one row, with its holes', async () => {
    const pages = await assetPages(base, 'terrain');
    const { rows, columns, heights, holeCells } = LEVEL.terrain;
    assert.ok(pages.length >= 3, `${pages.length} pages`);
    const seenHoles = [];
    let row = 0;
    for (const page of pages) {
      assert.equal(page.asset.kind, 'ASSET_KIND_HEIGHTFIELD');
      assert.deepEqual(page.asset.heightfield, {
        rows: String(rows), columns: String(columns), spacing_x: 0.5, spacing_z: 2, has_holes: true,
      });
      assert.equal(page.offset, String(row));
      const count = Number(page.row_count);
      assert.ok(count >= 2 && count * columns <= 131072, `${count} rows`);
      assert.equal(page.heights.length, count * columns);
      assert.deepEqual(page.positions, []);
      for (let k = 0; k < page.heights.length; k++) {
        const want = heights[row * columns + k];
        if (Math.fround(page.heights[k]) !== want) assert.fail(`sample ${row * columns + k}: ${page.heights[k]}, uploaded ${want}`);
      }
      for (const cell of page.hole_cells) {
        const c = Number(cell);
        const i = Math.floor(c / (columns - 1));
        assert.ok(i >= row && i < row + count - 1, `hole ${c} is not a cell of rows ${row}..${row + count - 1}`);
        seenHoles.push(c);
      }
      if (page.next_offset !== undefined) {
        assert.equal(Number(page.next_offset), row + count - 1, 'pages overlap by one row');
      } else {
        assert.equal(row + count, rows, 'the last page ends at the last row');
      }
      row += count - 1;
    }
    assert.deepEqual(seenHoles, holeCells);
  });

  test('refuses bad asset requests naming the parameter, and keeps serving', async () => {
    const cases = [
      ['asset=wall', 400, 'name'],
      ['name=nope&asset=wall', 404, 'name'],
      ['name=..&asset=wall', 400, 'name'],
      ['name=level', 400, 'asset'],
      ['name=level&asset=', 400, 'asset'],
      ['name=level&asset=../wall', 400, 'asset'],
      ['name=level&asset=%00', 400, 'asset'],
      [`name=level&asset=${'a'.repeat(200)}`, 400, 'asset'],
      ['name=level&asset=nope', 404, 'asset'],
      ['name=known&asset=wall', 404, 'asset'],
      ['name=level&asset=wall&offset=2', 400, 'offset'],
      ['name=level&asset=wall&offset=-1', 400, 'offset'],
      ['name=level&asset=wall&offset=NaN', 400, 'offset'],
      ['name=level&asset=wall&offset=1e3', 400, 'offset'],
      ['name=level&asset=wall&offset=', 400, 'offset'],
      ['name=level&asset=wall&offset=18446744073709551615', 400, 'offset'],
      ['name=level&asset=wall&offset=18446744073709551616', 400, 'offset'],
      ['name=level&asset=terrain&offset=299', 400, 'offset'],
      ['name=level&asset=terrain&offset=18446744073709551615', 400, 'offset'],
      ['name=level&asset=wall&offset=0&offset=0', 400, 'offset'],
      ['name=level&asset=wall&limit=5', 400, 'query'],
    ];
    const codes = { 400: ['INVALID_ARGUMENT'], 404: ['NOT_FOUND'] };
    for (const [query, status, param] of cases) {
      const answer = await get(`${base}/api/asset?${query}`);
      const label = `asset?${query.slice(0, 80)}`;
      assert.equal(answer.status, status, `${label}: ${answer.text}`);
      assert.ok(answer.json?.error?.startsWith(`${param}: `), `${label}: ${answer.text}`);
      assert.ok(codes[status].includes(answer.json.code), `${label}: ${answer.text}`);
    }
    assert.equal((await get(`${base}/api/asset?name=level&asset=wall`)).status, 200);
    assert.equal((await get(`${base}/api/asset?name=level&asset=terrain&offset=298`)).status, 200);
  });

  test('refuses bad parameters with a 4xx that names the parameter', async () => {
    const cases = [
      ['scene', '', 400, 'name'],
      ['scene', 'name=', 400, 'name'],
      ['scene', 'name=../etc', 400, 'name'],
      ['scene', `name=${'x'.repeat(300)}`, 400, 'name'],
      ['scene', 'name=%ZZ', 400, 'name'],
      ['scene', 'name=no-such-scene', 404, 'name'],
      ['scene', 'name=known&name=known', 400, 'name'],
      ['scene', 'name=known&limit=0', 400, 'limit'],
      ['scene', 'name=known&limit=-1', 400, 'limit'],
      ['scene', 'name=known&limit=18446744073709551616', 400, 'limit'],
      ['scene', 'name=known&limit=100000000', 400, 'limit'],
      ['scene', 'name=known&after=-5', 400, 'after'],
      ['scene', 'name=known&after=NaN', 400, 'after'],
      ['scene', 'name=known&after=18446744073709551616', 400, 'after'],
      ['scene', 'name=known&tick=3', 400, 'query'],
      // 'known' is at tick 0: no later tick is retained.
      ['scene', 'name=known&at_tick=3', 400, 'at_tick'],
      ['scene', 'name=known&at_tick=18446744073709551615', 400, 'at_tick'],
      ['scene', 'name=known&at_tick=18446744073709551616', 400, 'at_tick'],
      ['scene', 'name=known&at_tick=-1', 400, 'at_tick'],
      ['scene', 'name=known&at_tick=NaN', 400, 'at_tick'],
      ['scene', 'name=known&at_tick=1e3', 400, 'at_tick'],
      ['scene', 'name=known&at_tick=', 400, 'at_tick'],
      ['scene', 'name=nope&at_tick=0', 404, 'name'],
      ['raycast', 'name=known&origin=0,0,0&direction=0,0,1&at_tick=18446744073709551615', 400, 'at_tick'],
      ['raycast', 'name=known&origin=0,0,0&direction=0,0,1&at_tick=-1', 400, 'at_tick'],
      ['raycast', 'name=known&origin=0,0,0&direction=0,0,1&at_tick=Infinity', 400, 'at_tick'],
      ['spherecast', 'name=known&origin=0,0,0&direction=0,0,1', 400, 'radius'],
      ['spherecast', 'name=known&origin=0,0,0&direction=0,0,1&radius=-1', 400, 'radius'],
      ['spherecast', 'name=known&origin=0,0,0&direction=0,0,1&radius=NaN', 400, 'radius'],
      ['spherecast', 'name=known&origin=0,0,0&direction=0,0,1&radius=Infinity', 400, 'radius'],
      ['spherecast', 'name=known&origin=0,0,0&direction=0,0,1&radius=1e40', 400, 'radius'],
      ['spherecast', 'name=known&origin=0,0,0&direction=0,0,1&radius=', 400, 'radius'],
      ['spherecast', 'name=known&origin=NaN,0,0&direction=0,0,1&radius=1', 400, 'origin'],
      ['spherecast', 'name=known&origin=0,0,0&direction=0,0,0&radius=1', 400, 'direction'],
      ['spherecast', 'name=known&origin=0,0,0&direction=0,0,1&radius=1&max_distance=-1', 400, 'max_distance'],
      ['spherecast', 'name=known&origin=0,0,0&direction=0,0,1&radius=1&max_distance=Infinity', 400, 'max_distance'],
      ['spherecast', 'name=known&origin=0,0,0&direction=0,0,1&radius=1&at_tick=18446744073709551615', 400, 'at_tick'],
      ['spherecast', 'name=known&origin=0,0,0&direction=0,0,1&radius=1&at_tick=-5', 400, 'at_tick'],
      ['spherecast', 'name=known&origin=0,0,0&direction=0,0,1&radius=1&at_tick=18446744073709551616', 400, 'at_tick'],
      ['spherecast', 'name=nope&origin=0,0,0&direction=0,0,1&radius=1', 404, 'name'],
      ['spherecast', 'name=known&origin=0,0,0&direction=0,0,1&radius=1&detail=1', 400, 'query'],
      ['scene', 'name=known&bogus=1', 400, 'query'],
      ['scene', `name=known&x=${'a'.repeat(5000)}`, 400, 'query'],
      ['raycast', 'name=known&direction=0,0,1', 400, 'origin'],
      ['raycast', 'name=known&origin=0,0,0', 400, 'direction'],
      ['raycast', 'name=known&origin=NaN,0,0&direction=0,0,1', 400, 'origin'],
      ['raycast', 'name=known&origin=Infinity,0,0&direction=0,0,1', 400, 'origin'],
      ['raycast', 'name=known&origin=1e40,0,0&direction=0,0,1', 400, 'origin'],
      ['raycast', 'name=known&origin=0,0&direction=0,0,1', 400, 'origin'],
      ['raycast', 'name=known&origin=0,0,0,0&direction=0,0,1', 400, 'origin'],
      ['raycast', 'name=known&origin=a,b,c&direction=0,0,1', 400, 'origin'],
      ['raycast', 'name=known&origin=0,0,0&direction=0,0,0', 400, 'direction'],
      ['raycast', 'name=known&origin=0,0,0&direction=0,0,1e-50', 400, 'direction'],
      ['raycast', 'name=known&origin=0,0,0&direction=0,0,1&max_distance=-1', 400, 'max_distance'],
      ['raycast', 'name=known&origin=0,0,0&direction=0,0,1&max_distance=NaN', 400, 'max_distance'],
      ['raycast', 'name=nope&origin=0,0,0&direction=0,0,1', 404, 'name'],
      ['stream', '', 400, 'name'],
      ['stream', 'name=nope', 404, 'name'],
      ['stream', 'name=%2e%2e', 400, 'name'],
      ['nothing', '', 404, 'path'],
    ];
    const codes = { 400: ['INVALID_ARGUMENT', 'OUT_OF_RANGE'], 404: ['NOT_FOUND'] };
    for (const [call, query, status, param] of cases) {
      const answer = await get(`${base}/api/${call}?${query}`);
      const label = `${call}?${query.slice(0, 80)}`;
      assert.equal(answer.status, status, `${label}: ${answer.text}`);
      assert.ok(answer.json?.error?.startsWith(`${param}: `), `${label}: ${answer.text}`);
      assert.ok(codes[status].includes(answer.json.code), `${label}: ${answer.text}`);
    }
    // Still serving.
    assert.equal((await get(`${base}/api/scenes`)).status, 200);
  });

  test('refuses a bad JSON request with 400 naming the field, in the gRPC call\'s words', async () => {
    const ray = { origin: { x: 0, y: 0, z: 50 }, direction: { x: 0, y: 0, z: -1 }, max_distance: 100 };
    // Requests the rpc takes too: the viewer's refusal is the rpc's, word for word.
    const rpcCases = [
      ['raycast', { scene: 'known', ray: { ...ray, direction: { x: 0, y: 0, z: 0 } } }, 'ray.direction'],
      ['raycast', { scene: 'known', ray: { ...ray, origin: { x: NaN, y: 0, z: 0 } } }, 'ray.origin'],
      ['raycast', { scene: 'known', ray: { ...ray, origin: { x: -Infinity, y: 0, z: 0 } } }, 'ray.origin'],
      ['raycast', { scene: 'known', ray: { ...ray, max_distance: -1 } }, 'ray.max_distance'],
      ['raycast', { scene: 'known', ray, mode: 'MODE_ALL', max_hits: 4294967295 }, 'max_hits'],
      ['raycast', { scene: 'known', ray, tick_fraction: 0.5 }, 'tick_fraction'],
      ['raycast', { scene: 'known', ray, at_tick: '18446744073709551615' }, 'at_tick'],
      ['raycast', { scene: 'nope', ray }, 'scene'],
      ['raycast', { scene: '', ray }, 'scene'],
      ['spherecast', { scene: 'known', cast: { ...ray, radius: -1 } }, 'cast.radius'],
      ['spherecast', { scene: 'known', cast: { ...ray, radius: Infinity } }, 'cast.radius'],
    ];
    for (const [call, request, field] of rpcCases) {
      const answer = await get(`${base}/api/${call}?${castQuery(request)}`);
      const label = `${call} ${JSON.stringify(request)}`;
      assert.ok(answer.status === 400 || answer.status === 404, `${label}: ${answer.text}`);
      assert.ok(answer.json.error.startsWith(`${field}: `), `${label}: ${answer.text}`);
      const rpc = call === 'raycast' ? client.raycast(request) : client.sphereCast(request);
      await assert.rejects(rpc, (error) => {
        assert.equal(error.message, answer.json.error, label);
        assert.equal(error.codeName, answer.json.code, label);
        return true;
      }, label);
    }
    // JSON the rpc's message cannot be: the parser's words, naming the field where it can.
    const parseCases = [
      ['{', ''],
      ['', ''],
      ['[]', ''],
      ['"x"', ''],
      ['{"scene":"known","bogus":1}', 'bogus'],
      ['{"scene":5}', 'scene'],
      ['{"scene":"known","ray":[1,2]}', 'ray'],
      ['{"scene":"known","ray":{"origin":{"x":1e400}}}', ''],
      ['{"scene":"known","ray":{"origin":{"x":1e39}}}', 'ray.origin.x'],
      ['{"scene":"known","ray":{"origin":{"x":"abc"}}}', 'ray.origin.x'],
      ['{"scene":"known","at_tick":"18446744073709551616"}', 'at_tick'],
      ['{"scene":"known","at_tick":-1}', 'at_tick'],
      ['{"scene":"known","max_hits":-1}', 'max_hits'],
      ['{"scene":"known","filter":{"excluded_ids":["1","x"]}}', 'filter.excluded_ids'],
      ['{"scene":"known","mode":"MODE_NOPE"}', 'mode'],
      [`{"scene":"known","ray":${'{"origin":'.repeat(200)}}`, 'origin'],
    ];
    for (const [text, field] of parseCases) {
      const answer = await get(`${base}/api/raycast?request=${encodeURIComponent(text)}`);
      assert.equal(answer.status, 400, `${text}: ${answer.text}`);
      assert.equal(answer.json.code, 'INVALID_ARGUMENT');
      assert.ok(answer.json.error.startsWith(
        'request: not a collide.v1.RaycastRequest in protobuf\'s JSON mapping: '), answer.text);
      assert.ok(answer.json.error.includes(field), `${text}: ${answer.text}`);
    }
    // A mode the API does not have (the Node client refuses it before sending): the server's words.
    const mode = await get(`${base}/api/raycast?${castQuery({ scene: 'known', ray, mode: 7 })}`);
    assert.deepEqual(mode.json, { error: 'mode: unknown mode 7', code: 'INVALID_ARGUMENT' });
    // The JSON form takes nothing beside it but the token; an oversized query string is refused.
    const both = await get(`${base}/api/raycast?${castQuery({ scene: 'known', ray })}&origin=0,0,0`);
    assert.equal(both.status, 400);
    assert.match(both.json.error, /^origin: not taken with request/);
    const huge = castQuery({ scene: 'known', ray, filter: { excluded_ids: Array(900).fill('1') } });
    assert.ok(huge.length > 8192 && huge.length < 16000, `${huge.length}`);
    const oversized = await get(`${base}/api/raycast?${huge}`);
    assert.equal(oversized.status, 400, oversized.text);
    assert.match(oversized.json.error, /^query: \d+ bytes, over the limit of 8192/);
    // Past the HTTP server's own bound on a request (16 KiB), its refusal, in the same format.
    const huger = castQuery({ scene: 'known', ray, filter: { excluded_ids: Array(3000).fill('1') } });
    const refused = await get(`${base}/api/raycast?${huger}`);
    assert.ok(refused.status >= 400 && refused.status < 500, refused.text);
    assert.match(refused.json.error, /^request: /);
    // The viewer does not wait for a version.
    const waiting = await get(`${base}/api/raycast?${castQuery({ scene: 'known', ray, min_version: '999' })}`);
    assert.equal(waiting.status, 400);
    assert.equal(waiting.json.code, 'FAILED_PRECONDITION');
    assert.match(waiting.json.error, /^min_version: the scene is at version \d+; the viewer does not wait/);
    assert.equal((await get(`${base}/api/scenes`)).status, 200);
  });

  test('answers observers\' relevant sets as an Interest stream starts them', async () => {
    // A scene of its own: random bodies, then a batch of moves; after each, the viewer's sets of
    // fixed, attached, coned, filtered and capped observers against the first snapshot of an
    // Interest stream opened with the same observers (the server's interest sets, a separate
    // implementation: a grid search where the viewer scans every body).
    let seed = 31;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const grid = () => Math.round((next() * 60 - 30) * 8) / 8;
    const bodies = [];
    for (let id = 1; id <= 300; id++) {
      bodies.push({
        id, shape: { sphere: { radius: 0.25 } },
        pose: { position: { x: grid(), y: grid(), z: grid() } }, category: 1 << (id % 3),
      });
    }
    await client.createScene({ scene: 'relevant', options: { durability: 'DURABILITY_NONE' } });
    await client.upsertBodies({ scene: 'relevant', bodies });
    const observers = [
      { id: 1, enter_radius: 12 },
      { id: 2, enter_radius: 15, leave_radius: 20, max_relevant: 5, pose: { position: { x: 5 } } },
      { id: 3, enter_radius: 14, attached_to: 7 },
      { id: 4, enter_radius: 20, attached_to: 8, cone: { direction: { x: 1 }, half_angle: 0.8 } },
      { id: 5, enter_radius: 18, filter: { mask: 2 } },
      { id: 6, enter_radius: 5, attached_to: 999 },
    ];
    const request = { scene: 'relevant', observers };
    const compare = async (when) => {
      const stream = client.interest(request, { reconnectTimeoutMs: 0 });
      const first = (await stream[Symbol.asyncIterator]().next()).value;
      stream.cancel();
      const json = await get(`${base}/api/relevant?request=${encodeURIComponent(JSON.stringify(request))}`);
      assert.equal(json.status, 200, json.text);
      assert.equal(json.json.version, first.snapshot.version, when);
      assert.deepEqual(
        json.json.sets.map((set) => [set.observer_id, set.body_ids]),
        first.snapshot.sets.map((set) => [set.observer_id, set.body_ids]),
        when,
      );
      return json.json.sets.reduce((total, set) => total + set.body_ids.length, 0);
    };
    assert.ok((await compare('before the moves')) > 20);
    const moves = { ids: [], poses: [] };
    for (let id = 1; id <= 300; id += 2) {
      moves.ids.push(id);
      moves.poses.push(grid(), grid(), grid(), 0, 0, 0, 1);
    }
    const writer = client.openUpdateWriter('relevant');
    await writer.apply({ moves });
    await writer.close();
    assert.ok((await compare('after the moves')) > 20);
    // Refusals name the field, as the rpc's (without the message's index).
    const refused = async (req, field) => {
      const json = await get(`${base}/api/relevant?request=${encodeURIComponent(JSON.stringify(req))}`);
      assert.equal(json.status, 400, json.text);
      assert.ok(json.json.error.startsWith(`${field}: `), json.json.error);
    };
    await refused({ scene: 'relevant', observers: [{ id: 1, enter_radius: 5, leave_radius: 4 }] },
      'observers[0].leave_radius');
    await refused({ scene: 'relevant', observers: [{ id: 1, enter_radius: 'NaN' }] },
      'observers[0].enter_radius');
    await refused({ scene: 'relevant', observers: [{ id: 1, enter_radius: 1, max_relevant: 4294967295 }] },
      'observers[0].max_relevant');
    await refused({ scene: 'relevant', observers: Array.from({ length: 17 }, (_, i) => ({ id: i, enter_radius: 1 })) },
      'observers');
    const missing = await get(`${base}/api/relevant?request=${encodeURIComponent(JSON.stringify({ scene: 'nope', observers }))}`);
    assert.equal(missing.status, 404, missing.text);
  });

  test('writes nothing: every method but GET and HEAD is refused', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const answer = await get(`${base}/api/scene?name=known`, { method, body: '{}' });
      assert.equal(answer.status, 405, `${method}: ${answer.text}`);
      assert.match(answer.json.error, /^method: /);
      assert.equal(answer.json.code, 'UNIMPLEMENTED');
    }
    const { json } = await get(`${base}/api/scene?name=known`);
    assert.equal(json.body_count, String(KNOWN_BODIES.length));
  });

  test('streams pose changes, coalesced, and new and removed bodies', async () => {
    await client.createScene({ scene: 'live' });
    await client.upsertBodies({ scene: 'live', bodies: KNOWN_BODIES });
    const url = `${base}/api/stream?name=live`;
    let moved = false;
    const events = await readEvents(url, (seen) => {
      if (seen.length === 1 && !moved) {
        moved = true;
        assert.equal(seen[0].event, 'hello');
        // Ten moves of body 1, a new body 9, body 4 removed: one coalesced picture.
        (async () => {
          for (let i = 1; i <= 10; i++) {
            await client.upsertBodies({
              scene: 'live',
              bodies: [{ ...KNOWN_BODIES[0], pose: { position: { x: i, y: 0, z: 0 } } }],
            });
          }
          await client.upsertBodies({
            scene: 'live',
            bodies: [{ id: 9, shape: { sphere: { radius: 1 } }, pose: { position: { x: 9, y: 9, z: 9 } } }],
          });
          await client.removeBodies({ scene: 'live', ids: [4] });
        })();
      }
      const updates = seen.filter((e) => e.event === 'update').map((e) => e.json);
      const last = new Map();
      for (const u of updates) {
        u.positions.ids.forEach((id, k) => last.set(id, u.positions.positions.slice(3 * k, 3 * k + 3)));
      }
      return last.get('1')?.[0] === 10 && updates.some((u) => u.removed.includes('4')) &&
        updates.some((u) => u.bodies.some((b) => b.id === '9'));
    });
    assert.equal(events[0].event, 'hello');
    assert.deepEqual(Object.keys(events[0].json), ['version', 'tick', 'max_event_bytes']);
    const updates = events.filter((e) => e.event === 'update');
    // Coalesced: fewer events than the twelve writes.
    assert.ok(updates.length < 12, `${updates.length} events`);
    for (const u of updates) {
      assert.ok(u.bytes <= 256 * 1024);
      assert.deepEqual(Object.keys(u.json),
        ['version', 'tick', 'bodies', 'poses', 'positions', 'removed', 'more']);
      assert.equal(u.json.positions.positions.length, 3 * u.json.positions.ids.length);
      assert.equal(u.json.poses.poses.length, 7 * u.json.poses.ids.length);
    }
    // Body 1 moved without turning: its moves are in the positions' columns (no rotation).
    assert.ok(updates.some((u) => u.json.positions.ids.includes('1')));
    assert.ok(!updates.some((u) => u.json.poses.ids.includes('1')));
    // The new body in full, as the API's Body.
    const added = updates.flatMap((u) => u.json.bodies).find((b) => b.id === '9');
    assert.deepEqual(added.shape, { sphere: { radius: 1 } });
    assert.deepEqual(added.pose.position, { x: 9, y: 9, z: 9 });
  });

  test('streams the fences of open Watch streams and their enter and exit events', async () => {
    await client.createScene({ scene: 'fenced' });
    const ball = (id, x) => ({ id, shape: { sphere: { radius: 1 } }, pose: { position: { x, y: 0, z: 0 } } });
    await client.upsertBodies({ scene: 'fenced', bodies: [ball(1, 50), ball(2, 60), ball(3, 70)] });
    const fences = [
      { id: 4, shape: { sphere: { radius: 3 } }, pose: { position: { x: 0, y: 0, z: 0 } } },
      {
        id: 9,
        shape: { box: { half_extents: { x: 1, y: 2, z: 3 } } },
        pose: { position: { x: 0, y: 5, z: 0 } },
        attached_to: 1,
      },
    ];
    const watch = client.watch({ scene: 'fenced', fences });
    const messages = watch[Symbol.asyncIterator]();
    try {
      await messages.next();  // the snapshot
      // An enter before any viewer follows the scene is not kept for later viewers.
      await client.upsertBodies({ scene: 'fenced', bodies: [ball(3, 0.5)] });
      const early = (await messages.next()).value.update;
      assert.deepEqual(early.events.map((e) => [e.kind, e.fence_id, e.body_id]), [['KIND_ENTER', '4', '3']]);

      let moved = false;
      let grpcEvents = null;
      const events = await readEvents(`${base}/api/stream?name=fenced`, (seen) => {
        const listed = seen.find((e) => e.event === 'watches');
        if (listed && !moved) {
          moved = true;
          (async () => {
            // Body 2 jumps into fence 4 (an enter), then body 3 is removed from it (an exit).
            await client.upsertBodies({ scene: 'fenced', bodies: [ball(2, 1)] });
            await client.removeBodies({ scene: 'fenced', ids: [3] });
            grpcEvents = [(await messages.next()).value.update, (await messages.next()).value.update];
          })();
        }
        const fenceEvents = seen.filter((e) => e.event === 'watch_events').flatMap((e) => e.json.events);
        return fenceEvents.length >= 2;
      });
      const listed = events.find((e) => e.event === 'watches').json;
      assert.equal(listed.truncated, false);
      assert.equal(listed.watches.length, 1);
      // The API's Fence, as the WatchRequest gave it (the rotation and filter filled in).
      const pose = (x, y, z) => ({ position: { x, y, z }, rotation: { x: 0, y: 0, z: 0, w: 1 } });
      const filter = { excluded_ids: [], category: 4294967295, mask: 4294967295 };
      assert.deepEqual(listed.watches[0].fences, [
        { id: '4', shape: { sphere: { radius: 3 } }, pose: pose(0, 0, 0), filter },
        {
          id: '9', shape: { box: { half_extents: { x: 1, y: 2, z: 3 } } }, pose: pose(0, 5, 0), filter,
          attached_to: '1',
        },
      ]);
      const seen = events.filter((e) => e.event === 'watch_events');
      for (const e of seen) assert.equal(e.json.dropped, '0');
      const fenceEvents = seen.flatMap((e) => e.json.events);
      for (let i = 0; i < 50 && grpcEvents === null; i++) await sleep(100);
      // Each event as the Watch stream sent it (the same message), with its version and watch.
      assert.deepEqual(fenceEvents.map((e) => e.version), grpcEvents.flatMap((u) => u.events.map(() => u.version)));
      assert.equal(new Set(fenceEvents.map((e) => e.watch)).size, 1);
      assertSameAnswer('Watch', { update: { events: fenceEvents.map((e) => e.event) } },
        { update: { events: grpcEvents.flatMap((u) => u.events) } });
      assert.deepEqual(fenceEvents.map((e) => [e.event.kind, e.event.body_id]),
        [['KIND_ENTER', '2'], ['KIND_EXIT', '3']]);
    } finally {
      watch.cancel();
    }
    // A closed Watch stream is no longer listed.
    const after = await readEvents(`${base}/api/stream?name=fenced`,
      (seen) => seen.some((e) => e.event === 'watches' && e.json.watches.length === 0));
    assert.ok(after.some((e) => e.event === 'watches' && e.json.watches.length === 0));
    await client.deleteScene({ scene: 'fenced' });
  });

  test('streams a bounded sample of the casts answered on the scene', async () => {
    await client.createScene({ scene: 'sampled' });
    await client.upsertBodies({ scene: 'sampled', bodies: KNOWN_BODIES });
    const vec = ([x, y, z]) => ({ x, y, z });
    // Answered before any viewer follows the scene: never sampled.
    await client.raycast({ scene: 'sampled', ray: { origin: vec([7, 7, 50]), direction: vec([0, 0, -1]), max_distance: 100 } });
    let asked = false;
    let answers = null;
    const batch = Array.from({ length: 100 }, (_, i) =>
      ({ raycast: { origin: vec([1000 + i, 0, 0]), direction: vec([0, 1, 0]), max_distance: 10 } }));
    const events = await readEvents(`${base}/api/stream?name=sampled`, (seen) => {
      if (!asked && seen.length >= 1) {
        asked = true;
        (async () => {
          const ray = await client.raycast({
            scene: 'sampled',
            ray: { origin: vec([0, 0, 50]), direction: vec([0, 0, -2]), max_distance: 100 },
          });
          const sphere = await client.sphereCast({
            scene: 'sampled',
            cast: { origin: vec([-25, 40, 0]), direction: vec([0, -1, 0]), max_distance: 100, radius: 2 },
          });
          const stream = client.openQueryStream('sampled');
          await stream.query({ queries: batch });
          await stream.close();
          answers = { ray, sphere };
        })();
      }
      const samples = seen.filter((e) => e.event === 'query_samples').flatMap((e) => e.json.samples);
      return answers !== null && samples.some((s) => s.raycast?.origin.x >= 1000);
    });
    const samples = events.filter((e) => e.event === 'query_samples').flatMap((e) => e.json.samples);
    for (const e of events.filter((x) => x.event === 'query_samples')) assert.equal(e.json.dropped, '0');
    const origin = (s) => (s.raycast ?? s.sphere_cast).origin;
    assert.ok(!samples.some((s) => origin(s).x === 7), 'a query from before the viewer was sampled');
    const ray = samples.find((s) => s.raycast && s.raycast.origin.z === 50);
    assert.ok(ray, JSON.stringify(samples.slice(0, 3)));
    // The cast as the server ran it (its direction normalised), its closest hit's id and distance.
    assert.deepEqual(ray.raycast, { origin: vec([0, 0, 50]), direction: vec([0, 0, -1]), max_distance: 100 });
    assert.equal(ray.at_tick, undefined);
    assert.equal(ray.hit.body_id, answers.ray.hits[0].body_id);
    assert.equal(Math.fround(ray.hit.distance), answers.ray.hits[0].distance);
    const sphere = samples.find((s) => s.sphere_cast);
    assert.deepEqual(sphere.sphere_cast, {
      origin: vec([-25, 40, 0]), direction: vec([0, -1, 0]), max_distance: 100, radius: 2,
    });
    assert.equal(sphere.hit.body_id, answers.sphere.hits[0].body_id);
    assert.equal(Math.fround(sphere.hit.distance), answers.sphere.hits[0].distance);
    // One batch of 100 casts gives at most 20 samples (the per-second bound), spread over it.
    const fromBatch = samples.filter((s) => origin(s).x >= 1000);
    assert.ok(fromBatch.length >= 1 && fromBatch.length <= 20, `${fromBatch.length} samples`);
    for (const s of fromBatch) assert.equal(s.hit, undefined);
    if (fromBatch.length > 1) assert.ok(origin(fromBatch.at(-1)).x - origin(fromBatch[0]).x >= 50);
    await client.deleteScene({ scene: 'sampled' });
  });

  test('caps concurrent streams with 503 naming the limit', async () => {
    // Streams of earlier tests end once the server's next write to them fails (a keep-alive
    // each second at most, and the write after the peer closed may still succeed): open the
    // two streams one at a time, keeping each once it is accepted, so that no attempt leaves
    // another closed-but-not-yet-noticed stream behind.
    const controllers = [];
    const open = [];
    for (let attempt = 0; attempt < 120 && open.length < 2; attempt++) {
      const controller = new AbortController();
      const response = await fetch(`${base}/api/stream?name=known`, { signal: controller.signal });
      if (response.status === 200) {
        controllers.push(controller);
        open.push(response);
        continue;
      }
      assert.equal(response.status, 503);
      await response.text();
      await sleep(500);
    }
    try {
      assert.equal(open.length, 2, 'two streams were never open at once');
      const third = await get(`${base}/api/stream?name=known`);
      assert.equal(third.status, 503);
      assert.match(third.json.error, /^stream: at most 2 live streams/);
    } finally {
      for (const c of controllers) c.abort();
    }
  });
});

describe('viewer API with tokens', () => {
  let server;
  let dir;

  before(async () => {
    dir = tempDir('collide-viewer-tokens-');
    const tokens = path.join(dir, 'tokens');
    fs.writeFileSync(tokens, 'admin-token admin\nreader-token reader\narena-token reader arena\n');
    server = await startViewerServer([`--token_file=${tokens}`]);
    const client = new Client(server.address, { token: 'admin-token' });
    await client.createScene({ scene: 'arena' });
    await client.createScene({ scene: 'secret' });
    await client.upsertBodies({ scene: 'secret', bodies: KNOWN_BODIES });
    client.close();
  });

  after(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('needs a token; a reader token reads; prefixes hide scenes', async () => {
    const base = `${server.viewer}/viewer/api`;
    const none = await get(`${base}/scenes`);
    assert.equal(none.status, 401);
    assert.match(none.json.error, /^token: /);
    const wrong = await get(`${base}/scene?name=secret&token=nope`);
    assert.equal(wrong.status, 401);
    const header = await get(`${base}/scene?name=secret`, {
      headers: { Authorization: 'Bearer reader-token' },
    });
    assert.equal(header.status, 200);
    assert.equal(header.json.body_count, String(KNOWN_BODIES.length));
    const param = await get(`${base}/scene?name=secret&token=reader-token`);
    assert.equal(param.status, 200);
    const limited = await get(`${base}/scenes?token=arena-token`);
    assert.deepEqual(limited.json.scenes.map((s) => s.name), ['arena']);
    const hidden = await get(`${base}/scene?name=secret&token=arena-token`);
    assert.equal(hidden.status, 403);
    assert.match(hidden.json.error, /^name: /);
    assert.equal(hidden.json.code, 'PERMISSION_DENIED');
    const stream = await get(`${base}/stream?name=secret&token=arena-token`);
    assert.equal(stream.status, 403);
    // Every kind of read: casts now and at a past tick too.
    const ray = 'origin=0,0,50&direction=0,0,-1';
    const request = castQuery({
      scene: 'secret', ray: { origin: { z: 50 }, direction: { z: -1 }, max_distance: 100 },
    });
    for (const call of [`raycast?${request}`, `raycast?name=secret&${ray}`, `raycast?name=secret&${ray}&at_tick=0`,
      `spherecast?name=secret&${ray}&radius=0.5`, `spherecast?name=secret&${ray}&radius=0.5&at_tick=0`,
      'scene?name=secret&at_tick=0']) {
      assert.equal((await get(`${base}/${call}`)).status, 401, call);
      assert.equal((await get(`${base}/${call}&token=arena-token`)).status, 403, call);
      assert.equal((await get(`${base}/${call}&token=reader-token`)).status, 200, call);
    }
    // The page itself needs no token (it holds no data).
    assert.equal((await get(`${server.viewer}/viewer/`)).status, 200);
  });
});
