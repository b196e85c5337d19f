// The viewer's drawing of bodies: one instanced mesh per shape part (a capsule is a cylinder and
// two caps) over per-instance attributes (position, rotation, dimensions, colour) that the parts
// of a shape share, written straight into their typed arrays; only the changed slots are
// uploaded. Triangles per round shape depend on the scene's size: a scene of
// many bodies is drawn with coarse balls so that a frame stays cheap. Each shape kind also has a
// point drawing over the same attributes (one point sprite per body, as wide on screen as the
// body's bounding sphere, in the body's colour, unlit): `setMode('points')` draws that instead.
// Mesh and heightfield bodies (level geometry: few bodies, many triangles) are drawn apart, one
// three.js mesh per body over its asset's geometry, shared by the bodies that place the asset and
// read once per asset (`loadAsset`); they are always drawn as shapes, both sides of each triangle.

import * as THREE from 'three';

/** Detail levels: [segments, rings] of a ball; `coarse` is a 20-triangle icosahedron. */
const DETAIL = { high: [24, 16], medium: [12, 8], low: [8, 5], coarse: null };

/** The level for a scene of `bodyCount` bodies, or the one named by `name` (URL `detail=`). */
export function detailFor(bodyCount, name) {
  if (name && name in DETAIL) return name;
  if (bodyCount > 5000) return 'coarse';
  if (bodyCount > 1000) return 'medium';
  return 'high';
}

// An icosahedron with shared vertices (12 vertices, 20 triangles, normals along the radius):
// three's IcosahedronGeometry repeats each vertex per face (60 vertices, flat normals).
function icosahedron() {
  const flat = new THREE.IcosahedronGeometry(1, 0).getAttribute('position');
  const positions = [];
  const index = [];
  const seen = new Map();
  for (let i = 0; i < flat.count; i++) {
    const x = flat.getX(i), y = flat.getY(i), z = flat.getZ(i);
    const key = `${x.toFixed(4)},${y.toFixed(4)},${z.toFixed(4)}`;
    let k = seen.get(key);
    if (k === undefined) {
      k = positions.length / 3;
      seen.set(key, k);
      positions.push(x, y, z);
    }
    index.push(k);
  }
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute('position', new THREE.Float32BufferAttribute(positions, 3));
  geometry.setAttribute('normal', new THREE.Float32BufferAttribute(positions, 3));
  geometry.setIndex(index);
  return geometry;
}

// Geometries of a level: a ball, a box, and a capsule's open cylinder (radius 1, height 2 along
// Y) and its two caps (half balls, or whole balls at the coarse level: fewer vertices).
function geometries(level) {
  const box = new THREE.BoxGeometry(2, 2, 2);
  if (DETAIL[level] === null) {
    const ball = icosahedron();
    return { ball, box, cylinder: new THREE.CylinderGeometry(1, 1, 2, 6, 1, true), top: ball, bottom: ball };
  }
  const [segments, rings] = DETAIL[level];
  const half = Math.max(2, Math.ceil(rings / 2));
  return {
    ball: new THREE.SphereGeometry(1, segments, rings),
    box,
    cylinder: new THREE.CylinderGeometry(1, 1, 2, segments, 1, true),
    top: new THREE.SphereGeometry(1, segments, half, 0, Math.PI * 2, 0, Math.PI / 2),
    bottom: new THREE.SphereGeometry(1, segments, half, 0, Math.PI * 2, Math.PI / 2, Math.PI / 2),
  };
}

// The vertex shader's part of drawing a body: a body is its position, rotation (a quaternion) and
// three dimensions, per instance; each part of a shape turns the dimensions into a scale and an
// offset along the body's Y (`PARTS`). Normals are scaled by the inverse scale, then rotated.
const PARTS = {
  ball: { scale: 'vec3(instanceDims.x)', offset: '0.0' },
  box: { scale: 'instanceDims', offset: '0.0' },
  cylinder: { scale: 'instanceDims.xyx', offset: '0.0' },  // (radius, half height)
  top: { scale: 'vec3(instanceDims.x)', offset: 'instanceDims.y' },
  bottom: { scale: 'vec3(instanceDims.x)', offset: '-instanceDims.y' },
};

