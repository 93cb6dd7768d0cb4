"""The upload page says where a set will be evaluated before it is sent, and that a CPU run is never
ranked: an uploader on a CPU-only site knows before uploading."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def _where(client: Client) -> str:
    html = client.get("/upload/").content.decode()
    return html.split('where">')[1].split("</div>")[0]


def test_on_a_cpu_only_site_the_upload_page_says_a_set_runs_on_the_cpu_and_is_never_ranked(
    cpu: Any, uploader_client: Client
) -> None:
    where = " ".join(_where(uploader_client).split())
    assert "Test CPU" in where and "SF0.01" in where
    assert "checks correctness only" in where and "never ranked" in where
    assert "nothing uploaded now will be ranked" in where


def test_with_a_gpu_too_the_upload_page_lists_both_and_ranks_the_gpus(
    cpu: Any, gpu: Any, uploader_client: Client
) -> None:
    where = " ".join(_where(uploader_client).split())
    assert "NVIDIA H200" in where and "Test CPU" in where and "never ranked" in where
    assert "nothing uploaded now will be ranked" not in where


def test_a_retired_hardware_is_not_listed(cpu: Any, gpu: Any, uploader_client: Client) -> None:
    gpu.active = False
    gpu.save()
    assert "NVIDIA H200" not in _where(uploader_client)
