"""Every link a public page shows leads somewhere: no kernel page for a query the set has no kernel for."""

from __future__ import annotations

from collections.abc import Callable
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
from django.test import Client

from evaluator.queries import QUERIES
from tests.conftest import ROOT


class Links(HTMLParser):
    """The href of every <a> in a page."""

    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.hrefs.append(href)


def broken_links(client: Client, url: str) -> list[str]:
    """The site's links on the page at `url` that answer 404."""
    response = client.get(url)
    assert response.status_code == 200
    parser = Links()
    parser.feed(response.content.decode())
    broken = []
    for href in sorted(set(parser.hrefs)):
        target = urljoin(url, href)
        if urlsplit(target).netloc or target.startswith("/static/") or href.startswith("#"):
            continue
        if client.get(target).status_code == 404:
            broken.append(target)
    return broken


@pytest.fixture
def every_query(q6: Any) -> None:
    """All 22 queries loaded, as `dkb_setup` does, so a report's rows for the set's missing kernels are
    stored (the fixture set has a kernel for Q6 only)."""
    from leaderboard.models import Query

    for query in QUERIES.values():
        if query.number != 6:
            source = (ROOT / "evaluator" / "torchplan" / "plans" / f"{query.slug}.py").read_text()
            Query.objects.create(
                number=query.number, name=query.name, sql=query.sql(), torchplan_source=source
            )


@pytest.fixture
def whole_run(
    every_query: None,
    submit: Callable[..., Any],
    real_report: Callable[[], dict[str, Any]],
    cpu: Any,
) -> Callable[..., Any]:
    """A published set's CPU run recorded from the whole fixture report: Q6 passed, 21 queries without a
    kernel."""
    from leaderboard import services

    def make(*, model: str) -> Any:
        run = submit(model=model).runs.get(hardware=cpu)
        return services.evaluation_record(run=run, report=real_report())

    return make


def test_a_run_page_links_no_kernel_page_that_does_not_exist(
    whole_run: Callable[..., Any], anonymous: Client
) -> None:
    run = whole_run(model="model-a")
    assert run.results.filter(status="missing").count() == 21

    assert broken_links(anonymous, run.get_absolute_url()) == []


def test_a_compare_page_links_no_kernel_page_that_does_not_exist(
    whole_run: Callable[..., Any], anonymous: Client
) -> None:
    a, b = whole_run(model="model-a"), whole_run(model="model-b")

    page = f"/compare/?a={a.submission_id}&b={b.submission_id}"
    assert broken_links(anonymous, page) == []
    assert f"/submissions/{a.submission_id}/kernels/6/?run={a.pk}" in anonymous.get(page).content.decode()