function partMaterial(kind) {
  const { scale, offset } = PARTS[kind];
  const material = new THREE.MeshLambertMaterial({ color: 0xffffff, vertexColors: true });
  material.onBeforeCompile = (shader) => {
    shader.vertexShader = shader.vertexShader
      .replace('#include <common>', `#include <common>
attribute vec3 instancePosition;
attribute vec4 instanceRotation;
attribute vec3 instanceDims;
vec3 rotateByQuaternion(vec4 q, vec3 v) {
  vec3 t = 2.0 * cross(q.xyz, v);
  return v + q.w * t + cross(q.xyz, t);
}`)
      .replace('#include <beginnormal_vertex>', `vec3 partScale = ${scale};
vec3 objectNormal = rotateByQuaternion(instanceRotation,
                                       normalize(normal / max(partScale, vec3(1e-6))));`)
      .replace('#include <begin_vertex>', `vec3 transformed = instancePosition +
    rotateByQuaternion(instanceRotation, position * partScale + vec3(0.0, ${offset}, 0.0));`);
  };
  material.customProgramCacheKey = () => `collide-body-${kind}`;
  return material;
}

// The bounding radius of a body of each shape kind from its dimensions (GLSL).
const BOUNDING_RADIUS = {
  sphere: 'bodyDims.x',
  box: 'length(bodyDims)',
  capsule: 'bodyDims.x + bodyDims.y',  // (radius, half height)
};

// A body as one point sprite: a disc of the body's bounding radius projected at its centre. The
// points are one vertex per body, not instances: SwiftShader's cost grows with instances drawn.
function pointMaterial(kind) {
  return new THREE.ShaderMaterial({
    vertexColors: true,
    uniforms: { viewportHeight: { value: 1 } },
    vertexShader: `attribute vec3 bodyDims;
uniform float viewportHeight;
varying vec3 vColor;
void main() {
  vec4 mv = modelViewMatrix * vec4(position, 1.0);
  gl_Position = projectionMatrix * mv;
  float radius = ${BOUNDING_RADIUS[kind]};
  gl_PointSize = max(2.0, radius * projectionMatrix[1][1] * viewportHeight / max(-mv.z, 1e-6));
  vColor = color;
}`,
    fragmentShader: `varying vec3 vColor;
void main() {
  vec2 d = gl_PointCoord - vec2(0.5);
  if (dot(d, d) > 0.25) discard;
  gl_FragColor = linearToOutputTexel(vec4(vColor, 1.0));
}`,
  });
}

// A per-instance attribute with the range of slots changed since its last upload, and the same
// array as a per-vertex attribute (`plain`, for the points).
class SlotAttribute {
  constructor(itemSize) {
    this.itemSize = itemSize;
    this.attribute = null;
    this.plain = null;
    this.low = Infinity;
    this.high = -1;
  }

  grow(capacity) {
    const next = new THREE.InstancedBufferAttribute(new Float32Array(capacity * this.itemSize),
      this.itemSize);
    next.setUsage(THREE.DynamicDrawUsage);
    if (this.attribute) next.array.set(this.attribute.array);
    this.attribute = next;  // uploaded whole when first drawn
    this.plain = new THREE.BufferAttribute(next.array, this.itemSize);
    this.plain.setUsage(THREE.DynamicDrawUsage);
    this.low = Infinity;
    this.high = -1;
  }

  get array() { return this.attribute.array; }

  touch(slot) {
    if (slot < this.low) this.low = slot;
    if (slot > this.high) this.high = slot;
  }

  copy(to, from) {
    const n = this.itemSize;
    this.attribute.array.copyWithin(to * n, from * n, from * n + n);
    this.touch(to);
  }

  flush() {
    if (this.high < 0) return;
    const n = this.itemSize;
    for (const a of [this.attribute, this.plain]) {
      a.clearUpdateRanges();
      a.addUpdateRange(this.low * n, (this.high - this.low + 1) * n);
      a.needsUpdate = true;
    }
    this.low = Infinity;
    this.high = -1;
  }

  // The next upload is the whole array (a drawing not drawn meanwhile missed ranges).
  uploadWhole() {
    for (const a of [this.attribute, this.plain]) {
      a.clearUpdateRanges();
      a.needsUpdate = true;
    }
    this.low = Infinity;
    this.high = -1;
  }
}

