#!/usr/bin/env node
// Measures the viewer on a large scene: a collide-server with N bodies (default 100,000: spheres,
// boxes and capsules on a grid), a writer moving 10% of them per tick at TICK_HZ, and
//   - the live stream's bytes per second for one viewer (read raw over HTTP),
//   - the page in headless Chromium (software WebGL) while following the scene and with no
//     updates: drawn frames per second (the page draws when something changed; then forced to
//     draw every animation frame, which measures what a frame costs), the stream's bytes per
//     second as the page received them, and where the main thread's time went.
// Figures are medians of one-second windows.
// Usage: node bench/viewer_100k.js [--bodies N] [--tick_hz H] [--seconds S]
//   [--detail high|medium|low|coarse] (default: the page's choice by scene size)
//   [--width W --height H] (the page's size, default 1280x720)
//   [--orbit] (also measure while the camera orbits: a mouse drag across the page, repeated)
//   [--url_extra 'a=b&c=d'] (more URL parameters for the page, e.g. points_above=1000000)
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
    detail: { type: 'string', default: '' },
    width: { type: 'string', default: '1280' },
    height: { type: 'string', default: '720' },
    orbit: { type: 'boolean', default: false },
    url_extra: { type: 'string', default: '' },
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

const browser = await launchBrowser({ width: Number(values.width), height: Number(values.height) });
const page = await browser.newPage();
const loadStart = Date.now();
await page.goto(`${server.viewer}/viewer/?scene=big${values.detail ? `&detail=${values.detail}` : ''}` +
  `${values.url_extra ? `&${values.url_extra}` : ''}`);
await page.waitForFunction(() => window.viewer?.ready, { timeout: 300000, polling: 500 });
console.log(`page: loaded ${N} bodies in ${((Date.now() - loadStart) / 1000).toFixed(1)} s`);

