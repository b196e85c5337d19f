/**
 * An independent brute-force oracle for scenes of spheres: ray casts, sphere casts and sphere
 * overlaps computed in double precision from the definitions, for comparison with the server.
 */

/** A seeded generator of uniform numbers in [0, 1) (mulberry32). */
export function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sub = (a, b) => ({ x: a.x - b.x, y: a.y - b.y, z: a.z - b.z });
const dot = (a, b) => a.x * b.x + a.y * b.y + a.z * b.z;
const normalize = (a) => {
  const length = Math.sqrt(dot(a, a));
  return { x: a.x / length, y: a.y / length, z: a.z / length };
};

/**
 * Where a ray first meets a ball: the smallest t >= 0 with |origin + t * dir - center| <= radius
 * (dir normalised), 0 when the origin is inside, or null when none is within maxDistance.
 */
export function rayBall(origin, direction, maxDistance, center, radius) {
  const d = normalize(direction);
  const m = sub(origin, center);
  const c = dot(m, m) - radius * radius;
  if (c <= 0) return 0;
  // solve: |m + t d|^2 = r^2, i.e. t^2 + 2 b t + c = 0 with b = dot(m, d)
  const b = dot(m, d);
  if (b >= 0) return null;
  const discriminant = b * b - c;
  if (discriminant < 0) return null;
  const t = -b - Math.sqrt(discriminant);
  return t <= maxDistance ? t : null;
}

/** Whether a query with `filter` may hit a body with `category` and `mask` (defaults: all). */
export function passes(filter, body) {
  const queryCategory = filter?.category ?? 0xffffffff;
  const queryMask = filter?.mask ?? 0xffffffff;
  const bodyCategory = body.category ?? 1;
  const bodyMask = body.mask ?? 0xffffffff;
  return (queryMask & bodyCategory) !== 0 && (bodyMask & queryCategory) !== 0;
}

/**
 * Every ball a sphere of `castRadius` swept along the ray touches, as [{id, distance}] sorted by
 * (distance, id). castRadius 0 is a ray cast.
 * @param {Array<{id: number, center: object, radius: number, category?: number,
 *                 mask?: number}>} balls
 */
export function castAll(balls, origin, direction, maxDistance, castRadius, filter) {
  const hits = [];
  for (const ball of balls) {
    if (!passes(filter, ball)) continue;
    const t = rayBall(origin, direction, maxDistance, ball.center, ball.radius + castRadius);
    if (t !== null) hits.push({ id: ball.id, distance: t });
  }
  return hits.sort((a, b) => a.distance - b.distance || a.id - b.id);
}

/** The ids of the balls a ball (center, radius) overlaps, sorted. */
export function overlapAll(balls, center, radius, filter) {
  return balls
    .filter((ball) => passes(filter, ball))
    .filter((ball) => {
      const m = sub(ball.center, center);
      return Math.sqrt(dot(m, m)) <= ball.radius + radius;
    })
    .map((ball) => ball.id)
    .sort((a, b) => a - b);
}

/**
 * Checks a cast's hits (as the server returns them) against the oracle: every ball the oracle
 * hits with a margin to spare is hit at the oracle's distance (within `tolerance`), no ball is hit
 * that the oracle misses by more than the margin, and the hits are in (distance, id) order.
 * Returns a description of the first difference, or null.
 */
export function compareCast(
  hits,
  balls,
  origin,
  direction,
  maxDistance,
  castRadius,
  filter,
  { margin = 1e-3, tolerance = 1e-3 } = {},
) {
  const exact = castAll(balls, origin, direction, maxDistance, castRadius, filter);
  const required = new Set(
    castAll(balls, origin, direction, maxDistance - margin, castRadius - margin, filter).map(
      (hit) => hit.id,
    ),
  );
  const allowed = new Set(
    castAll(balls, origin, direction, maxDistance + margin, castRadius + margin, filter).map(
      (hit) => hit.id,
    ),
  );
  const got = new Map(hits.map((hit) => [Number(hit.body_id), hit.distance]));
  for (const hit of exact) {
    if (!required.has(hit.id)) continue;
    if (!got.has(hit.id)) return `body ${hit.id} not hit (oracle distance ${hit.distance})`;
    if (Math.abs(got.get(hit.id) - hit.distance) > tolerance * Math.max(1, hit.distance)) {
      return `body ${hit.id} at distance ${got.get(hit.id)}, oracle ${hit.distance}`;
    }
  }
  for (const id of got.keys()) {
    if (!allowed.has(id)) return `body ${id} hit, the oracle misses it`;
  }
  for (let i = 1; i < hits.length; i++) {
    const [a, b] = [hits[i - 1], hits[i]];
    if (
      a.distance > b.distance ||
      (a.distance === b.distance && BigInt(a.body_id) > BigInt(b.body_id))
    ) {
      return `hits ${i - 1} and ${i} out of (distance, id) order`;
    }
  }
  return null;
}
