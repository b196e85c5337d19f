// The viewer in a real browser: Debian's Chromium, headless with software WebGL, loads the page
// of a scene of known bodies from a real collide-server; the DOM lists them, the screenshot has
// each body's colour where the page's camera projects it, a ray fired from the page gets the
// API's hit, a sphere cast from the page gets the API's hit and draws the swept sphere there, a
// pose update moves the drawn body, and the tick slider draws a moved body where it was at a past
// tick until "live" is pressed, and the fence of a Watch stream opened by a real client is drawn
// and its enter event flashes it, an observer's relevant set is the API's and follows the scene,
// and a scene above points_above is drawn as points in the
// bodies' colours while the camera is held and as shapes when still. Screenshots are kept (paths
// printed).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { artifactDir, chromiumPath, launchBrowser } from './browser.js';
import { decodePng } from './png.js';
import { Client, KNOWN_BODIES, get, startViewerServer } from './viewer_server.js';

const red = ([r, g, b]) => r > 100 && r > 2 * g && r > 2 * b;
const green = ([r, g, b]) => g > 100 && g > 1.5 * r && g > 1.5 * b;
const blue = ([r, g, b]) => b > 100 && b > 1.5 * r && b > 1.2 * g;
const dark = ([r, g, b]) => r < 40 && g < 40 && b < 40;
// A collide.v1.Vec3 of the API's JSON as the page shows it: `x,y,z`.
const xyz = ({ x, y, z }) => [x, y, z].join(',');
// A fence's colour (0xffa000).
const orange = ([r, g, b]) => r > 200 && g > 120 && g < 200 && b < 60;
// The sphere cast's colour (0xff80ff).
const magenta = ([r, g, b]) => r > 200 && b > 200 && g > 90 && g < 170;

// Pixels of `image` within `radius` pixels of (x, y) that `match`.
function count(image, { x, y }, radius, match) {
  let n = 0;
  for (let dy = -radius; dy <= radius; dy++) {
    for (let dx = -radius; dx <= radius; dx++) {
      if (match(image.pixel(x + dx, y + dy))) n += 1;
    }
  }
  return n;
}

