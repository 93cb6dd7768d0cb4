"""What is benchmarked: the LLMs that wrote kernels, the queries, the hardware runs are evaluated on."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models import Q
from django.urls import reverse

from evaluator import gpus


class LanguageModel(models.Model):
    """An LLM that wrote kernels, named exactly as the manifest names it (one row per distinct name)."""

    name = models.CharField(max_length=100)
    slug = models.SlugField(max_length=100, unique=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["name"], name="language_model_name_unique")]

    def __str__(self) -> str:
        return self.name


class QueryQuerySet(models.QuerySet["Query"]):
    def by_number(self) -> QueryQuerySet:
        """Queries in benchmark order (Q1 first)."""
        return self.order_by("number")


class Query(models.Model):
    """A benchmark query, loaded from `evaluator.queries` by `manage.py dkb_setup`."""

    number = models.PositiveSmallIntegerField(unique=True)
    name = models.CharField(max_length=100)
    sql = models.TextField()
    torchplan_source = models.TextField()

    objects = QueryQuerySet.as_manager()

    class Meta:
        ordering = ["number"]
        verbose_name_plural = "queries"
        constraints = [
            models.CheckConstraint(condition=Q(number__gte=1, number__lte=22), name="query_number_in_tpch"),
        ]

    def __str__(self) -> str:
        return f"Q{self.number} {self.name}"

    def get_absolute_url(self) -> str:
        return reverse("query_detail", args=[self.number])

    @property
    def slug(self) -> str:
        return f"q{self.number:02d}"

    @property
    def label(self) -> str:
        return f"Q{self.number}"

    def baseline_calibrations(self) -> list[Any]:
        """Each hardware's calibration of this query: the site's current one (`manage.py dkb_baselines`),
        else the one its newest published result's report records (imported reports, another harness
        version), so that the query page says what the run pages say."""
        from leaderboard.models.calibrations import BaselineCalibration
        from leaderboard.models.results import QueryResult

        current = BaselineCalibration.objects.current(query=self)
        covered = {(row.hardware_id, row.scale_factor) for row in current}
        reported = QueryResult.objects.reported_calibrations(query=self)
        return current + [row for row in reported if (row.hardware_id, row.scale_factor) not in covered]


class HardwareQuerySet(models.QuerySet["Hardware"]):
    def active(self) -> HardwareQuerySet:
        """Hardware that new submissions are evaluated on."""
        return self.filter(active=True)


class Hardware(models.Model):
    """Where runs are evaluated: one django-q2 queue (cluster) per machine kind."""

    class Device(models.TextChoices):
        CPU = "cpu", "CPU (Triton interpreter)"
        CUDA = "cuda", "CUDA GPU"

    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    device = models.CharField(max_length=8, choices=Device.choices)
    peak_bandwidth_gbs = models.FloatField(
        null=True, blank=True, help_text="datasheet peak, for the roofline"
    )
    scale_factor = models.FloatField(default=0.01)
    active = models.BooleanField(default=True)
    queue = models.CharField(max_length=100, help_text="the django-q2 cluster name its worker listens on")

    objects = HardwareQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "hardware"
        constraints = [
            models.CheckConstraint(condition=Q(device__in=["cpu", "cuda"]), name="hardware_device_known"),
            models.CheckConstraint(condition=Q(scale_factor__gt=0), name="hardware_scale_factor_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.name} (SF{self.scale_factor:g})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        # One table of peaks: a GPU the evaluator's table lists takes its figure from there, whatever the
        # caller passed; any other hardware keeps what it was given (a report's, or none).
        if self.device == self.Device.CUDA and (peak := gpus.peak_bandwidth_gbs(self.name)) is not None:
            self.peak_bandwidth_gbs = peak
        super().save(*args, **kwargs)

    @property
    def is_cpu(self) -> bool:
        return self.device == self.Device.CPU
