"""The drill-down pages: the per-query matrix, a kernel's page, a query's chart."""

from __future__ import annotations

import html
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from pytest_django.asserts import assertContains, assertNotContains

from evaluator.harness.core import _roofline
from evaluator.report import QueryResult, Status
from leaderboard import drilldown, services
from leaderboard.models import Kernel, Query

pytestmark = pytest.mark.django_db


@pytest.fixture
def q14(db: None) -> Query:
    return Query.objects.create(
        number=14,
        name="Promotion Effect",
        sql="select 1",
        torchplan_source="def run_query(tables):\n    pass\n",
    )


@pytest.fixture
def two_query_run(submit: Any, make_report: Any, q14: Query) -> Any:
    """A published GPU-like run: Q6 passes at `kernel_ms` (baseline 2 ms), Q14 gives a wrong answer."""

    def make(*, model: str, kernel_ms: float = 1.0, published: bool = True) -> Any:
        report = make_report(kernel_ms=kernel_ms, device="cuda")
        report["queries"].append(
            {
                "query": 14,
                "status": "wrong_answer",
                "reason": "row 3 differs",
                "baseline_ms": 5.0,
                "trials": 1,
            }
        )
        submission = submit(model=model, published=published)
        Kernel.objects.create(
            submission=submission, query=q14, source="def run_query(tables):\n    return {}\n"
        )
        return services.evaluation_record(run=submission.runs.get(), report=report)

    return make


def _matrix_table(page: Any) -> str:
    return page.content.decode().split('<table class="matrix">')[1].split("</table>")[0]


def test_the_matrix_has_a_column_per_ranked_set_best_first_and_a_row_per_query(
    anonymous, two_query_run
) -> None:
    slow = two_query_run(model="Slow LLM", kernel_ms=4.0)
    fast = two_query_run(model="Fast LLM", kernel_ms=0.5)
    table = _matrix_table(anonymous.get("/matrix/"))
    assert table.index("Fast LLM") < table.index("Slow LLM")
    rows = table.split("<tbody>")[1].split("</tr>")
    assert ">Q6</a>" in rows[0] and ">Q14</a>" in rows[1]
    # Q6: 4x faster, tinted green; 0.5x, red; each cell opens that set's kernel in that run.
    assert '<td class="cell faster" style="--heat: 0.66">' in rows[0]
    assert '<td class="cell slower" style="--heat: 0.41">' in rows[0]
    assert f"/submissions/{fast.submission_id}/kernels/6/?run={fast.pk}" in rows[0]
    assert f"/submissions/{slow.submission_id}/kernels/14/?run={slow.pk}" in rows[1]
    # Q14's failures are marked with their status, not a number.
    assert rows[1].count('<span class="badge wrong_answer">wrong answer</span>') == 2


def test_the_matrix_shows_correctness_only_sets_without_speeds(anonymous, evaluated) -> None:
    evaluated(model="CPU LLM", kernel_ms=0.5)  # 4x on a CPU: never a ranked speed
    table = _matrix_table(anonymous.get("/matrix/"))
    assert "CPU LLM" in table and "correctness only" in table
    assert '<span class="badge passed">passed</span>' in table
    assert "4.00×" not in table


def test_the_matrix_leaves_out_private_sets(anonymous, uploader_client, two_query_run) -> None:
    two_query_run(model="Public LLM")
    two_query_run(model="Private LLM", published=False)
    for client in (anonymous, uploader_client):
        page = client.get("/matrix/")
        assertContains(page, "Public LLM")
        assertNotContains(page, "Private LLM")


def test_the_matrix_reads_its_cells_in_one_query_however_many_sets(anonymous, two_query_run) -> None:
    def queries_for_a_fresh_matrix() -> int:
        services.results_changed()
        with CaptureQueriesContext(connection) as captured:
            assert anonymous.get("/matrix/").status_code == 200
        return len(captured)

    two_query_run(model="One LLM")
    one = queries_for_a_fresh_matrix()
    for n in range(4):
        two_query_run(model=f"LLM {n}")
    assert queries_for_a_fresh_matrix() == one


