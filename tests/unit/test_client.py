"""TogetherClient against httpx.MockTransport: paths, retries, errors, secrecy, waiters."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import pytest

from tests.fake_time import FakeTime
from tests.mock_client import KEY, Handler
from tests.specs import CLUSTER_SPEC
from together_api.client import TogetherClient
from together_api.retry import RetryPolicy
from together_api.wire import Cluster, ClusterCreateRequest, ClusterUpdateRequest
from together_facts.errors import (
    ApiConnectionError,
    ApiError,
    AuthenticationError,
    DeadlineExceededError,
    InvalidRequestError,
    NotFoundError,
    OutOfCapacityError,
    ProvisioningFailedError,
    RateLimitedError,
    ServerError,
    TogetherError,
    UnexpectedResponseError,
)
from together_facts.hints import FixHints

CREATE = ClusterCreateRequest(cluster_name="train", billing_type="ON_DEMAND", **CLUSTER_SPEC)


def cluster_body(status: str = "Ready", **extra: Any) -> dict[str, Any]:
    return {"cluster_id": "c-1", "cluster_name": "train", "status": status, **extra}


def ok(body: dict[str, Any]) -> httpx.Response:
    return httpx.Response(200, json=body)


def test_create_posts_only_set_fields_with_bearer_auth(make_client: Any) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return ok(cluster_body("WaitingForControlPlaneNodes"))

    client = make_client(handler)
    cluster = client.create_cluster(CREATE)
    assert cluster.status == "WaitingForControlPlaneNodes"
    [sent] = seen
    assert (sent.method, sent.url.path) == ("POST", "/v1/compute/clusters")
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert json.loads(sent.content) == {
        "cluster_name": "train",
        "billing_type": "ON_DEMAND",
        **CLUSTER_SPEC,
    }


def test_paths_for_every_endpoint(make_client: Any) -> None:
    seen: list[tuple[str, str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((request.method, request.url.path, request.url.query.decode()))
        if request.url.path.endswith("/regions"):
            return ok({"regions": [{"name": "us-west-2", "driver_versions": []}]})
        if request.method == "GET" and request.url.path.endswith("/clusters"):
            return ok({"clusters": [cluster_body()]})
        if request.method == "DELETE":
            return ok({"cluster_id": "c-1"})
        return ok(cluster_body())

    client = make_client(handler)
    client.get_cluster("c-1")
    update = client.update_cluster("c-1", ClusterUpdateRequest(num_preemptible_gpus=16))
    assert [c.cluster_id for c in client.list_clusters(project_id="p-9")] == ["c-1"]
    client.list_clusters()
    client.delete_cluster("c-1")
    assert [r.name for r in client.list_regions()] == ["us-west-2"]
    assert update.is_ready
    assert seen == [
        ("GET", "/v1/compute/clusters/c-1", ""),
        ("PUT", "/v1/compute/clusters/c-1", ""),
        ("GET", "/v1/compute/clusters", "projectId=p-9"),
        ("GET", "/v1/compute/clusters", ""),
        ("DELETE", "/v1/compute/clusters/c-1", ""),
        ("GET", "/v1/compute/regions", ""),
    ]
    assert client.requests_made == 6


def test_key_and_base_url_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOGETHER_API_KEY", KEY)
    monkeypatch.setenv("TOGETHER_BASE_URL", "http://localhost:9999")
    with TogetherClient() as client:
        assert client.base_url == "http://localhost:9999/v1"
    monkeypatch.delenv("TOGETHER_BASE_URL")
    with TogetherClient() as client:
        assert client.base_url == "https://api.together.ai/v1"


def test_missing_key_says_how_to_fix_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOGETHER_API_KEY", raising=False)
    with pytest.raises(AuthenticationError) as info:
        TogetherClient()
    assert str(info.value).endswith("(fix: pass api_key or set TOGETHER_API_KEY)")


def test_a_refused_key_says_where_the_request_went(
    make_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no base URL the client goes to Together itself, correctly; a 401 then says so (a
    simulator's key sent to Together is the likely mistake), and names the URL either way."""
    monkeypatch.delenv("TOGETHER_BASE_URL", raising=False)
    refused = httpx.Response(401, json={"error": {"message": "invalid key"}})
    to_together = make_client(lambda r: refused, base_url=None, attempts=1)
    with pytest.raises(AuthenticationError) as info:
        to_together.list_clusters()
    assert str(info.value).startswith(
        "GET https://api.together.ai/v1/compute/clusters failed with HTTP 401: invalid key"
    )
    assert "no base URL is set (base_url or TOGETHER_BASE_URL)" in str(info.value)
    assert "went to Together itself" in str(info.value)

    chosen = make_client(lambda r: refused, attempts=1)
    with pytest.raises(AuthenticationError) as info:
        chosen.list_clusters()
    assert f"GET {chosen.base_url}/compute/clusters failed with HTTP 401" in str(info.value)
    assert "went to Together itself" not in str(info.value)


