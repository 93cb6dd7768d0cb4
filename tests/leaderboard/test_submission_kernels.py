"""A set's page lists its kernels and links each to its page, where its source sits beside the TorchPlan."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from evaluator.queries import QUERIES
from leaderboard.models import Query, Submission

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
# What `make run` imports: both reference sets, 22 kernels each, with their H200 runs.
SESSION_13 = ROOT / "docs" / "results" / "2026-12-04-h200-s13" / "reports.tgz"
PAGE_LIMIT = 300_000


@pytest.fixture
def reference_set(q6: Query) -> Submission:
    """The Triton reference set with its run, every query's TorchPlan loaded as `dkb_setup` does."""
    for query in QUERIES.values():
        source = (ROOT / "evaluator" / "torchplan" / "plans" / f"{query.slug}.py").read_text()
        Query.objects.update_or_create(
            number=query.number, defaults={"name": query.name, "sql": query.sql(), "torchplan_source": source}
        )
    User.objects.create_user("demo")
    call_command("dkb_import_reports", str(SESSION_13), stdout=open("/dev/null", "w"))  # noqa: SIM115
    return Submission.objects.get(language_model__name="DataKernelBench reference - Triton, full")


def test_a_22_kernel_set_page_stays_under_300_kb_and_links_every_kernel(
    anonymous: Client, reference_set: Submission
) -> None:
    kernels = list(reference_set.kernels.select_related("query"))
    assert len(kernels) == 22
    page = anonymous.get(reference_set.get_absolute_url())
    html = page.content.decode()
    assert len(page.content) < PAGE_LIMIT, f"{len(page.content)} bytes"
    run = reference_set.runs.get()
    for kernel in kernels:
        assert f'href="{kernel.get_absolute_url()}?run={run.pk}"' in html, kernel.filename
        assert f'id="{kernel.query.slug}"' in html  # where the timing notice's links land
    assert html.count('<div class="highlight">') == 0  # the sources are on the kernels' pages


def test_a_set_page_lists_each_kernels_size_and_status(anonymous: Client, reference_set: Submission) -> None:
    html = anonymous.get(reference_set.get_absolute_url()).content.decode()
    listing = html.split('<table class="kernels">')[1].split("</table>")[0]
    q06 = reference_set.kernels.get(query__number=6)
    row = re.search(r'<tr id="q06">(.*?)</tr>', listing, re.S)
    assert row is not None
    assert "q06.py" in row[1] and f"{len(q06.source.splitlines())} lines" in row[1]
    assert "passed" in row[1] and "×" in row[1]