// The page's counters (a page without `renders` draws every animation frame).
const counters = () => page.evaluate(() => {
  const v = window.viewer;
  return { t: performance.now(), frames: v.frames, renders: v.renders ?? v.frames,
    bytes: v.eventBytes, events: v.events, timing: { ...(v.timing ?? {}) },
    triangles: v.triangles ?? null, detail: v.detail ?? null, drawMode: v.drawMode ?? 'shapes' };
});
const median = (xs) => {
  if (xs.length === 0) return 0;
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
// One-second windows over SECONDS: medians of drawn frames/s, stream bytes/s and events/s, and
// per second the main thread's milliseconds (Chrome's TaskDuration: all of it, ScriptDuration:
// JavaScript) and the viewer's own (JSON parse, applying updates, the renderer.render call).
async function measure() {
  const rows = [];
  let a = await counters();
  const first = a;
  let ma = await page.metrics();
  for (let i = 0; i < SECONDS; i++) {
    await sleep(1000);
    const b = await counters();
    const mb = await page.metrics();
    const s = (b.t - a.t) / 1000;
    const per = (key) => ((b.timing[key] ?? 0) - (a.timing[key] ?? 0)) / s;
    rows.push({
      fps: (b.renders - a.renders) / s,
      bytes: (b.bytes - a.bytes) / s,
      events: (b.events - a.events) / s,
      task: ((mb.TaskDuration - ma.TaskDuration) * 1000) / s,
      script: ((mb.ScriptDuration - ma.ScriptDuration) * 1000) / s,
      parse: per('parseMs'),
      apply: per('applyMs'),
      render: per('renderMs'),
      renders: b.renders - a.renders,
    });
    a = b;
    ma = mb;
  }
  const m = {};
  for (const key of Object.keys(rows[0])) m[key] = median(rows.map((r) => r[key]));
  // Drawn frames/s over the whole run (a window of a slow page may hold no frame), and the median
  // time from one drawn frame to the next (the page's render times; else the mean).
  const total = rows.reduce((sum, r) => sum + r.renders, 0);
  m.fps = total / ((a.t - first.t) / 1000);
  const times = await page.evaluate((since) =>
    (window.viewer.renderTimes ?? []).filter((t) => t >= since), first.t);
  const gaps = times.slice(1).map((t, i) => t - times[i]);
  m.frameMs = gaps.length > 2 ? median(gaps) : total > 0 ? 1000 / m.fps : Infinity;
  m.triangles = a.triangles;
  m.detail = a.detail;
  m.drawMode = a.drawMode;
  return m;
}
const f1 = (x) => x.toFixed(1);
function report(label, m) {
  console.log(`${label}: ${f1(m.fps)} frames/s (${Number.isFinite(m.frameMs) ? f1(m.frameMs) : '-'} ms/frame), ` +
    `stream ${f1(m.bytes / 1024)} KiB/s, ${f1(m.events)} events/s; main thread per s: ` +
    `${f1(m.task)} ms busy, ${f1(m.script)} ms JS (parse ${f1(m.parse)}, apply ` +
    `${f1(m.apply)}, render call ${f1(m.render)}); drawn as ${m.drawMode}`);
}

// Orbiting: the mouse drags across the page's middle (OrbitControls turn the camera), again
// from the left when it reaches the right, until stopped.
let orbiting = false;
let orbitDone = null;
function startOrbit() {
  orbiting = true;
  const W = Number(values.width);
  const y = Number(values.height) / 2;
  orbitDone = (async () => {
    let x = W / 4;
    await page.mouse.move(x, y);
    await page.mouse.down();
    while (orbiting) {
      x += 4;
      if (x > (3 * W) / 4) {
        await page.mouse.up();
        x = W / 4;
        await page.mouse.move(x, y);
        await page.mouse.down();
      }
      await page.mouse.move(x, y);
      await sleep(16);
    }
    await page.mouse.up();
  })();
}
async function stopOrbit() {
  orbiting = false;
  await orbitDone;
}
const setContinuous = (on) => page.evaluate((c) => { window.viewer.continuous = c; }, on);

const live = await measure();
console.log(`detail: ${live.detail ?? 'n/a'}, triangles per frame: ` +
  `${live.triangles === null ? 'n/a' : live.triangles.toLocaleString('en')}`);
report('following 10%/tick, drawn on change', live);
await setContinuous(true);
const liveContinuous = await measure();
report('following 10%/tick, drawn every frame', liveContinuous);
await setContinuous(false);
let liveOrbit = null;
if (values.orbit) {
  startOrbit();
  liveOrbit = await measure();
  await stopOrbit();
  report('following 10%/tick and orbiting, drawn on change', liveOrbit);
}
const file = path.join(artifactDir(), `viewer-${N}.png`);
await page.screenshot({ path: file });
console.log(`screenshot: ${file}`);
ticking = false;
await mover;
await sleep(1500);
const still = await measure();
report('no updates, drawn on change', still);
await setContinuous(true);
const stillContinuous = await measure();
report('no updates, drawn every frame (the renderer alone)', stillContinuous);
await setContinuous(false);
let stillOrbit = null;
if (values.orbit) {
  startOrbit();
  stillOrbit = await measure();
  await stopOrbit();
  report('no updates, orbiting, drawn on change', stillOrbit);
}

console.log(`\nsummary (${N} bodies, 10% moving per tick at ${TICK_HZ} ticks/s, medians of ` +
  `${SECONDS} one-second windows):`);
console.log(`  frames/s while streaming: ${f1(live.fps)} drawn on change (as ${live.drawMode}), ` +
  `${f1(liveContinuous.fps)} drawing every frame (${f1(liveContinuous.frameMs)} ms/frame)`);
console.log(`  renderer alone: ${f1(stillContinuous.fps)} frames/s ` +
  `(${f1(stillContinuous.frameMs)} ms/frame, of which ` +
  `${f1(stillContinuous.renders ? stillContinuous.render / stillContinuous.fps : 0)} ms in ` +
  `the renderer.render call)`);
if (liveOrbit) {
  console.log(`  orbiting: ${f1(liveOrbit.fps)} frames/s while streaming ` +
    `(${f1(liveOrbit.frameMs)} ms/frame, drawn as ${liveOrbit.drawMode}), ` +
    `${f1(stillOrbit.fps)} frames/s with no updates (${f1(stillOrbit.frameMs)} ms/frame, ` +
    `drawn as ${stillOrbit.drawMode})`);
}
console.log(`  stream per viewer: ${f1(stream.bytesPerSecond / 1024)} KiB/s raw, ` +
  `${f1(live.bytes / 1024)} KiB/s as the page received it`);
console.log(`  JS per second while streaming: parse ${f1(live.parse)} ms, apply ` +
  `${f1(live.apply)} ms, render calls ${f1(live.render)} ms; main thread busy ${f1(live.task)} ms`);

await browser.close();
await writer.close();
client.close();
await server.stop();
