// The collide viewer: draws one scene of a collide-server with three.js (one InstancedMesh per
// shape part; mesh and heightfield bodies with their asset's triangles, each asset read once
// through /viewer/api/asset), follows it live over /viewer/api/stream (server-sent events), and casts rays
// through /viewer/api/raycast and spheres through /viewer/api/spherecast. A slider over the
// scene's retained ticks draws the scene as it was at a past tick (/viewer/api/scene?at_tick=T),
// pausing the live stream until "live" is pressed. The fences of the Watch streams open on the
// scene are drawn as wireframes and flash on their enter events (stream events `watches` and
// `watch_events`). A bounded sample of the casts the server answers on the scene is drawn as
// fading lines (stream event `query_samples`). One observer's relevant set (/viewer/api/relevant,
// the Interest rpc's rules) is marked with green rings and kept up to date while the scene
// moves. The panel names the server that answers (behind a router, the one the page reached):
// its address and, for a replicated scene, whether it owns or follows the scene and how far a
// follower is behind (ScenePage.server_address and .replication, refreshed with the scene list
// every REPLICATION_REFRESH_MS). Read-only: the page never writes to a scene.
//
// The API speaks protobuf's JSON mapping of the server's messages (collide/v1/collide.proto and
// collide/viewer/v1/viewer.proto): bodies and fences are collide.v1.Body and collide.v1.Fence
// (turned into the drawing's plain bodies by bodyFromProto), the casts send a
// collide.v1.RaycastRequest or SphereCastRequest and get a collide.v1.QueryResponse, 64-bit
// integers are strings (ids stay strings; versions and ticks are read as numbers, exact up to
// 2^53).
//
// URL parameters: scene=NAME, token=TOKEN (when the server has a token file),
// camera=x,y,z and target=x,y,z (a fixed view instead of one fitted to the bodies),
// detail=high|medium|low|coarse (triangles per round shape; by default by the scene's size),
// detail=points (every body always drawn as a point), points_above=N (the point level of detail's
// body count, default 20,000), samples=off (sampled queries counted, not drawn), follow=off (the
// scene is read and drawn once and the live stream is never opened, so that the page goes idle:
// `chromium --headless --screenshot` captures it), panel=off (the side panel starts hidden).
//
// Layout: the canvas takes the width the side panel leaves (below the canvas on a narrow
// window), so the panel never covers the scene; the button at the canvas's top right hides and
// shows the panel.
//
// Point level of detail: a scene of more than points_above bodies is drawn as one point sprite
// per body (its bounding sphere's size on screen, its colour) while the camera moves or is
// held, and while data arrives; once the view has been still for STILL_MS, as full shapes.
// `viewer.drawMode` is 'points' or 'shapes'.
//
// A frame is drawn only when something changed (data arrived, the camera moved, the window was
// resized). window.viewer counts animation frames (`frames`), drawn frames (`renders`) and the
// milliseconds spent parsing and applying events and in renderer.render (`timing`).

import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';

import { BodyDrawing } from './draw.js';

const params = new URLSearchParams(window.location.search);
const token = params.get('token');
const FOLLOW = params.get('follow') !== 'off';
const LIST_CAP = 500;
const REPLICATION_REFRESH_MS = 5000;
const PALETTE = [0xe03030, 0x30c040, 0x3070e0, 0xe0c030, 0xc040c0, 0x30c0c0, 0xe08030, 0xe0e0e0];
const STATIC_COLOR = 0x808080;

const $ = (id) => document.getElementById(id);
const state = {
  scene: null, version: 0, tick: 0, ready: false, frames: 0, renders: 0, fps: 0, events: 0,
  eventBytes: 0, lastRay: null, continuous: false, triangles: 0, detail: null, renderTimes: [],
  timing: { parseMs: 0, applyMs: 0, renderMs: 0 },
  lastSphere: null,
  // Ticks: the retained range and what is drawn (`shownTick` null: live).
  oldestTick: 0, retainedTicks: 1, shownTick: null, mode: 'live',
};
window.viewer = state;

function apiUrl(call, query = {}) {
  const search = new URLSearchParams(query);
  if (token) search.set('token', token);
  return `api/${call}?${search}`;
}

// The answer of `call` at `url`; a refusal throws its message (collide.viewer.v1.Error).
async function fetchJson(url, call) {
  const response = await fetch(url);
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ?? `${call}: HTTP ${response.status}`);
  return body;
}

// follow=off reads the scene with JSON modules rather than fetch until it is drawn: a script
// inserted before the page's load event delays that event until it has run, and a module runs
// only once its imports (here the API's answer) have arrived; the code an answer resumes
// inserts the next read before it returns. So the load event waits until the scene is read and
// drawn, and a capture taken at the load event (`chromium --headless --screenshot`) holds it. A
// failed read is read again with fetch, for the refusal's message.
const imports = new Map();
let importCount = 0;
state.imported = (key, answer) => {
  imports.get(key)?.(answer);
  imports.delete(key);
};
function importJson(url, call) {
  return new Promise((resolve, reject) => {
    const key = String(++importCount);
    imports.set(key, resolve);
    const script = document.createElement('script');
    script.type = 'module';
    script.textContent = `import answer from ${JSON.stringify(new URL(url, document.baseURI).href)} ` +
      `with { type: 'json' };\nwindow.viewer.imported(${JSON.stringify(key)}, answer);\n`;
    script.addEventListener('error', () => {
      imports.delete(key);
      fetchJson(url, call).then(resolve, reject);
    });
    document.head.append(script);
  });
}

