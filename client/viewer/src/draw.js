// The viewer's drawing of bodies: one InstancedMesh per shape part (a capsule is a cylinder and
// two caps), instance matrices and colours written straight into their typed arrays, and only
// the changed slots uploaded. Triangles per round shape depend on the scene's size: a scene of
// many bodies is drawn with coarse balls so that a frame stays cheap.

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

// Writes T(p) R(q) S(sx, sy, sz) moved by `ty` along the body's Y into `m` at `o` (column-major,
// as three's Matrix4.compose followed by a local translation).
function writeMatrix(m, o, p, q, sx, sy, sz, ty) {
  const [x, y, z, w] = q;
  const x2 = x + x, y2 = y + y, z2 = z + z;
  const xx = x * x2, xy = x * y2, xz = x * z2;
  const yy = y * y2, yz = y * z2, zz = z * z2;
  const wx = w * x2, wy = w * y2, wz = w * z2;
  const r10 = xy - wz, r11 = 1 - (xx + zz), r12 = yz + wx;  // the body's Y axis
  m[o] = (1 - (yy + zz)) * sx;
  m[o + 1] = (xy + wz) * sx;
  m[o + 2] = (xz - wy) * sx;
  m[o + 3] = 0;
  m[o + 4] = r10 * sy;
  m[o + 5] = r11 * sy;
  m[o + 6] = r12 * sy;
  m[o + 7] = 0;
  m[o + 8] = (xz + wy) * sz;
  m[o + 9] = (yz - wx) * sz;
  m[o + 10] = (1 - (xx + yy)) * sz;
  m[o + 11] = 0;
  m[o + 12] = p[0] + r10 * ty;
  m[o + 13] = p[1] + r11 * ty;
  m[o + 14] = p[2] + r12 * ty;
  m[o + 15] = 1;
}

// One shape kind: parts sharing slots (slot i of every part is the same body) and one colour
// attribute. `dims` holds each slot's three dimensions; a part turns them into a scale and an
// offset along the body's Y.
class ShapeGroup {
  constructor(scene3, material, parts) {
    this.scene3 = scene3;
    this.material = material;
    this.parts = parts;  // [{geometry, transform(d0, d1, d2) -> [sx, sy, sz, ty]}]
    this.meshes = [];
    this.ids = [];
    this.capacity = 0;
    this.dims = new Float32Array(0);
    this.dirtyLow = Infinity;  // slots changed since the last upload
    this.dirtyHigh = -1;
    this.changed = false;  // slots added, removed or written since the last upload
    this.grow(1024);
  }

  grow(capacity) {
    const old = this.meshes;
    const color = new THREE.InstancedBufferAttribute(new Float32Array(capacity * 3), 3);
    if (old[0]) color.array.set(old[0].instanceColor.array);
    this.meshes = this.parts.map((part, i) => {
      const mesh = new THREE.InstancedMesh(part.geometry, this.material, capacity);
      mesh.instanceMatrix.setUsage(THREE.DynamicDrawUsage);
      mesh.instanceColor = color;  // one colour per body, shared by its parts
      mesh.frustumCulled = false;
      if (old[i]) {
        mesh.instanceMatrix.array.set(old[i].instanceMatrix.array);
        this.scene3.remove(old[i]);
        old[i].dispose();
      }
      mesh.count = this.ids.length;
      this.scene3.add(mesh);
      return mesh;
    });
    const dims = new Float32Array(capacity * 3);
    dims.set(this.dims);
    this.dims = dims;
    this.capacity = capacity;
    // New attributes are uploaded whole.
    this.dirtyLow = Infinity;
    this.dirtyHigh = -1;
    this.changed = true;
  }

