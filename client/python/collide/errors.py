"""Errors raised by the collide client."""

from __future__ import annotations

from typing import Optional

import grpc

_CODES_BY_VALUE = {code.value[0]: code for code in grpc.StatusCode}


def status_code_from_int(value: int) -> grpc.StatusCode:
    """Returns the grpc.StatusCode with the numeric value `value` (UNKNOWN if none has it)."""
    return _CODES_BY_VALUE.get(value, grpc.StatusCode.UNKNOWN)


class CollideError(Exception):
    """A call, a stream batch or a query the server (or the transport) rejected.

    Attributes:
        code: the gRPC status code (grpc.StatusCode).
        message: the server's message, "<field path>: <reason>" for bad input
            (for example "bodies[2].shape.sphere.radius: must be finite and >= 0").
    """

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message

    @property
    def field_path(self) -> Optional[str]:
        """The field path the message starts with ("ops[2].remove"), or None without one."""
        head, sep, _ = self.message.partition(": ")
        if not sep or not head or " " in head:
            return None
        return head

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> "CollideError":
        """Converts an error raised by a gRPC call."""
        code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
        details = error.details() if hasattr(error, "details") else str(error)
        return cls(code or grpc.StatusCode.UNKNOWN, details or "")

    @classmethod
    def from_proto(cls, error) -> "CollideError":
        """Converts a collide.v1.Error found inside a stream's answer."""
        return cls(status_code_from_int(error.code), error.message)


class BatchRejectedError(CollideError):
    """An update batch the server rejected (nothing of it was applied).

    Attributes:
        sequence: the batch's client_sequence.
    """

    def __init__(self, code: grpc.StatusCode, message: str, sequence: int) -> None:
        super().__init__(code, message)
        self.sequence = sequence
        self.args = (f"batch {sequence}: {code.name}: {message}",)
