"""Public pages: thin functions that fetch, build a context and render a template."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db.models import Prefetch
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import pluralize
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_http_methods
from rest_framework.authtoken.models import Token

import evaluator
from evaluator.errors import SubmissionError
from evaluator.harness import baselines
from leaderboard import charts, ranking, services, throttles
from leaderboard.environment import run_environment
from leaderboard.forms import UploadForm
from leaderboard.models import EvaluationRun, Hardware, Query, QueryResult, Submission

RANKING_CACHE_S = ranking.CACHE_S
NEW_TOKEN_SESSION_KEY = "dkb:new-api-token"


class AuthenticatedHttpRequest(HttpRequest):
    """What a `login_required` view is given: a request whose user has signed in."""

    user: User


def site_context(request: HttpRequest) -> dict[str, Any]:
    return {"site_name": settings.SITE_NAME, "harness_version": evaluator.HARNESS_VERSION}


def cache_key(name: str, hardware: Hardware | None, scope: str | None) -> str:
    """The key of something cached for a ranking's filters under the results generation: a new report or a
    hidden submission starts a fresh generation."""
    return ranking.cache_key(name, hardware, scope)


def _ranking_filters(
    request: HttpRequest, hardware_list: list[Hardware]
) -> tuple[Hardware | None, str | None]:
    """The ranking's hardware and scope from ?hardware=<slug>&scope=full|core; unknown values are a 404."""
    hardware = None
    if slug := request.GET.get("hardware"):
        hardware = next((h for h in hardware_list if h.slug == slug), None)
        if hardware is None:
            raise Http404("no such hardware")
    scope = request.GET.get("scope") or None
    if scope is not None and scope not in Submission.Scope.values:
        raise Http404("no such scope")
    return hardware, scope


def _filter_query(hardware: Hardware | None, scope: str | None, page: int = 1) -> str:
    """The query string of a ranking's filters (and its page, after the first)."""
    params = {
        "hardware": hardware.slug if hardware else None,
        "scope": scope,
        "page": page if page > 1 else None,
    }
    return urlencode({k: v for k, v in params.items() if v})


def filter_tabs(
    hardware_list: list[Hardware], hardware: Hardware | None, scope: str | None
) -> dict[str, Any]:
    """The hardware and scope tabs, each keeping the other filter: (label, query string, active)."""
    return {
        "hardware_tabs": [("All hardware", _filter_query(None, scope), hardware is None)]
        + [(h.name, _filter_query(h, scope), h == hardware) for h in hardware_list],
        "scope_tabs": [("All scopes", _filter_query(hardware, None), scope is None)]
        + [
            (label, _filter_query(hardware, value), value == scope)
            for value, label in Submission.Scope.choices
        ],
    }


def _ranking_tables(hardware: Hardware | None, scope: str | None, number: int) -> dict[str, Any]:
    """A page of the home page's ranking and its "Not ranked" table rendered, and what the page says around
    them, cached under the results generation: they are the same for every visitor (published sets only).
    A page number past the last is a 404."""
    key = ranking.cache_key("ranking-tables", hardware, scope, number)
    tables = cache.get(key)
    if tables is None:
        try:
            page = ranking.cached_ranked_page(hardware=hardware, scope=scope, number=number)
        except ranking.NoSuchPage:
            raise Http404("no such page of the ranking") from None
        unranked = ranking.cached_unranked(hardware=hardware, scope=scope)
        ctx = {
            "ranking": page.runs,
            "page": page,
            "previous_query": _filter_query(hardware, scope, page.number - 1) if page.has_previous else None,
            "next_query": _filter_query(hardware, scope, page.number + 1) if page.has_next else None,
        }
        tables = {
            "ranking": render_to_string("leaderboard/ranking_table.html", ctx),
            "ranked": bool(page.runs),
            "unranked": render_to_string("leaderboard/unranked_table.html", {"unranked": unranked})
            if unranked
            else "",
            "has_cpu_rows": any(run.hardware.is_cpu for run in page.runs),
        }
        cache.set(key, tables, RANKING_CACHE_S)
    return tables


