"""Drill-down pages: the per-query matrix of the ranked sets, a kernel's own page, a query's chart."""

from __future__ import annotations

import math
from typing import Any

from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from leaderboard import services, views
from leaderboard.models import EvaluationRun, Hardware, Query, QueryResult


def kernel_url(*, submission_id: int, number: int, run_id: int | None = None) -> str:
    """A set's kernel for a query, with one run's result when given."""
    url = reverse("submission_detail", args=[submission_id]) + (f"?run={run_id}" if run_id else "")
    return f"{url}#q{number:02d}"


def _heat(speedup: float) -> str:
    """How strongly a cell is tinted: 0.15 at 1x up to 1 at 10x faster or slower (a log scale)."""
    return f"{0.15 + 0.85 * min(1.0, abs(math.log10(speedup))):.2f}"


def _column(run: EvaluationRun, *, ranked: bool) -> dict[str, Any]:
    submission = run.submission
    return {
        "run_id": run.pk,
        "submission_id": submission.pk,
        "model": submission.language_model.name,
        "configuration": submission.configuration,
        "hardware": run.hardware.name,
        "is_cpu": run.hardware.is_cpu,
        "overall": run.overall_speedup,
        "pass_rate": run.pass_rate,
        "url": run.get_absolute_url(),
        "ranked": ranked,
        "timing_label": "" if ranked else run.timing_label,
    }


def _cell(column: dict[str, Any], number: int, found: tuple[str, float | None] | None) -> dict[str, Any]:
    url = kernel_url(submission_id=column["submission_id"], number=number, run_id=column["run_id"])
    if found is None:
        return {"status": "", "label": "not run", "url": ""}
    status, speedup = found
    cell: dict[str, Any] = {"status": status, "label": QueryResult.Status(status).label, "url": url}
    if status == QueryResult.Status.PASSED and column["ranked"] and speedup and speedup > 0:
        cell |= {"speedup": speedup, "heat": _heat(speedup)}
    return cell


def matrix_data(hardware: Hardware | None, scope: str | None) -> dict[str, Any]:
    """The matrix as plain data, cached under the results generation: the home page's ranked sets (best
    first), then its unranked ones, as columns; each query a row. One query reads every cell."""
    key = f"matrix:{services.cache_generation()}:{hardware.pk if hardware else 'all'}:{scope or 'all'}"
    data = cache.get(key)
    if data is None:
        columns = [_column(run, ranked=True) for run in views._ranking(hardware, scope)]
        columns += [_column(run, ranked=False) for run in views._unranked(hardware, scope)]
        cells = QueryResult.objects.cells(run_ids=[c["run_id"] for c in columns])
        numbers = sorted({number for _, number in cells})
        queries = {q.number: q for q in Query.objects.filter(number__in=numbers)}
        rows = [
            {
                "label": queries[n].label,
                "name": queries[n].name,
                "url": queries[n].get_absolute_url(),
                "cells": [_cell(c, n, cells.get((c["run_id"], n))) for c in columns],
            }
            for n in numbers
            if n in queries
        ]
        data = {"columns": columns, "rows": rows}
        cache.set(key, data, views.RANKING_CACHE_S)
    return data


def matrix(request: HttpRequest) -> HttpResponse:
    hardware_list = list(Hardware.objects.all())
    hardware, scope = views._ranking_filters(request, hardware_list)
    data = matrix_data(hardware, scope)
    ctx = {
        **data,
        "ranked_count": sum(1 for c in data["columns"] if c["ranked"]),
        "hardware": hardware,
        "scope": scope,
        **views.filter_tabs(hardware_list, hardware, scope),
    }
    return render(request, "leaderboard/matrix.html", ctx)
