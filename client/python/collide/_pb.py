"""The generated protobuf and gRPC modules (made by the build: see client/README.md)."""

try:
    from collide.v1 import collide_pb2 as pb  # noqa: F401
    from collide.v1 import collide_pb2_grpc as pb_grpc  # noqa: F401
except ImportError as error:  # pragma: no cover - a set-up problem, not a code path
    raise ImportError(
        "collide: the generated modules collide.v1.collide_pb2 / collide_pb2_grpc are missing; "
        "build the `collide_python` CMake target and put <build>/client/python on PYTHONPATH "
        "(client/README.md, section Python)") from error
