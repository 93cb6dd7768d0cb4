"""Each hardware's recorded TorchPlan baseline mode per query."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models import Q
from django.utils import timezone

from leaderboard.models.catalogue import Hardware, Query


class BaselineCalibrationQuerySet(models.QuerySet["BaselineCalibration"]):
    def current(self, *, query: Query) -> list[BaselineCalibration]:
        """This harness version's newest calibration of the query per hardware and scale factor."""
        from evaluator import HARNESS_VERSION

        rows = self.filter(query=query, harness_version=HARNESS_VERSION).select_related("hardware")
        newest: dict[tuple[int, float], BaselineCalibration] = {}
        for row in rows.order_by("hardware__name", "-measured_at", "-id"):
            newest.setdefault((row.hardware_id, row.scale_factor), row)
        return list(newest.values())


class BaselineCalibration(models.Model):
    """Which TorchPlan mode a query's kernels are timed against on a hardware (`evaluator.harness.baselines`).

    A copy, for the site, of the record `manage.py dkb_baselines` leaves in the data folder: that file is
    what evaluations read.
    """

    class Mode(models.TextChoices):
        EAGER = "eager", "eager"
        COMPILED = "compiled", "compiled (torch.compile)"

    hardware = models.ForeignKey(Hardware, on_delete=models.CASCADE, related_name="calibrations")
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="calibrations")
    scale_factor = models.FloatField()
    harness_version = models.CharField(max_length=40)
    torch_version = models.CharField(max_length=40)
    mode = models.CharField(max_length=10, choices=Mode.choices)
    eager_ms = models.FloatField()
    compiled_ms = models.FloatField(null=True, blank=True, help_text="not timed on a CPU")
    eager_stderr_pct = models.FloatField(null=True, blank=True)
    compiled_stderr_pct = models.FloatField(null=True, blank=True)
    rounds = models.PositiveIntegerField(default=0)
    compile_s = models.FloatField(default=0.0)
    measured_at = models.DateTimeField(default=timezone.now)

    objects = BaselineCalibrationQuerySet.as_manager()

    # Not a column: the run whose report recorded an unsaved row (`QueryResult.reported_calibration_row`).
    reported_by: Any = None

    class Meta:
        ordering = ["hardware", "query__number"]
        constraints = [
            models.UniqueConstraint(
                fields=["hardware", "scale_factor", "harness_version", "torch_version", "query"],
                name="calibration_one_per_query_and_setup",
            ),
            models.CheckConstraint(
                condition=Q(mode__in=["eager", "compiled"]), name="calibration_mode_known"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.query.label} on {self.hardware_id} (SF{self.scale_factor:g}): {self.mode}"
