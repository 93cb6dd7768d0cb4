"""The rankings read a page at a time (leaderboard.ranking): the same runs, in the same order, as
`EvaluationRun.objects.ranked()` and `unranked()` state them, and the home page's pages and links."""

from __future__ import annotations

import pytest
from pytest_django.asserts import assertContains, assertNotContains

from leaderboard import drilldown, ranking, services
from leaderboard.models import EvaluationRun, QueryResult

pytestmark = pytest.mark.django_db


@pytest.fixture
def five_ranked(evaluated, make_report, submit, timed_report) -> list[EvaluationRun]:
    """Five ranked sets, best first, among runs every ranking rule leaves out: a superseded run, a hidden
    set, a private set, a feedback run, a CPU run (correctness only) and an unstable one."""
    runs = [evaluated(model=f"LLM {k}", kernel_ms=0.2 * k, device="cuda") for k in (3, 1, 5, 2, 4)]
    rerun = services.evaluation_record(
        run=services.evaluation_rerun(run=runs[0]), report=make_report(kernel_ms=0.9, device="cuda")
    )
    runs[0] = rerun  # LLM 3's latest ranked run is its slower rerun: it drops below LLM 4
    hidden = evaluated(model="Hidden LLM", kernel_ms=0.01, device="cuda")
    services.submission_hide(submission=hidden.submission)
    evaluated(model="Private LLM", kernel_ms=0.01, device="cuda", published=False)
    feedback = submit(model="Feedback LLM").runs.get()
    EvaluationRun.objects.filter(pk=feedback.pk).update(kind=EvaluationRun.Kind.FEEDBACK)
    services.evaluation_record(run=feedback, report=make_report(kernel_ms=0.01, device="cuda"))
    evaluated(model="CPU LLM")
    services.evaluation_record(
        run=submit(model="Noisy LLM").runs.get(), report=timed_report(kernel_stderr_pct=3.5)
    )
    return sorted(runs, key=lambda run: -(run.overall_speedup or 0))


def models(runs: list[EvaluationRun]) -> list[str]:
    return [run.submission.language_model.name for run in runs]


def test_the_pages_of_a_ranking_are_the_ranking_itself_in_order(five_ranked) -> None:
    assert models(five_ranked) == ["LLM 1", "LLM 2", "LLM 4", "LLM 3", "LLM 5"]
    assert list(EvaluationRun.objects.ranked()) == five_ranked
    pages = [ranking.ranked_page(hardware=None, scope=None, number=n, size=2) for n in (1, 2, 3)]
    assert [page.runs for page in pages] == [five_ranked[0:2], five_ranked[2:4], five_ranked[4:]]
    assert [(p.total, p.pages, p.first_rank, p.last_rank) for p in pages] == [
        (5, 3, 1, 2),
        (5, 3, 3, 4),
        (5, 3, 5, 5),
    ]
    assert [(p.has_previous, p.has_next) for p in pages] == [(False, True), (True, True), (True, False)]
    with pytest.raises(ranking.NoSuchPage):
        ranking.ranked_page(hardware=None, scope=None, number=4, size=2)


def test_a_page_carries_what_the_ranking_table_shows_without_the_reports(
    five_ranked, django_assert_num_queries
) -> None:
    with django_assert_num_queries(2):  # the ids with the total, then the page's rows
        page = ranking.ranked_page(hardware=None, scope=None, number=1, size=3)
        for run in page.runs:
            assert "report" in run.get_deferred_fields()
            assert (run.baseline, run.timing_label, run.flagged_count) == ("recorded", "", 0)
            assert run.mean_roofline is not None and run.hardware.name and run.submission.uploader.username


def test_an_empty_ranking_has_one_empty_page() -> None:
    page = ranking.ranked_page(hardware=None, scope=None)
    assert (page.runs, page.total, page.pages, page.has_next) == ([], 0, 1, False)


def test_the_pages_honour_the_hardware_and_scope_filters(evaluated, gpu) -> None:
    full = evaluated(model="Full LLM", kernel_ms=0.5, device="cuda")
    core = evaluated(model="Core LLM", kernel_ms=0.25, device="cuda")
    core.submission.scope = "core"
    core.submission.save()
    assert ranking.ranked_page(hardware=None, scope="full").runs == [full]
    assert ranking.ranked_page(hardware=None, scope="core").runs == [core]
    assert ranking.ranked_page(hardware=full.hardware, scope=None).runs == [core, full]
    assert ranking.ranked_page(hardware=gpu, scope=None).runs == []


def test_the_unranked_list_is_the_models_own_in_order(five_ranked) -> None:
    unranked = ranking.unranked_runs(hardware=None, scope=None)
    assert unranked == list(EvaluationRun.objects.unranked()[:20])
    assert sorted(models(unranked)) == ["CPU LLM", "Noisy LLM"]
    assert [run.timing_label for run in unranked] == [
        run.timing_label for run in EvaluationRun.objects.unranked()
    ]


def test_the_chart_takes_each_models_best_ranked_set(evaluated) -> None:
    evaluated(model="Twice LLM", kernel_ms=1.0, device="cuda")
    best = evaluated(model="Twice LLM", kernel_ms=0.5, device="cuda")
    other = evaluated(model="Other LLM", kernel_ms=0.8, device="cuda")
    assert ranking.best_per_model(hardware=None, scope=None, limit=15) == [best, other]
    assert ranking.best_per_model(hardware=None, scope=None, limit=1) == [best]