// How the page reads the API's answers.
let readJson = FOLLOW ? fetchJson : importJson;

function api(call, query) {
  return readJson(apiUrl(call, query), call);
}

// ---------------------------------------------------------------------------------------------
// The API's messages (protobuf's JSON mapping) as the page's plain values.

const vec3 = (v) => [v?.x ?? 0, v?.y ?? 0, v?.z ?? 0];
const quat = (q) => (q ? [q.x ?? 0, q.y ?? 0, q.z ?? 0, q.w ?? 0] : [0, 0, 0, 1]);

// A collide.v1.Shape as `shape` ('sphere' | 'box' | 'capsule' | 'mesh' | 'heightfield') and its
// dimensions (an asset instance: its asset's name and scale).
function shapeOf(shape) {
  for (const kind of ['mesh', 'heightfield']) {
    if (shape?.[kind]) return { shape: kind, asset: shape[kind].asset ?? '', scale: shape[kind].scale ?? 1 };
  }
  if (shape?.box) return { shape: 'box', half_extents: vec3(shape.box.half_extents) };
  if (shape?.capsule) {
    return { shape: 'capsule', radius: shape.capsule.radius ?? 0, half_height: shape.capsule.half_height ?? 0 };
  }
  return { shape: 'sphere', radius: shape?.sphere?.radius ?? 0 };
}

// A collide.v1.Body as the drawing's body: {id, shape, its dimensions, position: [x, y, z],
// rotation: [x, y, z, w], category, static}.
function bodyFromProto(body) {
  return {
    id: body.id,
    ...shapeOf(body.shape),
    position: vec3(body.pose?.position),
    rotation: quat(body.pose?.rotation),
    category: body.category ?? 1,
    static: body.kind === 'BODY_KIND_STATIC',
  };
}

// A collide.v1.Fence as the page draws it: the body's fields and `attached_to` (an id or null).
function fenceFromProto(fence) {
  return { ...bodyFromProto(fence), attached_to: fence.attached_to ?? null };
}

// A collide.viewer.v1.QuerySample as {kind, version, origin, direction, max_distance, radius,
// at_tick, hit: null | {id, distance}}.
function sampleFromProto(sample) {
  const cast = sample.raycast ?? sample.sphere_cast ?? {};
  return {
    kind: sample.sphere_cast ? 'sphere_cast' : 'raycast',
    version: Number(sample.version),
    origin: vec3(cast.origin),
    direction: vec3(cast.direction),
    max_distance: cast.max_distance ?? 0,
    radius: cast.radius ?? 0,
    at_tick: sample.at_tick ?? null,
    hit: sample.hit ? { id: sample.hit.body_id, distance: sample.hit.distance ?? 0 } : null,
  };
}

// An `x,y,z` field of the page as a collide.v1.Vec3: a component that is not a finite number is
// sent as its text, for the server to name in its refusal (`ray.origin.x: invalid value ...`).
function vec3Field(text, name) {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length !== 3) throw new Error(`${name}: "${text}" is not three numbers x,y,z`);
  const [x, y, z] = parts.map((p) => (p !== '' && Number.isFinite(Number(p)) ? Number(p) : p));
  return { x, y, z };
}

// A cast through the viewer's API: the rpc's request as JSON, its QueryResponse's closest hit as
// {id, distance, point, normal} or null, and the version read.
async function cast(call, request) {
  const answer = await api(call, { request: JSON.stringify(request) });
  const hit = answer.hits[0];
  return {
    version: Number(answer.version),
    hit: hit ? {
      id: hit.body_id, distance: hit.distance, point: vec3(hit.point), normal: vec3(hit.normal),
    } : null,
  };
}

// ---------------------------------------------------------------------------------------------
// Drawing: one group per shape kind; a group is one or more instanced parts sharing the slots.

// The canvas fills #view, the part of the window the panel leaves (viewer.css).
const view = $('view');
const viewSize = () => [Math.max(1, view.clientWidth), Math.max(1, view.clientHeight)];
const renderer = new THREE.WebGLRenderer({ antialias: false, preserveDrawingBuffer: true });
renderer.setPixelRatio(1);
renderer.setSize(...viewSize());
renderer.setClearColor(0x111111);
view.appendChild(renderer.domElement);
const scene3 = new THREE.Scene();
const camera = new THREE.PerspectiveCamera(50, viewSize()[0] / viewSize()[1], 0.1, 1e6);
camera.position.set(0, 0, 50);
const controls = new OrbitControls(camera, renderer.domElement);
scene3.add(new THREE.AmbientLight(0xffffff, 1.2));
const sun = new THREE.DirectionalLight(0xffffff, 1.5);
sun.position.set(0.3, 0.5, 1);
scene3.add(sun);

let drawing = null;
let dirty = true;  // something changed since the last drawn frame
const redraw = () => { dirty = true; };

const DETAIL = params.get('detail');
// points_above: a count (decimal digits); anything else (empty, signed, NaN, 1e3) keeps the
// default.
const POINTS_ABOVE = (() => {
  const raw = params.get('points_above');
  return raw !== null && /^[0-9]+$/.test(raw) ? Number(raw) : 20000;
})();
state.pointsAbove = POINTS_ABOVE;
const STILL_MS = 500;
let lastMotion = -Infinity;  // when the camera or the data last changed
let holding = false;  // the camera's controls are held (a drag in progress)
state.drawMode = 'shapes';
controls.addEventListener('change', () => {
  lastMotion = performance.now();
  redraw();
});
controls.addEventListener('start', () => { holding = true; redraw(); });
controls.addEventListener('end', () => {
  holding = false;
  lastMotion = performance.now();
});