def test_the_matrix_is_cached_until_results_change(
    anonymous, two_query_run, django_capture_on_commit_callbacks
) -> None:
    two_query_run(model="First LLM")
    anonymous.get("/matrix/")
    with CaptureQueriesContext(connection) as captured:
        assertContains(anonymous.get("/matrix/"), "First LLM")
    assert not [q for q in captured if "leaderboard_queryresult" in q["sql"]]
    with django_capture_on_commit_callbacks(execute=True):
        two_query_run(model="Second LLM")
    assertContains(anonymous.get("/matrix/"), "Second LLM")


def test_the_matrix_filters_by_hardware_and_scope_like_the_ranking(anonymous, two_query_run, db) -> None:
    two_query_run(model="Full LLM")
    assertContains(anonymous.get("/matrix/?scope=full"), "Full LLM")
    assertContains(anonymous.get("/matrix/?scope=core"), "No published set has finished a run")
    assert anonymous.get("/matrix/?hardware=nowhere").status_code == 404


def test_the_home_page_links_to_the_matrix(anonymous, two_query_run) -> None:
    two_query_run(model="Any LLM")
    assertContains(anonymous.get("/"), 'href="/matrix/"')


def test_a_kernel_page_shows_the_result_timing_attribution_and_roofline(
    anonymous, submit, timed_report
) -> None:
    report = timed_report(kernel_ms=0.5)
    row = report["queries"][0]
    row |= {"kernel_time_share": 0.08, "launches": 7}
    row["stats"] |= {
        "baseline_launches": 3,
        "framework_fallback": "framework fallback: 8% of the device time is in the kernel file's own kernels",
        "roofline_floor_ms": 0.21,
        "flagged": "near the bandwidth floor: flagged for review",
        "attribution": {"kernel": {"top_own": [["_q06_partials", 431.2], ["_q06_total", 3.4]]}},
    }
    run = services.evaluation_record(run=submit(model="Kernel LLM").runs.get(), report=report)
    page = " ".join(anonymous.get(f"/submissions/{run.submission_id}/kernels/6/").content.decode().split())
    assert "<title>Q6 kernel of #" in page
    assert '<span class="badge passed">passed</span>' in page
    assert "4.00×" in page
    # The medians with their relative standard errors and samples.
    assert (
        '<td>kernel</td><td class="num">0.500</td><td class="num">0.50%</td><td class="num">40</td>' in page
    )
    assert (
        "Timed against the <strong>compiled</strong> TorchPlan, the mode this hardware's calibration" in page
    )
    assert "<strong>8%</strong> of one profiled call" in page
    assert "<strong>7</strong> (the TorchPlan: 3)" in page
    own = "Its largest kernels in that call: <code>_q06_partials</code> 431 µs, <code>_q06_total</code> 3 µs."
    assert own in page
    assert "8% of the device time is in the kernel file&#x27;s own kernels" in page
    assert "<strong>42%</strong> of the speed the bandwidth floor allows" in page
    assert "at peak bandwidth: 0.210 ms" in page
    assert "near the bandwidth floor: flagged for review" in page


def test_a_kernel_page_says_why_a_kernel_faster_than_reading_its_columns_is_flagged(
    anonymous, submit, timed_report
) -> None:
    # 0.6.19: over the columns' floor is flagged, not rejected (the CUDA reference Q15 on an H100, at 3,350
    # GB/s); the page gives the harness's reason, which allows for a wrong timing, and no surer one.
    judged = QueryResult(query=6, status=Status.PASSED, kernel_ms=0.447, speedup=2.0)
    _roofline(judged, nbytes=1_688_400_000, scan_nbytes=241_200_000, peak_gbs=3350.0)
    report = timed_report(kernel_ms=0.447)
    report["queries"][0] |= {"roofline_fraction": judged.roofline_fraction}
    report["queries"][0]["stats"] |= judged.stats
    run = services.evaluation_record(run=submit().runs.get(), report=report)
    page = html.unescape(
        " ".join(anonymous.get(f"/submissions/{run.submission_id}/kernels/6/").content.decode().split())
    )
    # The roofline line gives the figure alone; why it may be so is the harness's flag, which follows.
    assert (
        "<strong>113%</strong> of the speed the bandwidth floor allows (reading the query's columns once "
        "at peak bandwidth: 0.504 ms).</li>" in page
    )
    assert (
        "flagged</span> faster than reading the query's columns once at peak bandwidth (0.504 ms): it skips "
        "bytes of them, as a kernel may for rows its filters drop, or its timing is wrong" in page
    )
    plain = services.evaluation_record(run=submit().runs.get(), report=timed_report())  # at 42% of it
    assert (
        "skips bytes" not in anonymous.get(f"/submissions/{plain.submission_id}/kernels/6/").content.decode()
    )


