"""Reports with timing statistics, for what the site ranks and labels (a GPU's; a CPU's is never ranked)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User


@pytest.fixture(autouse=True)
def fast_password_hashing(settings: Any) -> None:
    """The cast's three accounts hashed with PBKDF2 cost about a second per test; nothing here tests it."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def submit(submit: Callable[..., Any]) -> Callable[..., Any]:
    """The shared `submit`, then published by its uploader unless `published=False`: public pages show
    published sets only, and most tests here are about what they show."""
    from leaderboard import services

    def make(*, published: bool = True, **kwargs: Any) -> Any:
        submission = submit(**kwargs)
        if published:
            services.submission_publish(submission=submission, user=submission.uploader)
        return submission

    return make


@pytest.fixture
def evaluated(
    submit: Callable[..., Any], make_report: Callable[..., dict[str, Any]], cpu: Any
) -> Callable[..., Any]:
    """A (published unless `published=False`) set whose CPU run finished with the given report values;
    returns the run."""
    from leaderboard import services

    def make(
        *, model: str | None = None, user: User | None = None, published: bool = True, **report: Any
    ) -> Any:
        run = submit(model=model, user=user, published=published).runs.get(hardware=cpu)
        return services.evaluation_record(run=run, report=make_report(**report))

    return make


def timing(median_ms: float, *, stderr_pct: float = 0.5, n: int = 40) -> dict[str, Any]:
    """One median's statistics as the harness reports them."""
    return {
        "median_ms": median_ms,
        "min_ms": median_ms * 0.95,
        "iqr_ms": median_ms * 0.02,
        "n": n,
        "stderr_pct": stderr_pct,
    }


@pytest.fixture
def timed_report(
    real_report: Callable[[], dict[str, Any]], rescore: Callable[[dict[str, Any]], dict[str, Any]]
) -> Callable[..., dict[str, Any]]:
    """A GPU report for one passed Q6 whose ranking `Report.aggregate` decides from the medians' stats: the
    fixture report (tests/conftest.py) moved to an H200 at SF10, its baseline timed compiled, as the
    hardware's calibration recorded (`calibrated`)."""

    def make(
        *,
        baseline_ms: float = 2.0,
        kernel_ms: float = 1.0,
        baseline_stderr_pct: float = 0.5,
        kernel_stderr_pct: float = 0.5,
        kernel_n: int = 40,
        calibrated: bool = True,
        set_aside: int = 0,
    ) -> dict[str, Any]:
        data = real_report()
        (q6,) = (q for q in data["queries"] if q["query"] == 6)
        stats = q6["stats"]
        stats["baseline"] |= timing(baseline_ms, stderr_pct=baseline_stderr_pct)
        stats["kernel"] |= timing(kernel_ms, stderr_pct=kernel_stderr_pct, n=kernel_n) | {
            "paired_speedup": baseline_ms / kernel_ms
        }
        for side, median_ms in (("baseline", baseline_ms), ("kernel", kernel_ms)):  # rounds on a slowed host
            stats[side] |= {"set_aside": set_aside, "aside_median_ms": median_ms if set_aside else None}
        stats["baseline_mode"] = "compiled"
        record = {"query": 6, "mode": "compiled", "compiled_ms": baseline_ms, "eager_ms": 2 * baseline_ms}
        stats["baseline_calibration"] = record if calibrated else None
        q6 |= {
            "baseline_ms": baseline_ms,
            "kernel_ms": kernel_ms,
            "speedup": baseline_ms / kernel_ms,
            "roofline_fraction": 0.42,
        }
        data |= {"queries": [q6], "scale_factor": 10, "check_scale_factors": [1.0]}
        data["hardware"] |= {"name": "NVIDIA H200", "device": "cuda", "peak_bandwidth_gbs": 4800.0}
        return rescore(data)

    return make


@pytest.fixture
def migrate() -> Any:
    """`migrate(target)` takes the test database to `target` (a list of (app, migration)) and gives that
    state's apps, for building rows as an older schema had them; the latest schema comes back at the
    end, whatever happened (the tests after need it). Use with django_db(transaction=True)."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    def to(target: list[tuple[str, str]]) -> Any:
        executor = MigrationExecutor(connection)
        executor.migrate(target)
        return executor.loader.project_state(target).apps

    yield to
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