// Points while moving or receiving data on a scene of more than POINTS_ABOVE bodies (always with
// detail=points), else shapes; a change of mode draws a frame.
function chooseDrawMode(now) {
  if (!drawing) return;
  const moving = holding || now - lastMotion < STILL_MS;
  const mode = DETAIL === 'points' || (drawing.size > POINTS_ABOVE && moving) ? 'points' : 'shapes';
  if (mode === state.drawMode) return;
  drawing.setMode(mode);
  state.drawMode = mode;
  redraw();
}

// The pages of asset `name` of the scene (/viewer/api/asset), read once per asset by the drawing.
async function loadAsset(kind, name) {
  const pages = [];
  let offset = null;
  do {
    const query = { name: state.scene, asset: name };
    if (offset !== null) query.offset = offset;
    const page = await api('asset', query);
    pages.push(page);
    offset = page.next_offset ?? null;
  } while (offset !== null);
  state.assetsRead += 1;
  return pages;
}
state.assetsRead = 0;

function makeDrawing(bodyCount) {
  drawing = new BodyDrawing(scene3, { bodyCount, detail: DETAIL, colorOf, loadAsset, onChange: redraw });
  drawing.setViewportHeight(renderer.domElement.height);
  state.detail = drawing.level;
}

function colorOf(body) {
  if (body.static) return STATIC_COLOR;
  const category = body.category >>> 0;
  if (category === 0) return 0xb0b0b0;
  const bit = 31 - Math.clz32(category & -category);
  return PALETTE[bit % PALETTE.length];
}

// ---------------------------------------------------------------------------------------------
// The scene's bodies are drawing's; the DOM list holds the first LIST_CAP by id.

const listed = new Map();
$('list-cap').textContent = String(LIST_CAP);

function listText(body) {
  const p = body.position.map((v) => Number(v).toFixed(2)).join(', ');
  return `${body.id} ${body.shape}${body.static ? ' static' : ''} (${p})`;
}

function listBody(body) {
  let item = listed.get(body.id);
  if (!item) {
    if (listed.size >= LIST_CAP) return;
    item = document.createElement('li');
    item.id = `body-${body.id}`;
    item.dataset.id = body.id;
    listed.set(body.id, item);
    $('bodies').appendChild(item);
  }
  item.dataset.shape = body.shape;
  item.dataset.position = body.position.join(',');
  item.dataset.rotation = body.rotation.join(',');
  item.textContent = listText(body);
}

function upsert(body) {
  listBody(drawing.upsert(body));
}

// Moves body `id` to (px, py, pz), and turns it when the rotation is given.
function move(id, px, py, pz, qx, qy, qz, qw) {
  const body = drawing.move(id, px, py, pz, qx, qy, qz, qw);
  if (body && listed.has(body.id)) listBody(body);
}

function removeBody(id) {
  if (!drawing.remove(id)) return;
  const item = listed.get(id);
  if (item) {
    item.remove();
    listed.delete(id);
  }
}

// The answering server's address and its role for the scene (a collide.v1.SceneReplication, or
// undefined for a scene that is not replicated).
function describeRole(replication) {
  if (!replication) return 'not replicated';
  if (replication.owned) return `owner (${replication.state})`;
  const owner = replication.owner || 'unknown';
  return `follower of ${owner} (${replication.state}) · lag ${replication.lag_sequences} ` +
    `messages, ${replication.lag_ms} ms`;
}

function showServer(address, replication) {
  if (address !== undefined) $('server-address').textContent = address || '-';
  $('server-role').textContent = describeRole(replication);
}

// Reads the scene's replication figures again (a follower's lag moves; a failover changes the
// owner) from the scene list, every REPLICATION_REFRESH_MS.
function refreshServer() {
  setInterval(async () => {
    try {
      const { scenes } = await api('scenes');
      const scene = scenes.find((s) => s.name === state.scene);
      if (scene) showServer(undefined, scene.replication);
    } catch {
      // The next refresh tries again; the status line reports the stream's own errors.
    }
  }, REPLICATION_REFRESH_MS);
}

function showVersion() {
  $('version').textContent = String(state.version);
  $('tick').textContent = String(state.tick);
  $('body-count').textContent = String(drawing.size);
}

// The view of the bodies' centres: the camera looks at their middle from above and in front,
// far enough that the sphere around them fits the canvas both ways (narrow canvases included).
function fitCamera() {
  const fixed = params.get('camera');
  const target = params.get('target');
  if (fixed) {
    camera.position.set(...fixed.split(',').map(Number));
    controls.target.set(...(target ? target.split(',').map(Number) : [0, 0, 0]));
    controls.update();
    redraw();
    return;
  }
  const box = new THREE.Box3();
  const point = new THREE.Vector3();
  for (const body of drawing.bodies()) box.expandByPoint(point.fromArray(body.position));
  drawing.expandByLevel(box);
  if (box.isEmpty()) return;
  const center = box.getCenter(new THREE.Vector3());
  // The bodies' own size at the edge: a margin of a tenth, at least 5 units.
  const radius = Math.max(box.getSize(new THREE.Vector3()).length() / 2 * 1.1, 5);
  const vertical = THREE.MathUtils.degToRad(camera.fov);
  const horizontal = 2 * Math.atan(Math.tan(vertical / 2) * camera.aspect);
  const distance = radius / Math.sin(Math.min(vertical, horizontal) / 2);
  camera.position.copy(center).addScaledVector(new THREE.Vector3(0, 0.3, 1).normalize(), distance);
  controls.target.copy(center);
  controls.update();
  redraw();
}

