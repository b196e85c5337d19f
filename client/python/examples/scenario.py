#!/usr/bin/python3
"""The cross-language scenario: one scene, five bodies, five unary queries printed as JSON.

Creates the scene, upserts the bodies in one UpsertBodies call, prints one JSON object per query
(a..e) on its own line, then deletes the scene. Floats print as the shortest decimal that reads
back as the float32 received (a Float32's repr's digits) in the notation C++'s std::to_chars
picks (fixed, or d.ddde-XX when that is shorter): the five clients' programs print the same
bytes.

    PYTHONPATH=build/client/python /usr/bin/python3 client/python/examples/scenario.py \\
        --address 127.0.0.1:50051 --scene scenario
"""

from __future__ import annotations

import argparse
import decimal
import json
import struct
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


def number(value: float) -> str:
    """A float32 the client read (a Float32, whose repr is the shortest decimal of that float32)
    as C++'s std::to_chars prints it: fixed, or d.ddde+XX when that is shorter (a tie: fixed).
    The fixed form of an integer has all its digits (6528615424, not 6528615400)."""
    text = repr(value)
    sign = "-" if text.startswith("-") else ""
    exact = decimal.Decimal(text.lstrip("-")).normalize()
    _, digit_tuple, exponent = exact.as_tuple()
    digits = "".join(map(str, digit_tuple))
    if digits.strip("0") == "":
        return sign + "0"
    n = len(digits)
    if exponent >= 0:
        fixed = str(int(abs(value)))  # an integer: all its digits, as printf's %.0f
    elif -exponent < n:
        fixed = digits[:n + exponent] + "." + digits[n + exponent:]
    else:
        fixed = "0." + "0" * (-exponent - n) + digits
    power = n - 1 + exponent
    scientific = (digits[0] + ("." + digits[1:] if n > 1 else "") +
                  ("e-" if power < 0 else "e+") + f"{abs(power):02d}")
    return sign + (fixed if len(fixed) <= len(scientific) else scientific)


def vector(v) -> str:
    return f"[{number(v.x)}, {number(v.y)}, {number(v.z)}]"


def as_json(name: str, response: QueryResponse) -> str:
    """One output line: {"query": "a", "version": 1, "hits": [{...}, ...]}."""
    hits = ", ".join(
        f'{{"body_id": {h.body_id}, "distance": {number(h.distance)}, '
        f'"point": {vector(h.point)}, "normal": {vector(h.normal)}, '
        f'"depth": {number(h.depth)}, "start_overlapping": {json.dumps(h.start_overlapping)}}}'
        for h in response.hits)
    return f'{{"query": {json.dumps(name)}, "version": {response.version}, "hits": [{hits}]}}'


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default="127.0.0.1:50051", help="the server's host:port")
    parser.add_argument("--scene", default="scenario", help="the scene to create and delete")
    parser.add_argument("--numbers", action="store_true",
                        help="instead of the scenario: print each float32 of stdin (its bits, 8 "
                             "hex digits a line) as the scenario prints numbers")
    args = parser.parse_args(argv)
    if args.numbers:
        for line in sys.stdin:
            if line.strip():
                value = struct.unpack("<f", struct.pack("<I", int(line.strip(), 16)))[0]
                print(number(collide.Float32(value)))
        return 0
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
