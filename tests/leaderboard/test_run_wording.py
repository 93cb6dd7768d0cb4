"""What a run's page says of it in words: what its kernels were timed against."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytestmark = pytest.mark.django_db


def test_a_cpu_run_says_in_one_sentence_that_its_baselines_ran_in_the_default_mode(
    evaluated: Callable[..., Any],
) -> None:
    run = evaluated()  # the fixture report: a CPU, whose calibration recorded no mode for Q6
    assert run.baseline_summary == (
        "each query's TorchPlan in its default mode (eager for Q6), since this hardware's calibration "
        "recorded no mode for them"
    )
