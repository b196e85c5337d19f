"""What the blocking and the asyncio Client build their channel and call metadata from."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple, Union

import grpc

Pem = Union[bytes, str]
Metadata = Tuple[Tuple[str, str], ...]

# The gRPC metadata key naming the scene of a call (lets a router shard by scene).
SCENE_HEADER = "x-collide-scene"

_DEFAULT_CHANNEL_OPTIONS = (
    # Replies such as GetBodies of a large scene may exceed gRPC's 4 MB default.
    ("grpc.max_receive_message_length", -1),
    ("grpc.max_send_message_length", -1),
    # Reconnect quickly after a server restart (the update writer waits for it). Not
    # grpc.min_reconnect_backoff_ms: despite its name it is how long one connection attempt may
    # take (default 20 s), and at 100 ms a server slow to answer the HTTP/2 handshake on a loaded
    # machine made the first call fail with UNAVAILABLE ("tcp handshaker shutdown").
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 2000),
)


def read_pem(value: Optional[Pem]) -> Optional[bytes]:
    """PEM bytes as given, or the contents of the file a str names."""
    if value is None or isinstance(value, bytes):
        return value
    with open(value, "rb") as f:
        return f.read()


def channel_options(server_name_override: Optional[str],
                    extra: Sequence[Tuple[str, object]]) -> List[Tuple[str, object]]:
    """The channel arguments: collide's defaults, then `extra`, then the name override."""
    options = list(_DEFAULT_CHANNEL_OPTIONS) + list(extra)
    if server_name_override:
        options.append(("grpc.ssl_target_name_override", server_name_override))
    return options


def credentials(tls: bool, root_certificates: Optional[Pem], client_certificate: Optional[Pem],
                client_key: Optional[Pem]) -> Optional[grpc.ChannelCredentials]:
    """TLS credentials when TLS is asked for (by `tls` or any certificate), else None."""
    if not (tls or root_certificates or client_certificate or client_key):
        return None
    return grpc.ssl_channel_credentials(root_certificates=read_pem(root_certificates),
                                        private_key=read_pem(client_key),
                                        certificate_chain=read_pem(client_certificate))


def auth_metadata(token: Optional[str]) -> Metadata:
    """The metadata every call carries: the bearer token, if any."""
    return (("authorization", f"Bearer {token}"),) if token else ()


def call_metadata(auth: Metadata, scene: Optional[str]) -> Metadata:
    """The metadata of a call: `auth`, and the scene header when the call names one."""
    if scene is None:
        return auth
    return auth + ((SCENE_HEADER, scene),)
