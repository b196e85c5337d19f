// The collide viewer: draws one scene of a collide-server with three.js (one InstancedMesh per
// shape part), follows it live over /viewer/api/stream (server-sent events), and casts rays
// through /viewer/api/raycast. Read-only: the page never writes to a scene.
//
// URL parameters: scene=NAME, token=TOKEN (when the server has a token file),
// camera=x,y,z and target=x,y,z (a fixed view instead of one fitted to the bodies).

import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';

const params = new URLSearchParams(window.location.search);
const token = params.get('token');
const LIST_CAP = 500;
const PALETTE = [0xe03030, 0x30c040, 0x3070e0, 0xe0c030, 0xc040c0, 0x30c0c0, 0xe08030, 0xe0e0e0];
const STATIC_COLOR = 0x808080;

const $ = (id) => document.getElementById(id);
const state = {
  scene: null, version: 0, tick: 0, ready: false, frames: 0, fps: 0, events: 0, eventBytes: 0,
  lastRay: null,
};
window.viewer = state;

function apiUrl(call, query = {}) {
  const search = new URLSearchParams(query);
  if (token) search.set('token', token);
  return `api/${call}?${search}`;
}

async function api(call, query) {
  const response = await fetch(apiUrl(call, query));
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ?? `${call}: HTTP ${response.status}`);
  return body;
}

// ---------------------------------------------------------------------------------------------
// Drawing: one group per shape kind; a group is one or more instanced parts sharing the slots.

const renderer = new THREE.WebGLRenderer({ antialias: false, preserveDrawingBuffer: true });
renderer.setPixelRatio(1);
renderer.setSize(window.innerWidth, window.innerHeight);
renderer.setClearColor(0x111111);
$('view').appendChild(renderer.domElement);
const scene3 = new THREE.Scene();
const camera = new THREE.PerspectiveCamera(50, window.innerWidth / window.innerHeight, 0.1, 1e6);
camera.position.set(0, 0, 50);
const controls = new OrbitControls(camera, renderer.domElement);
scene3.add(new THREE.AmbientLight(0xffffff, 1.2));
const sun = new THREE.DirectionalLight(0xffffff, 1.5);
sun.position.set(0.3, 0.5, 1);
scene3.add(sun);

const material = new THREE.MeshLambertMaterial({ color: 0xffffff });
const identity = new THREE.Matrix4();

class ShapeGroup {
  // parts: [{geometry, local(body) -> Matrix4 in the body's frame}]
  constructor(parts) {
    this.parts = parts;
    this.capacity = 0;
    this.meshes = [];
    this.ids = [];
    this.grow(1024);
  }

  grow(capacity) {
    const old = this.meshes;
    this.meshes = this.parts.map((part, i) => {
      const mesh = new THREE.InstancedMesh(part.geometry, material, capacity);
      mesh.instanceMatrix.setUsage(THREE.DynamicDrawUsage);
      mesh.setColorAt(0, new THREE.Color());
      mesh.frustumCulled = false;
      if (old[i]) {
        mesh.instanceMatrix.array.set(old[i].instanceMatrix.array);
        mesh.instanceColor.array.set(old[i].instanceColor.array);
        scene3.remove(old[i]);
        old[i].dispose();
      }
      mesh.count = this.ids.length;
      scene3.add(mesh);
      return mesh;
    });
    this.capacity = capacity;
  }

  add(id) {
    if (this.ids.length === this.capacity) this.grow(this.capacity * 2);
    this.ids.push(id);
    for (const mesh of this.meshes) mesh.count = this.ids.length;
    return this.ids.length - 1;
  }

  // Moves the last slot into `slot`; returns the id that moved (or null).
  remove(slot) {
    const last = this.ids.length - 1;
    let moved = null;
    if (slot !== last) {
      moved = this.ids[last];
      this.ids[slot] = moved;
      for (const mesh of this.meshes) {
        mesh.instanceMatrix.array.copyWithin(slot * 16, last * 16, last * 16 + 16);
        mesh.instanceColor.array.copyWithin(slot * 3, last * 3, last * 3 + 3);
      }
    }
    this.ids.pop();
    for (const mesh of this.meshes) {
      mesh.count = this.ids.length;
      mesh.instanceMatrix.needsUpdate = true;
      mesh.instanceColor.needsUpdate = true;
    }
    return moved;
  }

