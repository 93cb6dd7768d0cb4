"""Drill-down pages: the per-query matrix of the ranked sets, a kernel's own page, a query's chart."""

from __future__ import annotations

import difflib
import hashlib
import math
from typing import Any

from django.core.cache import cache
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import mark_safe

from leaderboard import charts, highlighting, ranking, services, views
from leaderboard.models import EvaluationRun, Hardware, Kernel, Query, QueryResult, Submission
from leaderboard.templatetags import leaderboard as tags

DIFF_CACHE_S = 24 * 3600
# A wider matrix is no longer read as one: the best sets, and the hardware and scope tabs for the rest.
MATRIX_COLUMNS = 50


def kernel_url(*, submission_id: int, number: int, run_id: int | None = None) -> str:
    """A set's kernel page for a query, with one run's result when given."""
    return reverse("kernel_detail", args=[submission_id, number]) + (f"?run={run_id}" if run_id else "")


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
        "url": run.get_absolute_url(),
        # One reverse() per column, not per cell: 22 x 50 of them cost more than the rest of the page.
        "kernels_url": reverse("kernel_detail", args=[submission.pk, 0]).removesuffix("0/"),
        "ranked": ranked,
        "timing_label": "" if ranked else run.timing_label,
    }


def _cell(column: dict[str, Any], number: int, found: tuple[str, float | None] | None) -> str:
    """One cell of the matrix as HTML: built here rather than by a template loop, which took most of a cold
    matrix's time (22 x 70 cells, ~9,000 variable lookups)."""
    if found is None:
        return '<td class="cell none"><span class="muted small">–</span></td>'
    status, speedup = found
    if status == QueryResult.Status.MISSING:
        return '<td class="cell none"><span class="muted small">no kernel</span></td>'
    url = escape(f"{column['kernels_url']}{number}/?run={column['run_id']}")
    if status == QueryResult.Status.PASSED and column["ranked"] and speedup and speedup > 0:
        return (
            f'<td class="cell {tags.speedup_class(speedup)}" style="--heat: {_heat(speedup)}">'
            f'<a href="{url}">{escape(tags.speedup(speedup))}</a></td>'
        )
    if status == QueryResult.Status.PASSED:
        return f'<td class="cell"><a href="{url}"><span class="badge passed">passed</span></a></td>'
    badge = f'<span class="badge {escape(status)}">{escape(QueryResult.Status(status).label)}</span>'
    return f'<td class="cell failed"><a href="{url}">{badge}</a></td>'


def matrix_data(hardware: Hardware | None, scope: str | None) -> dict[str, Any]:
    """The matrix as plain data: the home page's best MATRIX_COLUMNS ranked sets (best first), then its
    unranked ones, as columns; each query a row. One query reads every cell."""
    # The ranking's first MATRIX_COLUMNS ids (cached under the generation), then only what a heading shows.
    ranked, total = ranking.ranked_columns(hardware=hardware, scope=scope, limit=MATRIX_COLUMNS)
    columns = [_column(run, ranked=True) for run in ranked]
    columns += [_column(run, ranked=False) for run in ranking.cached_unranked(hardware=hardware, scope=scope)]
    cells = QueryResult.objects.cells(run_ids=[c["run_id"] for c in columns])
    numbers = sorted({number for _, number in cells})
    queries = {q.number: q for q in Query.objects.filter(number__in=numbers)}
    rows = [
        {
            "label": queries[n].label,
            "name": queries[n].name,
            "url": queries[n].get_absolute_url(),
            # Each cell escaped by _cell.
            "cells": mark_safe("".join(_cell(c, n, cells.get((c["run_id"], n))) for c in columns)),  # noqa: S308
        }
        for n in numbers
        if n in queries
    ]
    return {
        "columns": columns,
        "rows": rows,
        "ranked_total": total,
        "shown": sum(c["ranked"] for c in columns),
    }


def _matrix_table(hardware: Hardware | None, scope: str | None) -> dict[str, Any]:
    """The matrix table rendered, and how many ranked sets there are, cached under the results
    generation: the table is the same for every visitor (published sets only)."""
    key = f"matrix:{services.cache_generation()}:{hardware.pk if hardware else 'all'}:{scope or 'all'}"
    table = cache.get(key)
    if table is None:
        data = matrix_data(hardware, scope)
        html = render_to_string("leaderboard/matrix_table.html", data) if data["columns"] else ""
        table = {"html": html, "ranked_total": data["ranked_total"], "shown": data["shown"]}
        cache.set(key, table, views.RANKING_CACHE_S)
    return table


def matrix(request: HttpRequest) -> HttpResponse:
    hardware_list = list(Hardware.objects.all())
    hardware, scope = views._ranking_filters(request, hardware_list)
    table = _matrix_table(hardware, scope)
    ctx = {
        "table": mark_safe(table["html"]),  # noqa: S308 (rendered, autoescaped, by matrix_table.html)
        "ranked_total": table["ranked_total"],
        "shown": table["shown"],
        "hardware": hardware,
        "scope": scope,
        **views.filter_tabs(hardware_list, hardware, scope),
    }
    return render(request, "leaderboard/matrix.html", ctx)


