"""What the public pages say about a run is true of it: failed kernels are not called correct, an empty state
is not shown above rows, a reason is the real one and is said once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def text(client: Client, url: str) -> str:
    """The page at `url`, its whitespace runs made one space (templates wrap sentences)."""
    response = client.get(url)
    assert response.status_code == 200
    return " ".join(response.content.decode().split())


def test_a_set_whose_only_kernel_failed_to_build_is_not_called_correct(
    anonymous: Client, evaluated: Callable[..., Any], cpu: Any
) -> None:
    run = evaluated(model="Broken LLM", status="build_error", kernel_ms=None, reason="nvcc: error")
    assert run.pass_rate == 0.0 and run.timing_label == "correctness only"

    home = text(anonymous, f"/?hardware={cpu.slug}")
    assert "Broken LLM" in home.split('<table class="unranked">')[1]
    assert "Correct kernels" not in home
    assert "the share of a set's queries whose kernel answered correctly (it may be none)" in home
    page = text(anonymous, run.get_absolute_url())
    assert "show that the kernels run and answer correctly" not in page
    assert (
        "This run checks whether the kernels run and answer correctly, not how fast they are: 0% of its"
        in page
    )


def test_a_hardware_with_only_unranked_sets_says_why_nothing_is_ranked_instead_of_inviting_an_upload(
    anonymous: Client, evaluated: Callable[..., Any], cpu: Any
) -> None:
    evaluated(model="CPU LLM")

    home = text(anonymous, f"/?hardware={cpu.slug}")
    ranking, unranked = home.split('<table class="unranked">')
    assert "No evaluated submissions yet" not in home
    said = "Nothing is ranked on Test CPU: timings on a CPU, through the Triton interpreter, show correctness"
    assert said in ranking
    assert '<a href="#not-ranked">Not ranked</a> below' in ranking and "CPU LLM" in unranked
    everywhere = text(anonymous, "/")
    assert "Nothing is ranked yet: no evaluated set's timings can be ranked" in everywhere