const scratchColor = new THREE.Color();

// One shape kind: parts (meshes) drawing the same instances, whose attributes they share: per
// body 7 floats of pose, 3 of dimensions and 3 of colour (a 4x4 matrix per part was 16 each).
class ShapeGroup {
  constructor(scene3, shape, parts) {
    this.scene3 = scene3;
    this.parts = parts;  // [{geometry, kind (of PARTS)}]
    this.materials = parts.map((part) => partMaterial(part.kind));
    this.pointMaterial = pointMaterial(shape);
    this.mode = 'shapes';
    this.points = null;
    this.meshes = [];
    this.ids = [];
    this.capacity = 0;
    this.position = new SlotAttribute(3);
    this.rotation = new SlotAttribute(4);
    this.dims = new SlotAttribute(3);
    this.color = new SlotAttribute(3);
    this.attributes = [this.position, this.rotation, this.dims, this.color];
    this.changed = false;  // slots added, removed or written since the last upload
    this.grow(1024);
  }

  grow(capacity) {
    for (const a of this.attributes) a.grow(capacity);
    const old = this.meshes;
    this.meshes = this.parts.map((part, i) => {
      const geometry = new THREE.InstancedBufferGeometry();
      geometry.setIndex(part.geometry.getIndex());
      geometry.setAttribute('position', part.geometry.getAttribute('position'));
      geometry.setAttribute('normal', part.geometry.getAttribute('normal'));
      geometry.setAttribute('instancePosition', this.position.attribute);
      geometry.setAttribute('instanceRotation', this.rotation.attribute);
      geometry.setAttribute('instanceDims', this.dims.attribute);
      geometry.setAttribute('color', this.color.attribute);
      geometry.instanceCount = this.ids.length;
      const mesh = new THREE.Mesh(geometry, this.materials[i]);
      mesh.frustumCulled = false;
      mesh.visible = this.mode === 'shapes';
      if (old[i]) {
        this.scene3.remove(old[i]);
        old[i].geometry.dispose();  // frees the old instance buffers (the shape's are re-sent)
      }
      this.scene3.add(mesh);
      return mesh;
    });
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute('position', this.position.plain);
    geometry.setAttribute('bodyDims', this.dims.plain);
    geometry.setAttribute('color', this.color.plain);
    geometry.setDrawRange(0, this.ids.length);
    if (this.points) {
      this.scene3.remove(this.points);
      this.points.geometry.dispose();
    }
    this.points = new THREE.Points(geometry, this.pointMaterial);
    this.points.frustumCulled = false;
    this.points.visible = this.mode === 'points';
    this.scene3.add(this.points);
    this.capacity = capacity;
    this.changed = true;
  }

  setMode(mode) {
    if (mode === this.mode) return;
    this.mode = mode;
    for (const a of this.attributes) a.uploadWhole();
    for (const mesh of this.meshes) mesh.visible = mode === 'shapes';
    this.points.visible = mode === 'points';
  }

  setCount() {
    for (const mesh of this.meshes) mesh.geometry.instanceCount = this.ids.length;
    this.points.geometry.setDrawRange(0, this.ids.length);
    this.changed = true;
  }

  add(id) {
    if (this.ids.length === this.capacity) this.grow(this.capacity * 2);
    this.ids.push(id);
    this.setCount();
    return this.ids.length - 1;
  }

  // Moves the last slot into `slot`; returns the id that moved (or null).
  remove(slot) {
    const last = this.ids.length - 1;
    let moved = null;
    if (slot !== last) {
      moved = this.ids[last];
      this.ids[slot] = moved;
      for (const a of this.attributes) a.copy(slot, last);
    }
    this.ids.pop();
    this.setCount();
    return moved;
  }

  shape(slot, d0, d1, d2, color) {
    const d = this.dims.array;
    d[slot * 3] = d0;
    d[slot * 3 + 1] = d1;
    d[slot * 3 + 2] = d2;
    this.dims.touch(slot);
    scratchColor.setHex(color);  // to the renderer's linear colour space
    const c = this.color.array;
    c[slot * 3] = scratchColor.r;
    c[slot * 3 + 1] = scratchColor.g;
    c[slot * 3 + 2] = scratchColor.b;
    this.color.touch(slot);
    this.changed = true;
  }