  set(slot, body, world) {
    const m = new THREE.Matrix4();
    this.parts.forEach((part, i) => {
      m.multiplyMatrices(world, part.local(body));
      this.meshes[i].setMatrixAt(slot, m);
      this.meshes[i].setColorAt(slot, colorOf(body));
      this.meshes[i].instanceMatrix.needsUpdate = true;
      this.meshes[i].instanceColor.needsUpdate = true;
    });
  }
}

const scaled = (x, y, z, ty = 0) => new THREE.Matrix4().makeScale(x, y, z).setPosition(0, ty, 0);
// Triangles per round shape by scene size (detail=high|medium|low in the URL overrides): a
// large scene is drawn with coarse balls so that it stays interactive.
const DETAIL = { high: [24, 16], medium: [12, 8], low: [8, 5] };
let groups = null;
function makeGroups(bodyCount) {
  const level = DETAIL[params.get('detail')] ??
    (bodyCount > 20000 ? DETAIL.low : bodyCount > 2000 ? DETAIL.medium : DETAIL.high);
  const [segments, rings] = level;
  const ball = new THREE.SphereGeometry(1, segments, rings);
  groups = {
    sphere: new ShapeGroup([{ geometry: ball, local: (b) => scaled(b.radius, b.radius, b.radius) }]),
    box: new ShapeGroup([
      { geometry: new THREE.BoxGeometry(2, 2, 2), local: (b) => scaled(...b.half_extents) },
    ]),
    // A capsule: a cylinder along local Y and a ball at each end of its segment.
    capsule: new ShapeGroup([
      { geometry: new THREE.CylinderGeometry(1, 1, 2, segments, 1, true), local: (b) => scaled(b.radius, b.half_height, b.radius) },
      { geometry: ball, local: (b) => scaled(b.radius, b.radius, b.radius, b.half_height) },
      { geometry: ball, local: (b) => scaled(b.radius, b.radius, b.radius, -b.half_height) },
    ]),
  };
}

function colorOf(body) {
  if (body.static) return new THREE.Color(STATIC_COLOR);
  const category = body.category >>> 0;
  if (category === 0) return new THREE.Color(0xb0b0b0);
  const bit = 31 - Math.clz32(category & -category);
  return new THREE.Color(PALETTE[bit % PALETTE.length]);
}

function worldMatrix(position, rotation) {
  return new THREE.Matrix4().compose(
    new THREE.Vector3(...position),
    new THREE.Quaternion(...rotation),
    new THREE.Vector3(1, 1, 1),
  );
}

// ---------------------------------------------------------------------------------------------
// The scene's bodies: id -> {body, group, slot}; the DOM list holds the first LIST_CAP by id.

const bodies = new Map();
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
  const entry = bodies.get(body.id);
  const group = groups[body.shape];
  if (entry && entry.group !== group) removeBody(body.id);
  let current = bodies.get(body.id);
  if (!current) {
    current = { body, group, slot: group.add(body.id) };
    bodies.set(body.id, current);
  }
  current.body = body;
  group.set(current.slot, body, worldMatrix(body.position, body.rotation));
  listBody(body);
}

function move(pose) {
  const [id, px, py, pz, qx, qy, qz, qw] = pose;
  const entry = bodies.get(id);
  if (!entry) return;
  entry.body.position = [px, py, pz];
  entry.body.rotation = [qx, qy, qz, qw];
  entry.group.set(entry.slot, entry.body, worldMatrix(entry.body.position, entry.body.rotation));
  if (listed.has(id)) listBody(entry.body);
}