// ---------------------------------------------------------------------------------------------
// Loading and following a scene.

// Reads the scene's bodies (now, or at the end of tick `atTick`) page by page and draws them;
// with `replace`, bodies drawn but not in the answer are removed. Returns the last page.
async function loadBodies({ atTick = null, replace = false } = {}) {
  let after = null;
  let page;
  const seen = new Set();
  do {
    const query = { name: state.scene };
    if (after !== null) query.after = after;
    if (atTick !== null) query.at_tick = atTick;
    page = await api('scene', query);
    for (const body of page.bodies) {
      upsert(bodyFromProto(body));
      seen.add(body.id);
    }
    after = page.next_after ?? null;
  } while (after !== null);
  if (replace) {
    for (const id of [...drawing.entries.keys()]) if (!seen.has(id)) removeBody(id);
  }
  // The geometry of the mesh and heightfield bodies' assets (each read once).
  await drawing.assetsLoaded();
  state.version = Number(page.version);
  state.tick = Number(page.tick);
  state.oldestTick = Math.max(state.oldestTick, Number(page.oldest_tick));
  state.retainedTicks = page.retained_ticks;
  showTicks();
  showServer(page.server_address, page.replication);
  return page;
}

function follow() {
  const pending = [];
  let loaded = false;
  const source = new EventSource(apiUrl('stream', { name: state.scene }));
  state.source = source;
  const apply = (update) => {
    // Drawing a past tick: live changes are not drawn (going live reloads the scene); while it
    // reloads, they wait and those after the reloaded version are applied once it is done.
    if (state.mode !== 'live') {
      if (state.mode === 'returning') returning.push(update);
      followTicks(Number(update.tick));
      return;
    }
    const version = Number(update.version);
    if (version < state.version) return;
    const start = performance.now();
    for (const body of update.bodies) upsert(bodyFromProto(body));
    // Moves that turned: 7 floats per id; moves that kept the rotation: 3.
    const { ids: turnedIds, poses } = update.poses;
    for (let k = 0; k < turnedIds.length; k++) {
      const i = 7 * k;
      move(turnedIds[k], poses[i], poses[i + 1], poses[i + 2], poses[i + 3], poses[i + 4],
        poses[i + 5], poses[i + 6]);
    }
    const { ids: movedIds, positions } = update.positions;
    for (let k = 0; k < movedIds.length; k++) {
      move(movedIds[k], positions[3 * k], positions[3 * k + 1], positions[3 * k + 2]);
    }
    for (const id of update.removed) removeBody(id);
    state.timing.applyMs += performance.now() - start;
    state.version = version;
    followTicks(Number(update.tick));
    showVersion();
    followRelevant();
  };
  state.applyLive = apply;
  source.addEventListener('hello', async () => {
    if (loaded) return;  // a reconnect: keep the drawn state, the stream sends what changed
    try {
      await loadBodies();
      loaded = true;
      showVersion();
      fitCamera();
      for (const update of pending.splice(0)) apply(update);
      $('status').textContent = 'live';
      state.ready = true;
    } catch (error) {
      $('status').textContent = `error: ${error.message}`;
    }
  });
  source.addEventListener('update', (event) => {
    state.events += 1;
    state.eventBytes += event.data.length;
    const start = performance.now();
    const update = JSON.parse(event.data);
    state.timing.parseMs += performance.now() - start;
    if (loaded) apply(update);
    else pending.push(update);
  });
  source.addEventListener('watches', (event) => showFences(JSON.parse(event.data)));
  source.addEventListener('watch_events', (event) => flashFences(JSON.parse(event.data)));
  source.addEventListener('query_samples', (event) => {
    const { samples, dropped } = JSON.parse(event.data);
    showSamples({ samples: samples.map(sampleFromProto), dropped: Number(dropped) });
  });
  source.addEventListener('deleted', () => {
    $('status').textContent = 'the scene was deleted';
    source.close();
  });
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED) $('status').textContent = 'stream closed';
  };
}

// follow=off: the scene as it is now, read and drawn once; no live stream (no watches, no
// sampled casts), so the page goes idle once drawn.
async function loadOnce() {
  await loadBodies();
  showVersion();
  fitCamera();
  $('status').textContent = 'drawn once (follow=off)';
  // Drawn now, as shapes, before the page's load event (importJson).
  drawing.flush();
  lastMotion = -Infinity;
  chooseDrawMode(performance.now());
  render();
  readJson = fetchJson;
  state.ready = true;
}

async function start() {
  try {
    const { scenes } = await api('scenes');
    const select = $('scene');
    for (const { name } of scenes) select.add(new Option(name, name));
    state.scene = params.get('scene') ?? scenes[0]?.name ?? null;
    if (state.scene === null) {
      $('status').textContent = 'no scenes';
      return;
    }
    makeDrawing(scenes.find((s) => s.name === state.scene)?.stats?.body_count ?? 0);
    select.value = state.scene;
    select.addEventListener('change', () => {
      params.set('scene', select.value);
      window.location.search = params.toString();
    });
    state.following = FOLLOW;
    if (FOLLOW) {
      follow();
      refreshServer();
    } else {
      await loadOnce();
    }
  } catch (error) {
    $('status').textContent = `error: ${error.message}`;
  }
}

