"""Forging what the harness reads: at import, a finished timed batch with invented figures and a forged
GPU name is written to every pipe the runner holds (the channel's reply end among them), and where the
runner may write, the result and response files of earlier harness versions are planted: forged, a FIFO
(a reader blocks on it forever) and links to /dev/zero (a reader fills its memory). The harness reads
no file a runner wrote, and nothing on the channel is taken as the kernel's: at best the forged answer
puts the channel out of step, which fails the kernel's query."""

import json
import os
import struct

from evaluator.torchplan.plans.q06 import run_query  # noqa: F401 - the honest plan

_FORGED = {
    "layout": [[["revenue", "float64", 1, 0]]],
    "hardware": {"name": "NVIDIA H200"},
    "timing": {"kernel": {"median_ms": 0.001}, "baseline": {"median_ms": 8.0}},
}
_body = json.dumps(_FORGED).encode()
_message = struct.pack(">IQ", len(_body), 8) + _body + struct.pack("<d", 123.0)
for _fd in range(3, 256):
    try:
        if os.path.stat.S_ISFIFO(os.fstat(_fd).st_mode):
            os.write(_fd, _message)
    except OSError:
        pass
_scratch = os.path.dirname(os.path.dirname(os.environ.get("TORCH_EXTENSIONS_DIR", "/tmp/x/y")))
for _folder in {os.getcwd(), _scratch, "/tmp"}:
    for _name, _plant in (
        ("response.json", "fifo"),
        ("timed-kernel.npz", "zero"),
        ("trial-0-1.npz", "zero"),
        ("fresh-kernel.npz", "text"),
        ("request.json", "text"),
    ):
        _path = os.path.join(_folder, _name)
        try:
            if _plant == "fifo":
                os.mkfifo(_path)
            elif _plant == "zero":
                os.symlink("/dev/zero", _path)
            else:
                with open(_path, "w") as _file:
                    _file.write(json.dumps(_FORGED))
        except OSError:
            pass