def _visible_kernel(request: HttpRequest, submission_id: int, number: int) -> Kernel:
    """The kernel of a set the user may open (a private set is a 404 to others)."""
    submission = get_object_or_404(
        Submission.objects.visible_to(request.user).select_related("language_model", "uploader"),
        pk=submission_id,
    )
    kernel = get_object_or_404(submission.kernels.select_related("query"), query__number=number)
    kernel.submission = submission
    return kernel


def torchplan_diff_html(kernel: Kernel) -> str:
    """The kernel as a unified diff against its query's TorchPlan, highlighted; cached per kernel and plan
    (neither changes once stored, but a TorchPlan may be reloaded)."""
    plan = kernel.query.torchplan_source
    key = f"kernel-diff:{kernel.pk}:{hashlib.sha256(plan.encode()).hexdigest()[:16]}"
    html = cache.get(key)
    if html is None:
        lines = difflib.unified_diff(
            plan.splitlines(keepends=True),
            kernel.source.splitlines(keepends=True),
            fromfile=f"torchplan/{kernel.query.slug}.py",
            tofile=f"submitted/{kernel.filename}",
        )
        # A file without a final newline would run its last line into the next hunk's header.
        text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
        html = highlighting.to_html(text, "diff") if text else ""
        cache.set(key, html, DIFF_CACHE_S)
    return html


def kernel_detail(request: HttpRequest, submission_id: int, number: int) -> HttpResponse:
    kernel = _visible_kernel(request, submission_id, number)
    # A run another user may not see (a feedback run, to all but the uploader) is not there for them.
    runs = list(
        EvaluationRun.objects.visible_to(request.user).filter(submission=kernel.submission).newest_first()
    )
    if run_id := request.GET.get("run"):
        run = next((r for r in runs if str(r.pk) == run_id), None)
        if run is None:
            raise Http404("no such run for this submission")
    else:
        run = next((r for r in runs if r.status == EvaluationRun.Status.SUCCEEDED), None)
    result = QueryResult.objects.filter(run=run, query=kernel.query).first() if run else None
    stats = result.stats if result else {}
    ctx = {
        "submission": kernel.submission,
        "kernel": kernel,
        "query": kernel.query,
        "runs": [r for r in runs if r.status == EvaluationRun.Status.SUCCEEDED],
        "run": run,
        "result": result,
        "diff": mark_safe(torchplan_diff_html(kernel)),  # noqa: S308 (Pygments escaped every token)
        "baseline_launches": stats.get("baseline_launches"),
        "framework_fallback": stats.get("framework_fallback") or "",
        "roofline_floor_ms": stats.get("roofline_floor_ms"),
        # The file's own largest kernels in the profiled call (harness 0.6.4): where its author's time goes.
        "own_kernels": ((stats.get("attribution") or {}).get("kernel") or {}).get("top_own") or [],
    }
    return render(request, "leaderboard/kernel_detail.html", ctx)


def kernel_raw(request: HttpRequest, submission_id: int, number: int) -> HttpResponse:
    kernel = _visible_kernel(request, submission_id, number)
    response = HttpResponse(kernel.source, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'inline; filename="{kernel.filename}"'
    return response


QUERY_CHART_ROWS = 20


def query_chart_bars(query: Query) -> list[charts.Bar]:
    """The published kernels of a query in the ranked runs (each set's latest per hardware): passing ones
    fastest first, then the failures, as the query page lists them."""
    ranked = EvaluationRun.objects.ranked().order_by().values("id")
    results = (
        QueryResult.objects.filter(query=query, run__in=ranked)
        .exclude(status=QueryResult.Status.MISSING)
        .select_related("run__hardware", "run__submission__language_model")
    )
    passed = sorted((r for r in results if r.passed and r.speedup), key=lambda r: -(r.speedup or 0))
    failed = [r for r in results if not r.passed]
    bars = []
    for result in (passed + failed)[:QUERY_CHART_ROWS]:
        submission = result.run.submission
        label = f"{submission.language_model.name} {submission.configuration} · {result.run.hardware.name}"
        bars.append(
            charts.Bar(
                label=label,
                value=result.speedup or 1.0,
                failure="" if result.passed else f"failed: {result.get_status_display()}",
            )
        )
    return bars


def query_chart(request: HttpRequest, number: int) -> HttpResponse:
    query = get_object_or_404(Query, number=number)
    key = f"query-chart:{services.cache_generation()}:{query.number}"
    svg = cache.get(key)
    if svg is None:
        svg = charts.speedup_bars(
            query_chart_bars(query),
            title=f"{query.label} {query.name}: published kernels against the TorchPlan baseline",
            axis_label=(
                "this query's kernel against the baseline on the same hardware, log scale: right of 1x "
                "faster, left slower\nx: the kernel failed (no speed); each set's latest ranked run"
            ),
        )
        cache.set(key, svg, views.RANKING_CACHE_S)
    response = HttpResponse(svg, content_type="image/svg+xml")
    response["Cache-Control"] = "public, max-age=60"
    return response