// ---------------------------------------------------------------------------------------------
// The ray tool.

const rayObjects = new THREE.Group();
scene3.add(rayObjects);

async function fireRay() {
  const origin = $('ray-origin').value.trim();
  const direction = $('ray-direction').value.trim();
  const result = $('ray-result');
  try {
    const request = {
      scene: state.scene,
      ray: { origin: vec3Field(origin, 'origin'), direction: vec3Field(direction, 'direction'), max_distance: 1e10 },
    };
    if (state.shownTick !== null) request.at_tick = String(state.shownTick);
    const answer = await cast('raycast', request);
    rayObjects.clear();
    const from = new THREE.Vector3(...origin.split(',').map(Number));
    const dir = new THREE.Vector3(...direction.split(',').map(Number)).normalize();
    const hit = answer.hit;
    const to = hit ? new THREE.Vector3(...hit.point) : from.clone().addScaledVector(dir, 1000);
    rayObjects.add(new THREE.Line(new THREE.BufferGeometry().setFromPoints([from, to]),
      new THREE.LineBasicMaterial({ color: 0xffff00 })));
    if (hit) {
      const dot = new THREE.Mesh(new THREE.SphereGeometry(0.3, 12, 8),
        new THREE.MeshBasicMaterial({ color: 0xffff00 }));
      dot.position.copy(to);
      rayObjects.add(dot);
      rayObjects.add(new THREE.ArrowHelper(new THREE.Vector3(...hit.normal), to, 3, 0x00ffff));
      result.dataset.hitId = hit.id;
      result.dataset.point = hit.point.join(',');
      result.dataset.normal = hit.normal.join(',');
      result.textContent = `hit ${hit.id} at ${hit.distance.toFixed(3)}: point ` +
        `(${hit.point.map((v) => v.toFixed(3)).join(', ')}), normal ` +
        `(${hit.normal.map((v) => v.toFixed(3)).join(', ')})`;
    } else {
      result.dataset.hitId = '';
      result.dataset.point = '';
      result.dataset.normal = '';
      result.textContent = 'no hit';
    }
    result.dataset.version = String(answer.version);
    state.lastRay = answer;
    redraw();
  } catch (error) {
    result.dataset.hitId = '';
    result.textContent = `error: ${error.message}`;
  }
}
$('ray-fire').addEventListener('click', fireRay);

// ---------------------------------------------------------------------------------------------
// Past ticks: the slider spans the retained ticks (oldest_tick..tick); moving it draws the scene
// at that tick and pauses live following, "live" reloads the scene as it is now and follows it
// again. Ticks (strings in the API's JSON) are read as numbers: exact up to 2^53.

const slider = $('tick-slider');

function showTicks() {
  slider.min = String(state.oldestTick);
  slider.max = String(state.tick);
  if (state.mode === 'live') slider.value = String(state.tick);
  $('tick-range').textContent = `${state.oldestTick}..${state.tick}`;
  $('tick-shown').textContent = state.shownTick === null ? 'live' : String(state.shownTick);
  $('time').dataset.mode = state.mode;
  $('time').dataset.shownTick = state.shownTick === null ? '' : String(state.shownTick);
}

// A live update named tick `tick`: the retained range moves with it.
function followTicks(tick) {
  state.tick = Math.max(state.tick, tick);
  state.oldestTick = Math.max(state.oldestTick, state.tick - state.retainedTicks + 1);
  showTicks();
}

// One load at a time; a slider moved meanwhile loads its last position next.
const returning = [];
let tickLoad = null;
let wantedTick = null;
async function showTick(tick) {
  wantedTick = tick;
  if (tickLoad) return;
  while (wantedTick !== null) {
    const next = wantedTick;
    wantedTick = null;
    state.mode = next === 'live' ? 'returning' : 'past';
    returning.length = 0;
    showTicks();
    tickLoad = loadBodies({ atTick: next === 'live' ? null : next, replace: true });
    try {
      await tickLoad;
      state.shownTick = next === 'live' ? null : next;
      if (next === 'live' && wantedTick === null) {
        state.mode = 'live';
        for (const update of returning.splice(0)) state.applyLive(update);
      }
      const now = FOLLOW ? 'live' : 'now (follow=off)';
      $('status').textContent = state.mode === 'live' ? now : `tick ${next} (paused)`;
    } catch (error) {
      if (state.mode === 'returning') state.mode = 'past';  // "live" can be pressed again
      returning.length = 0;
      $('status').textContent = `error: ${error.message}`;
    } finally {
      tickLoad = null;
    }
    showTicks();
    showVersion();
  }
}

slider.addEventListener('input', () => showTick(Number(slider.value)));
$('tick-live').addEventListener('click', () => showTick('live'));
state.showTick = showTick;

// ---------------------------------------------------------------------------------------------
// The sphere cast tool: the swept sphere drawn where it first touches, the hit point and normal.

const sphereObjects = new THREE.Group();
scene3.add(sphereObjects);

