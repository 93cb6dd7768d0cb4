"""A CPU run checks correctness only: its speedups (Triton's interpreter against eager PyTorch, 0.0006x to
0.04x) are greyed on the set page, its kernel list and compare, as the matrix and kernel page grey them,
not coloured slower in red right under the banner that says they are not performance."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from leaderboard import services

pytestmark = pytest.mark.django_db


def _cell_classes(html: str, speedup: str) -> list[str]:
    """The class of every element that shows `speedup`."""
    return re.findall(rf'class="([^"]*)">(?:<span class="[^"]*">)?{re.escape(speedup)}<', html)


def test_a_cpu_runs_speedups_are_greyed_on_the_set_page_and_in_compare(
    evaluated: Callable[..., Any], anonymous: Client
) -> None:
    run = evaluated(baseline_ms=0.04, kernel_ms=1.0)
    rival = evaluated(model="Rival", baseline_ms=0.04, kernel_ms=1.0)
    html = anonymous.get(run.submission.get_absolute_url()).content.decode()
    # Q6 in the per-query table and in the kernel list.
    assert _cell_classes(html, "0.040×") == ["num strong muted", "num strong muted"]
    assert re.search(r'<dt>Overall speedup</dt><dd class="muted">', html)
    runs = html.split('<table class="runs">')[1].split("</table>")[0]
    assert re.search(r'<td class="num muted">[0-9.]+×</td>', runs)
    compare = anonymous.get(f"/compare/?a={run.submission_id}&b={rival.submission_id}").content.decode()
    cells = _cell_classes(compare.split("<tbody>")[1], "0.040×")
    assert cells == ["num muted", "num muted"]


def test_a_gpu_runs_slower_speedups_stay_red(
    submit: Callable[..., Any], make_report: Callable[..., Any], gpu: Any, anonymous: Client
) -> None:
    run = submit().runs.get(hardware=gpu)
    run = services.evaluation_record(
        run=run, report=make_report(baseline_ms=0.5, kernel_ms=1.0, device="cuda")
    )
    html = anonymous.get(run.submission.get_absolute_url() + f"?run={run.pk}").content.decode()
    classes = _cell_classes(html, "0.50×")
    assert classes and all("slower" in c.split() for c in classes), classes
