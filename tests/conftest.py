"""The cast every leaderboard test draws on: an uploader, a rival, an admin, clients, hardware, a kernel set.

Tasks go to a queue named for the test session, so a worker started by `make run` on the same Redis or
database never takes a test's runs (and a test's worker never takes the dev server's).
"""

from __future__ import annotations

import json
import os

# The test session runs on the CPU: Triton must be in interpreter mode before anything imports it,
# since it reads the variable once, when its library functions are defined.
os.environ.setdefault("TRITON_INTERPRET", "1")

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from evaluator.kernelset import KernelSet, kernel_set_from_dir
from evaluator.queries import QUERIES
from evaluator.report import Report

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
TEST_QUEUE = f"dkb-test-{uuid.uuid4().hex[:8]}"
PASSWORD = "kernels-are-fast-42"


@pytest.fixture(autouse=True)
def fresh_cache_generation() -> None:
    """Each test starts a new cache generation, so no cached page survives from another test's data."""
    from leaderboard.services import results_changed

    results_changed()


@pytest.fixture
def test_queue() -> Iterator[str]:
    yield TEST_QUEUE
    from django_q.brokers import get_broker

    # Tasks a test queued but no worker ran must not linger in Redis for the next session.
    get_broker(TEST_QUEUE).purge_queue()


@pytest.fixture
def q6(db: None) -> Any:
    from leaderboard.models import Query

    query = QUERIES[6]
    # Read the plan's file rather than `plan_source()`: that imports torch, seconds per test.
    source = (ROOT / "evaluator" / "torchplan" / "plans" / f"{query.slug}.py").read_text()
    return Query.objects.create(number=6, name=query.name, sql=query.sql(), torchplan_source=source)


@pytest.fixture
def cpu(db: None, test_queue: str) -> Any:
    """The CPU hardware every test submission is evaluated on."""
    from leaderboard.models import Hardware

    return Hardware.objects.create(
        slug="cpu-test", name="Test CPU", device=Hardware.Device.CPU, scale_factor=0.01, queue=test_queue
    )


@pytest.fixture
def gpu(db: None, test_queue: str) -> Any:
    from leaderboard.models import Hardware

    return Hardware.objects.create(
        slug="cuda-h200",
        name="NVIDIA H200",
        device=Hardware.Device.CUDA,
        peak_bandwidth_gbs=4800.0,
        scale_factor=10,
        queue=f"{test_queue}-gpu",
    )


@pytest.fixture
def password() -> str:
    return PASSWORD


@pytest.fixture
def uploader(db: None) -> User:
    return User.objects.create_user("ada", "ada@example.org", PASSWORD)


@pytest.fixture
def rival(db: None) -> User:
    return User.objects.create_user("grace", "grace@example.org", PASSWORD)


@pytest.fixture
def admin(db: None) -> User:
    return User.objects.create_superuser("root", "root@example.org", PASSWORD)


@pytest.fixture
def anonymous() -> Client:
    return Client()


@pytest.fixture
def uploader_client(uploader: User) -> Client:
    client = Client()
    client.force_login(uploader)
    return client


@pytest.fixture
def admin_client(admin: User) -> Client:
    client = Client()
    client.force_login(admin)
    return client


@pytest.fixture
def api_client(uploader: User) -> APIClient:
    """The uploader's script: authenticated by API token, as `curl -H "Authorization: Token ..."`."""
    token = Token.objects.create(user=uploader)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def example_dir() -> Path:
    return EXAMPLES / "triton-q06-full"


@pytest.fixture
def kernel_set(example_dir: Path) -> KernelSet:
    return kernel_set_from_dir(example_dir)


# What the harness really wrote for examples/triton-q06-full on a CPU (scripts/report_fixture.py makes it).
REPORT_FIXTURE = ROOT / "tests" / "leaderboard" / "fixtures" / "report-triton-q06-full-cpu.json"


def real_report() -> dict[str, Any]:
    """A fresh copy of the fixture report, as `python -m evaluator run` wrote it."""
    return json.loads(REPORT_FIXTURE.read_text())


@pytest.fixture(name="real_report")
def real_report_fixture() -> Callable[[], dict[str, Any]]:
    """`real_report()`: a fresh copy of the fixture report, to change and `rescore`."""
    return real_report


@pytest.fixture
def rescore() -> Callable[[dict[str, Any]], dict[str, Any]]:
    """`rescore(data)`: a changed report's set-level scores and timing verdict made again, as the harness
    makes them last (`Report.aggregate`)."""
    return lambda data: Report.from_dict(data).aggregate().to_dict()


