"""Command line: `python -m evaluator --help`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evaluator.errors import EvaluatorError, SubmissionError

DEFAULT_DATA_DIR = os.environ.get("DKB_DATA_DIR", "var/data")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evaluator", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    for name, (summary, arguments, handler) in COMMANDS.items():
        sub = commands.add_parser(name, help=summary)
        arguments(sub)
        sub.set_defaults(handler=handler)
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except SubmissionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except EvaluatorError as exc:
        print(f"evaluator error: {exc}", file=sys.stderr)
        return 3


def _data(parser: argparse.ArgumentParser, sf: float = 0.01, device: str | None = "auto") -> None:
    """The options most commands share: the scale factor, the data folder, the device."""
    parser.add_argument("--sf", type=float, default=sf, help=f"scale factor (default {sf:g})")
    parser.add_argument("--data-dir", type=Path, default=Path(DEFAULT_DATA_DIR))
    if device == "auto":
        parser.add_argument("--device", default="auto", help="cpu, cuda or auto (cuda when present)")
    elif device:
        parser.add_argument("--device", default=device, help=f"cpu or cuda (default {device})")


def _prepare_arguments(parser: argparse.ArgumentParser) -> None:
    _data(parser, device=None)


def _run_arguments(parser: argparse.ArgumentParser) -> None:
    from evaluator.harness.judge import MEMORY_LIMIT

    parser.add_argument("kernel_set", type=Path, help="folder with manifest.json and qNN.py files")
    _data(parser)
    parser.add_argument(
        "--check-sf",
        default="auto",
        help="further scale factors of the correctness trials, e.g. 1 or 1,0.1; none; auto (default): "
        "SF/10 when SF >= 1, else none",
    )
    parser.add_argument("--out", type=Path, help="write the report here (default: stdout)")
    parser.add_argument(
        "--baseline",
        choices=("recorded", "best", "compiled", "eager"),
        default="recorded",
        help="recorded (default): per query, the mode `baselines` chose for this hardware (without a "
        "calibration: compiled on CUDA, eager on CPU); best: probe both per query (experiments only)",
    )
    parser.add_argument("--trials", type=int, default=5, help="parameter sets per query (default 5)")
    parser.add_argument("--seed", type=int, help="seed for the random parameters (default: a secret one)")
    parser.add_argument("--max-time", type=float, help="timing budget per query, s (15 on a GPU, 2 on a CPU)")
    parser.add_argument("--queries", type=_query_list, help="only these, e.g. 6,14 (default: the set's)")
    parser.add_argument(
        "--sandbox",
        choices=("bubblewrap", "docker", "process"),
        default="process",
        help="how runners start: process (default: your own kernels, rlimits only), bubblewrap (the site's)",
    )
    parser.add_argument("--timeout", type=int, default=3600, help="wall-time limit of the evaluation, s")
    parser.add_argument(
        "--ahead",
        choices=("trials", "tail"),
        default="trials",
        help="when the next query's runners start: trials (default), or tail (after the timed calls; "
        "harness 0.6.1, kept for the A/B in docs/benchmarks.md)",
    )
    parser.add_argument(
        "--duckdb-memory",
        default=MEMORY_LIMIT,
        help=f"DuckDB's memory limit for the expected answers (default {MEMORY_LIMIT}); 'default' leaves "
        "DuckDB's own, 80%% of the host's memory",
    )


def _baselines_arguments(parser: argparse.ArgumentParser) -> None:
    _data(parser, sf=10.0)
    parser.add_argument("--queries", type=_query_list, help="e.g. 1,6,13 (default: all)")
    parser.add_argument(
        "--jobs",
        type=int,
        default=4,
        help="queries loading at once; one compiles and times at a time (default 4)",
    )


def _check_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kernel", type=Path, help="a kernel file named after its query, e.g. q06.py")
    parser.add_argument("--language", choices=("triton", "cuda"), default="triton")
    parser.add_argument("--scope", choices=("full", "core"), default="full")
    _data(parser)
    parser.add_argument("--trials", type=int, default=5, help="parameter sets (default 5)")
    parser.add_argument("--seed", type=int, help="seed for the random parameters (default: a secret one)")


def _taskpack_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, required=True, help="the folder to write")
    _data(parser, sf=10.0, device=None)
    parser.add_argument("--hardware", choices=("h200", "h100"), default="h200")


def _validate_arguments(parser: argparse.ArgumentParser) -> None:
    _data(parser, device="cpu")
    parser.add_argument("--random-sets", type=int, default=5, help="random parameter sets per query")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--queries", type=_query_list, help="e.g. 1,6,13 (default: all)")
    parser.add_argument("--out", type=Path, help="also write the rows as JSON here")


def _bench_arguments(parser: argparse.ArgumentParser) -> None:
    _data(parser)
    parser.add_argument("--queries", type=_query_list, help="e.g. 1,6,13 (default: all)")
    parser.add_argument("--max-time", type=float, default=3.0, help="timing budget per query, seconds")
    parser.add_argument("--out", type=Path, help="write the rows as JSON here (after every query)")
    parser.add_argument("--generated", action="store_true", help="also time the compiler's programs")


def _torchplan_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sql", help="the SQL text, or @FILE to read it from a file")
    parser.add_argument("--out", type=Path, help="write the module here (default: stdout)")


def _prepare(args: argparse.Namespace) -> int:
    from evaluator.tpch.generate import prepare as prepare_data

    print(prepare_data(args.data_dir, args.sf))
    return 0


def _taskpack(args: argparse.Namespace) -> int:
    from evaluator.tools.taskpack import write_taskpack
    from evaluator.tpch.generate import prepare as prepare_data

    folders = write_taskpack(args.out, prepare_data(args.data_dir, args.sf), args.hardware)
    print(f"{len(folders)} queries written to {args.out}")
    return 0


def _torchplan(args: argparse.Namespace) -> int:
    from evaluator.torchplan.compiler import cli_main

    sql = Path(args.sql[1:]).read_text() if args.sql.startswith("@") else args.sql
    return cli_main(sql, args.out)


def _run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from evaluator.evaluation import Job, evaluate
    from evaluator.tpch.scales import check_scale_factors

    try:
        checks = check_scale_factors(args.check_sf, args.sf)
    except ValueError as exc:
        print(f"error: --check-sf {exc}", file=sys.stderr)
        return 2
    job = Job(
        kernel_dir=args.kernel_set,
        data_dir=args.data_dir,
        scale_factor=args.sf,
        device=_resolve_device(args.device),
        timeout_s=args.timeout,
        max_time_per_query_s=args.max_time,
        trials=args.trials,
        queries=tuple(args.queries or ()),
        check_scale_factors=checks,
        seed=args.seed,
        baseline=args.baseline,
        ahead=args.ahead,
        duckdb_memory=None if args.duckdb_memory == "default" else args.duckdb_memory,
    )
    with tqdm(desc=f"{args.kernel_set.name} SF{args.sf:g}", unit="query", file=sys.stderr) as bar:
        report = evaluate(job, backend=args.sandbox, progress=lambda p: _progress(bar, p))
    text = json.dumps(report, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    else:
        print(text)
    ranked = report["timing"].get("reason") or "ranked"
    statuses = [q["status"] for q in report["queries"]]
    kernels = len(statuses) - statuses.count("missing")
    overall = report["overall_speedup"]
    print(
        f"overall speedup {'-' if overall is None else f'{overall:.3f}x'}, "
        f"{statuses.count('passed')} of {kernels} kernels passed "
        f"(pass rate {report['pass_rate']:.0%} of the {len(statuses)} queries), "
        f"{report['wall_s']:.0f} s; {ranked}",
        file=sys.stderr,
    )
    return 0


def _progress(bar: Any, progress: Any) -> None:
    """The bar: query i of n; a line per query as it ends."""
    bar.total = progress.total
    if progress.phase == "started":
        bar.set_postfix_str(f"Q{progress.query:02d}")
    else:
        bar.update(progress.done - bar.n)
        bar.write(f"Q{progress.query:02d} {progress.status}", file=sys.stderr)


def _baselines(args: argparse.Namespace) -> int:
    from evaluator.harness.baselines import RULE, calibrate, record_path
    from evaluator.queries import QUERIES
    from evaluator.tpch.generate import prepare as prepare_data

    device = _resolve_device(args.device)
    folder = prepare_data(args.data_dir, args.sf, progress=False)
    print(f"calibrating on {device}, SF{args.sf:g}: {RULE}", flush=True)
    rows = calibrate(
        args.data_dir,
        folder,
        args.sf,
        device,
        args.queries or sorted(QUERIES),
        jobs=args.jobs,
        echo=lambda line: print(line, flush=True),
    )
    print(f"recorded in {record_path(args.data_dir, device)}")
    return 0 if all("error" not in row for row in rows) else 1


def _check(args: argparse.Namespace) -> int:
    from evaluator.evaluation import Job
    from evaluator.tools.check import check_kernel

    job = Job(
        kernel_dir=args.kernel.parent,
        data_dir=args.data_dir,
        scale_factor=args.sf,
        device=_resolve_device(args.device),
        trials=args.trials,
        seed=args.seed,
    )
    result = check_kernel(args.kernel, language=args.language, scope=args.scope, job=job)
    print(json.dumps(result, indent=2))
    return 0 if result["status"] == "passed" else 1


def _resolve_device(name: str) -> str:
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return name


def _query_list(text: str) -> list[int]:
    from evaluator.queries import QUERIES

    try:
        numbers = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give query numbers, e.g. 1,6,13") from None
    unknown = sorted(set(numbers) - set(QUERIES))
    if unknown or not numbers:
        raise argparse.ArgumentTypeError(f"no such query: {unknown or text!r} (the benchmark has 1-22)")
    return numbers


def _validate(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from tqdm import tqdm

    from evaluator.queries import QUERIES
    from evaluator.tools.validate import validate_query
    from evaluator.tpch.generate import prepare as prepare_data

    folder = prepare_data(args.data_dir, args.sf)
    numbers = args.queries or sorted(QUERIES)
    rows = []
    for number in tqdm(numbers, desc=f"validate SF{args.sf:g} on {args.device}", unit="query"):
        try:
            rows.append(validate_query(QUERIES[number], folder, args.device, args.random_sets, args.seed))
        except Exception as exc:  # one broken plan must not hide the others' results
            from evaluator.tools.validate import Validation

            rows.append(Validation(number, 0, False, f"{type(exc).__name__}: {exc}", 0.0, 0.0))
    print(f"{'query':>5} {'trials':>6} {'result':>6} {'plan ms':>9} {'duckdb ms':>9}  reason")
    for row in rows:
        verdict = "ok" if row.passed else "FAIL"
        timing = f"{row.plan_ms:>9.1f} {row.duckdb_ms:>9.1f}"
        print(f"Q{row.query:02d}   {row.trials:>6} {verdict:>6} {timing}  {row.reason}")
    passed = sum(row.passed for row in rows)
    print(f"{passed}/{len(rows)} TorchPlans match DuckDB at SF{args.sf:g} on {args.device}")
    if args.out:
        args.out.write_text(json.dumps([asdict(row) for row in rows], indent=1) + "\n")
    return 0 if passed == len(rows) else 1


def _bench(args: argparse.Namespace) -> int:
    import torch

    from evaluator import hardware
    from evaluator.queries import QUERIES
    from evaluator.timing import TimingPolicy
    from evaluator.tools.bench import BenchRow, as_dicts, bench_query, copy_bandwidth_gbs, table
    from evaluator.tpch.generate import prepare as prepare_data

    device = torch.device(_resolve_device(args.device))
    folder = prepare_data(args.data_dir, args.sf)
    bandwidth = copy_bandwidth_gbs(device)
    info = hardware.describe(device)
    print(
        f"{info['name']} ({device.type}), SF{args.sf:g}, copy bandwidth {bandwidth or 0:.0f} GB/s", flush=True
    )
    policy = TimingPolicy(max_time_s=args.max_time, min_time_s=min(1.0, args.max_time))
    rows = []
    for number in args.queries or sorted(QUERIES):
        try:
            row = bench_query(QUERIES[number], folder, device, bandwidth, policy, args.generated)
        except Exception as exc:  # one failing plan must not hide the other queries' figures
            error = f"{type(exc).__name__}: {exc}"[:300]
            row = BenchRow(number, 0.0, None, None, None, 0, None, correct=False, note=error)
        rows.append(row)
        print(table([row]).splitlines()[2], flush=True)
        if args.out:
            document = {"hardware": info, "scale_factor": args.sf, "copy_bandwidth_gbs": bandwidth}
            args.out.write_text(json.dumps(document | {"rows": as_dicts(rows)}, indent=1) + "\n")
    print(table(rows))
    return 0 if all(r.correct for r in rows) else 1


def _submit_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kernel_set", type=Path, help="folder with manifest.json and qNN.py files")
    parser.add_argument(
        "--server", required=True, help="the leaderboard's address, e.g. http://127.0.0.1:8000"
    )
    parser.add_argument(
        "--token",
        default=os.environ.get("DKB_TOKEN"),
        help="your API token (from the upload page; default: $DKB_TOKEN)",
    )
    parser.add_argument(
        "--kind",
        choices=("ranked", "feedback"),
        default="ranked",
        help="ranked (default): every active hardware, may be ranked once published; feedback: the set's "
        "own queries only, never ranked or public",
    )
    parser.add_argument("--publish", action="store_true", help="make the set public right after the upload")
    parser.add_argument("--no-wait", action="store_true", help="upload and return; do not follow the runs")
    parser.add_argument("--poll", type=float, default=5.0, help="seconds between status checks (default 5)")
    parser.add_argument("--wait", type=float, default=3600.0, help="give up following after this many s")


def _submit(args: argparse.Namespace) -> int:
    from evaluator.tools.submit import Client, submit

    if not args.token:
        print("error: give --token or set DKB_TOKEN (the upload page makes one)", file=sys.stderr)
        return 2
    if args.publish and args.kind == "feedback":
        print("error: feedback runs are never public: drop --publish or use --kind ranked", file=sys.stderr)
        return 2
    return submit(
        args.kernel_set,
        client=Client(args.server, args.token),
        kind=args.kind,
        publish=args.publish,
        wait=not args.no_wait,
        poll_s=args.poll,
        wait_s=args.wait,
        echo=lambda line: print(line, flush=True),
    )


Arguments = Callable[[argparse.ArgumentParser], None]
Handler = Callable[[argparse.Namespace], int]
# name: (help, its arguments, its handler), in the order `--help` lists them
COMMANDS: dict[str, tuple[str, Arguments, Handler]] = {
    "prepare": ("generate TPC-H data and its columnar cache", _prepare_arguments, _prepare),
    "run": ("evaluate a kernel set and write a JSON report", _run_arguments, _run),
    "baselines": (
        "choose each query's baseline mode on this hardware and fill the compile cache",
        _baselines_arguments,
        _baselines,
    ),
    "check": ("fast feedback on one kernel file, as JSON", _check_arguments, _check),
    "taskpack": ("write what a model is given, per query", _taskpack_arguments, _taskpack),
    "validate": ("check every TorchPlan against DuckDB; prints a table", _validate_arguments, _validate),
    "bench": ("DuckDB vs eager vs compiled TorchPlan vs bandwidth floor", _bench_arguments, _bench),
    "torchplan": ("compile a SQL query into a TorchPlan module", _torchplan_arguments, _torchplan),
    "submit": ("upload a kernel set to a leaderboard and wait for its results", _submit_arguments, _submit),
}


if __name__ == "__main__":
    sys.exit(main())