def _fixes(hints: FixHints, monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """The fix of each error whose wording is the caller's: no key, a refused key with no base
    URL set, no answer, a 404."""
    monkeypatch.delenv("TOGETHER_API_KEY", raising=False)
    monkeypatch.delenv("TOGETHER_BASE_URL", raising=False)
    fixes: list[str | None] = []
    with pytest.raises(AuthenticationError) as no_key:
        TogetherClient(hints=hints)
    fixes.append(no_key.value.fix)

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/c-gone"):
            return httpx.Response(404, json={"error": {"message": "not found"}})
        if request.url.path.endswith("/c-far"):
            raise httpx.ConnectError("refused")
        return httpx.Response(401, json={"error": {"message": "invalid key"}})

    retry = RetryPolicy(attempts=1)
    transport = httpx.MockTransport(answer)
    with TogetherClient("k", hints=hints, retry=retry, transport=transport) as client:
        for cluster_id in ("c-1", "c-far", "c-gone"):
            with pytest.raises(ApiError) as failed:
                client.get_cluster(cluster_id)
            fixes.append(failed.value.fix)
    return fixes


def test_the_fixes_are_worded_by_the_caller_and_by_default_name_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    own = FixHints(api_key="run login", base_url="--url", not_found="check --id")
    assert _fixes(own, monkeypatch) == [
        "run login",
        "check the API key; run login; no base URL is set (--url), so this went to Together "
        "itself: set one to use another endpoint, such as the simulator",
        "check the network and the base URL, --url; the request may be retried",
        "check --id",
    ]
    neutral = " ".join(fix or "" for fix in _fixes(FixHints(), monkeypatch))
    assert "TOGETHER_API_KEY" in neutral and "TOGETHER_BASE_URL" in neutral
    assert "pulumi" not in neutral.lower() and "together:" not in neutral


@pytest.mark.parametrize(
    ("status", "error_type"),
    [
        (400, InvalidRequestError),
        (401, AuthenticationError),
        (403, AuthenticationError),
        (404, NotFoundError),
        (409, OutOfCapacityError),
        (422, InvalidRequestError),
        (429, RateLimitedError),
        (500, ServerError),
        (503, ServerError),
        (418, UnexpectedResponseError),
    ],
)
@pytest.mark.parametrize("shape", ["openai", "grpc"])
def test_errors_map_by_status_and_carry_the_server_message(
    make_client: Any, status: int, error_type: type[ApiError], shape: str
) -> None:
    message = f"server says {status}"
    body: dict[str, Any] = (
        {"error": {"message": message, "type": "x", "param": "num_gpus"}}
        if shape == "openai"
        else {"code": status, "message": message}
    )
    client = make_client(lambda r: httpx.Response(status, json=body), attempts=1)
    with pytest.raises(error_type) as info:
        client.get_cluster("c-1")
    assert type(info.value) is error_type
    assert message in str(info.value) and info.value.status == status
    if status == 400 and shape == "openai":
        assert info.value.field == "num_gpus"


def test_retries_a_get_on_5xx_then_succeeds(make_client: Any, fake_time: FakeTime) -> None:
    responses = iter([httpx.Response(503), httpx.Response(502), ok(cluster_body())])
    client = make_client(lambda r: next(responses))
    assert client.get_cluster("c-1").is_ready
    assert client.requests_made == 3 and len(fake_time.sleeps) == 2


def test_retry_after_is_honoured(make_client: Any, fake_time: FakeTime) -> None:
    responses = iter([httpx.Response(429, headers={"Retry-After": "7"}), ok(cluster_body())])
    client = make_client(lambda r: next(responses))
    client.get_cluster("c-1")
    assert fake_time.sleeps == [7.0]


@pytest.mark.parametrize("header", ["soon", "", "Tue, 99 Foo 2026", "1e999x"])
def test_a_malformed_retry_after_falls_back_to_the_policy_backoff(
    make_client: Any, fake_time: FakeTime, header: str
) -> None:
    responses = iter([httpx.Response(503, headers={"Retry-After": header}), ok(cluster_body())])
    client = make_client(lambda r: next(responses))
    assert client.get_cluster("c-1").is_ready  # no ValueError escapes: TogetherError is enough
    assert len(fake_time.sleeps) == 1 and fake_time.sleeps[0] <= client.retry.backoff_cap(1)


def test_a_malformed_retry_after_on_the_last_429_is_still_a_together_error(
    make_client: Any,
) -> None:
    client = make_client(lambda r: httpx.Response(429, headers={"Retry-After": "soon"}), attempts=1)
    with pytest.raises(RateLimitedError) as info:
        client.get_cluster("c-1")
    assert info.value.retry_after is None


def test_retries_are_bounded_by_attempts(make_client: Any, fake_time: FakeTime) -> None:
    client = make_client(lambda r: httpx.Response(500), attempts=3)
    with pytest.raises(ServerError):
        client.get_cluster("c-1")
    assert client.requests_made == 3
    assert all(0 <= s <= 8.0 for s in fake_time.sleeps)


def test_retries_stop_at_the_deadline(make_client: Any, fake_time: FakeTime) -> None:
    too_long = httpx.Response(429, headers={"Retry-After": "30"})
    client = make_client(lambda r: too_long, deadline=10.0)
    with pytest.raises(RateLimitedError) as info:
        client.get_cluster("c-1")
    assert client.requests_made == 1 and fake_time.sleeps == []
    assert info.value.retry_after == 30.0


def test_conflict_is_not_retried(make_client: Any) -> None:
    client = make_client(lambda r: httpx.Response(409, json={"message": "Out of stock"}))
    with pytest.raises(OutOfCapacityError):
        client.get_cluster("c-1")
    assert client.requests_made == 1


def _create(client: TogetherClient) -> None:
    client.create_cluster(CREATE)


@pytest.mark.parametrize(
    "failure",
    [
        lambda r: httpx.Response(500),
        lambda r: httpx.Response(503, headers={"Retry-After": "1"}),
    ],
)
def test_post_is_not_retried_once_the_server_answered(make_client: Any, failure: Handler) -> None:
    client = make_client(failure)
    with pytest.raises(TogetherError):
        _create(client)
    assert client.requests_made == 1


def test_post_is_retried_after_429_because_nothing_was_done(make_client: Any) -> None:
    answers = [httpx.Response(429, headers={"Retry-After": "0"}), ok(cluster_body())]
    client = make_client(lambda request: answers.pop(0))
    _create(client)
    assert client.requests_made == 2


def test_post_is_not_retried_after_a_read_timeout(make_client: Any) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    client = make_client(handler)
    with pytest.raises(ApiConnectionError):
        _create(client)
    assert client.requests_made == 1


def _fails_first(times: int, error: type[httpx.TransportError]) -> Handler:
    """A transport whose first `times` requests fail with `error`; then it answers a Ready
    cluster."""
    failures = [error] * times

    def handler(request: httpx.Request) -> httpx.Response:
        if failures:
            raise failures.pop()("failed", request=request)
        return ok(cluster_body())

    return handler


def test_post_is_retried_when_the_connection_never_opened(make_client: Any) -> None:
    client = make_client(_fails_first(1, httpx.ConnectError))
    _create(client)
    assert client.requests_made == 2


def test_get_is_retried_after_a_read_timeout(make_client: Any) -> None:
    client = make_client(_fails_first(2, httpx.ReadTimeout))
    assert client.get_cluster("c-1").is_ready
    assert client.requests_made == 3


def test_connection_failure_after_retries_is_api_connection_error(make_client: Any) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    client = make_client(handler, attempts=2)
    with pytest.raises(ApiConnectionError) as info:
        client.list_regions()
    assert client.requests_made == 2 and info.value.fix


def test_the_key_never_leaks(make_client: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    echo = {"error": {"message": f"key {KEY} is not allowed"}}
    responses = iter([httpx.Response(500, text=f"boom {KEY}"), httpx.Response(401, json=echo)])

    def handler(request: httpx.Request) -> httpx.Response:
        return next(responses)

    client = make_client(handler)
    with pytest.raises(AuthenticationError) as info:
        client.get_cluster("c-1")

    def raise_connect(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"cannot connect with {KEY}", request=request)

    other = make_client(raise_connect, attempts=2)
    with pytest.raises(ApiConnectionError) as conn:
        other.get_cluster("c-1")
    texts = [
        str(info.value),
        repr(info.value),
        str(conn.value),
        repr(client),
        repr(client.__dict__.get("retry")),
    ]
    texts += [record.getMessage() for record in caplog.records]
    assert caplog.records, "expected retry log lines"
    assert all(KEY not in text for text in texts)
    assert "***" in str(info.value)


def test_unexpected_body_is_a_together_error(make_client: Any) -> None:
    client = make_client(lambda r: ok({"no": "cluster"}))
    with pytest.raises(TogetherError, match="unexpected response"):
        client.get_cluster("c-1")


# -------------------------------------------------------------------- waiters


def scripted(statuses: list[dict[str, Any] | int]) -> Handler:
    """Serve the scripted bodies (or bare status codes) in order, repeating the last."""
    position = {"i": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        item = statuses[min(position["i"], len(statuses) - 1)]
        position["i"] += 1
        if isinstance(item, int):
            return httpx.Response(item, json={"message": "gone"})
        return ok(item)

    return handler


def test_wait_until_ready_reports_each_status_change(make_client: Any, fake_time: FakeTime) -> None:
    statuses = ["WaitingForControlPlaneNodes"] * 3 + ["InstallingDrivers"] * 2 + ["Ready"]
    client = make_client(scripted([cluster_body(s) for s in statuses]))
    heard: list[str] = []
    cluster = client.wait_until_ready(
        "c-1", timeout=600, on_status=lambda c: heard.append(c.status)
    )
    assert cluster.is_ready
    assert heard == ["WaitingForControlPlaneNodes", "InstallingDrivers", "Ready"]
    assert fake_time.sleeps == [1.0, 1.5, 2.25, 3.375, 5.0625]


def test_wait_until_ready_polls_no_faster_than_the_cap(
    make_client: Any, fake_time: FakeTime
) -> None:
    client = make_client(scripted([cluster_body("InstallingDrivers")]))
    with pytest.raises(DeadlineExceededError) as info:
        client.wait_until_ready("c-1", timeout=1800)
    assert info.value.last_status == "InstallingDrivers"
    assert max(fake_time.sleeps) == 30.0
    assert fake_time.now - 1000.0 == pytest.approx(1800)
    assert client.requests_made < 80


@pytest.mark.parametrize(
    "last",
    [
        cluster_body(
            "RunningAcceptanceTests",
            phase_transitions=[
                {
                    "phase": "CLUSTER_PHASE_ACCEPTANCE_TESTS_FAILED",
                    "transition_time": "2026-01-01T00:00:00Z",
                }
            ],
        ),
        cluster_body("Deleting"),
        404,
    ],
)
def test_wait_until_ready_fails_fast(make_client: Any, last: dict[str, Any] | int) -> None:
    client = make_client(scripted([cluster_body("WaitingForSubnet"), last]))
    with pytest.raises(ProvisioningFailedError) as info:
        client.wait_until_ready("c-1", timeout=600)
    assert info.value.cluster_id == "c-1"
    assert client.requests_made == 2


def test_unknown_status_is_just_not_ready(make_client: Any) -> None:
    client = make_client(scripted([cluster_body("Hibernating"), cluster_body("Ready")]))
    assert client.wait_until_ready("c-1", timeout=60).is_ready


def test_wait_until_deleted(make_client: Any, fake_time: FakeTime) -> None:
    client = make_client(scripted([cluster_body("Deleting")] * 3 + [404]))
    client.wait_until_deleted("c-1", timeout=300)
    assert client.requests_made == 4
    stuck = make_client(scripted([cluster_body("Deleting")]))
    with pytest.raises(DeadlineExceededError):
        stuck.wait_until_deleted("c-1", timeout=60)


def test_delete_of_a_missing_cluster_raises_not_found(make_client: Any) -> None:
    client = make_client(lambda r: httpx.Response(404, json={"code": 5, "message": "not found"}))
    with pytest.raises(NotFoundError):
        client.delete_cluster("c-1")


def test_wait_until_ready_uses_a_known_state_instead_of_a_first_get(
    make_client: Any, fake_time: FakeTime
) -> None:
    client = make_client(scripted([cluster_body("Ready")]))
    known = Cluster.model_validate(cluster_body("WaitingForSubnet"))
    assert client.wait_until_ready("c-1", timeout=60, known=known).is_ready
    assert (client.requests_made, fake_time.sleeps) == (1, [1.0])


def test_wait_until_deleted_waits_before_its_first_get(
    make_client: Any, fake_time: FakeTime
) -> None:
    client = make_client(scripted([404]))
    client.wait_until_deleted("c-1", timeout=60)
    assert (client.requests_made, fake_time.sleeps) == (1, [1.0])


def test_a_poll_lost_to_a_server_error_does_not_fail_the_wait(make_client: Any) -> None:
    # attempts=1: each 503 is a ServerError at once, as after a spent retry policy.
    client = make_client(
        scripted([cluster_body("WaitingForSubnet"), 503, 503, cluster_body("Ready")]), attempts=1
    )
    assert client.wait_until_ready("c-1", timeout=600).is_ready
    assert client.requests_made == 4


def test_a_wait_gives_up_when_polls_keep_failing(make_client: Any) -> None:
    client = make_client(scripted([cluster_body("WaitingForSubnet"), 503]), attempts=1)
    with pytest.raises(ServerError):
        client.wait_until_ready("c-1", timeout=600)
    assert client.requests_made == 1 + client.retry.poll_failures + 1


def test_a_delete_wait_skips_a_lost_poll(make_client: Any) -> None:
    client = make_client(scripted([cluster_body("Deleting"), 502, 404]), attempts=1)
    client.wait_until_deleted("c-1", timeout=300)
    assert client.requests_made == 3
