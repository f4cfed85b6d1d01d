"""The pipeline's kernel client: waits for a reply in one-second slices.

A notebook kernel can leave papermill waiting for a reply at an ipywidgets cell (nbclient#312
reports the symptom). The suspected cause is the ZeroMQ socket's edge-triggered file
descriptor: a message that arrives while nobody is waiting leaves nothing for a later wait on
the descriptor to see. A fresh ``poll`` checks the socket's pending events first, so waiting
in short slices finds such a message within a second; ``reproduce``'s idle-kernel watch is
the safety net.
"""

from __future__ import annotations

import time
from queue import Empty
from typing import Any

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from traitlets import Type

__all__ = ["SlicedChannel", "SlicedKernelClient", "SLICE_S"]

SLICE_S = 1.0  # seconds per poll


class SlicedChannel(AsyncZMQSocketChannel):
    """``get_msg(timeout)`` as a sequence of polls of at most :data:`SLICE_S` seconds."""

    async def get_msg(self, timeout: float | None = None) -> dict[str, Any]:  # type: ignore[override]
        assert self.socket is not None
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            step = SLICE_S if left is None else max(0.0, min(SLICE_S, left))
            if await self.socket.poll(int(step * 1000)):
                return await self._recv()
            if deadline is not None and time.monotonic() >= deadline:
                raise Empty


class SlicedKernelClient(AsyncKernelClient):
    shell_channel_class = Type(SlicedChannel)  # type: ignore[assignment]
    iopub_channel_class = Type(SlicedChannel)  # type: ignore[assignment]
    control_channel_class = Type(SlicedChannel)  # type: ignore[assignment]
