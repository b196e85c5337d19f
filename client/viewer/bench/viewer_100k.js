#!/usr/bin/env node
// Measures the viewer on a large scene: a collide-server with N bodies (default 100,000: spheres,
// boxes and capsules on a grid), a writer moving 10% of them per tick at TICK_HZ, and
//   - the live stream's bytes per second for one viewer (read raw over HTTP),
//   - the page's frame rate in headless Chromium (software WebGL) while following the scene,
//     and with no updates.
// Usage: node bench/viewer_100k.js [--bodies N] [--tick_hz H] [--seconds S]
// Needs collide-server ($COLLIDE_SERVER or build/server/collide-server) and Chromium.

import path from 'node:path';
import { parseArgs } from 'node:util';

import { artifactDir, launchBrowser } from '../test/browser.js';
import { Client, startViewerServer } from '../test/viewer_server.js';

const { values } = parseArgs({
  options: {
    bodies: { type: 'string', default: '100000' },
    tick_hz: { type: 'string', default: '20' },
    seconds: { type: 'string', default: '10' },
  },
});
const N = Number(values.bodies);
const TICK_HZ = Number(values.tick_hz);
const SECONDS = Number(values.seconds);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const side = Math.ceil(Math.cbrt(N));
const spacing = 4;
const at = (i) => [(i % side) * spacing, (Math.floor(i / side) % side) * spacing,
  Math.floor(i / (side * side)) * spacing];
function body(i) {
  const [x, y, z] = at(i);
  const shape = i % 3 === 0 ? { sphere: { radius: 1 } }
    : i % 3 === 1 ? { box: { half_extents: { x: 1, y: 0.5, z: 0.75 } } }
      : { capsule: { radius: 0.5, half_height: 0.8 } };
  return { id: i + 1, shape, pose: { position: { x, y, z } }, category: 1 << (i % 4) };
}

const server = await startViewerServer();
const client = new Client(server.address, { deadlineMs: 120000 });
await client.createScene({ scene: 'big' });
for (let start = 0; start < N; start += 10000) {
  const bodies = [];
  for (let i = start; i < Math.min(N, start + 10000); i++) bodies.push(body(i));
  await client.upsertBodies({ scene: 'big', bodies });
}
console.log(`scene: ${N} bodies`);

// The writer: each tick moves every tenth body (a different tenth each tick) by a small step.
const writer = client.openUpdateWriter('big');
let tick = 0;
let ticking = true;
const mover = (async () => {
  const period = 1000 / TICK_HZ;
  let next = Date.now();
  while (ticking) {
    tick += 1;
    const ids = [];
    const poses = [];
    for (let i = tick % 10; i < N; i += 10) {
      const [x, y, z] = at(i);
      ids.push(i + 1);
      poses.push(x + Math.sin(tick * 0.3 + i) * 0.5, y + Math.cos(tick * 0.3 + i) * 0.5, z,
        0, 0, 0, 1);
    }
    await writer.write({ moves: { ids, poses }, tick });
    next += period;
    const wait = next - Date.now();
    if (wait > 0) await sleep(wait);
    else next = Date.now();
  }
  await writer.flush();
})();

// One viewer's stream, raw: bytes and events over SECONDS.
async function streamRate() {
  const controller = new AbortController();
  const response = await fetch(`${server.viewer}/viewer/api/stream?name=big`, {
    signal: controller.signal,
  });
  let bytes = 0;
  let events = 0;
  const start = Date.now();
  const stop = setTimeout(() => controller.abort(), SECONDS * 1000);
  try {
    for await (const chunk of response.body) {
      bytes += chunk.length;
      events += (Buffer.from(chunk).toString('latin1').match(/event: update/g) ?? []).length;
    }
  } catch {
    // aborted
  }
  clearTimeout(stop);
  const seconds = (Date.now() - start) / 1000;
  return { bytesPerSecond: bytes / seconds, eventsPerSecond: events / seconds };
}

const ticksBefore = tick;
const t0 = Date.now();
const stream = await streamRate();
const tickRate = (tick - ticksBefore) / ((Date.now() - t0) / 1000);
console.log(`writer: ${tickRate.toFixed(1)} ticks/s, ${(tickRate * N / 10).toFixed(0)} moves/s`);
console.log(`stream (one viewer): ${(stream.bytesPerSecond / 1024).toFixed(1)} KiB/s, ` +
  `${stream.eventsPerSecond.toFixed(1)} events/s`);

const browser = await launchBrowser({ width: 1280, height: 720 });
const page = await browser.newPage();
const loadStart = Date.now();
await page.goto(`${server.viewer}/viewer/?scene=big`);
await page.waitForFunction(() => window.viewer?.ready, { timeout: 300000, polling: 500 });
console.log(`page: loaded ${N} bodies in ${((Date.now() - loadStart) / 1000).toFixed(1)} s`);
async function frameRate() {
  const a = await page.evaluate(() => ({ frames: window.viewer.frames, t: performance.now(),
    bytes: window.viewer.eventBytes, events: window.viewer.events }));
  await sleep(SECONDS * 1000);
  const b = await page.evaluate(() => ({ frames: window.viewer.frames, t: performance.now(),
    bytes: window.viewer.eventBytes, events: window.viewer.events }));
  const s = (b.t - a.t) / 1000;
  return { fps: (b.frames - a.frames) / s, bytesPerSecond: (b.bytes - a.bytes) / s,
    eventsPerSecond: (b.events - a.events) / s };
}
const live = await frameRate();
console.log(`page, following 10%/tick: ${live.fps.toFixed(1)} fps, stream ` +
  `${(live.bytesPerSecond / 1024).toFixed(1)} KiB/s, ${live.eventsPerSecond.toFixed(1)} events/s`);
const file = path.join(artifactDir(), `viewer-${N}.png`);
await page.screenshot({ path: file });
console.log(`screenshot: ${file}`);
ticking = false;
await mover;
await sleep(1500);
const still = await frameRate();
console.log(`page, no updates: ${still.fps.toFixed(1)} fps`);

await browser.close();
await writer.close();
client.close();
await server.stop();
