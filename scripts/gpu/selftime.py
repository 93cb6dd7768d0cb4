"""The runners' own clocks inside a real evaluation, beside the harness's: a diagnostic, never the product.

The example sets' calls are timed 13-20% slower by harness 0.6.x than by 0.4.1 (sessions 20-27), while
a runner timing its own calls beside a second runner that takes turns lost time only on each batch's
first call (scripts/gpu/switch.py, session 28). This says where the time goes in the product's own
evaluation (`python -m evaluator run`). `patch TREE` adds to a copy of the tree: each runner logs, for
every timed batch (its own `batch` wrapped, not replaced), its own clock around each call (the call,
its result's `take`, the synchronize) and around `gather`; the harness logs the seconds it timed the
batch and what it scored once the channel's share came off. Both append JSON lines to a folder named
at `patch` (the runner writes a batch's line when armed for the next one, outside any timed window;
the last batch of each runner is not logged). `summarize DIR` pairs them batch by batch, per query and
side, and prints per call, in milliseconds (medians over batches): the harness's raw and scored time,
the runner's from its first call to its last synchronize, the first call and the others, the `take`s,
`gather`.

    python scripts/gpu/selftime.py patch TREE LOGS     # TREE: a copy of this tree, rewritten in place
    python -m evaluator run ...                        # in TREE
    python scripts/gpu/selftime.py summarize LOGS
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

# Added to the runner's module before its `__main__` block: its own `batch` wrapped (the calls, `take`s and
# synchronizes timed as they happen, as scripts/gpu/channel.py wraps it), and each record written when the
# runner is next armed, outside any timed window.
RUNNER_CLOCK = """
SELFTIME: list = []


def _selftimed_batch(state: State, command: dict[str, Any], real: Callable[..., Answer] = batch) -> Answer:
    from evaluator import results

    calls: list[float] = []
    takes: list[float] = []
    clock: dict[str, float] = {}
    take, gather, call, sync = results.take, results.gather, State.call, State.sync

    def timed_call(self: State, *args: Any) -> Any:
        clock["called"] = time.perf_counter()
        return call(self, *args)

    def timed_take(*args: Any) -> Any:
        started = time.perf_counter()
        try:
            return take(*args)
        finally:
            takes.append(time.perf_counter() - started)

    def timed_sync(self: State) -> None:
        sync(self)
        calls.append(time.perf_counter() - clock["called"])

    def timed_gather(views: list[Any]) -> bytes:
        clock["gathering"] = time.perf_counter()
        return gather(views)

    results.take, results.gather, State.call, State.sync = timed_take, timed_gather, timed_call, timed_sync
    started = time.perf_counter()
    try:
        answer = real(state, command)
    finally:
        results.take, results.gather, State.call, State.sync = take, gather, call, sync
    SELFTIME.append({"pid": os.getpid(), "query": state.query.number, "side": "kernel" if state.filename else
                     "baseline", "calls_s": calls, "take_s": takes, "batch_s": clock["gathering"] - started,
                     "gather_s": time.perf_counter() - clock["gathering"]})
    return answer


def _logged_arm(state: State, command: dict[str, Any], real: Callable[..., Answer] = arm) -> Answer:
    import json

    if SELFTIME:
        with open(os.path.join(LOG_FOLDER, f"runner-{os.getpid()}.jsonl"), "a") as log:
            log.writelines(json.dumps(record) + "\\n" for record in SELFTIME)
        SELFTIME.clear()
    return real(state, command)


COMMANDS.update(batch=_selftimed_batch, arm=_logged_arm)
"""

HARNESS_RETURN = '    return trip.minus(seconds, name, len(command.get("calls", []))), answer, payload\n'
HARNESS_LOGGED = """    scored = trip.minus(seconds, name, len(command.get("calls", [])))
    import json

    with open(os.path.join(LOG_FOLDER, f"harness-{os.getpid()}.jsonl"), "a") as log:
        log.write(json.dumps({"query": sides.query.number, "side": name, "calls": len(command["calls"]),
                              "seconds": seconds, "scored": scored, "at": time.monotonic()}) + "\\n")
    return scored, answer, payload
