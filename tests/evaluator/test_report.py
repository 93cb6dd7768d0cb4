"""Reading a stored report back (evaluator/report.py): the one reader the leaderboard stores runs with."""

from __future__ import annotations

from evaluator.report import QueryResult, Report, Status, TimingStats, disturbed_timing


def _report() -> Report:
    timing = TimingStats(median_ms=2.0, min_ms=1.9, iqr_ms=0.1, n=40, stderr_pct=0.5)
    passed = QueryResult(
        query=6, status=Status.PASSED, baseline_ms=2.0, kernel_ms=1.0, speedup=2.0, trials=10
    )
    passed.stats = {"baseline": vars(timing), "kernel": vars(timing) | {"paired_speedup": 2.01}}
    missing = QueryResult(query=1, status=Status.MISSING, reason="no kernel in the set")
    return Report(
        harness_version="0.6.1",
        hardware={"device": "cuda", "name": "NVIDIA H200"},
        scale_factor=10.0,
        language="triton",
        scope="full",
        baseline="recorded",
        sandbox={"backend": "bubblewrap"},
        queries=[missing, passed],
        manifest={"seed": 7},
    ).aggregate()


def test_a_report_reads_back_as_it_was_written() -> None:
    report = _report()
    assert Report.from_dict(report.to_dict()) == report


def test_the_scores_are_read_as_written_not_made_again() -> None:
    data = _report().to_dict() | {"overall_speedup": 9.0}
    assert Report.from_dict(data).overall_speedup == 9.0


def test_an_older_report_reads_with_its_unknown_keys_left_out_and_its_nulls_as_none() -> None:
    data = _report().to_dict()
    data.pop("timing")
    data["warm_s"] = 12.5  # a 0.4.1 key, gone since
    data["queries"][1] |= {"reason": None, "trials": None, "stats": None, "runner_phases": {}}
    report = Report.from_dict(data)
    assert report.timing == {} and not hasattr(report, "warm_s")
    row = report.queries[1]
    assert (row.reason, row.trials, row.stats, row.speedup) == ("", 0, {}, 2.0)


def test_a_report_missing_its_header_reads_with_empty_values() -> None:
    report = Report.from_dict({"queries": [{"query": 6, "status": "passed", "speedup": 1.5}]})
    assert report.harness_version == "" and report.hardware == {} and report.queries[0].speedup == 1.5


def _q6(baseline_ms: float, calibrated_ms: float, status: str = Status.PASSED) -> dict[str, object]:
    calibration = {"query": 6, "mode": "compiled", "compiled_ms": calibrated_ms}
    stats = {"baseline_mode": "compiled", "baseline_calibration": calibration}
    return {"query": 6, "status": status, "baseline_ms": baseline_ms, "stats": stats}


def test_a_stored_report_whose_baseline_ran_far_slower_than_its_calibration_reads_as_disturbed() -> None:
    # Session 13's reference Triton Q16 on the H200 (harness 0.6.4, ranked then): 2.203 ms against 1.115.
    report = {"queries": [_q6(2.203, 1.115), {"query": 1, "status": Status.MISSING}]}
    assert disturbed_timing(report) == (
        "unstable timing: Q6: the baseline ran 1.98x its calibration's median (2.203 ms against 1.115 ms): "
        "the machine was disturbed"
    )


def test_a_baseline_within_its_calibrations_bound_or_a_failed_query_is_not_disturbed() -> None:
    assert disturbed_timing({"queries": [_q6(1.6, 1.115)]}) == ""  # 1.43x: under 1.5x
    assert disturbed_timing({"queries": [_q6(2.203, 1.115, Status.WRONG_ANSWER)]}) == ""  # not scored
    assert disturbed_timing({"schema_version": 2}) == ""