describe('viewer in Chromium', { skip: chromiumPath() === null && 'no chromium' }, () => {
  let server;
  let client;
  let browser;
  let page;
  const dir = artifactDir();

  before(async () => {
    server = await startViewerServer();
    client = new Client(server.address);
    await client.createScene({ scene: 'known' });
    await client.upsertBodies({ scene: 'known', bodies: KNOWN_BODIES });
    // 1100 wide: the canvas (what the 300-pixel panel leaves) is 800 by 600.
    browser = await launchBrowser({ width: 1100, height: 600 });
    page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.errors = errors;
    // Sampled queries (the page's own casts among them) are not drawn: the pixel tests need a
    // still picture; the last test draws them on another page.
    await page.goto(`${server.viewer}/viewer/?scene=known&camera=0,0,80&target=0,0,0&samples=off`);
    await page.waitForFunction(() => window.viewer?.ready && window.viewer.frames > 3, {
      timeout: 30000,
    });
  });

  after(async () => {
    await browser?.close();
    client?.close();
    await server?.stop();
  });

  // A screenshot, kept as an artefact, and its pixels.
  async function screenshot(name) {
    const file = path.join(dir, `${name}.png`);
    const frames = await page.evaluate(() => window.viewer.frames);
    await page.waitForFunction((n) => window.viewer.frames > n + 2, {}, frames);
    await page.screenshot({ path: file });
    console.log(`screenshot: ${file}`);
    return decodePng(fs.readFileSync(file));
  }

  const project = (x, y, z) => page.evaluate((p) => window.viewer.project(...p), [x, y, z]);

  test('renders with WebGL and lists the bodies in the DOM', async () => {
    assert.equal(await page.evaluate(() => window.viewer.webgl), true);
    const items = await page.$$eval('#bodies li', (lis) =>
      lis.map((li) => ({ id: li.dataset.id, shape: li.dataset.shape, position: li.dataset.position })));
    assert.deepEqual(items.map((i) => i.id), KNOWN_BODIES.map((b) => String(b.id)));
    assert.deepEqual(items.map((i) => i.shape), ['sphere', 'box', 'capsule', 'box']);
    assert.equal(items[0].position, '0,0,0');
    const version = await page.$eval('#version', (e) => e.textContent);
    const stats = await client.getScene({ scene: 'known' });
    assert.equal(version, String(stats.stats.version));
    // The panel names the server that answered and its role (the scene is not replicated).
    assert.equal(await page.$eval('#server-address', (e) => e.textContent), server.address);
    assert.equal(await page.$eval('#server-role', (e) => e.textContent), 'not replicated');
    assert.deepEqual(await page.evaluate(() => window.viewer.errorsSeen ?? []), []);
    assert.deepEqual(page.errors, []);
  });

  test('draws each body in its colour where it is', async () => {
    const image = await screenshot('viewer-known');
    const ball = await project(0, 0, 0);
    const box = await project(-25, 0, 0);
    const capsule = await project(0, -25, 0);
    const empty = await project(0, 15, 0);
    assert.ok(red(image.pixel(ball.x, ball.y)), `ball: ${image.pixel(ball.x, ball.y)}`);
    assert.ok(green(image.pixel(box.x, box.y)), `box: ${image.pixel(box.x, box.y)}`);
    assert.ok(blue(image.pixel(capsule.x, capsule.y)), `capsule: ${image.pixel(capsule.x, capsule.y)}`);
    assert.ok(dark(image.pixel(empty.x, empty.y)), `empty: ${image.pixel(empty.x, empty.y)}`);
    // The box (half extents 3, 2, 1) is turned 90 degrees about Z: its long axis lies along y,
    // so (x + 2, y + 2) is inside it and (x + 2.8, y) is not.
    const diagonal = await project(-25 + 2, 2, 1);
    const unrotated = await project(-25 + 2.8, 0, 1);
    assert.ok(green(image.pixel(diagonal.x, diagonal.y)), `diagonal: ${image.pixel(diagonal.x, diagonal.y)}`);
    assert.ok(dark(image.pixel(unrotated.x, unrotated.y)), `unrotated: ${image.pixel(unrotated.x, unrotated.y)}`);
  });

  test('a ray fired from the page gets the hit the API returns', async () => {
    const rays = [['0,0,50', '0,0,-1'], ['-25,40,0', '0,-1,0'], ['40,-25,0', '-1,0,0'], ['0,60,0', '1,0,0']];
    for (const [origin, direction] of rays) {
      await page.$eval('#ray-origin', (e, v) => { e.value = v; }, origin);
      await page.$eval('#ray-direction', (e, v) => { e.value = v; }, direction);
      await page.$eval('#ray-result', (e) => { e.textContent = '-'; });
      await page.click('#ray-fire');
      await page.waitForFunction(() => document.querySelector('#ray-result').textContent !== '-');
      const shown = await page.$eval('#ray-result', (e) => ({ ...e.dataset, text: e.textContent }));
      const api = await get(
        `${server.viewer}/viewer/api/raycast?name=known&origin=${origin}&direction=${direction}`,
      );
      assert.equal(api.status, 200);
      const hit = api.json.hits[0];
      if (hit === undefined) {
        assert.equal(shown.hitId, '', shown.text);
        assert.equal(shown.text, 'no hit');
      } else {
        assert.equal(shown.hitId, hit.body_id, shown.text);
        assert.equal(shown.point, xyz(hit.point));
        assert.equal(shown.normal, xyz(hit.normal));
      }
    }
    await page.$eval('#ray-origin', (e) => { e.value = '0,0,50'; });
    await page.$eval('#ray-direction', (e) => { e.value = '0,0,-1'; });
    await page.click('#ray-fire');
    await page.waitForFunction(() => document.querySelector('#ray-result').dataset.hitId === '1');
    await screenshot('viewer-ray');
  });

  test('a sphere cast from the page gets the API\'s hit and draws the swept sphere there', async () => {
    const casts = [['0,0,50', '0,0,-1', '2'], ['40,-25,0', '-1,0,0', '0.5'], ['0,60,0', '1,0,0', '3'],
      ['-25,40,0', '0,-1,0', '3']];
    let last = null;
    for (const [origin, direction, radius] of casts) {
      await page.$eval('#sphere-origin', (e, v) => { e.value = v; }, origin);
      await page.$eval('#sphere-direction', (e, v) => { e.value = v; }, direction);
      await page.$eval('#sphere-radius', (e, v) => { e.value = v; }, radius);
      await page.$eval('#sphere-result', (e) => { e.textContent = '-'; });
      await page.click('#sphere-fire');
      await page.waitForFunction(() => document.querySelector('#sphere-result').textContent !== '-');
      const shown = await page.$eval('#sphere-result', (e) => ({ ...e.dataset, text: e.textContent }));
      const api = await get(`${server.viewer}/viewer/api/spherecast?name=known&origin=${origin}` +
        `&direction=${direction}&radius=${radius}`);
      assert.equal(api.status, 200, api.text);
      const hit = api.json.hits[0];
      if (hit === undefined) {
        assert.equal(shown.hitId, '', shown.text);
        assert.equal(shown.text, 'no hit');
      } else {
        assert.equal(shown.hitId, hit.body_id, shown.text);
        assert.equal(shown.distance, String(hit.distance));
        assert.equal(shown.point, xyz(hit.point));
        assert.equal(shown.normal, xyz(hit.normal));
      }
      last = hit;
    }
    // The last cast falls on the top of the green box (its long side along y: the top at y = 3),
    // so the swept sphere (radius 3) stops with its centre at y = 6.
    assert.equal(last.body_id, '2');
    assert.ok(Math.abs(last.distance - (40 - 6)) < 1e-3, `${last.distance}`);
    const image = await screenshot('viewer-sphere-cast');
    const centre = await project(-25, 40 - last.distance, 0);
    const drawn = count(image, centre, 24, magenta);
    assert.ok(drawn > 20, `${drawn} pixels of the swept sphere around its centre`);
    const away = await project(25, 6, 0);
    assert.equal(count(image, away, 24, magenta), 0);
  });

  test('shows an observer\'s relevant set as the API answers it, and follows the scene', async () => {
    const relevantOf = async (position, radius) => {
      const request = {
        scene: 'known',
        observers: [{ id: 1, enter_radius: radius, max_relevant: 64,
          pose: { position: Object.fromEntries(['x', 'y', 'z'].map((k, i) => [k, position[i]])) } }],
      };
      const api = await get(`${server.viewer}/viewer/api/relevant?request=${encodeURIComponent(JSON.stringify(request))}`);
      assert.equal(api.status, 200, api.text);
      return api.json.sets[0].body_ids.join(',');
    };
    for (const [position, radius] of [[[0, 0, 0], 30], [[0, 0, 0], 20], [[-25, 0, 0], 3], [[0, 60, 0], 1]]) {
      await page.$eval('#observer-position', (e, v) => { e.value = v; }, position.join(','));
      await page.$eval('#observer-radius', (e, v) => { e.value = v; }, String(radius));
      await page.$eval('#observer-result', (e) => { e.textContent = '-'; });
      await page.click('#observer-show');
      await page.waitForFunction(() => document.querySelector('#observer-result').textContent !== '-');
      const shown = await page.$eval('#observer-result', (e) => ({ ...e.dataset, text: e.textContent }));
      assert.equal(shown.ids, await relevantOf(position, radius), shown.text);
    }
    // Shown at the origin within 20: the blue capsule comes in when it moves near, live.
    await page.$eval('#observer-position', (e) => { e.value = '0,0,0'; });
    await page.$eval('#observer-radius', (e) => { e.value = '20'; });
    await page.click('#observer-show');
    await page.waitForFunction(() => document.querySelector('#observer-result').dataset.ids === '1');
    const capsule = KNOWN_BODIES[2];
    await client.upsertBodies({ scene: 'known', bodies: [{ ...capsule, pose: { ...capsule.pose, position: { x: 0, y: -10, z: 0 } } }] });
    await page.waitForFunction(
      () => document.querySelector('#observer-result').dataset.ids === '1,3', { timeout: 10000 });
    await screenshot('viewer-relevant');
    await client.upsertBodies({ scene: 'known', bodies: [capsule] });
    await page.waitForFunction(
      () => document.querySelector('#observer-result').dataset.ids === '1', { timeout: 10000 });
    await page.click('#observer-hide');
  });

  test('a pose update moves the drawn body', async () => {
    const before = await screenshot('viewer-before-move');
    const off = await project(3, 3, 0);
    assert.ok(red(before.pixel(off.x, off.y)), `before: ${before.pixel(off.x, off.y)}`);
    await client.upsertBodies({
      scene: 'known',
      bodies: [{ ...KNOWN_BODIES[0], pose: { position: { x: 0, y: 15, z: 0 } } }],
    });
    await page.waitForFunction(
      () => document.querySelector('#body-1').dataset.position === '0,15,0', { timeout: 10000 });
    const stats = await client.getScene({ scene: 'known' });
    await page.waitForFunction(
      (v) => document.querySelector('#version').textContent === v, {}, String(stats.stats.version));
    const moved = await screenshot('viewer-after-move');
    const now = await project(3, 18, 0);
    assert.ok(red(moved.pixel(now.x, now.y)), `moved to: ${moved.pixel(now.x, now.y)}`);
    assert.ok(dark(moved.pixel(off.x, off.y)), `moved from: ${moved.pixel(off.x, off.y)}`);
  });

  test('a new capsule turned 90 degrees about Z lies along x, caps included', async () => {
    await client.upsertBodies({
      scene: 'known',
      bodies: [{
        id: 5,
        shape: { capsule: { radius: 1.5, half_height: 3 } },
        pose: {
          position: { x: 20, y: -25, z: 0 },
          rotation: { x: 0, y: 0, z: Math.SQRT1_2, w: Math.SQRT1_2 },
        },
        category: 4,
      }],
    });
    await page.waitForFunction(() => document.querySelector('#body-5') !== null, { timeout: 10000 });
    const image = await screenshot('viewer-turned-capsule');
    // Its segment runs from x = 17 to 23 at y = -25; the caps reach x = 15.5 and 24.5.
    for (const [x, y] of [[20, -25], [22.5, -25], [24, -25], [16, -25]]) {
      const at = await project(x, y, 0);
      assert.ok(blue(image.pixel(at.x, at.y)), `(${x}, ${y}): ${image.pixel(at.x, at.y)}`);
    }
    for (const [x, y] of [[20, -22], [20, -28], [25.5, -25]]) {
      const at = await project(x, y, 0);
      assert.ok(dark(image.pixel(at.x, at.y)), `(${x}, ${y}): ${image.pixel(at.x, at.y)}`);
    }
  });

  test('the tick slider draws a moved body where it was at a past tick, then live again', async () => {
    await client.createScene({ scene: 'history', options: { history_ticks: 32 } });
    const writer = client.openUpdateWriter('history');
    await writer.apply({ ops: [{ upsert: KNOWN_BODIES[0] }, { upsert: KNOWN_BODIES[1] }], tick: 1 });
    await writer.apply({ moves: { ids: [1], poses: [0, 15, 0, 0, 0, 0, 1] }, tick: 5 });
    await page.goto(`${server.viewer}/viewer/?scene=history&camera=0,0,80&target=0,0,0`);
    await page.waitForFunction(() => window.viewer?.ready && window.viewer.frames > 3, {
      timeout: 30000,
    });
    const stats = (await client.getScene({ scene: 'history' })).stats;
    assert.equal(await page.$eval('#tick-range', (e) => e.textContent),
      `${stats.oldest_tick}..${stats.tick}`);
    assert.equal(await page.$eval('#time', (e) => e.dataset.mode), 'live');
    // Points inside the ball where it was and where it is, off the centre (where the ray tool
    // draws its hit point below).
    const then = await project(3, -3, 0);
    const now = await project(3, 12, 0);
    const live = await screenshot('viewer-history-live');
    assert.ok(red(live.pixel(now.x, now.y)), `live, now: ${live.pixel(now.x, now.y)}`);
    assert.ok(dark(live.pixel(then.x, then.y)), `live, then: ${live.pixel(then.x, then.y)}`);

    // Drag the slider to tick 1: the ball is drawn at the origin again, live following pauses.
    await page.$eval('#tick-slider', (e) => {
      e.value = '1';
      e.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await page.waitForFunction(() => document.querySelector('#time').dataset.shownTick === '1' &&
      document.querySelector('#body-1').dataset.position === '0,0,0', { timeout: 10000 });
    assert.equal(await page.$eval('#time', (e) => e.dataset.mode), 'past');
    const past = await screenshot('viewer-history-tick-1');
    assert.ok(red(past.pixel(then.x, then.y)), `tick 1, then: ${past.pixel(then.x, then.y)}`);
    assert.ok(dark(past.pixel(now.x, now.y)), `tick 1, now: ${past.pixel(now.x, now.y)}`);
    const box = await project(-25, 0, 0);
    assert.ok(green(past.pixel(box.x, box.y)), `tick 1, box: ${past.pixel(box.x, box.y)}`);
    // A ray from the page is cast at the tick shown: it meets the ball where it was.
    await page.$eval('#ray-origin', (e) => { e.value = '0,0,50'; });
    await page.$eval('#ray-direction', (e) => { e.value = '0,0,-1'; });
    await page.$eval('#ray-result', (e) => { e.textContent = '-'; });
    await page.click('#ray-fire');
    await page.waitForFunction(() => document.querySelector('#ray-result').textContent !== '-');
    const ray = await page.$eval('#ray-result', (e) => ({ ...e.dataset, text: e.textContent }));
    const api = await get(`${server.viewer}/viewer/api/raycast?name=history&origin=0,0,50` +
      '&direction=0,0,-1&at_tick=1');
    assert.equal(api.json.hits[0].body_id, '1');
    assert.equal(ray.hitId, '1', ray.text);
    assert.equal(ray.point, xyz(api.json.hits[0].point));

    // A live move meanwhile widens the slider's range but is not drawn...
    await writer.apply({ moves: { ids: [1], poses: [0, -15, 0, 0, 0, 0, 1] }, tick: 6 });
    await writer.close();
    await page.waitForFunction(() => document.querySelector('#tick-range').textContent.endsWith('..6'),
      { timeout: 10000 });
    assert.equal(await page.$eval('#body-1', (e) => e.dataset.position), '0,0,0');
    // ...until "live": the scene as it is now, followed again.
    await page.click('#tick-live');
    await page.waitForFunction(() => document.querySelector('#time').dataset.mode === 'live' &&
      document.querySelector('#body-1').dataset.position === '0,-15,0', { timeout: 10000 });
    assert.equal(await page.$eval('#tick-shown', (e) => e.textContent), 'live');
    const back = await screenshot('viewer-history-live-again');
    const latest = await project(0, -15, 0);
    assert.ok(red(back.pixel(latest.x, latest.y)), `live again: ${back.pixel(latest.x, latest.y)}`);
    assert.ok(dark(back.pixel(then.x, then.y)), `live again, then: ${back.pixel(then.x, then.y)}`);
    await client.upsertBodies({
      scene: 'history',
      bodies: [{ ...KNOWN_BODIES[0], pose: { position: { x: 15, y: 0, z: 0 } } }],
    });
    await page.waitForFunction(
      () => document.querySelector('#body-1').dataset.position === '15,0,0', { timeout: 10000 });
    assert.deepEqual(page.errors, []);
  });

  test('draws the fence of an open Watch stream and flashes it on an enter event', async () => {
    // The page follows 'history' (the previous test): the ball is at (15, 0, 0).
    const watch = client.watch({
      scene: 'history',
      fences: [{ id: 5, shape: { sphere: { radius: 4 } }, pose: { position: { x: 0, y: 20, z: 0 } } }],
    });
    const messages = watch[Symbol.asyncIterator]();
    try {
      const first = (await messages.next()).value;
      assert.deepEqual(first.snapshot.fences.map((f) => [f.fence_id, f.body_ids]), [['5', []]]);
      await page.waitForFunction(() => document.querySelector('#fences li[data-fence="5"]') !== null,
        { timeout: 10000 });
      const listed = await page.$eval('#fences li[data-fence="5"]', (e) => ({ ...e.dataset }));
      assert.equal(listed.shape, 'sphere');
      assert.equal(listed.enters, '0');
      const image = await screenshot('viewer-fence');
      const fence = await project(0, 20, 0);
      const drawn = count(image, fence, 40, orange);
      assert.ok(drawn > 20, `${drawn} pixels of the fence's wireframe`);
      assert.equal(count(image, await project(0, -20, 0), 40, orange), 0);

      // A real write moves the ball into the fence: the Watch stream reports the enter, and the
      // page flashes the fence and counts it.
      const flashes = await page.evaluate(() => window.viewer.flashes);
      await client.upsertBodies({
        scene: 'history',
        bodies: [{ ...KNOWN_BODIES[0], pose: { position: { x: 0, y: 21, z: 0 } } }],
      });
      const update = (await messages.next()).value.update;
      assert.deepEqual(update.events.map((e) => [e.kind, e.fence_id, e.body_id]),
        [['KIND_ENTER', '5', '1']]);
      await page.waitForFunction(
        () => document.querySelector('#fences li[data-fence="5"]').dataset.enters === '1',
        { timeout: 10000 });
      const after = await page.$eval('#fences li[data-fence="5"]', (e) => ({ ...e.dataset }));
      assert.equal(after.lastBody, '1');
      assert.equal(after.exits, '0');
      assert.equal(await page.evaluate(() => window.viewer.flashes), flashes + 1);
      await screenshot('viewer-fence-entered');
    } finally {
      watch.cancel();
    }
    // Once the Watch stream is closed, its fence is no longer drawn.
    await page.waitForFunction(() => document.querySelector('#fences li[data-fence="5"]') === null,
      { timeout: 10000 });
    assert.deepEqual(page.errors, []);
  });

  test('draws a sample of the casts the server answers on the scene', async () => {
    const before = await page.evaluate(() => window.viewer.samples);
    const answer = await client.raycast({
      scene: 'history',
      ray: { origin: { x: 0, y: 50, z: 0 }, direction: { x: 0, y: -1, z: 0 }, max_distance: 200 },
    });
    // (The page's own casts are answered, and sampled, too: wait for this one.)
    await page.waitForFunction(() => window.viewer.lastSample?.origin.join(',') === '0,50,0',
      { timeout: 10000 });
    const sample = await page.evaluate(() => window.viewer.lastSample);
    assert.deepEqual(sample.origin, [0, 50, 0]);
    assert.equal(sample.hit.id, String(answer.hits[0].body_id));
    assert.ok(Math.abs(sample.hit.distance - answer.hits[0].distance) < 1e-4);
    const shown = Number(await page.$eval('#sample-count', (e) => e.textContent));
    assert.ok(shown >= before + 1, `${shown} samples shown`);
    await screenshot('viewer-sampled-query');
    assert.deepEqual(page.errors, []);
  });
  test('a scene above points_above is drawn as points while the camera is held, as shapes when still', async () => {
    await client.createScene({ scene: 'lod' });
    await client.upsertBodies({ scene: 'lod', bodies: KNOWN_BODIES.slice(0, 3) });
    const lod = await browser.newPage();
    const errors = [];
    lod.on('pageerror', (error) => errors.push(error.message));
    try {
      await lod.goto(`${server.viewer}/viewer/?scene=lod&camera=0,0,80&target=0,0,0&samples=off&points_above=2`);
      await lod.waitForFunction(() => window.viewer?.ready && window.viewer.drawMode === 'shapes', {
        timeout: 30000,
      });
      const shot = async (name) => {
        const frames = await lod.evaluate(() => window.viewer.frames);
        await lod.waitForFunction((n) => window.viewer.frames > n + 2, {}, frames);
        const file = path.join(dir, `${name}.png`);
        await lod.screenshot({ path: file });
        console.log(`screenshot: ${file}`);
        return decodePng(fs.readFileSync(file));
      };
      const at = (x, y, z) => lod.evaluate((p) => window.viewer.project(...p), [x, y, z]);
      const ball = await at(0, 0, 0);
      const box = await at(-25, 0, 0);
      const capsule = await at(0, -25, 0);
      // Inside the box's bounding sphere (radius |(3, 2, 1)| = 3.7) but outside the turned box.
      const beside = await at(-25 + 2.8, 0, 0);
      // The body's own colour (points are unlit): red 0xe03030, green 0x30c040, blue 0x3070e0.
      const near = (want) => (px) => px.slice(0, 3).every((v, i) => Math.abs(v - want[i]) <= 8);

      // Holding the camera (a press on an empty corner, not moved): points.
      await lod.mouse.move(5, 5);
      await lod.mouse.down();
      await lod.waitForFunction(() => window.viewer.drawMode === 'points');
      const points = await shot('viewer-lod-points');
      assert.equal(await lod.evaluate(() => window.viewer.drawMode), 'points');
      assert.ok(near([224, 48, 48])(points.pixel(ball.x, ball.y)), `ball: ${points.pixel(ball.x, ball.y)}`);
      assert.ok(near([48, 192, 64])(points.pixel(box.x, box.y)), `box: ${points.pixel(box.x, box.y)}`);
      assert.ok(near([48, 112, 224])(points.pixel(capsule.x, capsule.y)),
        `capsule: ${points.pixel(capsule.x, capsule.y)}`);
      assert.ok(near([48, 192, 64])(points.pixel(beside.x, beside.y)),
        `beside the box, in its point: ${points.pixel(beside.x, beside.y)}`);

      // Released and still: shapes again (lit, the turned box's outline).
      await lod.mouse.up();
      await lod.waitForFunction(() => window.viewer.drawMode === 'shapes', { timeout: 30000 });
      const shapes = await shot('viewer-lod-shapes');
      assert.ok(red(shapes.pixel(ball.x, ball.y)), `ball: ${shapes.pixel(ball.x, ball.y)}`);
      assert.ok(!near([224, 48, 48])(shapes.pixel(ball.x, ball.y)), `ball lit: ${shapes.pixel(ball.x, ball.y)}`);
      assert.ok(dark(shapes.pixel(beside.x, beside.y)), `beside the box: ${shapes.pixel(beside.x, beside.y)}`);

      // A live pose update is data arriving: points again, then shapes once still.
      await client.upsertBodies({
        scene: 'lod',
        bodies: [{ ...KNOWN_BODIES[0], pose: { position: { x: 0, y: 1, z: 0 } } }],
      });
      await lod.waitForFunction(() => window.viewer.drawMode === 'points', { timeout: 30000 });
      await lod.waitForFunction(() => window.viewer.drawMode === 'shapes', { timeout: 30000 });

      // The main page's scene has 4 bodies, below the default threshold: held, it stays shapes
      // (in front: a page behind gets no animation frames).
      await page.bringToFront();
      await page.mouse.move(5, 5);
      await page.mouse.down();
      await page.waitForFunction((n) => window.viewer.frames > n + 3, {},
        await page.evaluate(() => window.viewer.frames));
      assert.equal(await page.evaluate(() => window.viewer.drawMode), 'shapes');
      await page.mouse.up();

      // detail=points: points even when still.
      await lod.bringToFront();
      await lod.goto(`${server.viewer}/viewer/?scene=lod&camera=0,0,80&target=0,0,0&samples=off&detail=points`);
      await lod.waitForFunction(() => window.viewer?.ready && window.viewer.frames > 3, { timeout: 30000 });
      assert.equal(await lod.evaluate(() => window.viewer.drawMode), 'points');
      assert.deepEqual(errors, []);
    } finally {
      await lod.close();
    }
  });

  test('a points_above that is not a count keeps the default threshold', async () => {
    const odd = await browser.newPage();
    const errors = [];
    odd.on('pageerror', (error) => errors.push(error.message));
    try {
      await odd.bringToFront();  // a page behind gets no animation frames
      // Four navigations: each leaves a stream the server frees a second or two later, and the
      // viewer's threads are few (--viewer_max_streams + 4).
      for (const bad of ['', '-1', '1e400']) {
        // The threshold is read when the page starts (no need to wait for the scene's stream,
        // whose slots the navigations would use up).
        await odd.goto(`${server.viewer}/viewer/?scene=lod&samples=off&points_above=${encodeURIComponent(bad)}`);
        await odd.waitForFunction(() => window.viewer?.pointsAbove !== undefined, { timeout: 30000 });
        assert.equal(await odd.evaluate(() => window.viewer.pointsAbove), 20000, `points_above=${bad}`);
      }
      // A count, however large, is taken as it is.
      await odd.goto(`${server.viewer}/viewer/?scene=lod&samples=off&points_above=18446744073709551615`);
      await odd.waitForFunction(() => window.viewer?.pointsAbove !== undefined, { timeout: 30000 });
      assert.equal(await odd.evaluate(() => window.viewer.pointsAbove), 18446744073709551615);
      assert.deepEqual(errors, []);
    } finally {
      await odd.close();
    }
  });
});
