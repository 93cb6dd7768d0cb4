"""The API lists' filters (django-filter): each a query parameter with a stable name.

Only narrowing: what a list may show at all is decided by the `visible_to` querysets before any filter.
An unknown choice or a malformed value is a 400 with code "invalid_filter" (`FilterBackend`).
"""

from __future__ import annotations

from typing import Any

import django_filters
from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework.exceptions import APIException
from rest_framework.request import Request

from leaderboard.models import EvaluationRun, QueryResult, Submission


class InvalidFilter(APIException):
    status_code = 400
    default_code = "invalid_filter"

    def __init__(self, detail: str) -> None:
        super().__init__({"code": "invalid_filter", "detail": detail})


class FilterBackend(DjangoFilterBackend):
    """django-filter's backend, answering a bad value in the API's error shape ({"code", "detail"})."""

    def filter_queryset(self, request: Request, queryset: QuerySet[Any], view: Any) -> QuerySet[Any]:
        filterset = self.get_filterset(request, queryset, view)
        if filterset is None:
            return queryset
        if not filterset.is_valid():
            field, problems = next(iter(filterset.errors.items()))
            raise InvalidFilter(f"{field}: {problems[0]}")
        return filterset.qs


def _choice(choices: Any, help_text: str, field_name: str) -> django_filters.ChoiceFilter:
    return django_filters.ChoiceFilter(field_name=field_name, choices=choices, help_text=help_text)


class SubmissionFilter(django_filters.FilterSet):
    model = django_filters.CharFilter(
        field_name="language_model__slug", help_text="the LLM's slug, as in its URL (e.g. gpt-4o)"
    )
    language = _choice(Submission.Language.choices, "triton or cuda", "language")
    scope = _choice(Submission.Scope.choices, "full (whole query) or core (snippet)", "scope")
    uploader = django_filters.CharFilter(field_name="uploader__username", help_text="the uploader's username")
    hardware = django_filters.CharFilter(
        method="on_hardware", help_text="sets with a run on this hardware (its slug)"
    )
    published = django_filters.BooleanFilter(
        field_name="published_at", lookup_expr="isnull", exclude=True, help_text="true: public sets only"
    )

    class Meta:
        model = Submission
        fields = ["model", "language", "scope", "uploader", "hardware", "published"]

    def on_hardware(self, queryset: QuerySet[Submission], name: str, value: str) -> QuerySet[Submission]:
        # Runs the visitor may see only: another's feedback run must not show through a filter either.
        runs = EvaluationRun.objects.visible_to(self.request.user).filter(hardware__slug=value)
        return queryset.filter(pk__in=runs.values("submission"))


class EvaluationRunFilter(django_filters.FilterSet):
    hardware = django_filters.CharFilter(field_name="hardware__slug", help_text="the hardware's slug")
    status = _choice(EvaluationRun.Status.choices, "queued, running, succeeded or failed", "status")
    kind = _choice(EvaluationRun.Kind.choices, "ranked or feedback", "kind")
    submission = django_filters.NumberFilter(field_name="submission_id", help_text="the set's id")
    model = django_filters.CharFilter(
        field_name="submission__language_model__slug", help_text="the LLM's slug"
    )
    language = _choice(Submission.Language.choices, "triton or cuda", "submission__language")
    scope = _choice(Submission.Scope.choices, "full or core", "submission__scope")

    class Meta:
        model = EvaluationRun
        fields = ["hardware", "status", "kind", "submission", "model", "language", "scope"]


class QueryResultFilter(django_filters.FilterSet):
    run = django_filters.NumberFilter(field_name="run_id", help_text="the run's id")
    submission = django_filters.NumberFilter(field_name="run__submission_id", help_text="the set's id")
    query = django_filters.NumberFilter(field_name="query__number", help_text="the TPC-H query number, 1-22")
    status = _choice(QueryResult.Status.choices, "the kernel's outcome, e.g. passed", "status")
    hardware = django_filters.CharFilter(field_name="run__hardware__slug", help_text="the hardware's slug")
    kind = _choice(EvaluationRun.Kind.choices, "ranked or feedback", "run__kind")
    model = django_filters.CharFilter(
        field_name="run__submission__language_model__slug", help_text="the LLM's slug"
    )
    language = _choice(Submission.Language.choices, "triton or cuda", "run__submission__language")
    scope = _choice(Submission.Scope.choices, "full or core", "run__submission__scope")

    class Meta:
        model = QueryResult
        fields = ["run", "submission", "query", "status", "hardware", "kind", "model", "language", "scope"]