  pose(slot, position, rotation) {
    const p = this.position.array;
    p[slot * 3] = position[0];
    p[slot * 3 + 1] = position[1];
    p[slot * 3 + 2] = position[2];
    this.position.touch(slot);
    const q = this.rotation.array;
    q[slot * 4] = rotation[0];
    q[slot * 4 + 1] = rotation[1];
    q[slot * 4 + 2] = rotation[2];
    q[slot * 4 + 3] = rotation[3];
    this.rotation.touch(slot);
    this.changed = true;
  }

  // Marks the changed slots of each attribute for upload (one range each); false when nothing
  // changed.
  flush() {
    const changed = this.changed;
    this.changed = false;
    for (const a of this.attributes) a.flush();
    return changed;
  }

  triangles() {
    let sum = 0;
    for (const part of this.parts) {
      const g = part.geometry;
      sum += (g.index ? g.index.count : g.getAttribute('position').count) / 3 * this.ids.length;
    }
    return sum;
  }
}

/**
 * The geometry of a mesh asset from its /viewer/api/asset pages (collide.viewer.v1.AssetPage):
 * each triangle its three corners, flat normals.
 */
export function meshGeometry(pages) {
  let count = 0;
  for (const page of pages) count += page.positions.length;
  const positions = new Float32Array(count);
  let at = 0;
  for (const page of pages) {
    positions.set(page.positions, at);
    at += page.positions.length;
  }
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute('position', new THREE.BufferAttribute(positions, 3));
  geometry.computeVertexNormals();
  return geometry;
}

/**
 * The geometry of a heightfield asset from its pages: sample (i, j) at (j x spacing_x, height,
 * i x spacing_z), each cell two triangles split on its (i, j)-(i + 1, j + 1) diagonal, as the
 * server's; holes left out; a brightness per sample by its height. Pages overlap by one row.
 */
export function heightfieldGeometry(pages) {
  const size = pages[0].asset.heightfield;
  const rows = Number(size.rows);
  const columns = Number(size.columns);
  const sx = size.spacing_x;
  const sz = size.spacing_z;
  const positions = new Float32Array(rows * columns * 3);
  const holes = new Set();
  for (const page of pages) {
    const first = Number(page.offset);
    page.heights.forEach((h, k) => {
      const i = first + Math.floor(k / columns);
      const j = k % columns;
      const v = 3 * (i * columns + j);
      positions[v] = j * sx;
      positions[v + 1] = h;
      positions[v + 2] = i * sz;
    });
    for (const cell of page.hole_cells) holes.add(Number(cell));
  }
  const cells = (rows - 1) * (columns - 1);
  const index = new Uint32Array((cells - holes.size) * 6);
  let n = 0;
  for (let i = 0; i + 1 < rows; i++) {
    for (let j = 0; j + 1 < columns; j++) {
      if (holes.has(i * (columns - 1) + j)) continue;
      const a = i * columns + j;
      const b = a + columns;
      index.set([a, b, b + 1, a, b + 1, a + 1], n);
      n += 6;
    }
  }
  // Relief: each sample's brightness from 0.7 (the lowest) to 1.15 (the highest), multiplying the
  // body's colour.
  let low = Infinity;
  let high = -Infinity;
  for (let v = 1; v < positions.length; v += 3) {
    low = Math.min(low, positions[v]);
    high = Math.max(high, positions[v]);
  }
  const colors = new Float32Array(positions.length);
  for (let v = 0; v < positions.length; v += 3) {
    const shade = 0.7 + 0.45 * (high > low ? (positions[v + 1] - low) / (high - low) : 0.5);
    colors[v] = colors[v + 1] = colors[v + 2] = shade;
  }
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute('position', new THREE.BufferAttribute(positions, 3));
  geometry.setAttribute('color', new THREE.BufferAttribute(colors, 3));
  geometry.setIndex(new THREE.BufferAttribute(index, 1));
  geometry.computeVertexNormals();
  return geometry;
}