def test_a_kernel_page_shows_a_failures_status_and_reason(anonymous, two_query_run) -> None:
    run = two_query_run(model="Failing LLM")
    page = anonymous.get(f"/submissions/{run.submission_id}/kernels/14/?run={run.pk}")
    assertContains(page, '<span class="badge wrong_answer">wrong answer</span>')
    assertContains(page, '<pre class="log reason">row 3 differs</pre>')


def test_a_kernel_page_highlights_the_source_and_diffs_it_against_the_torchplan(
    anonymous, evaluated, q6
) -> None:
    run = evaluated(model="Diff LLM")
    html = anonymous.get(f"/submissions/{run.submission_id}/kernels/6/").content.decode()
    assert html.count('<div class="highlight">') == 2  # the source, then the diff
    diff = html.split('<div class="code diff">')[1]
    assert "torchplan/q06.py" in diff and "submitted/q06.py" in diff
    assert '<span class="gd">-' in diff and '<span class="gi">+' in diff  # lines taken out and put in


def test_a_kernels_source_is_highlighted_once_when_it_is_stored(anonymous, submit, monkeypatch) -> None:
    from leaderboard import highlighting

    kernel = submit(model="Stored LLM").kernels.get()
    assert '<div class="highlight">' in kernel.source_html
    calls = []
    real = highlighting.to_html
    monkeypatch.setattr(highlighting, "to_html", lambda *a: calls.append(a) or real(*a))
    assertContains(anonymous.get(f"/submissions/{kernel.submission_id}/"), kernel.source_html, html=False)
    assert not [a for a in calls if a[0] == kernel.source]  # not highlighted again per request
    kernel.source = "print('edited')\n"
    kernel.save(update_fields=["source"])  # as the admin's form saves an unevaluated set's kernel
    kernel.refresh_from_db()
    assert "edited" in kernel.source_html


def test_the_raw_kernel_is_plain_text(anonymous, evaluated, kernel_set) -> None:
    run = evaluated(model="Raw LLM")
    response = anonymous.get(f"/submissions/{run.submission_id}/kernels/6/raw/")
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response["Content-Disposition"] == 'inline; filename="q06.py"'
    assert response.content.decode() == kernel_set.kernels[6]


def test_a_kernel_the_set_does_not_have_is_a_404(anonymous, evaluated, q14) -> None:
    run = evaluated(model="One kernel LLM")
    assert anonymous.get(f"/submissions/{run.submission_id}/kernels/14/").status_code == 404
    assert anonymous.get(f"/submissions/{run.submission_id}/kernels/6/?run=999").status_code == 404


def test_the_run_table_the_compare_page_and_the_matrix_link_to_kernel_pages(anonymous, two_query_run) -> None:
    run = two_query_run(model="Linked LLM")
    url = f"/submissions/{run.submission_id}/kernels/6/?run={run.pk}"
    for path in (
        run.get_absolute_url(),
        f"/compare/?a={run.submission_id}&b={run.submission_id}",
        "/matrix/",
    ):
        assertContains(anonymous.get(path), f'href="{url}"')


@pytest.mark.django_db(transaction=True)
def test_the_migration_highlights_the_kernels_stored_before(migrate) -> None:
    old = migrate([("leaderboard", "0008_language_model_name_unique")])
    user = old.get_model("auth", "User").objects.create(username="ada")
    model = old.get_model("leaderboard", "LanguageModel").objects.create(name="LLM", slug="llm")
    query = old.get_model("leaderboard", "Query").objects.create(
        number=6, name="Q", sql="", torchplan_source=""
    )
    submission = old.get_model("leaderboard", "Submission").objects.create(
        uploader=user, language_model=model, language="triton", scope="full"
    )
    kernel = old.get_model("leaderboard", "Kernel").objects.create(
        submission=submission, query=query, source="def run_query(tables):\n    return {}\n"
    )
    new = migrate([("leaderboard", "0009_kernel_source_html")]).get_model("leaderboard", "Kernel")
    html = new.objects.get(pk=kernel.pk).source_html
    assert '<div class="highlight">' in html and '<span class="nf">run_query</span>' in html


