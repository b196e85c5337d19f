// A level in the viewer, in Debian's headless Chromium: a heightfield terrain with a square hole,
// walls placed from examples/level/wall.obj (uploaded with `collide mesh upload`, as a user
// would), and moving balls and capsules over it. The page reads each asset once
// (/viewer/api/asset) and draws the bodies with their real geometry: the terrain in its colour
// where it is, the background through its hole, the walls blue. The screenshot is kept (path
// printed); docs/images/viewer-level.png is one of them.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';

import { artifactDir, chromiumPath, launchBrowser } from './browser.js';
import { decodePng } from './png.js';
import { Client, startViewerServer } from './viewer_server.js';

const WALL_OBJ = path.resolve(import.meta.dirname, '../../../examples/level/wall.obj');

// The terrain: ROWS x COLUMNS samples SPACING apart (x from 0 to 128, z from 0 to 128), gentle
// hills, and a hole of HOLE x HOLE cells from cell (HOLE_AT, HOLE_AT).
const ROWS = 65;
const COLUMNS = 65;
const SPACING = 2;
const HOLE_AT = 20;
const HOLE = 8;
const heightAt = (x, z) => 5 * Math.sin(x / 14) * Math.cos(z / 19) + 0.03 * x;

// The camera of the checked capture: above the terrain's near edge, looking down at its middle.
const CAMERA = '64,110,190';
const TARGET = '64,0,60';

// Walls: examples/level/wall.obj (the plane x = 0, y from -2 to 2, z from 0 to 4) turned a
// quarter about y so that it faces the camera (its local z along x), scaled 4: x from the
// body's x to 16 more, y from 8 below the body to 8 above.
const QUARTER_Y = { x: 0, y: Math.SQRT1_2, z: 0, w: Math.SQRT1_2 };
const WALLS = [
  { id: 10, x: 90, z: 30 },
  { id: 11, x: 20, z: 100 },
];

const blue = ([r, g, b]) => b > 100 && b > 1.5 * r && b > 1.2 * g;
const background = ([r, g, b]) => r < 40 && g < 40 && b < 40;  // the clear colour, 0x111111
const greyLit = ([r, g, b]) => r > 50 && Math.abs(r - g) < 25 && Math.abs(r - b) < 25;

