"""collide: a Python client for the collide collision-query server.

    import collide
    from collide import Body, Sphere, Pose, Raycast, Mode

    with collide.Client("127.0.0.1:50051", token="...") as client:
        client.create_scene("world")
        client.upsert_bodies("world", [Body(1, Sphere(1.0), Pose((0, 0, 0)))])
        print(client.raycast("world", Raycast((-5, 0, 0), (1, 0, 0), 100)).hits)
        with client.update_writer("world") as writer:
            writer.send(moves=([1], [0.5, 0, 0, 0, 0, 0, 1]))
        with client.query_stream("world") as stream:
            print(stream.query([collide.Query(Raycast((-5, 0, 0), (1, 0, 0), 100))]))

collide.aio has the same client for asyncio (collide.aio.Client). collide.export_file reads and
writes export files (Client.export_scene_to_file, Client.import_scene).
"""

from collide._version import __version__
from collide.client import SCENE_HEADER, Client
from collide.errors import BatchRejectedError, CollideError
from collide.model import (Aabb, AabbQuery, AssetInfo, Body, BodyKind, Box, Capsule, Durability,
                           ExportSummary, Filter, Float32,
                           GetBodiesResult, Heightfield, Hit, Mesh, Mode, Overlap, PointQuery,
                           Pose, PoseColumns,
                           Quat, Query, QueryBatchResult, QueryResponse, QueryResult, Raycast,
                           Remove, ReplicationStats, SceneInfo, SceneOptions,
                           SceneReplication, SceneStats, ServerSceneStats, ServerStats,
                           SetFilter, SetPose, Sphere, SphereCast, UpdateAck, UploadedAsset,
                           Upsert, Vec3, WriteResult)
from collide.interest import (Interest, InterestMessage, InterestSnapshot, InterestUpdate, Observer,
                              ObserverDelta, ViewCone)
from collide.query_stream import QueryStream
from collide.update_writer import UpdateWriter
from collide.watch import (ContactPair, ContactWatch, Fence, FenceContents, Watch, WatchEvent,
                           WatchEventKind, WatchMessage, WatchSnapshot, WatchUpdate)

__all__ = [
    "Aabb", "AabbQuery", "AssetInfo", "BatchRejectedError", "Body", "BodyKind", "Box", "Capsule", "Client",
    "CollideError", "ContactPair", "ContactWatch", "Durability", "ExportSummary", "Fence", "FenceContents",
    "Filter", "Float32", "GetBodiesResult", "Heightfield", "Hit", "Interest", "InterestMessage",
    "InterestSnapshot", "InterestUpdate", "Mesh", "Mode", "Observer", "ObserverDelta", "Overlap",
    "PointQuery", "Pose", "PoseColumns",
    "Quat", "Query", "QueryBatchResult", "QueryResponse", "QueryResult", "QueryStream",
    "Raycast", "Remove", "ReplicationStats", "SCENE_HEADER", "SceneInfo", "SceneOptions",
    "SceneReplication", "SceneStats",
    "ServerSceneStats", "ServerStats", "SetFilter", "SetPose", "Sphere", "SphereCast",
    "UpdateAck", "UpdateWriter", "UploadedAsset", "Upsert", "Vec3", "ViewCone", "Watch", "WatchEvent", "WatchEventKind", "WatchMessage", "WatchSnapshot",
    "WatchUpdate", "WriteResult", "__version__",
]
