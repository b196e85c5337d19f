#!/usr/bin/python3
"""Arena: an authoritative game-server tick loop on collide, in Python.

At --hz ticks per second, each tick moves every body (one UpdateStream batch of pose columns,
stamped with the tick number) and runs --rays hitscan raycasts and --casts sphere casts (one
QueryStream batch that waits, with min_version, for the tick's poses). The tick's round trip is
the time from sending both batches to holding both answers. Prints a line per second and the
percentiles at the end; exits non-zero on any error or if the scene's final version is not one
per tick.

    PYTHONPATH=build/client/python /usr/bin/python3 examples/arena/python/arena.py \\
        --address 127.0.0.1:50051 --ticks 600
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from typing import List, Sequence

import collide
from collide import (Body, BodyKind, Box, Capsule, Durability, Filter, Mode, Pose,
                     Query, Raycast, SceneOptions, Sphere, SphereCast)

ARENA_HALF_SIZE = 100.0  # metres: bodies move in [-100, 100] x [-100, 100]
SPEED = 6.0  # metres per second, at most


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile of an ascending list."""
    if not sorted_values:
        return float("nan")
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return sorted_values[rank - 1]


class World:
    """The simulation: bodies walking around the arena, turning to face where they go."""

    def __init__(self, bodies: int, rng: random.Random) -> None:
        self.ids = list(range(1, bodies + 1))
        self.x = [rng.uniform(-ARENA_HALF_SIZE, ARENA_HALF_SIZE) for _ in self.ids]
        self.z = [rng.uniform(-ARENA_HALF_SIZE, ARENA_HALF_SIZE) for _ in self.ids]
        self.vx = [rng.uniform(-SPEED, SPEED) for _ in self.ids]
        self.vz = [rng.uniform(-SPEED, SPEED) for _ in self.ids]
        self.shapes = [(Capsule(0.4, 0.5), Sphere(0.5), Box((0.5, 0.5, 0.5)))[i % 3]
                       for i in range(bodies)]

    def step(self, dt: float) -> None:
        """Moves every body, bouncing off the arena's edges."""
        limit = ARENA_HALF_SIZE
        x, z, vx, vz = self.x, self.z, self.vx, self.vz
        for i in range(len(x)):
            nx = x[i] + vx[i] * dt
            if nx > limit or nx < -limit:
                vx[i] = -vx[i]
                nx = x[i] + vx[i] * dt
            nz = z[i] + vz[i] * dt
            if nz > limit or nz < -limit:
                vz[i] = -vz[i]
                nz = z[i] + vz[i] * dt
            x[i] = nx
            z[i] = nz

    def poses(self) -> List[float]:
        """Pose columns: position (x, 1, z) and a yaw rotation facing the velocity."""
        out: List[float] = []
        append = out.extend
        for x, z, vx, vz in zip(self.x, self.z, self.vx, self.vz):
            half_yaw = 0.5 * math.atan2(vx, vz)
            append((x, 1.0, z, 0.0, math.sin(half_yaw), 0.0, math.cos(half_yaw)))
        return out

    def bodies(self) -> List[Body]:
        """The bodies as first created."""
        poses = self.poses()
        return [Body(body_id, shape, Pose(poses[7 * i:7 * i + 3], poses[7 * i + 3:7 * i + 7]))
                for i, (body_id, shape) in enumerate(zip(self.ids, self.shapes))]


def walls(first_id: int) -> List[Body]:
    """Static cover: a ring of boxes around the centre and the four outer walls."""
    bodies = []
    for k in range(24):
        angle = 2 * math.pi * k / 24
        bodies.append(Body(first_id + k, Box((2, 2, 0.5)),
                           Pose((40 * math.cos(angle), 2, 40 * math.sin(angle))),
                           kind=BodyKind.STATIC))
    edge = ARENA_HALF_SIZE + 1
    for k, (position, half) in enumerate([((edge, 2, 0), (0.5, 3, edge)),
                                          ((-edge, 2, 0), (0.5, 3, edge)),
                                          ((0, 2, edge), (edge, 3, 0.5)),
                                          ((0, 2, -edge), (edge, 3, 0.5))]):
        bodies.append(Body(first_id + 24 + k, Box(half), Pose(position), kind=BodyKind.STATIC))
    return bodies


