// The viewer captured and laid out, in Debian's headless Chromium. With follow=off in its URL the
// page reads the scene once, before its load event, and never opens the live stream: plain
// `chromium --headless --screenshot` (run as a command, as a user would) writes a PNG of the
// scene within a timeout, each body in its colour where the page draws it. The canvas takes the
// width the side panel leaves: every body of a scene that spans the view, its right edge
// included, is drawn where the panel is not, at 1280x800, at a narrow width (the panel below the
// canvas) and with the panel hidden. Screenshots are kept (paths printed).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { artifactDir, chromiumPath, launchBrowser } from './browser.js';
import { decodePng } from './png.js';
import { Client, startViewerServer } from './viewer_server.js';

const red = ([r, g, b]) => r > 100 && r > 2 * g && r > 2 * b;
const green = ([r, g, b]) => g > 100 && g > 1.5 * r && g > 1.5 * b;
const blue = ([r, g, b]) => b > 100 && b > 1.5 * r && b > 1.2 * g;
const COLOURS = { 1: red, 2: green, 4: blue };

// A row of balls across the view and one in each corner of it, coloured by category (1 red,
// 2 green, 4 blue): the view fitted to them puts the last ones at the canvas's edges, the top
// right one where the panel used to lie over the scene.
const BALLS = [];
for (let i = 0; i < 7; i++) BALLS.push({ x: -60 + 20 * i, y: 0, category: [1, 2, 4][i % 3] });
BALLS.push({ x: 60, y: 30, category: 1 }, { x: 60, y: -30, category: 2 },
  { x: -60, y: 30, category: 4 }, { x: -60, y: -30, category: 1 });

// Runs `command` with `args` until it exits or `timeoutMs` passes (then kills it): {code, signal,
// output}.
function run(command, args, timeoutMs) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => { output += d; });
    child.stderr.on('data', (d) => { output += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output });
    });
  });
}

describe('viewer capture and layout', { skip: chromiumPath() === null && 'no chromium' }, () => {
  let server;
  let browser;
  const dir = artifactDir();

  before(async () => {
    server = await startViewerServer();
    const client = new Client(server.address);
    await client.createScene({ scene: 'row' });
    await client.upsertBodies({
      scene: 'row',
      bodies: BALLS.map((b, i) => ({
        id: i + 1,
        shape: { sphere: { radius: 3 } },
        pose: { position: { x: b.x, y: b.y, z: 0 } },
        category: b.category,
      })),
    });
    client.close();
    browser = await launchBrowser({ width: 1280, height: 800 });
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  // The page at `width` x `height` with follow=off, drawn: the page, where each ball is drawn
  // (CSS pixels), the canvas's and the panel's boxes, and a screenshot's pixels.
  async function drawn(name, width, height, { hidePanel = false } = {}) {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.setViewport({ width, height });
    await page.goto(`${server.viewer}/viewer/?scene=row&follow=off&samples=off`);
    await page.waitForFunction(() => window.viewer?.ready && window.viewer.frames > 2,
      { timeout: 30000 });
    if (hidePanel) {
      await page.click('#panel-toggle');
      const frames = await page.evaluate(() => window.viewer.frames);
      await page.waitForFunction((n) => window.viewer.frames > n + 2, {}, frames);
    }
    const box = (selector) => page.$eval(selector, (e) => {
      const r = e.getBoundingClientRect();
      return { left: r.left, top: r.top, right: r.right, bottom: r.bottom, shown: r.width > 0 };
    });
    const canvas = await box('#view canvas');
    const panel = await box('#panel');
    const at = [];
    for (const b of BALLS) at.push(await page.evaluate((p) => window.viewer.project(...p), [b.x, b.y, 0]));
    const file = path.join(dir, `${name}.png`);
    await page.screenshot({ path: file });
    console.log(`screenshot: ${file}`);
    const image = decodePng(fs.readFileSync(file));
    await page.close();
    assert.deepEqual(errors, []);
    return { at, canvas, panel, image };
  }

  const inside = (p, r) => p.x >= r.left && p.x < r.right && p.y >= r.top && p.y < r.bottom;

  // Every ball is drawn in its colour on the canvas, where the panel is not.
  function assertEveryBallShown({ at, canvas, panel, image }, label) {
    BALLS.forEach((b, i) => {
      const p = at[i];
      const where = `${label}: ball (${b.x}, ${b.y}) at (${p.x.toFixed(0)}, ${p.y.toFixed(0)})`;
      assert.ok(inside(p, canvas), `${where}, the canvas is ${JSON.stringify(canvas)}`);
      if (panel.shown) assert.ok(!inside(p, panel), `${where}, under the panel ${JSON.stringify(panel)}`);
      assert.ok(COLOURS[b.category](image.pixel(p.x, p.y)), `${where}: ${image.pixel(p.x, p.y)}`);
    });
  }

  test('the panel never hides the scene: 1280x800, a narrow window, the panel hidden', async () => {
    const wide = await drawn('viewer-layout-1280x800', 1280, 800);
    assert.equal(wide.canvas.right, wide.panel.left, 'the canvas ends where the panel begins');
    assertEveryBallShown(wide, '1280x800');
    // Narrow: the panel goes below the canvas, which keeps the whole width.
    const narrow = await drawn('viewer-layout-600x800', 600, 800);
    assert.equal(narrow.canvas.right, 600);
    assert.ok(narrow.canvas.bottom <= narrow.panel.top, JSON.stringify(narrow));
    assertEveryBallShown(narrow, '600x800');
    // Hidden: the canvas takes the whole window.
    const hidden = await drawn('viewer-layout-panel-hidden', 1280, 800, { hidePanel: true });
    assert.equal(hidden.panel.shown, false);
    assert.deepEqual([hidden.canvas.left, hidden.canvas.right], [0, 1280]);
    assertEveryBallShown(hidden, 'panel hidden');
  });

  test('chromium --headless --screenshot captures the scene with follow=off', async () => {
    // Where the page draws each ball at 1280x800 (the same window, the same fitted view).
    const expected = await drawn('viewer-follow-off-reference', 1280, 800);
    const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'collide-chromium-cli-'));
    const file = path.join(dir, 'viewer-follow-off-cli.png');
    fs.rmSync(file, { force: true });
    try {
      const { code, signal, output } = await run(chromiumPath(), [
        '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--no-first-run',
        `--user-data-dir=${userDataDir}`, `--screenshot=${file}`, '--window-size=1280,800',
        `${server.viewer}/viewer/?scene=row&follow=off`,
      ], 60000);
      assert.equal(signal, null, `chromium did not finish within 60 s: ${output.slice(-2000)}`);
      assert.equal(code, 0, output.slice(-2000));
    } finally {
      fs.rmSync(userDataDir, { recursive: true, force: true });
    }
    console.log(`screenshot: ${file}`);
    const image = decodePng(fs.readFileSync(file));
    assert.deepEqual([image.width, image.height], [1280, 800]);
    assertEveryBallShown({ ...expected, image }, 'chromium --screenshot');
  });
});
