"""What the leaderboard stores: LLMs, queries, hardware, kernel sets, their evaluation runs and results.

Reads live here as QuerySet methods; writes are services (leaderboard/services.py). One module per concern;
everything is importable from `leaderboard.models`.
"""

from __future__ import annotations

from leaderboard.models.calibrations import BaselineCalibration, BaselineCalibrationQuerySet
from leaderboard.models.catalogue import Hardware, HardwareQuerySet, LanguageModel, Query, QueryQuerySet
from leaderboard.models.results import QueryResult
from leaderboard.models.runs import (
    EvaluationRun,
    EvaluationRunQuerySet,
    report_timing,
)
from leaderboard.models.submissions import Kernel, Submission, SubmissionQuerySet

__all__ = [
    "BaselineCalibration",
    "BaselineCalibrationQuerySet",
    "EvaluationRun",
    "EvaluationRunQuerySet",
    "Hardware",
    "HardwareQuerySet",
    "Kernel",
    "LanguageModel",
    "Query",
    "QueryQuerySet",
    "QueryResult",
    "Submission",
    "SubmissionQuerySet",
    "report_timing",
]