def tick_queries(world: World, rng: random.Random, rays: int, casts: int,
                 at_tick) -> List[Query]:
    """Hitscan shots from random bodies in random horizontal directions (excluding the shooter),
    and sphere casts (thrown objects) that report everything they sweep through."""
    queries = []
    count = len(world.ids)
    for r in range(rays + casts):
        shooter = rng.randrange(count)
        angle = rng.uniform(0, 2 * math.pi)
        origin = (world.x[shooter], 1.5, world.z[shooter])
        direction = (math.cos(angle), rng.uniform(-0.05, 0.05), math.sin(angle))
        shooter_filter = Filter(excluded_ids=(world.ids[shooter],))
        if r < rays:
            queries.append(Query(Raycast(origin, direction, 150.0), filter=shooter_filter,
                                 at_tick=at_tick, request_id=r))
        else:
            queries.append(Query(SphereCast(origin, direction, 30.0, 0.5), filter=shooter_filter,
                                 mode=Mode.ALL, max_hits=32, at_tick=at_tick, request_id=r))
    return queries


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default="127.0.0.1:50051", help="the server's host:port")
    parser.add_argument("--scene", default="arena-example",
                        help="the scene to create (it must not exist); deleted at exit")
    parser.add_argument("--token", default=None, help="the bearer token, if the server has auth")
    parser.add_argument("--ticks", type=int, default=600, help="ticks to run")
    parser.add_argument("--hz", type=float, default=60.0, help="ticks per second")
    parser.add_argument("--bodies", type=int, default=1000, help="moving bodies")
    parser.add_argument("--rays", type=int, default=100, help="hitscan raycasts per tick")
    parser.add_argument("--casts", type=int, default=10, help="sphere casts per tick")
    parser.add_argument("--tick_stamps", action=argparse.BooleanOptionalAction, default=True,
                        help="stamp each batch with its tick (UpdateBatch.tick), which keeps "
                             "the scene's tick history for lag compensation")
    parser.add_argument("--lag_ticks", type=int, default=0,
                        help="answer the shots this many ticks in the past (lag compensation; "
                             "needs --tick_stamps)")
    parser.add_argument("--durability", choices=["none", "periodic", "always"], default="none",
                        help="the scene's durability (a game's poses rarely need fsync)")
    parser.add_argument("--seed", type=int, default=1, help="random seed")
    parser.add_argument("--quiet", action="store_true", help="print only the summary")
    args = parser.parse_args(argv)

    if args.lag_ticks and not args.tick_stamps:
        parser.error("--lag_ticks needs --tick_stamps")
    rng = random.Random(args.seed)
    world = World(args.bodies, rng)
    dt = 1.0 / args.hz
    durability = {"none": Durability.NONE, "periodic": Durability.PERIODIC,
                  "always": Durability.ALWAYS}[args.durability]
    with collide.Client(args.address, token=args.token) as client:
        # A scene of the same name is someone else's: creating fails (ALREADY_EXISTS) and it is
        # left alone.
        client.create_scene(args.scene, SceneOptions(durability=durability,
                                                     history_ticks=max(64, args.lag_ticks + 2)))
        setup = client.upsert_bodies(args.scene, world.bodies() + walls(args.bodies + 1))
        round_trips: List[float] = []
        window: List[float] = []
        hits = 0
        late = 0
        with client.update_writer(args.scene) as writer, \
                client.query_stream(args.scene) as queries:
            next_tick = time.perf_counter()
            for tick in range(1, args.ticks + 1):
                world.step(dt)
                poses = world.poses()
                past = tick - args.lag_ticks if args.lag_ticks and tick > args.lag_ticks else None
                batch = tick_queries(world, rng, args.rays, args.casts, past)
                start = time.perf_counter()
                ack = writer.send(moves=(world.ids, poses),
                                  tick=tick if args.tick_stamps else None)
                answer = queries.submit(batch, min_version=setup.version + tick)
                result = answer.result(10)
                version = ack.result(10).version
                elapsed = time.perf_counter() - start
                if version != setup.version + tick or result.version < version:
                    print(f"tick {tick}: version {version}, queries saw {result.version}",
                          file=sys.stderr)
                    return 1
                for query_result in result.results:
                    if query_result.error is not None:
                        print(f"tick {tick}: {query_result.error}", file=sys.stderr)
                        return 1
                    hits += len(query_result.hits)
                round_trips.append(elapsed)
                window.append(elapsed)
                if not args.quiet and len(window) == int(args.hz):
                    window.sort()
                    print(f"tick {tick:5d}: round trip p50 {percentile(window, 0.5) * 1e3:6.2f} "
                          f"ms, p99 {percentile(window, 0.99) * 1e3:6.2f} ms", flush=True)
                    window = []
                next_tick += dt
                wait = next_tick - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
                else:
                    late += 1
                    next_tick = time.perf_counter()
        final = client.get_scene(args.scene).stats
        client.delete_scene(args.scene)
    if final.version != setup.version + args.ticks:
        print(f"scene version {final.version}, expected {setup.version + args.ticks}",
              file=sys.stderr)
        return 1
    round_trips.sort()
    print(f"arena (python): {args.ticks} ticks at {args.hz:g} Hz, {args.bodies} bodies moved, "
          f"{args.rays} rays + {args.casts} sphere casts per tick; tick round trip "
          f"p50 {percentile(round_trips, 0.5) * 1e3:.2f} ms, "
          f"p99 {percentile(round_trips, 0.99) * 1e3:.2f} ms, "
          f"max {round_trips[-1] * 1e3:.2f} ms; {hits / args.ticks:.1f} hits/tick; "
          f"{late} late ticks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