// Mesh and heightfield bodies: one three.js mesh per body (its slot is its id) over its asset's
// geometry, posed and scaled by the body; drawn once the geometry has arrived.
class LevelGroup {
  constructor(scene3, geometryOf, onLoaded) {
    this.scene3 = scene3;
    this.geometryOf = geometryOf;  // (kind, asset) -> Promise<BufferGeometry | null>
    this.onLoaded = onLoaded;
    this.objects = new Map();  // id -> {mesh, key}
    this.changed = false;
  }

  add(id) {
    const mesh = new THREE.Mesh(new THREE.BufferGeometry(),
      new THREE.MeshLambertMaterial({ side: THREE.DoubleSide }));
    mesh.matrixAutoUpdate = true;
    this.scene3.add(mesh);
    this.objects.set(id, { mesh, key: null });
    this.changed = true;
    return id;
  }

  remove(id) {
    const object = this.objects.get(id);
    this.scene3.remove(object.mesh);
    object.mesh.material.dispose();
    this.objects.delete(id);
    this.changed = true;
    return null;
  }

  // The body's asset, scale and colour.
  level(id, body, color) {
    const object = this.objects.get(id);
    object.mesh.material.color.setHex(color);
    object.mesh.scale.setScalar(body.scale);
    const key = `${body.shape}:${body.asset}`;
    if (object.key !== key) {
      object.key = key;
      object.mesh.geometry = new THREE.BufferGeometry();
      this.geometryOf(body.shape, body.asset).then((geometry) => {
        if (this.objects.get(id) !== object || object.key !== key || !geometry) return;
        object.mesh.geometry = geometry;
        object.mesh.material.vertexColors = geometry.getAttribute('color') !== undefined;
        object.mesh.material.needsUpdate = true;
        this.changed = true;
        this.onLoaded();
      });
    }
    this.changed = true;
  }

  pose(id, position, rotation) {
    const { mesh } = this.objects.get(id);
    mesh.position.fromArray(position);
    mesh.quaternion.fromArray(rotation);
    this.changed = true;
  }

  flush() {
    const changed = this.changed;
    this.changed = false;
    return changed;
  }

  triangles() {
    let sum = 0;
    for (const { mesh } of this.objects.values()) {
      const g = mesh.geometry;
      const position = g.getAttribute('position');
      sum += (g.index ? g.index.count : position ? position.count : 0) / 3;
    }
    return sum;
  }

  // Grows `box` by the world box of every drawn body.
  expandBox(box) {
    for (const { mesh } of this.objects.values()) {
      if (mesh.geometry.getAttribute('position')) box.expandByObject(mesh);
    }
  }
}

/**
 * The drawn bodies of a scene. Bodies are objects as the API writes them (`id`, `shape`, its
 * dimensions, `position`, `rotation`, `category`, `static`; a `mesh` or `heightfield` body its
 * `asset` and `scale`); `colorOf(body)` gives a body's colour as 0xRRGGBB. `loadAsset(kind,
 * name)` reads an asset's pages (a promise of the AssetPage messages), once per asset; a body of
 * an asset that cannot be read is not drawn. `onChange()` is called when a geometry arrives.
 */
export class BodyDrawing {
  constructor(scene3, { bodyCount = 0, detail = null, colorOf, loadAsset = null, onChange = () => {} }) {
    this.level = detailFor(bodyCount, detail);
    this.colorOf = colorOf;
    const g = geometries(this.level);
    this.groups = {
      sphere: new ShapeGroup(scene3, 'sphere', [{ geometry: g.ball, kind: 'ball' }]),
      box: new ShapeGroup(scene3, 'box', [{ geometry: g.box, kind: 'box' }]),
      // Dimensions (radius, half height): a cylinder along Y and a cap at each end.
      capsule: new ShapeGroup(scene3, 'capsule', [
        { geometry: g.cylinder, kind: 'cylinder' },
        { geometry: g.top, kind: 'top' },
        { geometry: g.bottom, kind: 'bottom' },
      ]),
    };
    this.assets = new Map();  // `${kind}:${name}` -> Promise<BufferGeometry | null>
    this.levelGroup = new LevelGroup(scene3, (kind, name) => this.assetGeometry(kind, name), onChange);
    this.loadAsset = loadAsset;
    this.entries = new Map();  // id -> {body, group, slot}
  }

