"""Cross-site refusal, the JSON-only rule for writes, the bearer token and the Host check."""

from __future__ import annotations

import pytest

from cafleet.entrypoints.http.binding import bearer_matches, host_name, is_loopback, usable_token
from cafleet.entrypoints.http.guards import same_origin

TOKEN = "s3cret-token-0123456789"
CROSS_ORIGIN = {"detail": "cross-origin request refused"}


def write(client, alpha, **headers: str):
    """A valid send (the Administrator to the Director) with extra headers."""
    return client.post(
        "/api/messages/send",
        headers={"X-Fleet-Id": str(alpha.fleet.fleet_id), **headers},
        json={"to_agent_id": alpha.director.agent_id, "text": "hi"},
    )


# --- cross-site requests ------------------------------------------------------------------


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "http://testserver:8080",
        "https://testserver",
        "http://localhost",
        "null",
        "file://",
        "http://testserver:notaport",
    ],
)
def test_a_write_from_another_origin_is_refused(client, alpha, origin) -> None:
    response = write(client, alpha, Origin=origin)

    assert response.status_code == 403
    assert response.json() == CROSS_ORIGIN
    assert client.get("/api/timeline", headers={"X-Fleet-Id": "1"}).json()["messages"] == []


@pytest.mark.parametrize("site", ["cross-site", "same-site", "CROSS-SITE"])
def test_a_browser_saying_the_request_comes_from_another_site_is_refused(
    client, alpha, site
) -> None:
    response = write(client, alpha, **{"Sec-Fetch-Site": site})

    assert response.status_code == 403
    assert response.json() == CROSS_ORIGIN


def test_a_patch_from_another_origin_is_refused(client, alpha) -> None:
    response = client.patch(
        f"/api/agents/{alpha.director.agent_id}/monitor",
        headers={"X-Fleet-Id": str(alpha.fleet.fleet_id), "Origin": "http://evil.example"},
        json={"enabled": False},
    )

    assert response.status_code == 403
    assert response.json() == CROSS_ORIGIN


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Origin": "http://testserver"},
        {"Origin": "http://testserver:80"},
        {"Origin": "http://TestServer"},
        {"Sec-Fetch-Site": "same-origin"},
        {"Sec-Fetch-Site": "none", "Origin": "http://testserver"},
    ],
)
def test_writes_from_the_servers_own_origin_or_without_browser_headers_pass(
    client, alpha, headers
) -> None:
    assert write(client, alpha, **headers).status_code == 200


def test_the_origin_is_compared_with_the_host_the_request_was_sent_to(make_client, alpha) -> None:
    client = make_client()
    client.base_url = "http://127.0.0.1:8000"

    assert write(client, alpha, Origin="http://127.0.0.1:8000").status_code == 200
    assert write(client, alpha, Origin="http://127.0.0.1:5173").status_code == 403
    assert write(client, alpha, Origin="http://localhost:8000").status_code == 403


def test_reads_are_not_refused_for_their_origin(client, alpha) -> None:
    response = client.get(
        "/api/agents",
        headers={
            "X-Fleet-Id": str(alpha.fleet.fleet_id),
            "Origin": "http://evil.example",
            "Sec-Fetch-Site": "cross-site",
        },
    )

    assert response.status_code == 200


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", ""]
)
def test_writes_must_be_json(client, alpha, content_type) -> None:
    response = client.post(
        "/api/messages/send",
        headers={"X-Fleet-Id": str(alpha.fleet.fleet_id), "Content-Type": content_type},
        content=b'{"to_agent_id": 1, "text": "hi"}',
    )

    assert response.status_code == 415
    assert response.json() == {"detail": "Content-Type must be application/json"}


def test_a_json_content_type_with_parameters_is_json(client, alpha) -> None:
    response = write(client, alpha, **{"Content-Type": "Application/JSON; charset=utf-8"})

    assert response.status_code == 200


def test_same_origin_fills_in_default_ports() -> None:
    assert same_origin("https://example.org", "example.org:443", "https")
    assert same_origin("http://[::1]:8000", "[::1]:8000", "http")
    assert not same_origin("http://example.org", "example.org:443", "https")
    assert not same_origin("ftp://example.org", "example.org", "http")