def scaled_timing(stats: dict[str, Any], median_ms: float) -> dict[str, Any]:
    """A median's statistics as the harness measured them, moved to `median_ms` (spread kept relative)."""
    factor = median_ms / stats["median_ms"]
    return stats | {key: stats[key] * factor for key in ("median_ms", "min_ms", "iqr_ms")}


@pytest.fixture
def make_report() -> Callable[..., dict[str, Any]]:
    """A report as `sandbox.evaluate` returns it: the fixture's (harness version, `recorded` baseline timed
    eager on a CPU, bubblewrap, every key), its Q6 given these values; its 21 `missing` rows are dropped,
    as the tests load Q6 only and score a set by that one query."""

    def make(
        *,
        status: str = "passed",
        baseline_ms: float | None = 2.0,
        kernel_ms: float | None = 1.0,
        reason: str = "",
        backend: str | None = None,
        baseline: str | None = None,
        device: str = "cpu",
    ) -> dict[str, Any]:
        data = real_report()
        (q6,) = (dict(q) for q in data["queries"] if q["query"] == 6)
        passed = status == "passed"
        speedup = baseline_ms / kernel_ms if baseline_ms and kernel_ms and passed else None
        stats = q6["stats"]
        if baseline_ms:
            stats["baseline"] = scaled_timing(stats["baseline"], baseline_ms)
        if kernel_ms and passed:
            stats["kernel"] = scaled_timing(stats["kernel"], kernel_ms) | {"paired_speedup": speedup}
        else:
            for key in ("kernel", "fresh"):  # a failed kernel is not timed
                stats.pop(key, None)
        q6 |= {
            "status": status,
            "reason": reason,
            "baseline_ms": baseline_ms,
            "kernel_ms": kernel_ms if passed else None,  # the harness reports a passed kernel's time only
            "speedup": speedup,
            # A CPU has no peak bandwidth, so the harness writes none; the GPU-like runs here get one.
            "roofline_fraction": 0.42 if speedup and device == "cuda" else q6["roofline_fraction"],
        }
        data["queries"] = [q6]
        data["hardware"]["device"] = device
        if device == "cuda":
            # As a calibrated GPU times: a sure median (a CPU's are ~40 samples short of ranked), and the
            # `recorded` baseline the compiled plan, as the hardware's calibration chose.
            for name in ("baseline", "kernel"):
                if name in stats:
                    stats[name] |= {"n": 40, "stderr_pct": 0.5}
            stats["baseline_mode"] = "compiled"
            if baseline_ms and baseline in (None, "recorded"):
                stats["baseline_calibration"] = {"query": 6, "mode": "compiled", "compiled_ms": baseline_ms}
        if backend is not None:
            data["sandbox"] |= {"backend": backend, "isolated": backend == "bubblewrap"}
        if baseline is not None:
            data["baseline"] = baseline
            if baseline in ("eager", "compiled"):
                stats["baseline_mode"] = baseline
        return Report.from_dict(data).aggregate().to_dict()

    return make


@pytest.fixture
def submit(q6: Any, cpu: Any, uploader: User, kernel_set: KernelSet) -> Callable[..., Any]:
    """Store a submission through the service (queued run on the CPU, nothing sent to a worker)."""
    from leaderboard import services

    def make(*, user: User | None = None, model: str | None = None, scope: str = "full") -> Any:
        manifest = kernel_set.manifest
        if model or scope != manifest.scope:
            from dataclasses import replace

            manifest = replace(manifest, model=model or manifest.model, scope=scope)
        return services.submission_create(
            uploader=user or uploader,
            kernel_set=KernelSet(manifest=manifest, kernels=kernel_set.kernels),
            enqueue=False,
        )

    return make


@pytest.fixture
def evaluated(
    submit: Callable[..., Any], make_report: Callable[..., dict[str, Any]], cpu: Any
) -> Callable[..., Any]:
    """A submission whose CPU run finished with the given report values; returns the run."""
    from leaderboard import services

    def make(*, model: str | None = None, user: User | None = None, **report: Any) -> Any:
        submission = submit(model=model, user=user)
        run = submission.runs.get(hardware=cpu)
        return services.evaluation_record(run=run, report=make_report(**report))

    return make


@pytest.fixture(scope="session")
def tpch_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Real TPC-H SF0.01 (DuckDB dbgen, about a second), generated once per test session."""
    from evaluator.tpch.generate import prepare

    root = tmp_path_factory.mktemp("tpch")
    prepare(root, 0.01, progress=False)
    return root


@pytest.fixture
def evaluation_settings(settings: Any, tpch_data: Path) -> Any:
    """Settings for a real evaluation: the session's data and the bubblewrap sandbox."""
    settings.DKB_DATA_DIR = tpch_data
    settings.DKB_SANDBOX = "bubblewrap"
    return settings