def _page_number(request: HttpRequest) -> int:
    """The ranking's page from ?page=N (from 1); anything else is a 404."""
    value = request.GET.get("page") or "1"
    if not value.isdigit() or not 1 <= int(value) <= 10**6:
        raise Http404("no such page of the ranking")
    return int(value)


def index(request: HttpRequest) -> HttpResponse:
    hardware_list = list(Hardware.objects.all())
    hardware, scope = _ranking_filters(request, hardware_list)
    tables = _ranking_tables(hardware, scope, _page_number(request))
    ctx = {
        # Rendered, and autoescaped, by ranking_table.html and unranked_table.html.
        "ranking_table": mark_safe(tables["ranking"]),  # noqa: S308
        "ranked": tables["ranked"],
        "unranked_table": mark_safe(tables["unranked"]),  # noqa: S308
        "has_cpu_rows": tables["has_cpu_rows"],
        "hardware": hardware,
        "scope": scope,
        **filter_tabs(hardware_list, hardware, scope),
        "filters": _filter_query(hardware, scope),
        "hardware_list": hardware_list,
        "pending": EvaluationRun.objects.listed().pending().count(),
        "recent": Submission.objects.listed().recent()[:8],
    }
    return render(request, "leaderboard/index.html", ctx)


def ranking_chart(request: HttpRequest) -> HttpResponse:
    hardware, scope = _ranking_filters(request, list(Hardware.objects.all()))
    key = cache_key("ranking-chart", hardware, scope)
    svg = cache.get(key)
    if svg is None:
        # The best ranked set of each model, as the paper's headline figure has it.
        runs = ranking.best_per_model(hardware=hardware, scope=scope, limit=15)
        alone = EvaluationRun.objects.filter(pk__in=[run.pk for run in runs]).kernels_only_speedups()
        rows = [
            charts.Bar(
                label=f"{run.submission.language_model.name} {run.submission.configuration}",
                value=run.overall_speedup or 0.0,
                note=f"{(run.pass_rate or 0) * 100:.0f}% pass",
                kernels_only=alone.get(run.pk),
            )
            for run in runs
        ]
        svg = charts.speedup_bars(
            rows, title="Best set per model: overall speedup over the TorchPlan baseline"
        )
        cache.set(key, svg, RANKING_CACHE_S)
    response = HttpResponse(svg, content_type="image/svg+xml")
    response["Cache-Control"] = "public, max-age=60"
    return response


def _kernel_sections(
    submission: Submission, run: EvaluationRun | None, results: dict[int, QueryResult]
) -> SafeString:
    """A set's kernels listed with their size and the run's result, each linking its own page (its source
    beside the TorchPlan): inline here only for a set of one, as 22 highlighted pairs made a 2 MB page.
    Cached under the results generation per set and run: the same for everyone who may see that run."""
    key = f"submission-kernels:{services.cache_generation()}:{submission.pk}:{run.pk if run else 0}"
    html = cache.get(key)
    if html is None:
        kernels = submission.kernels.select_related("query").defer("source_html")
        ctx = {
            "submission": submission,
            "run": run,
            "kernels": [
                (
                    kernel,
                    results.get(kernel.query_id),
                    len(kernel.source.splitlines()),
                    len(kernel.source.encode()),
                )
                for kernel in kernels
            ],
        }
        html = render_to_string("leaderboard/submission_kernels.html", ctx)
        cache.set(key, html, RANKING_CACHE_S)
    return mark_safe(html)  # noqa: S308 (rendered, autoescaped, by submission_kernels.html)