async function castSphere() {
  const origin = $('sphere-origin').value.trim();
  const direction = $('sphere-direction').value.trim();
  const radius = $('sphere-radius').value.trim();
  const result = $('sphere-result');
  try {
    const request = {
      scene: state.scene,
      cast: {
        origin: vec3Field(origin, 'origin'),
        direction: vec3Field(direction, 'direction'),
        max_distance: 1e10,
        radius: radius !== '' && Number.isFinite(Number(radius)) ? Number(radius) : radius,
      },
    };
    if (state.shownTick !== null) request.at_tick = String(state.shownTick);
    const answer = await cast('spherecast', request);
    sphereObjects.clear();
    const from = new THREE.Vector3(...origin.split(',').map(Number));
    const dir = new THREE.Vector3(...direction.split(',').map(Number)).normalize();
    const hit = answer.hit;
    const centre = hit ? from.clone().addScaledVector(dir, hit.distance)
      : from.clone().addScaledVector(dir, 1000);
    sphereObjects.add(new THREE.Line(new THREE.BufferGeometry().setFromPoints([from, centre]),
      new THREE.LineBasicMaterial({ color: 0xff80ff })));
    if (hit) {
      const swept = new THREE.Mesh(new THREE.SphereGeometry(Number(radius), 16, 12),
        new THREE.MeshBasicMaterial({ color: 0xff80ff, wireframe: true }));
      swept.position.copy(centre);
      sphereObjects.add(swept);
      const point = new THREE.Vector3(...hit.point);
      const dot = new THREE.Mesh(new THREE.SphereGeometry(0.3, 12, 8),
        new THREE.MeshBasicMaterial({ color: 0xff80ff }));
      dot.position.copy(point);
      sphereObjects.add(dot);
      sphereObjects.add(new THREE.ArrowHelper(new THREE.Vector3(...hit.normal), point, 3, 0x00ffff));
      result.dataset.hitId = hit.id;
      result.dataset.distance = String(hit.distance);
      result.dataset.point = hit.point.join(',');
      result.dataset.normal = hit.normal.join(',');
      result.textContent = `hit ${hit.id} at ${hit.distance.toFixed(3)}: point ` +
        `(${hit.point.map((v) => v.toFixed(3)).join(', ')}), normal ` +
        `(${hit.normal.map((v) => v.toFixed(3)).join(', ')})`;
    } else {
      for (const key of ['hitId', 'distance', 'point', 'normal']) result.dataset[key] = '';
      result.textContent = 'no hit';
    }
    result.dataset.version = String(answer.version);
    state.lastSphere = answer;
    redraw();
  } catch (error) {
    result.dataset.hitId = '';
    result.textContent = `error: ${error.message}`;
  }
}
$('sphere-fire').addEventListener('click', castSphere);

// ---------------------------------------------------------------------------------------------
// One observer's relevant set (/viewer/api/relevant: the Interest rpc's rules, as a stream's
// first set): the bodies an observer at a position, or riding a body, would receive, each marked
// by a green ring, the enter radius as a green wireframe. While shown it is asked again after
// live updates (at most every RELEVANT_MS).

const RELEVANT_COLOR = 0x40ff80;
const RELEVANT_MS = 250;
const relevantObjects = new THREE.Group();
scene3.add(relevantObjects);
state.relevant = null;  // {observer, ids, version, asked} while shown

function observerFromFields() {
  const radius = $('observer-radius').value.trim();
  const max = $('observer-max').value.trim();
  const body = $('observer-body').value.trim();
  const number = (text) => (text !== '' && Number.isFinite(Number(text)) ? Number(text) : text);
  const observer = { id: 1, enter_radius: number(radius) };
  if (max !== '') observer.max_relevant = number(max);
  if (body !== '') observer.attached_to = body;
  else observer.pose = { position: vec3Field($('observer-position').value.trim(), 'position') };
  return observer;
}

function placeRelevant() {
  relevantObjects.clear();
  const shown = state.relevant;
  if (!shown) return;
  const material = new THREE.MeshBasicMaterial({ color: RELEVANT_COLOR, wireframe: true });
  let centre = null;
  if (shown.observer.attached_to !== undefined) {
    const host = drawing.body(Number(shown.observer.attached_to));
    if (host) centre = new THREE.Vector3(...host.position);
  } else {
    centre = new THREE.Vector3(...vec3(shown.observer.pose.position));
  }
  if (centre) {
    const range = new THREE.Mesh(new THREE.SphereGeometry(Number(shown.observer.enter_radius), 24, 16),
      material);
    range.position.copy(centre);
    relevantObjects.add(range);
  }
  for (const id of shown.ids) {
    const body = drawing.body(Number(id));
    if (!body) continue;
    const ring = new THREE.Mesh(new THREE.TorusGeometry(1, 0.12, 6, 24),
      new THREE.MeshBasicMaterial({ color: RELEVANT_COLOR }));
    ring.position.set(...body.position);
    relevantObjects.add(ring);
  }
  redraw();
}

async function showRelevant() {
  const result = $('observer-result');
  try {
    const observer = state.relevant?.observer ?? observerFromFields();
    const answer = await api('relevant', {
      request: JSON.stringify({ scene: state.scene, observers: [observer] }),
    });
    const ids = answer.sets[0]?.body_ids ?? [];
    state.relevant = { observer, ids, version: Number(answer.version), asked: performance.now() };
    result.dataset.ids = ids.join(',');
    result.dataset.version = String(answer.version);
    result.textContent = `${ids.length} relevant at version ${answer.version}` +
      (ids.length > 0 ? `: ${ids.slice(0, 20).join(', ')}${ids.length > 20 ? ', ...' : ''}` : '');
    placeRelevant();
  } catch (error) {
    state.relevant = null;
    relevantObjects.clear();
    result.dataset.ids = '';
    result.textContent = `error: ${error.message}`;
    redraw();
  }
}

