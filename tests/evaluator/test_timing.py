"""The timing loop's statistics and the choice of timed reps to check, without a kernel."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch

from evaluator.judge import timed_problem
from evaluator.queries import QUERIES
from evaluator.timing import CallLimitExceeded, TimingPolicy, _stderr, time_rotated, verified


def test_the_standard_error_pools_the_spread_within_parameter_sets() -> None:
    # Two parameter sets, one costing 1 ms and one 2 ms, each with a little noise: the mix is fixed by
    # the rotation, so only the noise makes the median uncertain.
    samples = [1.0 + 0.001 * (i % 3) if i % 2 == 0 else 2.0 + 0.001 * (i % 3) for i in range(60)]
    assert _stderr(samples, strata=2) < 0.001
    assert _stderr(samples, strata=1) > 0.05  # read as one population, the two costs look like noise


def test_the_standard_error_of_the_median_is_not_inflated_by_a_few_outliers() -> None:
    samples = [1.0 + 0.001 * (i % 7) for i in range(100)]
    spiked = samples[:-3] + [50.0, 80.0, 120.0]  # three host hiccups
    assert _stderr(spiked) < 0.001  # the median barely moves; a standard deviation would say 14%


def test_a_second_call_over_ten_times_the_baselines_median_stops_the_timing() -> None:
    def slow_every(k: int) -> Callable[[int], None]:
        return lambda rep: time.sleep(0.02 if rep % k == k - 1 else 0.0005)

    policy = TimingPolicy(warmup_reps=1, warmup_s=0.0, min_reps=12, min_time_s=0.0, max_time_s=5.0)
    baseline = lambda rep: time.sleep(0.001)  # noqa: E731
    with pytest.raises(CallLimitExceeded, match="2 timed calls took longer than 10x the baseline"):
        time_rotated(
            {"baseline": baseline, "kernel": slow_every(3)}, device=torch.device("cpu"), policy=policy
        )
    # One slow call is forgiven (a hiccup); and the limit is the baseline's, not the kernel's own.
    stats = time_rotated({"baseline": baseline, "kernel": slow_every(1000)}, device=torch.device("cpu"),
                         policy=policy)  # fmt: skip
    assert stats["kernel"].n >= 12


def test_each_call_gets_its_rep_index_and_every_stratum_is_warmed_up() -> None:
    seen: dict[str, list[int]] = {"a": [], "b": []}
    kept: list[tuple[str, int, object]] = []
    policy = TimingPolicy(warmup_reps=1, warmup_s=0.0, min_reps=6, min_time_s=0.0, max_time_s=0.0)
    stats = time_rotated(
        {name: (lambda rep, name=name: seen[name].append(rep) or rep) for name in seen},
        device=torch.device("cpu"),
        policy=policy,
        strata=4,
        keep=lambda name, rep, result: kept.append((name, rep, result)),
    )
    assert seen["a"][:4] == [0, 1, 2, 3]  # warm-up: each of the 4 strata once
    assert seen["a"][4:] == seen["b"][4:] == list(range(stats["a"].n))  # then the same rep for both
    assert [k for k in kept if k[0] == "a"] == [("a", rep, rep) for rep in range(stats["a"].n)]


def test_the_checked_reps_are_a_seeded_draw_of_the_asked_share() -> None:
    drawn = [rep for rep in range(10_000) if verified(42, 0.1, rep)]
    assert 800 < len(drawn) < 1200
    assert drawn == [rep for rep in range(10_000) if verified(42, 0.1, rep)]  # the same on both sides
    assert drawn != [rep for rep in range(10_000) if verified(43, 0.1, rep)]
    assert all(verified(42, 1.0, rep) for rep in range(100))


def _facts(tmp_path: Path, kept: dict[int, float], same_as: dict[int, int], n: int) -> dict:
    np.savez(tmp_path / "timed-kernel.npz", **{f"r{rep}_revenue": np.array([v]) for rep, v in kept.items()})
    facts = {"kept": sorted(kept), "same_as": {str(r): e for r, e in same_as.items()}, "capped_at": None}
    return json.loads(json.dumps({"timed": {"kernel": facts}, "timing": {"kernel": {"n": n}}}))


@pytest.mark.parametrize(
    ("kept", "same_as", "problem"),
    [
        ({0: 1.0, 1: 2.0, 2: 1.0, 3: 2.0}, {}, None),
        ({0: 1.0, 1: 2.0}, {2: 0, 3: 1}, None),  # equal to an earlier rep of the same parameter set
        ({0: 1.0, 1: 2.0, 3: 2.0}, {}, "the result of timed rep 3 was not kept"),
        ({0: 1.0, 1: 2.0}, {2: 1, 3: 1}, "the result of timed rep 3 was not kept"),  # another set's result
        ({0: 1.0, 1: 2.0, 2: 1.0, 3: 2.5}, {}, "timed rep 4 of 4 {'p': 1}: column 'revenue' differs"),
    ],
)
def test_every_drawn_timed_rep_is_checked_against_its_parameter_sets_answer(
    tmp_path: Path, kept: dict[int, float], same_as: dict[int, int], problem: str | None
) -> None:
    response = _facts(tmp_path, kept, same_as, n=4)
    params = [{"p": 0}, {"p": 1}]
    answers = [{"revenue": np.array([1.0])}, {"revenue": np.array([2.0])}]
    found = timed_problem(QUERIES[6], tmp_path, tmp_path, "kernel", response, {"seed": 1, "share": 1.0},
                          params, answers.__getitem__)  # fmt: skip
    assert (found is None) if problem is None else (found is not None and found.startswith(problem))


def test_the_runner_keeps_one_copy_of_equal_results_and_every_differing_one(tmp_path: Path) -> None:
    from evaluator.runner import Keeper

    keeper = Keeper(seed=1, share=1.0, strata=2)
    values = [1.0, 2.0, 1.0, 2.0, 1.5, 2.0]  # rep 4 differs from rep 0 although both ran set 0
    for rep, value in enumerate(values):
        keeper("kernel", rep, {"revenue": torch.tensor([value], dtype=torch.float64)})
    keeper("baseline", 0, "not a dict of tensors")
    facts = keeper.write(tmp_path)
    assert facts["kernel"]["kept"] == [0, 1, 4]
    assert facts["kernel"]["same_as"] == {"2": 0, "3": 1, "5": 1}
    assert "is not valid" in facts["baseline"]["error"]
    with np.load(tmp_path / "timed-kernel.npz") as data:
        assert sorted(data.files) == ["r0_revenue", "r1_revenue", "r4_revenue"]
