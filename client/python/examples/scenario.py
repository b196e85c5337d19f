#!/usr/bin/python3
"""The cross-language scenario: one scene, five bodies, five unary queries printed as JSON.

Creates the scene, upserts the bodies in one UpsertBodies call, prints one JSON object per query
(a..e) on its own line, then deletes the scene. Floats print as the shortest decimal that reads
back as the float32 received (a Float32's repr), as the C++ and Node programs print them.

    PYTHONPATH=build/client/python /usr/bin/python3 client/python/examples/scenario.py \\
        --address 127.0.0.1:50051 --scene scenario
"""

from __future__ import annotations

import argparse
import json
import sys

import collide
from collide import (Body, BodyKind, Box, Capsule, Filter, Mode, Overlap, Pose, QueryResponse,
                     Raycast, Sphere, SphereCast)


def bodies():
    """The scenario's five bodies."""
    return [
        Body(1, Sphere(1.0), Pose((0, 0, 0))),
        Body(2, Box((1, 0.5, 2)), Pose((5, 0, 0), (0, 0, 0.25881904, 0.96592583))),
        Body(3, Capsule(0.5, 1.0), Pose((10, 0, 0))),
        Body(4, Sphere(0.5), Pose((0, 5, 0)), category=2),
        Body(5, Box((0.5, 0.5, 0.5)), Pose((-4, 0, 0)), kind=BodyKind.STATIC),
    ]


def number(value: float) -> float:
    """A float32 the client read as the float JSON prints in its shortest form (json writes a
    float's own repr, the Float32's exact value)."""
    return float(repr(value))


def as_json(name: str, response: QueryResponse) -> str:
    """One output line."""
    return json.dumps({
        "query": name,
        "version": response.version,
        "hits": [{
            "body_id": h.body_id,
            "distance": number(h.distance),
            "point": [number(h.point.x), number(h.point.y), number(h.point.z)],
            "normal": [number(h.normal.x), number(h.normal.y), number(h.normal.z)],
            "depth": number(h.depth),
            "start_overlapping": h.start_overlapping,
        } for h in response.hits],
    })


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default="127.0.0.1:50051", help="the server's host:port")
    parser.add_argument("--scene", default="scenario", help="the scene to create and delete")
    args = parser.parse_args(argv)
    scene = args.scene
    with collide.Client(args.address) as client:
        client.create_scene(scene)
        try:
            client.upsert_bodies(scene, bodies())
            answers = [
                ("a", client.raycast(scene, Raycast((-10, 0, 0), (1, 0, 0), 100),
                                     mode=Mode.ALL)),
                ("b", client.raycast(scene, Raycast((0, -10, 0), (0, 1, 0), 100),
                                     mode=Mode.CLOSEST, filter=Filter(mask=2))),
                ("c", client.sphere_cast(scene, SphereCast((0, 0, -10), (0, 0, 1), 20, 0.25),
                                         mode=Mode.ALL)),
                ("d", client.overlap(scene, Overlap(Sphere(1.5), Pose((4.5, 0.5, 0))),
                                     detail=True, mode=Mode.ALL)),
                ("e", client.sphere_cast(scene, SphereCast((-10, 0.8, 0), (1, 0, 0), 30, 0.4),
                                         mode=Mode.ALL)),
            ]
            for name, response in answers:
                print(as_json(name, response))
        finally:
            client.delete_scene(scene)
    return 0


if __name__ == "__main__":
    sys.exit(main())