// After a live update: ask again, at most every RELEVANT_MS.
function followRelevant() {
  const shown = state.relevant;
  if (!shown || shown.pending) return;
  const wait = Math.max(0, shown.asked + RELEVANT_MS - performance.now());
  shown.pending = true;
  setTimeout(() => {
    if (state.relevant === shown) showRelevant();
  }, wait);
}

$('observer-show').addEventListener('click', () => {
  state.relevant = null;
  showRelevant();
});
$('observer-hide').addEventListener('click', () => {
  state.relevant = null;
  relevantObjects.clear();
  $('observer-result').textContent = '-';
  $('observer-result').dataset.ids = '';
  redraw();
});

// ---------------------------------------------------------------------------------------------
// Watch fences: every fence of the scene's open Watch streams as an orange wireframe (attached
// fences ride on their host body as drawn); an enter flashes the fence white and its list entry.

const FENCE_COLOR = 0xffa000;
const FLASH_COLOR = 0xffffff;
const FLASH_MS = 1500;
const fenceObjects = new THREE.Group();
scene3.add(fenceObjects);
const fences = new Map();  // "watch/fence" -> {spec, mesh, item, flashUntil}
state.watchEvents = 0;
state.flashes = 0;
state.droppedWatchEvents = 0;

function fenceGeometry(f) {
  if (f.shape === 'box') return new THREE.BoxGeometry(...f.half_extents.map((h) => 2 * h));
  if (f.shape === 'capsule') return new THREE.CapsuleGeometry(f.radius, 2 * f.half_height, 4, 12);
  return new THREE.SphereGeometry(f.radius, 16, 12);
}

function poseMatrix(position, rotation) {
  return new THREE.Matrix4().compose(new THREE.Vector3(...position),
    new THREE.Quaternion(...rotation), new THREE.Vector3(1, 1, 1));
}

// Places a fence (on its host when attached); true when its drawing changed.
function placeFence(entry) {
  const { spec, mesh } = entry;
  let world = poseMatrix(spec.position, spec.rotation);
  if (spec.attached_to !== null) {
    const host = drawing.body(spec.attached_to);
    const visible = host !== undefined;
    if (mesh.visible !== visible) {
      mesh.visible = visible;
      if (!visible) return true;
    }
    if (!host) return false;
    world = poseMatrix(host.position, host.rotation).multiply(world);
  }
  if (mesh.matrix.equals(world)) return false;
  mesh.matrix.copy(world);
  return true;
}

function showFences({ watches: listed, truncated }) {
  const watches = listed.map(({ watch, fences: specs }) => ({ watch, fences: specs.map(fenceFromProto) }));
  for (const entry of fences.values()) {
    fenceObjects.remove(entry.mesh);
    entry.mesh.geometry.dispose();
    entry.mesh.material.dispose();
    entry.item.remove();
  }
  fences.clear();
  for (const { watch, fences: specs } of watches) {
    for (const spec of specs) {
      const mesh = new THREE.Mesh(fenceGeometry(spec),
        new THREE.MeshBasicMaterial({ color: FENCE_COLOR, wireframe: true }));
      mesh.matrixAutoUpdate = false;
      fenceObjects.add(mesh);
      const item = document.createElement('li');
      item.id = `fence-${watch}-${spec.id}`;
      Object.assign(item.dataset, { watch, fence: spec.id, shape: spec.shape, enters: '0', exits: '0' });
      item.textContent = `watch ${watch} fence ${spec.id} ${spec.shape} ` +
        `(${spec.position.map((v) => Number(v).toFixed(2)).join(', ')})` +
        (spec.attached_to !== null ? ` on ${spec.attached_to}` : '');
      $('fences').appendChild(item);
      const entry = { spec, mesh, item, flashUntil: 0 };
      placeFence(entry);
      fences.set(`${watch}/${spec.id}`, entry);
    }
  }
  $('fence-count').textContent = String(fences.size) + (truncated ? '+' : '');
  redraw();
  $('watches').dataset.truncated = String(truncated);
}

function flashFences({ events: listed, dropped: missed }) {
  const now = performance.now();
  const dropped = Number(missed);
  // collide.viewer.v1.FenceEvent: the watch, the version and the Watch stream's own event.
  const events = listed.map(({ watch, version, event }) => ({
    watch, version: Number(version), fence: event.fence_id, body: event.body_id,
    kind: event.kind === 'KIND_ENTER' ? 'enter' : 'exit',
  }));
  for (const e of events) {
    const entry = fences.get(`${e.watch}/${e.fence}`);
    if (!entry) continue;
    const key = e.kind === 'enter' ? 'enters' : 'exits';
    entry.item.dataset[key] = String(Number(entry.item.dataset[key]) + 1);
    entry.item.dataset.lastBody = e.body;
    if (e.kind === 'enter') {
      entry.flashUntil = now + FLASH_MS;
      entry.item.classList.add('flash');
      entry.mesh.material.color.set(FLASH_COLOR);
      state.flashes += 1;
    }
  }
  redraw();
  state.watchEvents += events.length;
  state.droppedWatchEvents += dropped;
  $('watch-event-count').textContent = String(state.watchEvents) +
    (state.droppedWatchEvents > 0 ? ` (${state.droppedWatchEvents} missed)` : '');
}