# --- the bearer token ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "authorization",
    [None, "", "Bearer", f"Basic {TOKEN}", f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", TOKEN],
)
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/fleets"),
        ("GET", "/api/agents"),
        ("POST", "/api/messages/send"),
        ("GET", "/api/events"),
        ("GET", "/api/no-such-route"),
    ],
)
def test_with_a_token_every_api_request_needs_it(
    make_client, alpha, authorization, method, path
) -> None:
    client = make_client(token=TOKEN)
    headers = {"X-Fleet-Id": str(alpha.fleet.fleet_id)}
    if authorization is not None:
        headers["Authorization"] = authorization

    response = client.request(method, path, headers=headers, json={} if method == "POST" else None)

    assert response.status_code == 401
    assert response.json() == {"detail": "missing or invalid token"}


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER"])
def test_the_right_token_opens_the_api(make_client, alpha, scheme) -> None:
    client = make_client(token=TOKEN)

    response = client.get(
        "/api/agents",
        headers={"X-Fleet-Id": str(alpha.fleet.fleet_id), "Authorization": f"{scheme} {TOKEN}"},
    )

    assert response.status_code == 200


def test_the_token_is_checked_before_the_cross_site_rules(make_client, alpha) -> None:
    client = make_client(token=TOKEN)

    refused = write(client, alpha, Origin="http://evil.example")
    cross = write(client, alpha, Origin="http://evil.example", Authorization=f"Bearer {TOKEN}")
    allowed = write(client, alpha, Authorization=f"Bearer {TOKEN}")

    assert refused.status_code == 401
    assert cross.status_code == 403
    assert allowed.status_code == 200


def test_the_page_and_the_schema_need_no_token(make_client) -> None:
    client = make_client(token=TOKEN)

    assert client.get("/").status_code == 200
    assert client.get("/openapi.json").status_code == 200


def test_without_a_token_the_api_is_open(client) -> None:
    assert (
        client.get("/api/fleets", headers={"Authorization": "Bearer whatever"}).status_code == 200
    )


def test_bearer_matching() -> None:
    assert bearer_matches(f"Bearer {TOKEN}", TOKEN)
    assert bearer_matches(f"bearer   {TOKEN} ", TOKEN)
    assert not bearer_matches(None, TOKEN)
    assert not bearer_matches(f"Bearer {TOKEN.upper()}", TOKEN)
    assert not bearer_matches("Bearer ümlaut", TOKEN)


def test_a_token_needs_16_characters() -> None:
    assert usable_token("x" * 16)
    assert not usable_token("x" * 15)
    assert not usable_token(None)


# --- loopback binding ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST", " localhost "],
)
def test_loopback_hosts(host) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize(
    "host", ["0.0.0.0", "::", "192.168.1.10", "10.0.0.1", "example.com", "localhost.example", ""]
)
def test_hosts_beyond_loopback(host) -> None:
    assert not is_loopback(host)


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("127.0.0.1:8000", "127.0.0.1"),
        ("localhost", "localhost"),
        ("[::1]:8000", "::1"),
        ("Example.COM:80", "example.com"),
        ("::1", "::1"),
    ],
)
def test_host_names_from_host_headers(header, name) -> None:
    assert host_name(header) == name


@pytest.mark.parametrize(
    "host", ["evil.example:8000", "evil.example", "192.168.1.5:8000", "localhost.evil.example"]
)
def test_a_loopback_server_refuses_foreign_host_names(make_client, host) -> None:
    """A page whose name was rebound to 127.0.0.1 sends its own name as Host."""
    client = make_client(loopback_hosts_only=True)

    for path in ("/api/fleets", "/"):
        response = client.get(path, headers={"Host": host})

        assert response.status_code == 400
        assert response.json() == {"detail": "unexpected Host header"}


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "localhost:8000", "[::1]:8000", "localhost"])
def test_a_loopback_server_answers_loopback_host_names(make_client, host) -> None:
    client = make_client(loopback_hosts_only=True)

    assert client.get("/api/fleets", headers={"Host": host}).status_code == 200
