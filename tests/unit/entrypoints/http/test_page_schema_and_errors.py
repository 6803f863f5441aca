"""The single-page app at /, the OpenAPI document, and how failures become JSON."""

from __future__ import annotations

import re

import pytest

from cafleet.domain.errors import DatabaseBusy
from cafleet.entrypoints.http.spa import bundled_build

API_ROUTES = {
    ("get", "/api/fleets"),
    ("get", "/api/agents"),
    ("get", "/api/monitor"),
    ("get", "/api/agents/{agent_id}/monitor"),
    ("patch", "/api/agents/{agent_id}/monitor"),
    ("get", "/api/agents/{agent_id}/inbox"),
    ("get", "/api/agents/{agent_id}/sent"),
    ("get", "/api/timeline"),
    ("get", "/api/search"),
    ("post", "/api/messages/send"),
    ("get", "/api/events"),
}


# --- the page -----------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/index.html", "/fleets/1/agents"])
def test_without_a_build_the_page_says_the_ui_build_is_missing(client, path) -> None:
    response = client.get(path)

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "build is missing" in response.text
    assert "CAFleet Admin" in response.text


@pytest.fixture
def built(build):
    (build / "index.html").write_text("<!doctype html><title>CAFleet Admin</title>APP")
    (build / "assets").mkdir()
    (build / "assets" / "app-1234.js").write_text("console.log('app')")
    (build.parent / "secret.txt").write_text("outside the build")
    return build


def test_the_build_is_served_at_the_root(client, built) -> None:
    response = client.get("/")

    assert response.status_code == 200
    assert response.text.endswith("APP")
    assert response.headers["cache-control"] == "no-cache"


def test_assets_of_the_build_are_served(client, built) -> None:
    response = client.get("/assets/app-1234.js")

    assert response.status_code == 200
    assert response.text == "console.log('app')"
    assert "javascript" in response.headers["content-type"]


@pytest.mark.parametrize("path", ["/fleets/3/agents/7", "/assets/missing.js", "/anything"])
def test_other_paths_fall_back_to_the_app(client, built, path) -> None:
    response = client.get(path)

    assert response.status_code == 200
    assert response.text.endswith("APP")


@pytest.mark.parametrize(
    "path", ["/../secret.txt", "/%2e%2e/secret.txt", "/assets/../../secret.txt", "/..%2fsecret.txt"]
)
def test_nothing_outside_the_build_is_served(client, built, path) -> None:
    response = client.get(path)

    assert "outside the build" not in response.text


@pytest.mark.parametrize("path", ["/api/nope", "/api/agents/1/nope", "/api", "/api/"])
def test_unknown_api_paths_stay_json_404s(client, built, path) -> None:
    response = client.get(path)

    assert response.status_code == 404
    assert response.json() == {"detail": "Not Found"}


@pytest.mark.parametrize("path", ["/ui", "/ui/", "/ui/index.html"])
def test_ui_paths_are_not_the_app(client, built, path) -> None:
    response = client.get(path)

    assert response.status_code == 404
    assert response.json() == {"detail": "Not Found"}


def test_a_wrong_method_is_a_json_405(client) -> None:
    response = client.post("/api/fleets", json={})

    assert response.status_code == 405
    assert response.json() == {"detail": "Method Not Allowed"}


def test_the_bundled_build_lives_in_the_package() -> None:
    assert bundled_build().parts[-2:] == ("cafleet", "webui")


# --- the OpenAPI document -----------------------------------------------------------------


def test_the_schema_documents_every_api_route_and_nothing_else(client) -> None:
    schema = client.get("/openapi.json").json()

    assert schema["info"]["title"] == "CAFleet Admin"
    documented = {(m, p) for p, ops in schema["paths"].items() for m in ops}
    assert documented == API_ROUTES


def test_the_schema_names_the_response_models_and_error_answers(client) -> None:
    paths = client.get("/openapi.json").json()["paths"]

    ok = paths["/api/agents/{agent_id}/inbox"]["get"]["responses"]["200"]
    assert ok["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/MessagesOut"
    }
    send = paths["/api/messages/send"]["post"]["responses"]
    assert {"200", "400", "401", "403", "404", "415", "422"} <= set(send)
    assert send["404"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ErrorOut"
    }
    events = paths["/api/events"]["get"]["responses"]["200"]["content"]
    assert list(events) == ["text/event-stream"]
    stream_parameters = paths["/api/events"]["get"]["parameters"]
    assert {(p["in"], p["name"]) for p in stream_parameters} == {
        ("query", "watch"),
        ("header", "X-Fleet-Id"),
    }
    headers = [
        p["name"] for p in paths["/api/timeline"]["get"]["parameters"] if p["in"] == "header"
    ]
    assert headers == ["X-Fleet-Id"]


SWAGGER_ASSETS = {
    "/swagger/swagger-ui-bundle.js": ("javascript", b"SwaggerUIBundle"),
    "/swagger/swagger-ui.css": ("text/css", b".swagger-ui"),
    "/swagger/favicon-32x32.png": ("image/png", b"\x89PNG"),
}


def test_the_api_reference_names_only_the_packages_own_swagger_files(client) -> None:
    response = client.get("/docs")

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "://" not in response.text  # nothing from a CDN: the page works offline
    named = set(re.findall(r"""(?:src|href)=["']?(/[^"' >]+)""", response.text))
    assert named == set(SWAGGER_ASSETS)
    assert "url: '/openapi.json'" in response.text


@pytest.mark.parametrize("path", sorted(SWAGGER_ASSETS))
def test_the_swagger_files_are_served_from_the_package(client, path) -> None:
    kind, start = SWAGGER_ASSETS[path]

    response = client.get(path)

    assert response.status_code == 200
    assert kind in response.headers["content-type"]
    assert start in response.content


@pytest.mark.parametrize("path", ["/swagger/index.html", "/swagger/..%2Fapi", "/redoc"])
def test_only_the_reference_files_are_served_and_redoc_is_off(client, path) -> None:
    response = client.get(path)

    assert b"SwaggerUIBundle" not in response.content
    assert "redoc" not in response.text.lower()


def test_the_reference_needs_no_token_while_the_api_does(make_client) -> None:
    client = make_client(token="a-token-that-is-long-enough")

    assert client.get("/api/fleets").status_code == 401
    for path in ["/docs", "/openapi.json", *SWAGGER_ASSETS]:
        assert client.get(path).status_code == 200, path


# --- failures -----------------------------------------------------------------------------


def test_a_busy_database_is_a_503_with_the_one_line_message(
    make_client, container, alpha, monkeypatch
) -> None:
    client = make_client()

    def busy(*_args, **_kwargs):
        raise DatabaseBusy()

    monkeypatch.setattr(type(container.uow()), "__call__", busy)
    response = client.get("/api/fleets")

    assert response.status_code == 503
    assert response.json() == {"detail": DatabaseBusy().message}


def test_an_unexpected_error_is_a_json_500_without_internals(
    make_client, container, monkeypatch
) -> None:
    client = make_client(raise_errors=False)

    def broken(*_args, **_kwargs):
        raise RuntimeError("SELECT secret FROM somewhere")

    monkeypatch.setattr(type(container.uow()), "__call__", broken)
    response = client.get("/api/fleets")

    assert response.status_code == 500
    assert response.json() == {"detail": "internal error: RuntimeError"}
