"""collide for asyncio: the client of collide.Client on grpc.aio, with the same methods,
arguments, results (the dataclasses of collide) and errors (CollideError), every rpc a
coroutine, and the streams as asynchronous context managers and iterators.

    import asyncio

    import collide.aio
    from collide import Body, Pose, Raycast, Sphere

    async def main() -> None:
        async with collide.aio.Client("127.0.0.1:50051", token="...") as client:
            await client.create_scene("world")
            await client.upsert_bodies("world", [Body(1, Sphere(1.0), Pose((0, 0, 0)))])
            print((await client.raycast("world", Raycast((-5, 0, 0), (1, 0, 0), 100))).hits)
            async with client.update_writer("world") as writer:
                ack = await (await writer.send(moves=([1], [0.5, 0, 0, 0, 0, 0, 1])))

    asyncio.run(main())
"""

from collide.aio.client import Client
from collide.aio.interest import Interest
from collide.aio.query_stream import QueryStream
from collide.aio.update_writer import UpdateWriter
from collide.aio.watch import Watch

__all__ = ["Client", "Interest", "QueryStream", "UpdateWriter", "Watch"]
