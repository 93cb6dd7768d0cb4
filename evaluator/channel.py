"""The pipe between the trusted harness and a runner: length-prefixed messages, read under a deadline.

A message is a JSON header and an optional binary payload (result columns, packed by the runner):
`<4-byte header length><8-byte payload length><header><payload>`, lengths big-endian. The harness sends
a command and reads the answer with `Reader.read(deadline)`; the time between the two is the only
clock a score depends on (docs/sandbox.md). Everything read here comes from a process that may run
hostile code, so every read has a deadline and a size cap, and a malformed message is the runner's
fault (`ChannelError`), never a hang or an allocation the worker cannot afford.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from typing import Any

PREFIX = struct.Struct(">IQ")
MAX_HEADER = 1 << 20
MAX_PAYLOAD = 64 << 20  # a batch of results (at most 60 calls); Q16's largest at SF10 is about 0.6 MB a call


class ChannelError(Exception):
    """The runner broke the protocol, went quiet past a deadline, or closed the pipe."""


class Deadline(ChannelError):
    pass


def encode(header: dict[str, Any], payload: bytes | memoryview = b"") -> bytes:
    body = json.dumps(header, separators=(",", ":")).encode()
    return PREFIX.pack(len(body), len(payload)) + body + bytes(payload)


def send(fd: int, header: dict[str, Any], payload: bytes | memoryview = b"") -> None:
    data = memoryview(encode(header, payload))
    while data:
        data = data[os.write(fd, data) :]


class Reader:
    """Reads messages from a file descriptor, each by a deadline (`time.monotonic()` seconds)."""

    def __init__(self, fd: int, max_payload: int = MAX_PAYLOAD) -> None:
        self.fd = fd
        self.max_payload = max_payload

    def read(self, deadline: float, spin_s: float = 0.0) -> tuple[dict[str, Any], bytes]:
        """The next message; `spin_s`: poll for it this long before sleeping on the pipe, so that a timed
        answer is not also timing a sleeping process's wake-up (on a GPU, docs/sandbox.md)."""
        spin_until = time.monotonic() + spin_s
        while spin_s and time.monotonic() < min(spin_until, deadline):
            if select.select([self.fd], [], [], 0)[0]:
                break
        header_len, payload_len = PREFIX.unpack(self._exactly(PREFIX.size, deadline))
        if header_len > MAX_HEADER or payload_len > self.max_payload:
            raise ChannelError(f"a message of {header_len} + {payload_len} bytes is over the channel's limit")
        try:
            header = json.loads(self._exactly(header_len, deadline))
        except ValueError as exc:
            raise ChannelError(f"a message's header is not JSON: {exc}") from None
        if not isinstance(header, dict):
            raise ChannelError("a message's header is not a JSON object")
        return header, self._exactly(payload_len, deadline)

    def _exactly(self, count: int, deadline: float) -> bytes:
        chunks, left = [], count
        while left:
            # Past the deadline, what has already arrived is still read (a zero wait): an answer that
            # came in time is not lost because the harness was busy with the other runner.
            wait = None if deadline == float("inf") else max(0.0, deadline - time.monotonic())
            if not select.select([self.fd], [], [], wait)[0]:
                raise Deadline("no answer in time")
            chunk = os.read(self.fd, min(left, 1 << 20))
            if not chunk:
                raise ChannelError("the runner closed the channel")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)


def read_blocking(fd: int, spin_s: float = 0.0) -> tuple[dict[str, Any], bytes] | None:
    """The runner's side: the next command, or None once the harness closed the pipe."""
    try:
        return Reader(fd, max_payload=MAX_PAYLOAD).read(deadline=float("inf"), spin_s=spin_s)
    except ChannelError:
        return None