def test_a_query_chart_shows_its_published_kernels_fastest_first_and_failures_as_failures(
    anonymous, two_query_run
) -> None:
    two_query_run(model="Slow LLM", kernel_ms=4.0)
    two_query_run(model="Fast LLM", kernel_ms=0.5)
    two_query_run(model="Private LLM", kernel_ms=0.1, published=False)
    chart = anonymous.get("/queries/6/chart.svg")
    assert chart["Content-Type"] == "image/svg+xml"
    svg = chart.content.decode()
    bars = drilldown.query_chart_bars(Query.objects.get(number=6))
    assert [b.label.split()[0] for b in bars] == ["Fast", "Slow"]  # the fastest at the top
    assert "4.00x" in svg and "0.50x" in svg
    assert "Private LLM" not in svg and "failed:" not in svg
    failures = anonymous.get("/queries/14/chart.svg").content.decode()
    assert failures.count("failed: wrong answer") == 2
    assert "x: the kernel failed" in failures


def test_a_query_page_shows_its_chart_once_a_kernel_is_published(
    anonymous, q6, two_query_run, django_capture_on_commit_callbacks
) -> None:
    assertNotContains(anonymous.get("/queries/6/"), "/queries/6/chart.svg")
    # The page's kernels are cached under the results generation, which a result starts once it commits.
    with django_capture_on_commit_callbacks(execute=True):
        run = two_query_run(model="Charted LLM")
    page = anonymous.get("/queries/6/")
    assertContains(page, 'src="/queries/6/chart.svg"')
    assertContains(page, f'href="/submissions/{run.submission_id}/kernels/6/?run={run.pk}"')
    assertContains(anonymous.get("/queries/14/"), 'src="/queries/14/chart.svg"')  # failures alone


def test_a_query_chart_is_fresh_after_a_new_result(
    anonymous, two_query_run, django_capture_on_commit_callbacks
) -> None:
    two_query_run(model="Early LLM")
    assert "Late LLM" not in anonymous.get("/queries/6/chart.svg").content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        two_query_run(model="Late LLM")
    assert "Late LLM" in anonymous.get("/queries/6/chart.svg").content.decode()


def test_a_wide_matrix_shows_the_best_sets_and_says_how_many_there_are(
    anonymous, two_query_run, monkeypatch
) -> None:
    monkeypatch.setattr(drilldown, "MATRIX_COLUMNS", 2)
    for n, kernel_ms in enumerate((4.0, 0.5, 1.0)):
        two_query_run(model=f"LLM {n}", kernel_ms=kernel_ms)
    page = anonymous.get("/matrix/")
    assertContains(page, "Showing the 2 best of 3 ranked sets")
    table = _matrix_table(page)
    assert "LLM 1" in table and "LLM 2" in table and "LLM 0" not in table  # 4x and 2x, not 0.5x


def test_a_query_page_shows_each_hardwares_bandwidth_floor_from_its_newest_published_result(
    anonymous, submit, make_report
) -> None:
    for floor_ms, published in ((0.5, True), (0.21, True), (0.01, False)):
        report = make_report(device="cuda")
        report["queries"][0]["stats"]["roofline_floor_ms"] = floor_ms
        services.evaluation_record(run=submit(published=published).runs.get(), report=report)
    floors = anonymous.get("/queries/6/").content.decode().split("<h3>Bandwidth floor</h3>")[1]
    assert "Test CPU" in floors and "<strong>0.210 ms</strong>" in floors
    assert "0.500" not in floors and "0.010" not in floors  # an older one; a private set's


def test_a_sets_page_shows_an_edited_kernel_at_once(
    anonymous, submit, django_capture_on_commit_callbacks
) -> None:
    submission = submit()
    assertNotContains(anonymous.get(f"/submissions/{submission.pk}/"), "edited_by_staff")
    kernel = submission.kernels.first()
    # Its kernels are cached rendered under the results generation: a saved kernel starts a new one.
    with django_capture_on_commit_callbacks(execute=True):
        kernel.source += "\nedited_by_staff = True\n"
        kernel.save()
    assertContains(anonymous.get(f"/submissions/{submission.pk}/"), "edited_by_staff")
