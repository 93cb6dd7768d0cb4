"""Server time of the site's public pages with many published sets: a benchmark, not a test.

    .venv/bin/python scripts/bench_site.py                    # 100 then 1,000 sets, SQLite in a temp dir
    .venv/bin/python scripts/bench_site.py --sets 100 --keep /tmp/dkb-100 --build-only   # a database to serve
    .venv/bin/python scripts/bench_site.py --sets 100 --reuse --server http://127.0.0.1:8765  # via gunicorn

It builds a throwaway database (SQLite under a temporary DKB_VAR_DIR, with the file cache `make run` uses;
or the PostgreSQL database and Redis cache that DATABASE_URL and REDIS_URL name, which must hold no sets)
of N published sets x 22 results, each run carrying a report made from one the harness wrote (session 9's
triton-core run on an H200, docs/results/2026-12-03-h200-site-s9/reports.tgz: every query gets a copy of
one of its passed queries' entries, timing statistics, attribution and calibration included, ~100 KB a
report). Every tenth set also has a CPU run (correctness only) and one in twenty an unstable query, so the
"Not ranked" lists are filled too. The database grows from one N to the next.

Then it times, in this process through Django's test Client (the whole middleware stack, the view, the
template, the database and the cache; no network and no WSGI server), the home page, the matrix, a query
page and the best set's page: cold (the first request after the cache is cleared, as after a new result
lands) and warm (the same request again). With --server, the same requests go over HTTP to a running
server (gunicorn) that serves this database and cache. It prints one table per N; --json writes the figures.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import random
import statistics
import sys
import tarfile
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE_REPORTS = ROOT / "docs" / "results" / "2026-12-03-h200-site-s9" / "reports.tgz"
TEMPLATE_MEMBER = "reports/triton-core-run2.json"
KERNEL_SOURCES = sorted((ROOT / "examples").glob("*/q*.py"))
FAILURES = {
    "wrong_answer": "Q{q:02d} differs from DuckDB's answer at SF1: row 3, column revenue: 1234.5 != 1234.7",
    "runtime_error": "Traceback (most recent call last):\n  ...\ntriton.runtime.errors.OutOfResources: "
    "out of resource: shared memory, Required: 262144, Hardware limit: 232448",
    "build_error": "NameError: name 'tl' is not defined (q{q:02d}.py, line 41)",
    "timeout": "stopped after 120 s (its wall-time limit)",
}
PAGES = ("home", "matrix", "query", "submission")


def _setup_django(var_dir: Path | None) -> None:
    if var_dir is not None:
        os.environ["DKB_VAR_DIR"] = str(var_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def _template_report() -> dict[str, Any]:
    with tarfile.open(TEMPLATE_REPORTS) as archive:
        member = archive.extractfile(TEMPLATE_MEMBER)
        assert member is not None
        return json.load(member)["report"]


def _report(template: dict[str, Any], rng: random.Random, *, cpu: bool, unstable: bool) -> dict[str, Any]:
    """A 22-query report in the harness's shape, scored by the harness's own `Report.aggregate`."""
    from evaluator.report import QueryResult, Report

    passed = [q for q in template["queries"] if q["status"] == "passed"]
    queries = []
    for number in range(1, 23):
        entry = copy.deepcopy(passed[number % len(passed)])
        entry["query"] = number
        draw = rng.random()
        if draw < 0.75:
            speedup = math.exp(rng.gauss(0.15, 0.6))
            entry["kernel_ms"] = entry["baseline_ms"] / speedup
            entry["speedup"] = speedup
            entry["roofline_fraction"] = min(0.95, (entry["roofline_fraction"] or 0.2) * speedup)
            entry["stats"]["kernel"]["median_ms"] = entry["kernel_ms"]
            if unstable and number == 7:
                entry["stats"]["kernel"]["stderr_pct"] = 3.4
        elif draw < 0.92:
            status = rng.choice(sorted(FAILURES))
            entry |= {"status": status, "reason": FAILURES[status].format(q=number), "kernel_ms": None}
            entry |= {"speedup": None, "roofline_fraction": None, "kernel_time_share": None, "launches": None}
            entry["stats"] = {
                k: entry["stats"][k] for k in ("baseline", "baseline_mode", "roofline_floor_ms")
            }
        else:
            entry = {"query": number, "status": "missing", "reason": "the set has no kernel for this query"}
        queries.append(QueryResult(**entry))
    header = {k: copy.deepcopy(v) for k, v in template.items() if k not in ("queries", "timing")}
    if cpu:
        header["hardware"] = {"device": "cpu", "name": "AMD EPYC (Triton interpreter)", "torch": "2.13.0"}
        header["scale_factor"] = 0.01
    header["manifest"]["seed"] = rng.randrange(2**32)
    return Report(**header, queries=queries).aggregate().to_dict()


def build(total: int, *, seed: int) -> None:
    """Grow the database to `total` published sets (22 kernels each, an H200 run each, some CPU runs)."""
    from django.contrib.auth.models import User
    from django.db import transaction
    from django.utils import timezone

    from evaluator.queries import QUERIES
    from leaderboard import highlighting, services
    from leaderboard.models import (
        BaselineCalibration,
        EvaluationRun,
        Hardware,
        Kernel,
        LanguageModel,
        Query,
        QueryResult,
        Submission,
        report_timing,
    )

    if not Query.objects.exists():
        for query in QUERIES.values():
            # The plan's file rather than `plan_source()`, which imports torch.
            plan = (ROOT / "evaluator" / "torchplan" / "plans" / f"{query.slug}.py").read_text()
            Query.objects.create(number=query.number, name=query.name, sql=query.sql(), torchplan_source=plan)
    gpu, _ = Hardware.objects.get_or_create(
        slug="cuda-nvidia-h200",
        defaults={
            "name": "NVIDIA H200",
            "device": "cuda",
            "peak_bandwidth_gbs": 4800.0,
            "scale_factor": 10.0,
        },
    )
    cpu, _ = Hardware.objects.get_or_create(
        slug="cpu-bench", defaults={"name": "AMD EPYC", "device": "cpu", "scale_factor": 0.01}
    )
    queries = {q.number: q for q in Query.objects.all()}
    template = _template_report()
    import evaluator

    for entry in template["queries"]:
        calibration = entry.get("stats", {}).get("baseline_calibration")
        if calibration:
            for number in queries:
                BaselineCalibration.objects.get_or_create(
                    hardware=gpu,
                    query=queries[number],
                    scale_factor=10.0,
                    harness_version=evaluator.HARNESS_VERSION,
                    torch_version="2.11.0+cu130",
                    defaults={
                        k: calibration[k]
                        for k in (
                            "mode",
                            "eager_ms",
                            "compiled_ms",
                            "eager_stderr_pct",
                            "compiled_stderr_pct",
                        )
                    },
                )
            break
    sources = [(path.read_text(), None) for path in KERNEL_SOURCES]
    sources = [(source, highlighting.to_html(source, "python")) for source, _ in sources]
    users = [User.objects.get_or_create(username=f"bench-user-{k:02d}")[0] for k in range(40)]
    models = [
        LanguageModel.objects.get_or_create(name=f"Bench LLM {k:02d}", slug=f"bench-llm-{k:02d}")[0]
        for k in range(24)
    ]
    start = Submission.objects.count()
    now = timezone.now()
    for first in range(start, total, 100):
        with transaction.atomic():
            batch = range(first, min(first + 100, total))
            submissions = Submission.objects.bulk_create(
                Submission(
                    uploader=users[i % len(users)],
                    language_model=models[i % len(models)],
                    language="triton" if i % 3 else "cuda",
                    scope="full" if i % 2 else "core",
                    agent="bench",
                    archive_sha256=f"{i:064x}",
                    created=now - timedelta(minutes=10 * (total - i)),
                    published_at=now - timedelta(minutes=10 * (total - i) - 5),
                )
                for i in batch
            )
            Kernel.objects.bulk_create(
                Kernel(
                    submission=s,
                    query=queries[n],
                    source=sources[n % len(sources)][0],
                    source_html=sources[n % len(sources)][1],
                )
                for s in submissions
                for n in queries
            )
            runs, results = [], []
            for i, submission in zip(batch, submissions, strict=True):
                rng = random.Random(seed * 1_000_003 + i)
                for hardware in (gpu, cpu) if i % 10 == 0 else (gpu,):
                    report = _report(template, rng, cpu=hardware.is_cpu, unstable=i % 20 == 7)
                    finished = submission.created + timedelta(minutes=4)
                    run = EvaluationRun(
                        submission=submission,
                        hardware=hardware,
                        status="succeeded",
                        created=submission.created,
                        started=submission.created + timedelta(seconds=5),
                        finished=finished,
                        attempts=1,
                        harness_version=report["harness_version"],
                        sandbox_backend="bubblewrap",
                        report=report,
                        timing_ranked=report_timing(report, hardware=hardware)[0],
                        **{f: report[f] for f in ("overall_speedup", "geomean_speedup", "pass_rate")},
                        **{f: report[f] for f in ("fast_1", "fast_2")},
                    )
                    runs.append(run)
                    results.append(report["queries"])
            EvaluationRun.objects.bulk_create(runs)
            QueryResult.objects.bulk_create(
                QueryResult(
                    run=run,
                    query=queries[row["query"]],
                    **{k: row[k] for k in ("status", "reason", "baseline_ms", "kernel_ms", "speedup")},
                    **{k: row[k] for k in ("roofline_fraction", "kernel_time_share", "launches", "stats")},
                    trials=row["trials"] or 0,
                )
                for run, rows in zip(runs, results, strict=True)
                for row in rows
            )
    services.results_changed()
    from django.db import connection

    if connection.vendor == "postgresql":
        # As autovacuum would within a minute of such a load: until then the planner takes the tables for
        # nearly empty and may pick a plan that is quadratic in the runs (0.27 s for a ranking's ids at
        # 1,000 sets, against 11 ms once analysed).
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


class _HttpClient:
    """GET over HTTP from a running server (gunicorn), the body read whole, as the test Client answers."""

    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/")

    def get(self, url: str) -> Any:
        import urllib.error
        import urllib.request
        from types import SimpleNamespace

        try:
            with urllib.request.urlopen(self.base + url) as response:  # noqa: S310 (a loopback URL we were given)
                return SimpleNamespace(status_code=response.status, content=response.read())
        except urllib.error.HTTPError as exc:
            return SimpleNamespace(status_code=exc.code, content=b"")


def _time(client: Any, url: str) -> tuple[float, int]:
    start = time.perf_counter()
    response = client.get(url)
    elapsed = time.perf_counter() - start
    if response.status_code != 200:
        raise SystemExit(f"GET {url}: {response.status_code}")
    return elapsed * 1000, len(response.content)


def measure(*, cold: int, warm: int, server: str | None = None) -> dict[str, dict[str, float]]:
    """Per page: the median cold and warm server time (ms), the warm p95 and the page's size (KB). With
    `server`, through HTTP from that server (which must share this database and cache: cold is after this
    process clears the cache); otherwise in this process with Django's test Client."""
    from django.core.cache import cache
    from django.test import Client

    from leaderboard.models import EvaluationRun

    best = EvaluationRun.objects.ranked().values_list("submission_id", flat=True).first()
    urls = dict(zip(PAGES, ("/", "/matrix/", "/queries/6/", f"/submissions/{best}/"), strict=True))
    client = _HttpClient(server) if server else Client(HTTP_HOST="127.0.0.1")
    figures = {}
    for page, url in urls.items():
        # This process's first (each gunicorn worker's, through a server): templates compiled, the queries'
        # SQL highlighted.
        for _ in range(4 if server else 1):
            _time(client, url)
        cold_ms, cold_cpu_ms = [], []
        for _ in range(cold):
            cache.clear()
            cpu = time.process_time()
            cold_ms.append(_time(client, url)[0])
            cold_cpu_ms.append((time.process_time() - cpu) * 1000)
        warm_ms, size = [], 0
        for _ in range(warm):
            elapsed, size = _time(client, url)
            warm_ms.append(elapsed)
        figures[page] = {
            "cold_ms": statistics.median(cold_ms),
            # This process's CPU time: on a shared machine the part of a cold request that other work cannot
            # stretch. In-process only (it leaves out PostgreSQL's and Redis's own); 0 through a server.
            "cold_cpu_ms": 0.0 if server else statistics.median(cold_cpu_ms),
            "warm_ms": statistics.median(warm_ms),
            "warm_p95_ms": sorted(warm_ms)[max(0, math.ceil(0.95 * len(warm_ms)) - 1)],
            "kb": size / 1024,
        }
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sets", type=int, nargs="+", default=[100, 1000], help="published sets, ascending")
    parser.add_argument("--cold", type=int, default=5, help="cold requests per page (each after a clear)")
    parser.add_argument("--warm", type=int, default=30, help="warm requests per page")
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument(
        "--keep", type=Path, help="build in this DKB_VAR_DIR and keep it (default: a temp dir)"
    )
    parser.add_argument("--build-only", action="store_true", help="build the database, time nothing")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="measure a database this script built before (DATABASE_URL's or --keep's), growing it if asked",
    )
    parser.add_argument(
        "--server",
        help="time the pages through this running server (e.g. gunicorn on http://127.0.0.1:8765, serving "
        "the same database and cache) instead of in this process",
    )
    args = parser.parse_args(argv)
    postgres = bool(os.environ.get("DATABASE_URL"))
    with tempfile.TemporaryDirectory(prefix="dkb-bench-") as tmp:
        # With DATABASE_URL too: the dev secret key and (without REDIS_URL) the file cache live there.
        var_dir = args.keep or Path(tmp)
        var_dir.mkdir(parents=True, exist_ok=True)
        _setup_django(var_dir)
        from django.conf import settings
        from django.core.management import call_command
        from django.db import connection

        from leaderboard.models import Submission

        backend = settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[1]
        print(f"database: {connection.vendor}; cache: {backend}")
        call_command("migrate", verbosity=0)
        if postgres and not args.reuse and Submission.objects.exists():
            raise SystemExit("DATABASE_URL's database already holds sets: give the benchmark an empty one")
        table: dict[int, dict[str, dict[str, float]]] = {}
        for total in sorted(args.sets):
            started = time.perf_counter()
            build(total, seed=args.seed)
            print(f"built {total} published sets in {time.perf_counter() - started:.0f} s", flush=True)
            if args.build_only:
                continue
            table[total] = figures = measure(cold=args.cold, warm=args.warm, server=args.server)
            load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
            how = f"HTTP from {args.server}" if args.server else "Django test Client"
            print(f"\n{total} published sets x 22 results: server time, ms ({how}; load {load})")
            print("| page | cold (median) | cold, CPU of this process | warm (median) | warm p95 | KB |")
            print("|---|---|---|---|---|---|")
            for page, row in figures.items():
                cpu = f"{row['cold_cpu_ms']:.1f}" if row["cold_cpu_ms"] else "–"
                print(
                    f"| {page} | {row['cold_ms']:.1f} | {cpu} | {row['warm_ms']:.1f} "
                    f"| {row['warm_p95_ms']:.1f} | {row['kb']:.0f} |"
                )
            print(flush=True)
        if args.json:
            args.json.write_text(json.dumps(table, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