function updateFences(now) {
  for (const entry of fences.values()) {
    if (entry.spec.attached_to !== null && placeFence(entry)) redraw();
    if (entry.flashUntil !== 0 && now >= entry.flashUntil) {
      entry.flashUntil = 0;
      entry.item.classList.remove('flash');
      entry.mesh.material.color.set(FENCE_COLOR);
      redraw();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Sampled queries: the casts the server answered on this scene (at most 20 a second), each a
// green line from its origin to its hit (or its end), a sphere cast with its ball where it
// stops, fading out over two seconds; at most 200 drawn at once.

const SAMPLE_MS = 2000;
const MAX_DRAWN_SAMPLES = 200;
const SAMPLE_COLOR = 0x40ff80;
const sampleObjects = new THREE.Group();
scene3.add(sampleObjects);
const drawnSamples = [];
state.samples = 0;
state.droppedSamples = 0;
state.lastSample = null;

function disposeSample({ group }) {
  sampleObjects.remove(group);
  group.traverse((object) => {
    object.geometry?.dispose();
    object.material?.dispose();
  });
}

// samples=off in the URL counts them without drawing them (a still picture for pixel tests).
const DRAW_SAMPLES = params.get('samples') !== 'off';

function showSamples({ samples, dropped }) {
  const now = performance.now();
  for (const sample of samples) {
    state.lastSample = sample;
    if (!DRAW_SAMPLES) continue;
    const from = new THREE.Vector3(...sample.origin);
    const length = sample.hit ? sample.hit.distance : Math.min(sample.max_distance, 1000);
    const to = from.clone().addScaledVector(new THREE.Vector3(...sample.direction), length);
    const group = new THREE.Group();
    group.add(new THREE.Line(new THREE.BufferGeometry().setFromPoints([from, to]),
      new THREE.LineBasicMaterial({ color: SAMPLE_COLOR, transparent: true })));
    if (sample.kind === 'sphere_cast' && sample.radius > 0) {
      const ball = new THREE.Mesh(new THREE.SphereGeometry(sample.radius, 12, 8),
        new THREE.MeshBasicMaterial({ color: SAMPLE_COLOR, wireframe: true, transparent: true }));
      ball.position.copy(to);
      group.add(ball);
    }
    sampleObjects.add(group);
    drawnSamples.push({ group, born: now });
  }
  while (drawnSamples.length > MAX_DRAWN_SAMPLES) disposeSample(drawnSamples.shift());
  redraw();
  state.samples += samples.length;
  state.droppedSamples += dropped;
  $('sample-count').textContent = String(state.samples) +
    (state.droppedSamples > 0 ? ` (${state.droppedSamples} missed)` : '');
}

function fadeSamples(now) {
  if (drawnSamples.length === 0) return;
  redraw();  // fading: a frame each time until the last is gone
  while (drawnSamples.length > 0 && now - drawnSamples[0].born >= SAMPLE_MS) {
    disposeSample(drawnSamples.shift());
  }
  for (const { group, born } of drawnSamples) {
    const opacity = 1 - (now - born) / SAMPLE_MS;
    group.traverse((object) => {
      if (object.material) object.material.opacity = opacity;
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Render loop: draws a frame when something changed (every frame with `continuous`, for
// measuring); drawn frames per second measured over each second.

let frameCount = 0;
let frameStart = performance.now();

function render() {
  dirty = false;
  const start = performance.now();
  renderer.render(scene3, camera);
  state.timing.renderMs += performance.now() - start;
  state.renders += 1;
  state.renderTimes.push(start);
  if (state.renderTimes.length > 1000) state.renderTimes.splice(0, 500);
  frameCount += 1;
}

function frame(now) {
  controls.update();
  updateFences(now);
  fadeSamples(now);
  if (drawing?.flush()) {
    dirty = true;
    lastMotion = performance.now();
  }
  chooseDrawMode(performance.now());
  if (dirty || state.continuous) render();
  state.frames += 1;
  if (now - frameStart >= 1000) {
    state.fps = (frameCount * 1000) / (now - frameStart);
    $('fps').textContent = state.fps.toFixed(1);
    frameCount = 0;
    frameStart = now;
    if (drawing) state.triangles = drawing.triangles();
  }
  requestAnimationFrame(frame);
}
requestAnimationFrame(frame);

// The canvas follows #view's size: the window's, and the panel shown or hidden.
function resize() {
  const [width, height] = viewSize();
  if (width === renderer.domElement.width && height === renderer.domElement.height) return;
  camera.aspect = width / height;
  camera.updateProjectionMatrix();
  renderer.setSize(width, height);
  drawing?.setViewportHeight(renderer.domElement.height);
  redraw();
}
new ResizeObserver(resize).observe(view);

// The panel's button: hides the panel (the canvas takes the whole window) and shows it again.
const toggle = $('panel-toggle');
function showPanel(shown) {
  document.body.classList.toggle('panel-hidden', !shown);
  toggle.setAttribute('aria-expanded', String(shown));
  toggle.textContent = shown ? '\u203a' : '\u2039';
  toggle.title = shown ? 'hide the panel' : 'show the panel';
  resize();
}
toggle.addEventListener('click', () => showPanel(document.body.classList.contains('panel-hidden')));
showPanel(params.get('panel') !== 'off');

// Where a world point is drawn, in CSS pixels of the page (for tests).
state.project = (x, y, z) => {
  const v = new THREE.Vector3(x, y, z).project(camera);
  const box = renderer.domElement.getBoundingClientRect();
  return { x: box.left + (v.x + 1) / 2 * box.width, y: box.top + (1 - v.y) / 2 * box.height };
};
state.webgl = renderer.getContext() !== null;

start();