def submission_detail(request: HttpRequest, submission_id: int) -> HttpResponse:
    submission = get_object_or_404(
        Submission.objects.visible_to(request.user).select_related("language_model", "uploader"),
        pk=submission_id,
    )
    # Another user sees a published set's ranked runs only: feedback runs are the uploader's own.
    runs = list(
        EvaluationRun.objects.visible_to(request.user)
        .filter(submission=submission)
        .newest_first()
        .prefetch_related(Prefetch("results", queryset=QueryResult.objects.select_related("query")))
    )
    run = None
    if run_id := request.GET.get("run"):
        run = next((r for r in runs if str(r.pk) == run_id), None)
        if run is None:
            raise Http404("no such run for this submission")
    else:
        # The newest ranked run (where the set stands), else the newest that has results (a CPU's check),
        # else the newest one, to show its status.
        done = [r for r in runs if r.status == EvaluationRun.Status.SUCCEEDED]
        newest = done[0] if done else runs[0] if runs else None
        run = next((r for r in done if not r.timing_label), newest)
    for queued in (r for r in runs if r.status == EvaluationRun.Status.QUEUED):
        queued.queued_ahead = EvaluationRun.objects.ahead_of(queued)
    results = {result.query_id: result for result in run.results.all()} if run else {}
    ctx = {
        "submission": submission,
        "runs": runs,
        "run": run,
        "results": list(results.values()),
        "unstable": [result for result in results.values() if result.unstable],
        "kernel_sections": _kernel_sections(submission, run, results),
        "environment": run_environment(run.report) if run else [],
        "auto_refresh": any(not r.is_final for r in runs),
        "is_owner": submission.uploader_id == request.user.pk,
    }
    return render(request, "leaderboard/submission_detail.html", ctx)


@login_required
@require_http_methods(["POST"])
def submission_publish(request: AuthenticatedHttpRequest, submission_id: int) -> HttpResponse:
    submission = get_object_or_404(Submission.objects.visible_to(request.user), pk=submission_id)
    try:
        services.submission_publish(submission=submission, user=request.user)
    except SubmissionError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(
            request, f"Submission #{submission.pk} is public: its ranked runs join the rankings."
        )
    return redirect(submission)


def _compared_run(
    request: HttpRequest, submission: Submission, hardware: Hardware | None
) -> EvaluationRun | None:
    """The set's newest succeeded run the user may see (on the hardware, when one is asked for)."""
    runs = EvaluationRun.objects.visible_to(request.user).filter(
        submission=submission, status=EvaluationRun.Status.SUCCEEDED
    )
    if hardware is not None:
        runs = runs.filter(hardware=hardware)
    return runs.select_related("hardware").order_by("-finished", "-id").first()


def compare(request: HttpRequest) -> HttpResponse:
    try:
        ids = [int(request.GET.get(side, "")) for side in ("a", "b")]
    except ValueError:
        return _not_found(request, "Comparing needs two set numbers, as in /compare/?a=8&b=9.")
    visible = Submission.objects.visible_to(request.user).select_related("language_model", "uploader")
    found = {s.pk: s for s in visible.filter(pk__in=ids)}
    if missing := [pk for pk in ids if pk not in found]:
        return _not_found(
            request,
            f"There is no set #{missing[0]} to compare: no such number, or not published by its uploader.",
        )
    sets = [found[pk] for pk in ids]
    hardware = None
    if slug := request.GET.get("hardware"):
        hardware = get_object_or_404(Hardware, slug=slug)
    runs = [_compared_run(request, submission, hardware) for submission in sets]
    results = [{r.query_id: r for r in run.results.select_related("query")} if run else {} for run in runs]
    queries = Query.objects.filter(pk__in=set(results[0]) | set(results[1])).by_number()
    ctx = {
        "sets": list(zip(sets, runs, strict=True)),
        "rows": [(query, results[0].get(query.pk), results[1].get(query.pk)) for query in queries],
        "hardware": hardware,
    }
    return render(request, "leaderboard/compare.html", ctx)


def _not_found(request: HttpRequest, detail: str) -> HttpResponse:
    """The 404 page, saying what was not found where the visitor typed it (the compare form's number)."""
    return render(request, "404.html", {"detail": detail}, status=404)


def query_list(request: HttpRequest) -> HttpResponse:
    ctx = {"queries": Query.objects.by_number()}
    return render(request, "leaderboard/query_list.html", ctx)