"""


def replace_once(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{path}: the text to rewrite is not there once: {old[:60]!r}"
    path.write_text(text.replace(old, new))


def patch(tree: Path, logs: Path) -> None:
    """`tree`'s runner and harness rewritten to log to `logs` (a path written into the code: a sandboxed
    runner's environment is cleared)."""
    folder = f"\nLOG_FOLDER = {str(logs.resolve())!r}\n"
    main = '\nif __name__ == "__main__":'
    replace_once(tree / "evaluator/runner/commands.py", main, folder + RUNNER_CLOCK + main)
    timed = tree / "evaluator/harness/timed.py"
    replace_once(timed, HARNESS_RETURN, HARNESS_LOGGED)
    replace_once(timed, "import hashlib\n", "import hashlib\nimport os\n")
    replace_once(timed, "\nDISTURBED = ", folder + "DISTURBED = ")


def ms(values: list[float]) -> str:
    return f"{1e3 * statistics.median(values):.4f}"


def records(folder: Path, pattern: str) -> dict[tuple[int, str], list[dict[str, Any]]]:
    """The logs' records matching `pattern`, per query and side, in the order they were written."""
    found: dict[tuple[int, str], list[dict[str, Any]]] = defaultdict(list)
    for path in sorted(folder.glob(pattern)):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            found[(record["query"], record["side"])].append(record)
    return found


def summarize(folder: Path) -> None:
    harness, runners = records(folder, "harness-*.jsonl"), records(folder, "runner-*.jsonl")
    print("| query | side | batches | calls | harness raw | harness scored | runner batch | first call | "
          "other calls | takes | gather |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    rows: list[tuple[str, list[tuple[dict[str, Any], dict[str, Any]]]]] = []
    for key in sorted(harness):
        # A runner's batches are the harness's of that query and side, in order (the last one unlogged).
        pairs = list(zip(harness[key], runners.get(key, []), strict=False))
        assert all(h["calls"] == len(r["calls_s"]) for h, r in pairs), f"Q{key[0]} {key[1]}: out of step"
        # The baseline's batches beside the kernel's, then alone once the kernel's runner is gone.
        kernel = harness.get((key[0], "kernel"))
        last = kernel[-1]["at"] if kernel and key[1] == "baseline" else float("inf")
        for phase, kept in (
            ("", [p for p in pairs if p[0]["at"] <= last]),
            (" alone", [p for p in pairs if p[0]["at"] > last]),
        ):
            # Warm-up batches of one call, then the samples (evaluator/timing.py, `time_rounds`).
            for calls in sorted({h["calls"] for h, _ in kept}):
                rows.append((f"Q{key[0]} | {key[1]}{phase}", [p for p in kept if p[0]["calls"] == calls]))
    for label, pairs in rows:
        if not pairs:
            continue

        others = [statistics.mean(r["calls_s"][1:]) for _, r in pairs if len(r["calls_s"]) > 1] or [0.0]
        cells = [
            [h["seconds"] / h["calls"] for h, _ in pairs],
            [h["scored"] / h["calls"] for h, _ in pairs],
            [r["batch_s"] / len(r["calls_s"]) for _, r in pairs],
            [r["calls_s"][0] for _, r in pairs],
            others,
            [sum(r["take_s"]) / len(r["take_s"]) for _, r in pairs],
            [r["gather_s"] / len(r["calls_s"]) for _, r in pairs],
        ]
        print(f"| {label} | {len(pairs)} | {pairs[0][0]['calls']} | " + " | ".join(map(ms, cells)) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("action", choices=("patch", "summarize"))
    parser.add_argument("folder", type=Path, help="patch: the tree; summarize: the logs")
    parser.add_argument("logs", type=Path, nargs="?", help="patch: where the logs go")
    args = parser.parse_args()
    if args.action == "patch":
        assert args.logs, "patch TREE LOGS"
        patch(args.folder, args.logs)
    else:
        summarize(args.folder)


if __name__ == "__main__":
    main()
