"""A fake `docker` client for tests/sandbox/test_docker.py: no Docker engine runs where the tests do.

Copied into a folder put first on PATH. It appends every call's arguments to `calls.jsonl` beside it
and plays the outcome named in `mode` there: `exec` runs the container's command on this machine with
the `--env` it was given (no isolation at all: only the command line and the plumbing are under test),
`exit:N` ends with status N after the container ran, `oom` as the OOM killer leaves it, `never-started`
as Docker does when it cannot create or start the container, `hang` never ends. `inspect`, `kill` and
`rm` answer from the state each `run` leaves in `state/`.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
STATE = HERE / "state"
STARTED = "2026-12-02T10:00:00.000000000Z"
NEVER = "0001-01-01T00:00:00Z"


def save(name: str, **state: object) -> None:
    STATE.mkdir(exist_ok=True)
    (STATE / f"{name}.json").write_text(json.dumps(state))


def load(name: str) -> dict:
    path = STATE / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def run(args: list[str], mode: str) -> int:
    name = args[args.index("--name") + 1]
    if mode == "never-started":
        save(
            name,
            Status="created",
            ExitCode=125,
            OOMKilled=False,
            Error="nvidia runtime: no such device",
            StartedAt=NEVER,
        )
        print("docker: Error response from daemon: nvidia runtime: no such device.", file=sys.stderr)
        return 125
    if mode == "hang":
        save(
            name, Status="running", ExitCode=0, OOMKilled=False, Error="", StartedAt=STARTED, pid=os.getpid()
        )
        time.sleep(600)
        return 0
    if mode == "oom":
        save(name, Status="exited", ExitCode=137, OOMKilled=True, Error="", StartedAt=STARTED)
        return 137
    if mode.startswith("exit:"):
        code = int(mode.split(":")[1])
        save(name, Status="exited", ExitCode=code, OOMKilled=False, Error="", StartedAt=STARTED)
        return code
    assert mode == "exec", mode
    image = next(i for i, a in enumerate(args) if "@sha256:" in a)
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": (HERE / "pythonpath").read_text().strip()}
    for i, arg in enumerate(args[:image]):
        if arg == "--env":
            key, value = args[i + 1].split("=", 1)
            env[key] = value
    command = [sys.executable if args[image + 1] == "python" else args[image + 1], *args[image + 2 :]]
    # As the real client: the container reads the client's standard input only with --interactive.
    stdin = None if "--interactive" in args[:image] else subprocess.DEVNULL
    code = subprocess.call(command, env=env, cwd="/tmp", stdin=stdin)
    code = 128 - code if code < 0 else code  # --init reports a signal N as 128 + N
    save(name, Status="exited", ExitCode=code, OOMKilled=False, Error="", StartedAt=STARTED)
    return code


def main(args: list[str]) -> int:
    with open(HERE / "calls.jsonl", "a") as calls:
        calls.write(json.dumps(args) + "\n")
    mode = (HERE / "mode").read_text().strip()
    if args[0] == "run":
        return run(args[1:], mode)
    if args[0] == "inspect":
        state = load(args[-1])
        if not state:
            print(f"Error: No such object: {args[-1]}", file=sys.stderr)
            return 1
        state.pop("pid", None)
        print(json.dumps(state))
        return 0
    if args[0] == "kill":
        state = load(args[-1])
        if "pid" in state:
            os.kill(state.pop("pid"), signal.SIGKILL)
        save(args[-1], **(state | {"Status": "exited", "ExitCode": 137}))
        return 0
    if args[0] == "rm":
        (STATE / f"{args[-1]}.json").unlink(missing_ok=True)
        return 0
    print(f"fake docker: {args[0]} is not faked", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
