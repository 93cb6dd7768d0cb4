"""Template filters for numbers as the benchmark states them, and highlighted source."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django import template
from django.utils.safestring import SafeString, mark_safe

from evaluator.report import Status as ReportStatus
from leaderboard import highlighting
from leaderboard.formatting import speedup_text

if TYPE_CHECKING:
    from leaderboard.models import EvaluationRun

register = template.Library()


@register.filter
def highlight(source: str, language: str = "python") -> SafeString:
    """A query's SQL or TorchPlan as highlighted HTML (a kernel's is stored: `Kernel.highlighted`);
    Pygments escapes every token, so the result is safe."""
    return mark_safe(highlighting.cached_html(source or "", language))  # noqa: S308


@register.filter
def speedup(value: float | None) -> str:
    return speedup_text(value)


@register.filter
def percent(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


@register.filter
def ms(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


@register.filter
def speedup_class(value: float | None) -> str:
    """A CSS class for how a speedup reads: faster, about even, or slower than the baseline."""
    if value is None:
        return "na"
    if value >= 1.05:
        return "faster"
    if value > 0.95:
        return "even"
    return "slower"


@register.filter
def run_state(run: EvaluationRun) -> str:
    """A run's status as pages say it: "evaluated" for a succeeded one, whose evaluation finished whatever
    its kernels did ("succeeded" read as their verdict: `kernel_tally` says that). The API keeps the value."""
    return "evaluated" if run.status == "succeeded" else run.status


@register.filter
def kernel_tally(run: EvaluationRun) -> tuple[int, int] | None:
    """(passed, submitted): a succeeded run's kernels that passed, of those the set has (a query without one
    is "missing" in the report); None before a report, or for a set of none. Counted by the database
    where the lists left the report out (`Submission.objects.recent`), else read from the report, which
    the set page loads anyway: no query per row either way."""
    if "kernels_submitted" in run.__dict__:
        passed, counted = run.__dict__["kernels_passed"], run.__dict__["kernels_submitted"]
        return (passed, counted) if run.status == "succeeded" and counted else None
    if run.status != "succeeded" or not isinstance(run.report, dict):
        return None
    statuses = [q.get("status") for q in run.report.get("queries") or [] if isinstance(q, dict)]
    submitted = [status for status in statuses if status != ReportStatus.MISSING]
    if not submitted:
        return None
    return sum(status == ReportStatus.PASSED for status in submitted), len(submitted)


@register.filter
def run_kind(run: EvaluationRun) -> str:
    """What a run is for, in words: "leaderboard" (its set's public standing, ranked where its timing may
    be) or "feedback (private)". The stored kind "ranked" read as the run's verdict beside "not ranked"."""
    return "feedback (private)" if run.kind == "feedback" else "leaderboard"


@register.filter
def run_speedup_class(value: float | None, run: EvaluationRun) -> str:
    """`speedup_class`, except on a run that checks correctness only (a CPU's, through Triton's
    interpreter): its speedups are no measure of speed, so they are greyed, not coloured faster or slower."""
    return "muted" if run.hardware.is_cpu else speedup_class(value)