QUERY_KERNELS = 10


def _query_kernels(query: Query) -> dict[str, Any]:
    """The query page's published kernels rendered (the fastest with ranked timing, the latest correct ones
    whose timing is not ranked), whether a ranked one failed, and each hardware's bandwidth floor, cached
    under the results generation: the same for every visitor (published sets only)."""
    key = f"query-kernels:{services.cache_generation()}:{query.number}"
    data = cache.get(key)
    if data is None:
        best, correct, failed = ranking.query_kernels(query, limit=QUERY_KERNELS)
        ctx = {"query": query, "best": best, "correct": correct}
        data = {
            "html": render_to_string("leaderboard/query_kernels.html", ctx),
            "charted": bool(best) or failed,
            "floors": ranking.bandwidth_floors(query),
        }
        cache.set(key, data, RANKING_CACHE_S)
    return data


def query_detail(request: HttpRequest, number: int) -> HttpResponse:
    query = get_object_or_404(Query, number=number)
    kernels = _query_kernels(query)
    ctx = {
        "query": query,
        "kernels": mark_safe(kernels["html"]),  # noqa: S308 (rendered, autoescaped, by query_kernels.html)
        "charted": kernels["charted"],
        "calibrations": query.baseline_calibrations(),
        "floors": kernels["floors"],
        "baseline_rule": baselines.RULE,
    }
    return render(request, "leaderboard/query_detail.html", ctx)


@login_required
@require_http_methods(["GET", "POST"])
def upload(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = UploadForm(request.POST or None, request.FILES or None)
    ranked = EvaluationRun.Kind.RANKED
    wait_s = throttles.upload_wait_s(user=request.user, kind=ranked) if request.method == "POST" else None
    if wait_s:
        form.add_error(None, throttles.rate_limited_message(kind=ranked, wait_s=wait_s))
    elif request.method == "POST" and form.is_valid():
        assert form.upload is not None
        try:
            submission, created = services.submission_upload(
                uploader=request.user, kernel_set=form.upload.kernel_set, archive_sha256=form.upload.sha256
            )
        except SubmissionError as exc:
            form.add_error(None, exc.message)
        else:
            if not created:
                messages.info(
                    request, f"You uploaded this exact set before: here is submission #{submission.pk}."
                )
                return redirect(submission)
            count = submission.runs.count()
            runs = f"{count} evaluation run{pluralize(count)}"
            messages.success(
                request,
                f"Submission #{submission.pk} stored; {runs} queued. "
                "It is private until you publish it from its page.",
            )
            return redirect(submission)
    token = Token.objects.filter(user=request.user).first()
    hardware = list(Hardware.objects.active().order_by("name"))
    ctx = {
        "form": form,
        "token": token,
        # The key is shown on the page right after it is created, and never again.
        "new_token_key": request.session.pop(NEW_TOKEN_SESSION_KEY, None),
        "mine": Submission.objects.filter(uploader=request.user).recent()[:10],
        "queries": Query.objects.by_number(),
        # Where a set will run, said before it is sent: on a CPU-only site nothing it uploads is ranked.
        "hardware": hardware,
        "any_cpu": any(hw.is_cpu for hw in hardware),
        "any_gpu": any(not hw.is_cpu for hw in hardware),
    }
    status = 429 if wait_s else 400 if form.errors else 200
    return render(request, "leaderboard/upload.html", ctx, status=status)


@login_required
@require_http_methods(["POST"])
def token_create(request: AuthenticatedHttpRequest) -> HttpResponse:
    token = services.api_token_rotate(user=request.user)
    request.session[NEW_TOKEN_SESSION_KEY] = token.key
    messages.success(request, "A new API token was created; the old one no longer works.")
    return redirect("upload")


@login_required
@require_http_methods(["POST"])
def token_revoke(request: AuthenticatedHttpRequest) -> HttpResponse:
    if services.api_token_revoke(user=request.user):
        messages.success(request, "Your API token was revoked: it no longer works.")
    return redirect("upload")
