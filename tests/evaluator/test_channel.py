"""The channel and the result packing: what the harness reads from a runner is bounded and checked."""

from __future__ import annotations

import os
import struct
import sys
import time

import numpy as np
import pytest
import torch

from evaluator.channel import ChannelError, Deadline, Reader, encode, send
from evaluator.harness.launch import RUNNER_LOG_CHARS, Launch, Launcher
from evaluator.results import pack, unpack


def pipe() -> tuple[int, int]:
    read, write = os.pipe()
    return read, write


def test_a_message_arrives_whole_with_its_payload() -> None:
    read, write = pipe()
    send(write, {"op": "batch", "n": 2}, b"\x01\x02\x03")
    assert Reader(read).read(time.monotonic() + 5) == ({"op": "batch", "n": 2}, b"\x01\x02\x03")


def test_a_runner_that_says_nothing_is_given_up_on_at_the_deadline() -> None:
    read, write = pipe()
    started = time.monotonic()
    with pytest.raises(Deadline):
        Reader(read).read(started + 0.2)
    assert time.monotonic() - started < 2


def test_an_answer_that_came_in_time_is_read_even_after_the_deadline() -> None:
    read, write = pipe()
    send(write, {"op": "tables"})
    time.sleep(0.05)
    assert Reader(read).read(time.monotonic() - 1) == ({"op": "tables"}, b"")


def test_half_a_message_is_given_up_on_at_the_deadline_too() -> None:
    read, write = pipe()
    os.write(write, encode({"op": "x"}, b"12345678")[:-3])
    with pytest.raises(Deadline):
        Reader(read).read(time.monotonic() + 0.2)


def test_a_message_claiming_more_than_the_limit_is_refused_before_anything_is_allocated() -> None:
    read, write = pipe()
    os.write(write, struct.pack(">IQ", 2, 1 << 40) + b"{}")
    with pytest.raises(ChannelError, match="over the channel's limit"):
        Reader(read).read(time.monotonic() + 5)


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]"])
def test_a_header_that_is_not_a_json_object_is_the_runners_fault(body: bytes) -> None:
    read, write = pipe()
    os.write(write, struct.pack(">IQ", len(body), 0) + body)
    with pytest.raises(ChannelError, match="header"):
        Reader(read).read(time.monotonic() + 5)


def test_a_closed_pipe_is_an_error_not_a_hang() -> None:
    read, write = pipe()
    os.close(write)
    with pytest.raises(ChannelError, match="closed"):
        Reader(read).read(time.monotonic() + 5)


def test_results_survive_the_round_trip_column_for_column() -> None:
    results = [
        {"revenue": torch.tensor([1.5, 2.25], dtype=torch.float64), "n": torch.arange(2)},
        {"flag": torch.tensor([True, False, True]), "empty": torch.empty(0, dtype=torch.int32)},
    ]
    layout, data = pack(results)
    back = unpack(layout, data, 2)
    assert back[0]["revenue"].tolist() == [1.5, 2.25] and back[0]["n"].dtype == np.int64
    assert back[1]["flag"].tolist() == [True, False, True] and back[1]["empty"].shape == (0,)


def test_a_column_that_is_not_dense_packs_as_its_values() -> None:
    """`take` views a dense column as bytes; any other (a stride, even a one-row slice of one, whose
    bytes cannot be viewed) is copied dense when the batch's results are gathered."""
    every_other = torch.arange(10, dtype=torch.int32)[::2]
    one_row_slice = torch.arange(10, dtype=torch.float64)[::5][:1]  # stride 5, yet "contiguous"
    results = [
        {"a": every_other, "b": one_row_slice, "c": torch.tensor([True, False, True])[::2]},
        {"d": torch.arange(6, dtype=torch.uint8)[::3], "e": torch.arange(3, dtype=torch.int64)},
    ]
    back = unpack(*pack(results), 2)
    assert back[0]["a"].tolist() == [0, 2, 4, 6, 8] and back[0]["b"].tolist() == [0.0]
    assert back[0]["c"].tolist() == [True, True]
    assert back[1]["d"].tolist() == [0, 3] and back[1]["e"].tolist() == [0, 1, 2]


def test_a_result_that_is_not_named_plain_tensors_is_refused_when_packed() -> None:
    with pytest.raises(TypeError, match="dict of named 1-D tensors"):
        pack([[torch.ones(2)]])
    with pytest.raises(TypeError, match="1-D"):
        pack([{"x": torch.ones(2, 2)}])
    with pytest.raises(TypeError, match="complex64"):
        pack([{"x": torch.ones(2, dtype=torch.complex64)}])


@pytest.mark.parametrize(
    ("layout", "payload", "words"),
    [
        ([[["x", "float64", 4, 0]]], b"\0" * 16, "runs past the end"),
        ([[["x", "object", 1, 0]]], b"\0" * 8, "not allowed"),
        ([[["x", "int64", -1, 0]]], b"", "bad length"),
        ([[["x", "int64", 1, 0], ["x", "int64", 1, 0]]], b"\0" * 8, "appears twice"),
        ([], b"", "expected 1 results"),
        ({"x": 1}, b"", "expected 1 results"),
    ],
)
def test_a_layout_that_does_not_fit_its_bytes_is_refused(layout, payload: bytes, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        unpack(layout, payload, 1)


def test_a_runner_that_floods_its_log_leaves_only_the_logs_end() -> None:
    code = "import os\nfor _ in range(64):\n    os.write(2, b'x' * (1 << 20))\nos.write(2, b'THE END')\n"
    launch = Launch(
        argv=[sys.executable, "-c", code],
        readable=[],
        writable=[],
        hidden=[],
        env={},
        timeout_s=60,
        channel=True,
    )
    outcome = Launcher().start(launch).wait()
    assert outcome.returncode == 0
    assert outcome.log.endswith("THE END") and len(outcome.log) == RUNNER_LOG_CHARS
