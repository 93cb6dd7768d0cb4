"""Attribution: own kernels named from the kernel file, device time shares from profiler activity."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from evaluator.attribution import attribute, base_name, device_activity, fallback_reason, own_kernels

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

CUDA_FILE = '''
from torch.utils.cpp_extension import load_inline

CUDA = r"""
__global__ void q06_partials(const double* price, double* out, long n) { }
template <int BLOCK>
__global__ void __launch_bounds__(256) q14_sums(const int* keys, double* out) { }
static __device__ double helper(double x) { return x; }
"""
'''


def test_own_kernels_are_the_files_triton_jit_functions() -> None:
    source = (EXAMPLES / "triton-q06-full" / "q06.py").read_text()
    assert own_kernels(source) == {"_q06_partials"}
    variants = (
        "import triton\nfrom triton import jit\n"
        "@triton.autotune(configs=[], key=['n'])\n@triton.jit\ndef a(x): pass\n"
        "@triton.jit(do_not_specialize=['n'])\ndef b(x, n): pass\n"
        "@jit\ndef c(x): pass\n"
        "def not_a_kernel(x): pass\n"
    )
    assert own_kernels(variants) == {"a", "b", "c"}


def test_own_kernels_are_the_global_functions_in_a_cuda_files_source_strings() -> None:
    assert own_kernels(CUDA_FILE) == {"q06_partials", "q14_sums"}


@pytest.mark.parametrize(
    ("profiled", "base"),
    [
        ("_q06_partials", "_q06_partials"),
        ("q06_partials(double const*, double*, long)", "q06_partials"),
        ("void q14_sums<256>(int const*, double*)", "q14_sums"),
        ("void at::native::reduce_kernel<512, 1>(at::native::ReduceOp<double>)", "reduce_kernel"),
    ],
)
def test_a_profiled_kernel_name_is_reduced_to_its_identifier(profiled: str, base: str) -> None:
    assert base_name(profiled) == base


def test_the_share_counts_own_kernels_against_all_device_time_and_launches_exclude_copies() -> None:
    activity = [
        ["_q06_partials", 1, 540.0],
        ["void at::native::reduce_kernel<512, 1>(at::native::ReduceOp<double>)", 1, 8.0],
        ["Memcpy HtoD (Pageable -> Device)", 1, 2.0],
    ]
    found = attribute(activity, frozenset({"_q06_partials"}))
    assert found.share == pytest.approx(540 / 550)
    activity[0][0] = "_q06_partials_0d1d2d3d4d5de6"  # Triton 2's name for the same kernel
    assert attribute(activity, frozenset({"_q06_partials"})).share == pytest.approx(540 / 550)
    assert found.launches == 2
    assert fallback_reason(found) is None
    assert found.to_dict()["top_own"] == [["_q06_partials", 540.0]]  # where the author's time goes


def test_a_kernel_that_leaves_the_work_to_torch_is_labelled_framework_fallback() -> None:
    activity = [
        ["triton_red_fused_mul_sum_where_0", 1, 300.0],  # torch.compile's kernel, not the file's
        [
            "void at::native::vectorized_elementwise_kernel<4>(int, at::native::CUDAFunctor_add<double>)",
            3,
            90.0,
        ],
        ["_tiny_helper", 1, 10.0],
    ]
    found = attribute(activity, frozenset({"_tiny_helper"}))
    assert found.share == pytest.approx(10 / 400) and found.launches == 5
    reason = fallback_reason(found)
    assert reason is not None and reason.startswith("framework fallback: 2% of the device time")
    assert "triton_red_fused_mul_sum_where_0" in reason


def test_naming_a_kernel_like_a_framework_one_does_not_claim_the_frameworks_time() -> None:
    activity = [
        ["void at::native::reduce_kernel<512, 1>(at::native::ReduceOp<double>)", 1, 90.0],
        ["triton_per_fused_sum_0", 1, 90.0],
        ["reduce_kernel(double const*, double*)", 1, 20.0],
    ]
    found = attribute(activity, frozenset({"reduce_kernel", "triton_per_fused_sum_0"}))
    assert found.share == pytest.approx(20 / 200)


def test_device_activity_keeps_device_events_only_summed_per_name() -> None:
    def event(name: str, device: str, us: float) -> SimpleNamespace:
        return SimpleNamespace(
            name=name,
            device_type=SimpleNamespace(name=device),
            time_range=SimpleNamespace(elapsed_us=lambda: us),
        )

    events = [
        event("aten::sum", "CPU", 50),
        event("k", "CUDA", 3),
        event("k", "CUDA", 4),
        event("m", "CUDA", 9),
    ]
    assert device_activity(events) == [["m", 1, 9.0], ["k", 2, 7.0]]


def test_a_cpu_profile_has_no_device_time_so_no_share_and_no_launches() -> None:
    from torch.profiler import ProfilerActivity, profile

    x = torch.arange(1000, dtype=torch.float64)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        (x * 2).sum()
    assert any(e.name == "aten::sum" for e in prof.events())  # the profile itself is not empty
    activity = device_activity(prof.events())
    assert activity == []
    found = attribute(activity, frozenset({"anything"}))
    assert (found.share, found.launches, fallback_reason(found)) == (None, None, None)


def test_the_harness_records_share_launches_and_the_label_from_the_runners_profile() -> None:
    from evaluator.harness.core import _attribute
    from evaluator.report import QueryResult, Status

    result = QueryResult(query=6, status=Status.PASSED)
    profile = {
        "baseline": {"activity": [["triton_red_fused_sum_0", 1, 600.0]]},
        "kernel": {"activity": [["_q06_partials", 1, 50.0], ["triton_poi_fused_0", 2, 450.0]]},
    }
    _attribute(result, profile, (EXAMPLES / "triton-q06-full" / "q06.py").read_text())
    assert result.kernel_time_share == pytest.approx(0.1) and result.launches == 3
    assert result.stats["baseline_launches"] == 1
    assert result.stats["framework_fallback"].startswith("framework fallback: 10% ")
    assert result.status == Status.PASSED  # a label, not a verdict