  // The geometry of asset `name` (`kind` 'mesh' or 'heightfield'), read once.
  assetGeometry(kind, name) {
    const key = `${kind}:${name}`;
    let geometry = this.assets.get(key);
    if (!geometry) {
      geometry = (this.loadAsset ? this.loadAsset(kind, name) : Promise.reject(new Error('no loader')))
        .then((pages) => (kind === 'heightfield' ? heightfieldGeometry(pages) : meshGeometry(pages)))
        .catch((error) => {
          console.warn(`asset ${name}: ${error.message}`);
          return null;
        });
      this.assets.set(key, geometry);
    }
    return geometry;
  }

  /** Resolves once every asset asked for so far has arrived (or failed). */
  async assetsLoaded() {
    await Promise.all(this.assets.values());
  }

  /** Grows `box` (a THREE.Box3) by the world boxes of the drawn mesh and heightfield bodies. */
  expandByLevel(box) {
    this.levelGroup.expandBox(box);
  }

  get size() { return this.entries.size; }

  /** Draws every body as its shape (`'shapes'`) or as one point sprite (`'points'`). */
  setMode(mode) {
    for (const group of Object.values(this.groups)) group.setMode(mode);
  }

  /** The drawing buffer's height in pixels (sizes the point sprites). */
  setViewportHeight(pixels) {
    for (const group of Object.values(this.groups)) {
      group.pointMaterial.uniforms.viewportHeight.value = pixels;
    }
  }

  /** The body with `id` as last drawn, or undefined. */
  body(id) { return this.entries.get(id)?.body; }

  /** Draws a new body or one whose shape, category or kind changed. */
  upsert(body) {
    const isLevel = body.shape === 'mesh' || body.shape === 'heightfield';
    const group = isLevel ? this.levelGroup : this.groups[body.shape] ?? this.groups.sphere;
    let entry = this.entries.get(body.id);
    if (entry && entry.group !== group) {
      this.remove(body.id);
      entry = undefined;
    }
    if (!entry) {
      entry = { body, group, slot: group.add(body.id) };
      this.entries.set(body.id, entry);
    }
    entry.body = body;
    if (isLevel) {
      group.level(entry.slot, body, this.colorOf(body));
      group.pose(entry.slot, body.position, body.rotation);
      return entry.body;
    }
    const dims = body.shape === 'box' ? body.half_extents
      : body.shape === 'capsule' ? [body.radius, body.half_height, 0] : [body.radius, 0, 0];
    group.shape(entry.slot, dims[0], dims[1], dims[2], this.colorOf(body));
    group.pose(entry.slot, body.position, body.rotation);
    return entry.body;
  }

  /**
   * Moves a drawn body (a pose of the stream; without the rotation, the body keeps its own);
   * returns the body, or undefined if unknown.
   */
  move(id, px, py, pz, qx, qy, qz, qw) {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    const { position, rotation } = entry.body;
    position[0] = px;
    position[1] = py;
    position[2] = pz;
    if (qx !== undefined) {
      rotation[0] = qx;
      rotation[1] = qy;
      rotation[2] = qz;
      rotation[3] = qw;
    }
    entry.group.pose(entry.slot, position, rotation);
    return entry.body;
  }

  /** Stops drawing a body; false if it was not drawn. */
  remove(id) {
    const entry = this.entries.get(id);
    if (!entry) return false;
    const moved = entry.group.remove(entry.slot);
    if (moved !== null) this.entries.get(moved).slot = entry.slot;
    this.entries.delete(id);
    return true;
  }

  /** Queues the changes since the last call for upload; true when there were any. */
  flush() {
    let changed = false;
    for (const group of Object.values(this.groups)) changed = group.flush() || changed;
    return this.levelGroup.flush() || changed;
  }

  /** Triangles drawn per frame (as points: those of the mesh and heightfield bodies). */
  triangles() {
    const level = this.levelGroup.triangles();
    if (this.groups.sphere.mode === 'points') return level;
    return Object.values(this.groups).reduce((sum, group) => sum + group.triangles(), level);
  }

  /** Every drawn body. */
  *bodies() {
    for (const entry of this.entries.values()) yield entry.body;
  }
}
