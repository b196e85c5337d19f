"""The request side of the asyncio streams: an asynchronous iterator over a queue."""

from __future__ import annotations

import asyncio
from typing import AsyncIterator


async def requests(source: "asyncio.Queue") -> AsyncIterator:
    """The request iterator of one stream: messages from `source` until None (then the stream's
    writing side closes)."""
    while True:
        message = await source.get()
        if message is None:
            return
        yield message