def test_the_home_page_shows_the_ranking_a_page_at_a_time(anonymous, five_ranked, monkeypatch) -> None:
    monkeypatch.setattr(ranking, "PAGE_SIZE", 2)
    first = anonymous.get("/").content.decode().split('<table class="unranked">')[0]
    assert "LLM 1" in first and "LLM 2" in first and "LLM 3" not in first
    assert "ranks 1–2 of 5 (page 1 of 3)" in first
    assert 'rel="next" href="/?page=2"' in first and 'rel="prev"' not in first
    second = anonymous.get("/?page=2").content.decode().split('<table class="unranked">')[0]
    assert "LLM 4" in second and "LLM 3" in second and "LLM 1" not in second
    assert '<td class="num">3</td>' in second and '<td class="num">4</td>' in second  # ranks go on
    assert 'rel="prev" href="/"' in second and 'rel="next" href="/?page=3"' in second
    last = anonymous.get("/?page=3")
    assertContains(last, "LLM 5")
    assertContains(last, 'rel="prev" href="/?page=2"')
    assertNotContains(last, 'rel="next"')
    for missing in ("/?page=4", "/?page=0", "/?page=two", "/?page=-1"):
        assert anonymous.get(missing).status_code == 404


def test_the_page_links_keep_the_filters(anonymous, five_ranked, monkeypatch) -> None:
    monkeypatch.setattr(ranking, "PAGE_SIZE", 2)
    hardware = five_ranked[0].hardware.slug
    page = anonymous.get(f"/?hardware={hardware}&scope=full&page=2")
    assertContains(page, f'rel="next" href="/?hardware={hardware}&amp;scope=full&amp;page=3"')
    assertContains(page, f'rel="prev" href="/?hardware={hardware}&amp;scope=full"')


def test_one_page_has_no_page_links(anonymous, five_ranked) -> None:
    assertNotContains(anonymous.get("/"), 'aria-label="Ranking pages"')


def test_the_matrix_counts_every_ranked_set_and_shows_the_first_page(
    anonymous, five_ranked, monkeypatch
) -> None:
    monkeypatch.setattr(drilldown, "MATRIX_COLUMNS", 2)
    page = anonymous.get("/matrix/")
    html = page.content.decode()
    assert "of 5 ranked sets" in html
    assert "LLM 1" in html and "LLM 2" in html and "LLM 3" not in html


@pytest.mark.parametrize(
    ("found", "ranked", "html"),
    [
        (None, True, '<td class="cell none"><span class="muted small">–</span></td>'),
        (("missing", None), True, '<td class="cell none"><span class="muted small">no kernel</span></td>'),
        (
            ("passed", 4.0),
            True,
            '<td class="cell faster" style="--heat: 0.66">'
            '<a href="/submissions/7/kernels/6/?run=9">4.00×</a></td>',
        ),
        (
            ("passed", 4.0),
            False,
            '<td class="cell"><a href="/submissions/7/kernels/6/?run=9">'
            '<span class="badge passed">passed</span></a></td>',
        ),
        (
            ("wrong_answer", None),
            True,
            '<td class="cell failed"><a href="/submissions/7/kernels/6/?run=9">'
            '<span class="badge wrong_answer">wrong answer</span></a></td>',
        ),
    ],
)
def test_a_matrix_cell_is_built_as_the_template_wrote_it(found, ranked: bool, html: str) -> None:
    column = {"kernels_url": "/submissions/7/kernels/", "run_id": 9, "ranked": ranked}
    assert drilldown._cell(column, 6, found) == html


def test_a_query_pages_kernels_are_the_latest_ranked_runs_fastest_first(
    five_ranked, q6, django_assert_max_num_queries
) -> None:
    with django_assert_max_num_queries(7):  # ids of each list, their rows and runs, the failure check
        best, correct, failed = ranking.query_kernels(q6, limit=3)
    assert [result.run for result in best] == five_ranked[:3]  # LLM 3's first run is superseded
    assert [result.speedup for result in best] == sorted((r.speedup or 0 for r in best), reverse=True)
    assert sorted(models([result.run for result in correct])) == ["CPU LLM", "Noisy LLM"]
    assert best[0].run.baseline == "recorded" and "report" in best[0].run.get_deferred_fields()
    assert not failed


def test_a_query_pages_failure_is_seen_among_ranked_runs_only(evaluated, q6) -> None:
    evaluated(model="Failing LLM", status="wrong_answer", kernel_ms=None, device="cuda")
    assert ranking.query_kernels(q6, limit=10) == ([], [], True)


@pytest.mark.parametrize("batch", [1, 8])
def test_the_bandwidth_floors_are_the_models_own(
    submit, make_report, cpu, gpu, timed_report, q6, monkeypatch, batch: int
) -> None:
    monkeypatch.setattr(ranking, "FLOOR_BATCH", batch)
    for floor_ms, published in ((0.5, True), (0.21, True), (None, True), ("n/a", True), (0.01, False)):
        report = make_report(device="cuda")
        if floor_ms is not None:
            report["queries"][0]["stats"]["roofline_floor_ms"] = floor_ms
        services.evaluation_record(run=submit(published=published).runs.get(hardware=cpu), report=report)
    report = timed_report()
    report["queries"][0]["stats"]["roofline_floor_ms"] = 0.05
    services.evaluation_record(run=submit().runs.get(hardware=gpu), report=report)
    # The newest CPU results say none, or not a number: the one before them counts; a private set's never.
    expected = [("NVIDIA H200", 10.0, 0.05), ("Test CPU", 0.01, 0.21)]
    assert QueryResult.objects.bandwidth_floors(query=q6) == expected
    assert ranking.bandwidth_floors(q6) == expected