function removeBody(id) {
  const entry = bodies.get(id);
  if (!entry) return;
  const moved = entry.group.remove(entry.slot);
  if (moved !== null) {
    const other = bodies.get(moved);
    other.slot = entry.slot;
  }
  bodies.delete(id);
  const item = listed.get(id);
  if (item) {
    item.remove();
    listed.delete(id);
  }
}

function showVersion() {
  $('version').textContent = String(state.version);
  $('tick').textContent = String(state.tick);
  $('body-count').textContent = String(bodies.size);
}

function fitCamera() {
  const fixed = params.get('camera');
  const target = params.get('target');
  if (fixed) {
    camera.position.set(...fixed.split(',').map(Number));
    controls.target.set(...(target ? target.split(',').map(Number) : [0, 0, 0]));
    controls.update();
    return;
  }
  const box = new THREE.Box3();
  for (const { body } of bodies.values()) box.expandByPoint(new THREE.Vector3(...body.position));
  if (box.isEmpty()) return;
  const center = box.getCenter(new THREE.Vector3());
  const size = Math.max(box.getSize(new THREE.Vector3()).length(), 10);
  camera.position.copy(center).add(new THREE.Vector3(0, size * 0.3, size));
  controls.target.copy(center);
  controls.update();
}

// ---------------------------------------------------------------------------------------------
// Loading and following a scene.

async function loadBodies() {
  let after = null;
  let page;
  do {
    page = await api('scene', after === null ? { name: state.scene } : { name: state.scene, after });
    for (const body of page.bodies) upsert(body);
    after = page.next_after;
  } while (after !== null);
  state.version = page.version;
  state.tick = page.tick;
}

function follow() {
  const pending = [];
  let loaded = false;
  const source = new EventSource(apiUrl('stream', { name: state.scene }));
  state.source = source;
  const apply = (update) => {
    if (update.version < state.version) return;
    for (const body of update.bodies) upsert(body);
    for (const pose of update.poses) move(pose);
    for (const id of update.removed) removeBody(id);
    state.version = update.version;
    state.tick = update.tick;
    showVersion();
  };
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
    const update = JSON.parse(event.data);
    if (loaded) apply(update);
    else pending.push(update);
  });
  source.addEventListener('deleted', () => {
    $('status').textContent = 'the scene was deleted';
    source.close();
  });
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED) $('status').textContent = 'stream closed';
  };
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
    makeGroups(scenes.find((s) => s.name === state.scene)?.bodies ?? 0);
    select.value = state.scene;
    select.addEventListener('change', () => {
      params.set('scene', select.value);
      window.location.search = params.toString();
    });
    follow();
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
    const answer = await api('raycast', { name: state.scene, origin, direction });
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
  } catch (error) {
    result.dataset.hitId = '';
    result.textContent = `error: ${error.message}`;
  }
}
$('ray-fire').addEventListener('click', fireRay);

// ---------------------------------------------------------------------------------------------
// Render loop; frames per second measured over each second.

let frameCount = 0;
let frameStart = performance.now();
function frame(now) {
  controls.update();
  renderer.render(scene3, camera);
  state.frames += 1;
  frameCount += 1;
  if (now - frameStart >= 1000) {
    state.fps = (frameCount * 1000) / (now - frameStart);
    $('fps').textContent = state.fps.toFixed(1);
    frameCount = 0;
    frameStart = now;
  }
  requestAnimationFrame(frame);
}
requestAnimationFrame(frame);

window.addEventListener('resize', () => {
  camera.aspect = window.innerWidth / window.innerHeight;
  camera.updateProjectionMatrix();
  renderer.setSize(window.innerWidth, window.innerHeight);
});

// Where a world point is drawn, in CSS pixels of the page (for tests).
state.project = (x, y, z) => {
  const v = new THREE.Vector3(x, y, z).project(camera);
  return { x: (v.x + 1) / 2 * window.innerWidth, y: (1 - v.y) / 2 * window.innerHeight };
};
state.webgl = renderer.getContext() !== null;

start();
