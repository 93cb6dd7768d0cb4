"""The rankings a page shows, read a page at a time: ranked in SQL, then only that page's rows loaded.

`EvaluationRun.objects.ranked()` and `unranked()` state the rules (publication, feedback runs never ranked,
each set's latest ranked run per hardware, hardware and scope filters); this module only decides how much
of them a page reads. Loading every ranked run cost ~0.4 s at 1,000 sets on a cold cache (each row's
report parsed by the database for two of its keys, and every row rendered); a page now costs one query
for its ids and the total (ORDER BY ... LIMIT, with a window COUNT), and one for its rows' columns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from django.core.cache import cache
from django.db.models import Count, F, Prefetch, Window

from leaderboard import services
from leaderboard.models import EvaluationRun, Hardware, Query, QueryResult

# Rows of the home page's ranking a page: rendering them is most of a cold page (~0.5 ms a row).
PAGE_SIZE = 25
UNRANKED_SHOWN = 20
# How many of a hardware's newest results a query page's bandwidth floor reads at a time.
FLOOR_BATCH = 8
CACHE_S = 600


def cache_key(name: str, hardware: Hardware | None, scope: str | None, *parts: object) -> str:
    """The key of something cached for a ranking's filters under the results generation: a new report or a
    hidden submission starts a fresh generation."""
    key = f"{name}:{services.cache_generation()}:{hardware.pk if hardware else 'all'}:{scope or 'all'}"
    return ":".join([key, *map(str, parts)])


@dataclass(frozen=True)
class RankingPage:
    """One page of a ranking: its runs in rank order, which page it is, and how many runs rank in all."""

    runs: list[EvaluationRun]
    number: int
    total: int
    size: int
    first_rank: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "first_rank", (self.number - 1) * self.size + 1)

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.size))

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    @property
    def has_next(self) -> bool:
        return self.number < self.pages

    @property
    def last_rank(self) -> int:
        return self.first_rank + len(self.runs) - 1


class NoSuchPage(LookupError):
    """A page number past the ranking's last page (page 1 always exists, empty or not)."""


def _in_order(runs: list[EvaluationRun], ids: list[int]) -> list[EvaluationRun]:
    by_id = {run.pk: run for run in runs}
    return [by_id[pk] for pk in ids if pk in by_id]


def ranked_ids(
    *, hardware: Hardware | None, scope: str | None, number: int = 1, size: int | None = None
) -> tuple[list[int], int]:
    """The ids of the `number`th page (from 1) of `EvaluationRun.objects.ranked`, and how many runs rank in
    all: the ranking's own ORDER BY (and the id, so that ties cannot move a run from one page to the next)
    with LIMIT/OFFSET, the total a window COUNT over the same rows. One query, no report read; cached
    under the results generation, since the home page and the matrix both start from it."""
    size = size or PAGE_SIZE
    if number < 1:
        raise NoSuchPage(number)
    key = cache_key("ranked-ids", hardware, scope, number, size)
    found = cache.get(key)
    if found is None:
        ranked = EvaluationRun.objects.ranked(hardware=hardware, scope=scope)
        offset = (number - 1) * size
        rows = list(
            ranked.order_by(*ranked.query.order_by, "id")
            .annotate(ranked_total=Window(Count("*")))
            .values_list("id", "ranked_total")[offset : offset + size]
        )
        found = ([pk for pk, _ in rows], rows[0][1] if rows else 0)
        cache.set(key, found, CACHE_S)
    if not found[0] and number > 1:
        raise NoSuchPage(number)
    return found


def ranked_page(
    *, hardware: Hardware | None, scope: str | None, number: int = 1, size: int | None = None
) -> RankingPage:
    """The `number`th page (from 1) of `EvaluationRun.objects.ranked`, its rows as `ranked` reads them:
    the page's ids first (`ranked_ids`), then its runs with what the table shows (the report's baseline,
    the roofline mean, the flagged count), computed for those rows only."""
    size = size or PAGE_SIZE
    ids, total = ranked_ids(hardware=hardware, scope=scope, number=number, size=size)
    ranked = EvaluationRun.objects.ranked(hardware=hardware, scope=scope)
    runs = _in_order(list(ranked.filter(id__in=ids)), ids) if ids else []
    return RankingPage(runs=runs, number=number, total=total, size=size)


def ranked_columns(
    *, hardware: Hardware | None, scope: str | None, limit: int
) -> tuple[list[EvaluationRun], int]:
    """The first `limit` ranked runs with only the columns a matrix heading shows (no roofline mean, flagged
    count or report), and how many runs rank in all."""
    ids, total = ranked_ids(hardware=hardware, scope=scope, size=limit)
    runs = (
        EvaluationRun.objects.filter(id__in=ids)
        .defer("report", "progress")
        .select_related("submission__language_model", "hardware")
    )
    return (_in_order(list(runs), ids) if ids else []), total


def unranked_runs(
    *, hardware: Hardware | None, scope: str | None, limit: int = UNRANKED_SHOWN
) -> list[EvaluationRun]:
    """The first `limit` runs of `EvaluationRun.objects.unranked`: ids first, then only their rows."""
    unranked = EvaluationRun.objects.unranked(hardware=hardware, scope=scope)
    ids = list(unranked.order_by(*unranked.query.order_by, "id").values_list("id", flat=True)[:limit])
    return _in_order(list(unranked.filter(id__in=ids)), ids) if ids else []


