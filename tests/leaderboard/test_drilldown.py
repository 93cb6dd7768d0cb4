"""The drill-down pages: the per-query matrix, a kernel's page, a query's chart."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from pytest_django.asserts import assertContains, assertNotContains

from leaderboard import services
from leaderboard.models import Query

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
        run = submit(model=model, published=published).runs.get()
        return services.evaluation_record(run=run, report=report)

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
    assert f"/submissions/{fast.submission_id}/?run={fast.pk}#q06" in rows[0]
    assert f"/submissions/{slow.submission_id}/?run={slow.pk}#q14" in rows[1]
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
