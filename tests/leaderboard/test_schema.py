"""The OpenAPI schema (drf-spectacular) and the docs page that renders it, offline."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import get_resolver

from leaderboard import api_urls, apis, list_apis

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    response = Client().get("/api/schema/?format=json")
    assert response.status_code == 200
    return response.json()


def properties(schema: dict[str, Any], ref: dict[str, Any]) -> set[str]:
    name = ref["$ref"].rsplit("/", 1)[1]
    return set(schema["components"]["schemas"][name]["properties"])


def test_the_schema_generates_and_validates_without_a_warning(tmp_path: Path) -> None:
    # Each warning is a guess drf-spectacular had to make: an endpoint whose shape the schema gets wrong.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yml"))


def test_every_api_url_is_in_the_schema(schema: dict[str, Any]) -> None:
    assert schema["openapi"].startswith("3.")
    documented = {path for path in schema["paths"]}
    served = {
        "/api/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(pattern.pattern))
        for pattern in api_urls.urlpatterns
        if pattern.name not in ("api_schema", "api_docs")
    }
    assert served == documented
    assert any(str(p.pattern) == "api/" for p in get_resolver().url_patterns)


def test_the_upload_is_described_as_multipart_with_its_answers(schema: dict[str, Any]) -> None:
    upload = schema["paths"]["/api/submissions/"]["post"]
    body = upload["requestBody"]["content"]["multipart/form-data"]["schema"]
    assert {"archive", "manifest", "kind"} <= properties(schema, body)
    answer = upload["responses"]["202"]["content"]["application/json"]["schema"]
    assert properties(schema, answer) == set(apis.SubmissionCreateApi.OutputSerializer().fields)
    assert {"200", "202", "400", "429"} <= set(upload["responses"])
    error = upload["responses"]["400"]["content"]["application/json"]["schema"]
    assert properties(schema, error) == {"code", "detail"}
    assert {"tokenAuth": []} in upload["security"]


@pytest.mark.parametrize(
    ("path", "serializer"),
    [
        ("/api/runs/{run_id}/", apis.EvaluationRunDetailApi.OutputSerializer),
        ("/api/submissions/{submission_id}/", apis.SubmissionDetailApi.OutputSerializer),
        ("/api/queries/{number}/", list_apis.QueryDetailApi.OutputSerializer),
    ],
)
def test_a_detail_endpoints_answer_has_its_serializers_fields(
    schema: dict[str, Any], path: str, serializer: Any
) -> None:
    answer = schema["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert properties(schema, answer) == set(serializer().fields)


def test_a_list_is_paged_and_documents_its_filters(schema: dict[str, Any]) -> None:
    runs = schema["paths"]["/api/runs/"]["get"]
    assert {p["name"] for p in runs["parameters"]} == {
        "page", "page_size", "hardware", "status", "kind", "submission", "model", "language", "scope",
    }  # fmt: skip
    page = runs["responses"]["200"]["content"]["application/json"]["schema"]
    assert properties(schema, page) == {"count", "next", "previous", "results"}


def test_the_docs_page_loads_nothing_from_another_site(anonymous: Client) -> None:
    page = anonymous.get("/api/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    # What the page loads (scripts, stylesheets, images), not where the site header's links lead.
    assets = re.findall(r'<(?:script|link|img)\b[^>]*\b(?:src|href)="([^"]+)"', html)
    assert any(asset.endswith("swagger-ui-bundle.js") for asset in assets)
    for asset in assets:
        assert asset.startswith("/static/"), asset
        assert anonymous.get(asset).status_code == 200, asset  # served by the site itself
    assert '"/api/schema/"' in html
    assert not re.search(r"https?://|[\"']//", html)  # no absolute or protocol-relative address anywhere


def test_the_docs_page_wears_the_site_header(anonymous: Client) -> None:
    html = anonymous.get("/api/docs/").content.decode()
    header = html[html.index('<header class="site-header">') : html.index("</header>")]
    assert 'href="/"' in header  # the way back to the leaderboard
    assert 'href="/api/docs/"' in header and 'href="/accounts/login/"' in header
    assert html.index("</header>") < html.index('<div id="swagger-ui">')


def test_signed_in_the_docs_page_header_can_log_out(uploader_client: Client) -> None:
    html = uploader_client.get("/api/docs/").content.decode()
    header = html[html.index('<header class="site-header">') : html.index("</header>")]
    assert "Log out ada" in header and 'name="csrfmiddlewaretoken"' in header
    assert "Sign up" not in header