def best_per_model(*, hardware: Hardware | None, scope: str | None, limit: int) -> list[EvaluationRun]:
    """The best ranked run of each language model, best first, for the first `limit` models: the ranking
    read as (id, model) pairs, then only the chosen runs' rows."""
    ranked = EvaluationRun.objects.ranked(hardware=hardware, scope=scope)
    best: dict[int, int] = {}
    for pk, model_id in ranked.order_by(*ranked.query.order_by, "id").values_list(
        "id", "submission__language_model_id"
    ):
        best.setdefault(model_id, pk)
        if len(best) == limit:
            break
    ids = list(best.values())
    return _in_order(list(ranked.filter(id__in=ids)), ids) if ids else []


def cached_ranked_page(*, hardware: Hardware | None, scope: str | None, number: int = 1) -> RankingPage:
    """`ranked_page` cached under the results generation (the same for every visitor: published sets
    only); the home page and the matrix share page 1."""
    key = cache_key("ranking-page", hardware, scope, number)
    page = cache.get(key)
    if page is None:
        page = ranked_page(hardware=hardware, scope=scope, number=number)
        cache.set(key, page, CACHE_S)
    return page


def cached_unranked(*, hardware: Hardware | None, scope: str | None) -> list[EvaluationRun]:
    """`unranked_runs` cached under the results generation."""
    key = cache_key("unranked", hardware, scope)
    runs = cache.get(key)
    if runs is None:
        runs = unranked_runs(hardware=hardware, scope=scope)
        cache.set(key, runs, CACHE_S)
    return runs


def _results_in_order(ids: list[int]) -> list[QueryResult]:
    """The results with these ids, in this order, each with its run (set, model, hardware) read in the same
    query, without the run's report (`without_report`)."""
    if not ids:
        return []
    runs = EvaluationRun.objects.without_report().select_related("hardware", "submission__language_model")
    rows = (
        QueryResult.objects.filter(id__in=ids)
        .select_related("query")
        .prefetch_related(Prefetch("run", queryset=runs))
    )
    by_id = {result.pk: result for result in rows}
    return [by_id[pk] for pk in ids if pk in by_id]


def query_kernels(query: Query, *, limit: int) -> tuple[list[QueryResult], list[QueryResult], bool]:
    """A query page's published kernels: the fastest passing ones among the ranked runs (each listed set's
    latest per hardware), the latest correct ones among the runs whose timing is not ranked, and whether a
    ranked run's kernel failed. Ids first, ordered and limited in SQL, then only those rows."""
    passed = QueryResult.objects.filter(query=query, status=QueryResult.Status.PASSED)
    # Each listed set's latest run per hardware only, as in the ranking: a superseded run is history.
    ranked = EvaluationRun.objects.latest_ranked().order_by().values("id")
    unranked = EvaluationRun.objects.latest_unranked().order_by().values("id")
    # Speeds only from runs whose timing may be ranked; the others show that a kernel is correct.
    best = passed.filter(run__in=ranked).order_by(F("speedup").desc(nulls_last=True), "id")
    correct = passed.filter(run__in=unranked).order_by("-run__finished", "id")
    failed = (
        QueryResult.objects.filter(query=query, run__in=ranked)
        .exclude(status__in=[QueryResult.Status.PASSED, QueryResult.Status.MISSING])
        .exists()
    )
    return (
        _results_in_order(list(best.values_list("id", flat=True)[:limit])),
        _results_in_order(list(correct.values_list("id", flat=True)[:limit])),
        failed,
    )


def bandwidth_floors(query: Query) -> list[tuple[str, float, float]]:
    """What `QueryResult.objects.bandwidth_floors` gives, (hardware name, scale factor, floor ms) per
    hardware from the newest published result of the query that reports one, without parsing every
    result's statistics: the candidates are ordered by columns alone, then each hardware's newest are read
    a few at a time until one has a numeric floor (nearly always the first)."""
    listed = EvaluationRun.objects.listed().order_by().values("id")
    candidates = (
        QueryResult.objects.filter(query=query, run__in=listed)
        .order_by("run__hardware__name", "run__hardware_id", "-run__finished", "-id")
        .values_list("id", "run__hardware_id", "run__hardware__name", "run__hardware__scale_factor")
    )
    per_hardware: dict[int, list[tuple[int, str, float]]] = {}
    for pk, hardware_id, name, scale_factor in candidates:
        per_hardware.setdefault(hardware_id, []).append((pk, name, scale_factor))
    floors = []
    for rows in per_hardware.values():
        for start in range(0, len(rows), FLOOR_BATCH):
            batch = rows[start : start + FLOOR_BATCH]
            found = dict(
                QueryResult.objects.filter(id__in=[pk for pk, _, _ in batch])
                .filter(stats__has_key="roofline_floor_ms")
                .values_list("id", "stats__roofline_floor_ms")
            )
            floor = next(
                (
                    (name, sf, float(found[pk]))
                    for pk, name, sf in batch
                    if isinstance(found.get(pk), int | float)
                ),
                None,
            )
            if floor is not None:
                floors.append(floor)
                break
    return floors
