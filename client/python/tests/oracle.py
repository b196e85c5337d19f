"""Brute-force answers for queries against spheres, independent of the server's engine."""

from __future__ import annotations

import math
from typing import List, Optional, Sequence, Tuple

Vec = Tuple[float, float, float]

# A sphere whose answer is within this of changing (grazing rays, touching spheres) is left out
# of comparisons: float32 on the server may decide it either way.
MARGIN = 1e-3


def sub(a: Sequence[float], b: Sequence[float]) -> Vec:
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def normalized(a: Sequence[float]) -> Vec:
    n = math.sqrt(dot(a, a))
    return (a[0] / n, a[1] / n, a[2] / n)


def ray_sphere(origin: Sequence[float], direction: Sequence[float], max_distance: float,
               center: Sequence[float], radius: float) -> Tuple[Optional[float], bool]:
    """The distance at which a ray first touches a ball (0 when it starts inside), or None, and
    whether the answer is within MARGIN of flipping."""
    d = normalized(direction)
    oc = sub(origin, center)
    b = dot(oc, d)
    c = dot(oc, oc) - radius * radius
    if c <= 0:
        return 0.0, abs(math.sqrt(max(dot(oc, oc), 0.0)) - radius) < MARGIN
    # Closest approach of the line to the centre.
    closest = math.sqrt(max(dot(oc, oc) - b * b, 0.0))
    ambiguous = abs(closest - radius) < MARGIN
    disc = b * b - c
    if disc < 0 or b > 0:
        return None, ambiguous
    t = -b - math.sqrt(disc)
    if t > max_distance:
        return None, ambiguous or t - max_distance < MARGIN
    return t, ambiguous or max_distance - t < MARGIN


def raycast_all(origin, direction, max_distance, spheres) -> Tuple[List[Tuple[int, float]],
                                                                   set]:
    """Every (id, distance) a ray hits among spheres [(id, center, radius)], sorted by
    (distance, id), and the ids whose answer is ambiguous."""
    hits, ambiguous = [], set()
    for body_id, center, radius in spheres:
        t, unsure = ray_sphere(origin, direction, max_distance, center, radius)
        if unsure:
            ambiguous.add(body_id)
        elif t is not None:
            hits.append((body_id, t))
    hits.sort(key=lambda h: (h[1], h[0]))
    return hits, ambiguous


def overlapping_spheres(center, radius, spheres) -> Tuple[List[int], set]:
    """The ids of spheres a ball overlaps, and the ids within MARGIN of touching."""
    ids, ambiguous = [], set()
    for body_id, c, r in spheres:
        gap = math.sqrt(dot(sub(center, c), sub(center, c))) - (radius + r)
        if abs(gap) < MARGIN:
            ambiguous.add(body_id)
        elif gap < 0:
            ids.append(body_id)
    return sorted(ids), ambiguous