  touch(slot) {
    this.changed = true;
    if (slot < this.dirtyLow) this.dirtyLow = slot;
    if (slot > this.dirtyHigh) this.dirtyHigh = slot;
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
      }
      this.meshes[0].instanceColor.array.copyWithin(slot * 3, last * 3, last * 3 + 3);
      this.dims.copyWithin(slot * 3, last * 3, last * 3 + 3);
      this.touch(slot);
    }
    this.ids.pop();
    for (const mesh of this.meshes) mesh.count = this.ids.length;
    this.changed = true;
    return moved;
  }

  shape(slot, d0, d1, d2, color) {
    this.dims[slot * 3] = d0;
    this.dims[slot * 3 + 1] = d1;
    this.dims[slot * 3 + 2] = d2;
    const c = this.meshes[0].instanceColor.array;
    c[slot * 3] = ((color >> 16) & 0xff) / 255;
    c[slot * 3 + 1] = ((color >> 8) & 0xff) / 255;
    c[slot * 3 + 2] = (color & 0xff) / 255;
  }

  pose(slot, position, rotation) {
    const d = this.dims;
    const d0 = d[slot * 3], d1 = d[slot * 3 + 1], d2 = d[slot * 3 + 2];
    for (let i = 0; i < this.parts.length; i++) {
      const [sx, sy, sz, ty] = this.parts[i].transform(d0, d1, d2);
      writeMatrix(this.meshes[i].instanceMatrix.array, slot * 16, position, rotation, sx, sy, sz, ty);
    }
    this.touch(slot);
  }

  // Marks the changed slots for upload (one range each); false when nothing changed.
  flush() {
    const changed = this.changed;
    this.changed = false;
    if (this.dirtyHigh < 0) return changed;
    const low = this.dirtyLow === Infinity ? 0 : this.dirtyLow;
    const count = this.dirtyHigh - low + 1;
    for (const mesh of this.meshes) {
      mesh.instanceMatrix.clearUpdateRanges();
      mesh.instanceMatrix.addUpdateRange(low * 16, count * 16);
      mesh.instanceMatrix.needsUpdate = true;
    }
    const color = this.meshes[0].instanceColor;
    color.clearUpdateRanges();
    color.addUpdateRange(low * 3, count * 3);
    color.needsUpdate = true;
    this.dirtyLow = Infinity;
    this.dirtyHigh = -1;
    return true;
  }

  triangles() {
    let sum = 0;
    for (const mesh of this.meshes) {
      const g = mesh.geometry;
      sum += (g.index ? g.index.count : g.getAttribute('position').count) / 3 * mesh.count;
    }
    return sum;
  }
}

/**
 * The drawn bodies of a scene. Bodies are objects as the API writes them (`id`, `shape`, its
 * dimensions, `position`, `rotation`, `category`, `static`); `colorOf(body)` gives a body's
 * colour as 0xRRGGBB.
 */
export class BodyDrawing {
  constructor(scene3, { bodyCount = 0, detail = null, colorOf }) {
    this.level = detailFor(bodyCount, detail);
    this.colorOf = colorOf;
    const material = new THREE.MeshLambertMaterial({ color: 0xffffff });
    const g = geometries(this.level);
    const ball = (r) => [r, r, r, 0];
    this.groups = {
      sphere: new ShapeGroup(scene3, material, [{ geometry: g.ball, transform: ball }]),
      box: new ShapeGroup(scene3, material, [
        { geometry: g.box, transform: (x, y, z) => [x, y, z, 0] },
      ]),
      // Dimensions (radius, half height): a cylinder along Y and a cap at each end.
      capsule: new ShapeGroup(scene3, material, [
        { geometry: g.cylinder, transform: (r, h) => [r, h, r, 0] },
        { geometry: g.top, transform: (r, h) => [r, r, r, h] },
        { geometry: g.bottom, transform: (r, h) => [r, r, r, -h] },
      ]),
    };
    this.entries = new Map();  // id -> {body, group, slot}
  }

  get size() { return this.entries.size; }

  /** The body with `id` as last drawn, or undefined. */
  body(id) { return this.entries.get(id)?.body; }

  /** Draws a new body or one whose shape, category or kind changed. */
  upsert(body) {
    const group = this.groups[body.shape] ?? this.groups.sphere;
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
    return changed;
  }

  /** Triangles drawn per frame. */
  triangles() {
    return Object.values(this.groups).reduce((sum, group) => sum + group.triangles(), 0);
  }

  /** Every drawn body. */
  *bodies() {
    for (const entry of this.entries.values()) yield entry.body;
  }
}