describe('viewer: a level of meshes and heightfields', {
  skip: (chromiumPath() === null && 'no chromium') || (!process.env.COLLIDE_CLI && 'no COLLIDE_CLI'),
}, () => {
  let server;
  let browser;
  const dir = artifactDir();

  before(async () => {
    server = await startViewerServer();
    const client = new Client(server.address);
    await client.createScene({ scene: 'level' });
    const heights = new Float32Array(ROWS * COLUMNS);
    for (let i = 0; i < ROWS; i++) {
      for (let j = 0; j < COLUMNS; j++) heights[i * COLUMNS + j] = heightAt(j * SPACING, i * SPACING);
    }
    const cells = (ROWS - 1) * (COLUMNS - 1);
    const holes = new Uint8Array(Math.ceil(cells / 8));
    for (let i = HOLE_AT; i < HOLE_AT + HOLE; i++) {
      for (let j = HOLE_AT; j < HOLE_AT + HOLE; j++) {
        const c = i * (COLUMNS - 1) + j;
        holes[c >> 3] |= 1 << (c & 7);
      }
    }
    await client.uploadHeightfield({
      scene: 'level', name: 'terrain', rows: ROWS, columns: COLUMNS, heights, holes,
      spacingX: SPACING, spacingZ: SPACING,
    });
    // The OBJ through the command-line client, as the README walkthrough uploads it.
    const { stdout } = await promisify(execFile)(process.env.COLLIDE_CLI,
      [`--address=${server.address}`, 'mesh', 'upload', 'level', 'wall', WALL_OBJ]);
    assert.match(stdout, /wall/);
    const bodies = [
      {
        id: 1, shape: { heightfield: { asset: 'terrain' } }, pose: { position: { x: 0, y: 0, z: 0 } },
        kind: 'BODY_KIND_STATIC',
      },
      ...WALLS.map((w) => ({
        id: w.id,
        shape: { mesh: { asset: 'wall', scale: 4 } },
        pose: { position: { x: w.x, y: heightAt(w.x, w.z) + 8, z: w.z }, rotation: QUARTER_Y },
        category: 4,
      })),
    ];
    // Balls and capsules over the terrain, moved once after they were placed.
    for (let k = 0; k < 12; k++) {
      const x = 10 + (k % 4) * 30;
      const z = 15 + Math.floor(k / 4) * 35;
      bodies.push({
        id: 100 + k,
        shape: k % 2 ? { capsule: { radius: 1.5, half_height: 2 } } : { sphere: { radius: 2.5 } },
        pose: { position: { x, y: heightAt(x, z) + 20, z } },
        category: k % 2 ? 2 : 1,
      });
    }
    await client.upsertBodies({ scene: 'level', bodies });
    await client.upsertBodies({
      scene: 'level',
      bodies: bodies.filter((b) => b.id >= 100).map((b) => ({
        ...b,
        pose: { position: { ...b.pose.position, y: b.pose.position.y - 12 } },
      })),
    });
    client.close();
    browser = await launchBrowser({ width: 1280, height: 800 });
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('draws the terrain with its hole and the walls, each asset read once', async () => {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.setViewport({ width: 1280, height: 800 });
    await page.goto(`${server.viewer}/viewer/?scene=level&follow=off&camera=${CAMERA}&target=${TARGET}`);
    await page.waitForFunction(() => window.viewer?.ready && window.viewer.frames > 2,
      { timeout: 60000 });
    // Triangles drawn are counted once a second.
    await page.waitForFunction(() => window.viewer.triangles > 0, { timeout: 10000 });
    const file = path.join(dir, 'viewer-level.png');
    await page.screenshot({ path: file });
    console.log(`screenshot: ${file}`);
    const image = decodePng(fs.readFileSync(file));
    const at = (x, y, z) => page.evaluate((p) => window.viewer.project(...p), [x, y, z]);
    const read = await page.evaluate(() => ({
      assetsRead: window.viewer.assetsRead, triangles: window.viewer.triangles,
    }));
    // The terrain's two triangles per cell, less the hole's, and the walls' two each.
    const cells = (ROWS - 1) * (COLUMNS - 1) - HOLE * HOLE;
    assert.equal(read.triangles >= 2 * cells + 2 * WALLS.length, true, JSON.stringify(read));
    assert.equal(read.assetsRead, 2, 'terrain and wall, each once');
    // Terrain where there is no hole (a point between the bodies), the background through the
    // hole's middle, blue on each wall's middle.
    const ground = [(HOLE_AT + HOLE + 6) * SPACING, 0, (HOLE_AT + HOLE / 2) * SPACING];
    ground[1] = heightAt(ground[0], ground[2]);
    const hole = [(HOLE_AT + HOLE / 2) * SPACING, 0, (HOLE_AT + HOLE / 2) * SPACING];
    hole[1] = heightAt(hole[0], hole[2]);
    for (const [label, point, want] of [['terrain', ground, greyLit], ['the hole', hole, background],
      ...WALLS.map((w) => [`wall ${w.id}`, [w.x + 8, heightAt(w.x, w.z) + 8, w.z], blue])]) {
      const p = await at(...point);
      const pixel = image.pixel(p.x, p.y);
      assert.ok(want(pixel), `${label} at (${point.map((v) => v.toFixed(1))}) drawn at ` +
        `(${p.x.toFixed(0)}, ${p.y.toFixed(0)}): ${pixel}`);
    }
    await page.close();
    assert.deepEqual(errors, []);
  });
});
