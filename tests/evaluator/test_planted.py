"""The planted-bug sets (examples/planted/): each is caught, or labelled, as its README says."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.attribution import attribute, fallback_reason, own_kernels
from evaluator.harness.core import Options, evaluate
from evaluator.kernelset import kernel_set_from_dir
from evaluator.report import QueryResult, Status
from evaluator.timing import TimingPolicy

PLANTED = Path(__file__).resolve().parents[2] / "examples" / "planted"
QUICK_TIMING = TimingPolicy(warmup_reps=1, warmup_s=0.0, min_reps=3, min_time_s=0.0, max_time_s=0.3)


def evaluate_planted(name: str, sf_folder: Path) -> QueryResult:
    kernel_dir = PLANTED / name
    options = Options(sf_folder=sf_folder, timing=QUICK_TIMING, seed=5, queries=(6,))
    (result,) = evaluate(kernel_set_from_dir(kernel_dir), kernel_dir, options).queries
    return result


def test_a_float32_literal_is_a_wrong_answer_on_the_specs_defaults(sf001: Path) -> None:
    result = evaluate_planted("float32-literal", sf001)
    assert result.status == Status.WRONG_ANSWER
    assert result.reason.startswith("trial 1 at SF0.01 ") and "column 'revenue' differs" in result.reason


def test_a_hard_coded_default_answer_fails_at_the_first_random_parameter_set(sf001: Path) -> None:
    result = evaluate_planted("hardcoded-default", sf001)
    assert result.status == Status.WRONG_ANSWER
    assert result.reason.startswith("trial 2 at SF0.01 ") and "column 'revenue' differs" in result.reason


def test_a_torch_fallback_passes_and_has_no_share_on_a_cpu(sf001: Path) -> None:
    result = evaluate_planted("torch-fallback", sf001)
    assert result.status == Status.PASSED, result.reason
    assert result.kernel_time_share is None and "framework_fallback" not in result.stats


def test_a_torch_fallback_is_labelled_from_a_gpu_like_profile() -> None:
    own = own_kernels((PLANTED / "torch-fallback" / "q06.py").read_text())
    assert own == {"_sum_partials"}
    # What its call launches on a GPU: PyTorch's elementwise passes and final sum, and its one kernel.
    activity = [
        ["void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<...>>(...)", 8, 2100.0],
        ["void at::native::reduce_kernel<512, 1, at::native::ReduceOp<double, ...>>(...)", 1, 4.0],
        ["_sum_partials", 1, 260.0],
    ]
    found = attribute(activity, own)
    assert found.share == pytest.approx(260 / 2364) and found.launches == 10
    assert (fallback_reason(found) or "").startswith("framework fallback: 11% of the device time")


@pytest.mark.parametrize("name", ["float32-literal", "hardcoded-default", "torch-fallback"])
def test_each_planted_set_is_a_valid_q06_set(name: str) -> None:
    assert sorted(kernel_set_from_dir(PLANTED / name).kernels) == [6]
