"""Inbox, sent, timeline (message objects, paging) and POST /api/messages/send."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from dependency_injector import providers

from cafleet.adapters.fake.store import CommitRefusal
from cafleet.application.messaging.queue import queue_key
from cafleet.domain.delivery import DeliveryState
from cafleet.domain.errors import Unavailable
from cafleet.domain.message import MessageState
from cafleet.domain.placement import PushTarget
from cafleet.settings import Settings

ISO_UTC_MICROS = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$"

MESSAGE_FIELDS = [
    "task_id",
    "from_agent_id",
    "from_agent_name",
    "to_agent_id",
    "to_agent_name",
    "type",
    "status",
    "created_at",
    "status_timestamp",
    "origin_task_id",
    "body",
    "delivery",
    "deliveries",
    "sender_verified",
    "in_reply_to",
    "thread_id",
]


def ids(response) -> list[int]:
    return [m["task_id"] for m in response.json()["messages"]]


# --- reading ------------------------------------------------------------------------------


def test_a_message_object_resolves_names_and_carries_its_delivery(
    client, fleets, alpha, scoped
) -> None:
    worker = fleets.member(alpha, "worker", pane="%1")
    task_id = fleets.send(alpha, alpha.director.agent_id, worker, "line one\nline two")
    message = fleets.message(task_id)

    response = client.get(f"/api/agents/{worker}/inbox", headers=scoped(alpha.fleet.fleet_id))

    assert response.status_code == 200
    [shown] = response.json()["messages"]
    assert list(shown) == MESSAGE_FIELDS
    assert shown == {
        "task_id": task_id,
        "from_agent_id": alpha.director.agent_id,
        "from_agent_name": "Director",
        "to_agent_id": worker,
        "to_agent_name": "worker",
        "type": "unicast",
        "status": "input_required",
        "created_at": message.created_at.isoformat(timespec="microseconds"),
        "status_timestamp": message.created_at.isoformat(timespec="microseconds"),
        "origin_task_id": None,
        "body": "line one\nline two",
        "delivery": {
            "state": "sent",
            "channel": "keys",
            "attempt": 1,
            "transport": "tmux",
            "error": None,
            "attempted_at": shown["delivery"]["attempted_at"],
            "confirmed_at": None,
        },
        "deliveries": [shown["delivery"]],
        "sender_verified": False,
        "in_reply_to": None,
        "thread_id": task_id,
    }
    assert shown["delivery"]["attempted_at"] > shown["created_at"]


def test_every_attempt_is_listed_in_order_with_its_channel_and_receipt(
    client, container, fleets, alpha, scoped
) -> None:
    worker = fleets.member(alpha, "worker", pane="%1")
    task_id = fleets.send(alpha, alpha.director.agent_id, worker, "over the hook")
    clock = container.clock()
    with container.uow()(write=True) as uow:  # as a ladder that fell back from the hook to keys
        [typed] = uow.deliveries.for_tasks([task_id])
        uow.deliveries.save(
            replace(typed, state=DeliveryState.SKIPPED, channel="claude-hook", error="not-taken")
        )
        uow.deliveries.add(replace(typed, attempt=2))
        uow.deliveries.confirm(worker, [task_id], clock.now())
        uow.commit()

    response = client.get(f"/api/agents/{worker}/inbox", headers=scoped(alpha.fleet.fleet_id))

    [shown] = response.json()["messages"]
    hook, keys = shown["deliveries"]
    assert (hook["attempt"], hook["channel"], hook["state"]) == (1, "claude-hook", "skipped")
    assert (hook["error"], hook["confirmed_at"]) == ("not-taken", None)
    assert (keys["attempt"], keys["channel"], keys["state"]) == (2, "keys", "sent")
    assert re.match(ISO_UTC_MICROS, keys["confirmed_at"])
    assert shown["delivery"] == keys


def test_skipped_deliveries_show_their_reason(client, fleets, alpha, scoped) -> None:
    gone = fleets.member(alpha, "gone")  # its pane does not exist on the fake server
    fleets.send(alpha, alpha.director.agent_id, gone, "anyone there?")
    fleets.send(alpha, alpha.director.agent_id, alpha.administrator.agent_id, "fyi")

    timeline = client.get("/api/timeline", headers=scoped(alpha.fleet.fleet_id)).json()

    deliveries = [(m["to_agent_name"], m["delivery"]) for m in timeline["messages"]]
    assert deliveries[0][0] == "Administrator"
    assert deliveries[0][1]["state"] == "skipped"
    assert deliveries[0][1]["error"] == "no-placement"
    assert deliveries[0][1]["transport"] is None
    assert deliveries[1][0] == "gone"
    assert deliveries[1][1]["error"] == "pane-gone"


def test_a_message_without_a_ledger_row_has_a_null_delivery(
    client, container, fleets, alpha, scoped
) -> None:
    worker = fleets.member(alpha, "worker")
    task_id = fleets.send(alpha, alpha.director.agent_id, worker, "hi")
    store = container.uow()
    del store.tables.deliveries[(task_id, worker, 1)]  # a message stored before the ledger existed

    [shown] = client.get("/api/timeline", headers=scoped(alpha.fleet.fleet_id)).json()["messages"]

    assert shown["delivery"] is None


def test_inbox_holds_every_state_and_sent_holds_what_the_agent_sent(
    client, container, fleets, alpha, scoped
) -> None:
    director, fid = alpha.director.agent_id, alpha.fleet.fleet_id
    worker = fleets.member(alpha, "worker")
    acked = fleets.send(alpha, director, worker, "one")
    canceled = fleets.send(alpha, director, worker, "two")
    waiting = fleets.send(alpha, director, worker, "three")
    reply = fleets.send(alpha, worker, director, "done")
    container.messaging().ack(fid, worker, acked)
    container.messaging().cancel(fid, director, canceled)
    headers = scoped(fid)

    inbox = client.get(f"/api/agents/{worker}/inbox", headers=headers).json()["messages"]
    sent = client.get(f"/api/agents/{worker}/sent", headers=headers)

    assert [(m["task_id"], m["status"]) for m in inbox] == [
        (waiting, "input_required"),
        (canceled, "canceled"),
        (acked, "completed"),
    ]
    assert inbox[2]["status_timestamp"] > inbox[2]["created_at"]
    assert ids(sent) == [reply]


def test_broadcast_summaries_are_hidden_but_deliveries_point_at_them(
    client, container, fleets, alpha, scoped
) -> None:
    worker = fleets.member(alpha, "worker")
    fid = alpha.fleet.fleet_id
    result = container.messaging().broadcast(fid, alpha.director.agent_id, "all hands")
    summary = result.summary.task_id
    headers = scoped(fid)

    timeline = client.get("/api/timeline", headers=headers).json()["messages"]
    sent = client.get(f"/api/agents/{alpha.director.agent_id}/sent", headers=headers)

    assert summary not in [m["task_id"] for m in timeline]
    assert summary not in ids(sent)
    assert [(m["to_agent_id"], m["origin_task_id"], m["type"]) for m in timeline] == [
        (worker, summary, "unicast")
    ]


def test_the_timeline_only_holds_the_fleets_messages(client, fleets, alpha, scoped) -> None:
    other = fleets.create("other")
    mine = fleets.send(alpha, alpha.director.agent_id, alpha.administrator.agent_id, "ours")
    fleets.send(other, other.director.agent_id, other.administrator.agent_id, "theirs")

    response = client.get("/api/timeline", headers=scoped(alpha.fleet.fleet_id))

    assert ids(response) == [mine]


@pytest.mark.parametrize("route", ["inbox", "sent"])
def test_paging_walks_back_with_limit_and_before(client, fleets, alpha, scoped, route) -> None:
    worker = fleets.member(alpha, "worker")
    sender, recipient = (
        (alpha.director.agent_id, worker) if route == "inbox" else (worker, alpha.director.agent_id)
    )
    sent = [fleets.send(alpha, sender, recipient, f"m{i}") for i in range(5)]
    path, headers = f"/api/agents/{worker}/{route}", scoped(alpha.fleet.fleet_id)

    first = client.get(path, headers=headers, params={"limit": 2})
    second = client.get(path, headers=headers, params={"limit": 2, "before": ids(first)[-1]})
    rest = client.get(path, headers=headers, params={"before": ids(second)[-1]})

    assert ids(first) == [sent[4], sent[3]]
    assert ids(second) == [sent[2], sent[1]]
    assert ids(rest) == [sent[0]]


def test_timeline_paging_and_the_default_page_of_200(client, fleets, alpha, scoped) -> None:
    director, admin = alpha.director.agent_id, alpha.administrator.agent_id
    sent = [fleets.send(alpha, director, admin, f"m{i}") for i in range(205)]
    headers = scoped(alpha.fleet.fleet_id)

    default = client.get("/api/timeline", headers=headers)
    older = client.get("/api/timeline", headers=headers, params={"before": sent[5]})
    huge_bound = client.get("/api/timeline", headers=headers, params={"before": 10**30})

    assert ids(default) == sent[::-1][:200]
    assert ids(older) == sent[:5][::-1]
    assert ids(huge_bound) == ids(default)


@pytest.mark.parametrize(
    "params", [{"limit": 0}, {"limit": 1001}, {"limit": "x"}, {"before": 0}, {"before": "y"}]
)
@pytest.mark.parametrize("path", ["/api/timeline", "/api/agents/{agent}/inbox"])
def test_paging_bounds_are_validated(client, alpha, scoped, params, path) -> None:
    response = client.get(
        path.format(agent=alpha.director.agent_id),
        headers=scoped(alpha.fleet.fleet_id),
        params=params,
    )

    assert response.status_code == 422
    assert isinstance(response.json()["detail"], list)


def test_limit_1000_is_allowed(client, alpha, scoped) -> None:
    response = client.get(
        "/api/timeline", headers=scoped(alpha.fleet.fleet_id), params={"limit": 1000}
    )

    assert response.status_code == 200


@pytest.mark.parametrize("route", ["inbox", "sent"])
@pytest.mark.parametrize("who", ["unknown", "other-fleet", "largest"])
def test_agent_lists_of_agents_outside_the_fleet_are_not_found(
    client, fleets, alpha, scoped, route, who
) -> None:
    other = fleets.create("other")
    fleets.send(other, other.director.agent_id, other.administrator.agent_id, "secret")
    agent_id = {"unknown": 777, "other-fleet": other.director.agent_id, "largest": 2**63 - 1}[who]

    response = client.get(f"/api/agents/{agent_id}/{route}", headers=scoped(alpha.fleet.fleet_id))

    assert response.status_code == 404
    assert response.json() == {"detail": "Agent not found"}


OUT_OF_RANGE_IDS = [0, -1, 2**63, 10**25, "9" * 5000]


@pytest.mark.parametrize("route", ["inbox", "sent", "monitor"])
@pytest.mark.parametrize("agent_id", OUT_OF_RANGE_IDS)
def test_agent_ids_outside_the_sqlite_range_are_validation_errors(
    client, alpha, scoped, route, agent_id
) -> None:
    response = client.get(f"/api/agents/{agent_id}/{route}", headers=scoped(alpha.fleet.fleet_id))

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["path", "agent_id"]


def test_a_deregistered_agents_history_stays_readable(client, fleets, alpha, scoped) -> None:
    worker = fleets.member(alpha, "worker")
    task_id = fleets.send(alpha, alpha.director.agent_id, worker, "bye")
    fleets.deregister(worker)

    response = client.get(f"/api/agents/{worker}/inbox", headers=scoped(alpha.fleet.fleet_id))

    assert response.status_code == 200
    assert ids(response) == [task_id]
    assert response.json()["messages"][0]["to_agent_name"] == "worker"


# --- sending ------------------------------------------------------------------------------


def placement_of(container, agent_id: int):
    with container.uow()() as uow:
        return uow.placements.get(agent_id)


def send(client, fleet_id: int, **body):
    return client.post("/api/messages/send", headers={"X-Fleet-Id": str(fleet_id)}, json=body)


def test_send_goes_out_as_the_administrator_and_is_pushed(client, fleets, alpha) -> None:
    worker = fleets.member(alpha, "worker", pane="%1")

    response = send(client, alpha.fleet.fleet_id, to_agent_id=worker, text="please review")

    assert response.status_code == 200
    body = response.json()
    assert body == {"task_id": body["task_id"], "status": "input_required"}
    stored = fleets.message(body["task_id"])
    assert stored.from_agent_id == alpha.administrator.agent_id
    assert stored.to_agent_id == worker
    assert stored.text == "please review"
    pane = fleets.server(alpha).panes["%1"]
    assert any("please review" in turn for turn in pane.submitted())


def test_a_send_stored_before_the_disk_filled_answers_200_with_what_was_not_recorded(
    client, container, fleets, alpha
) -> None:
    worker = fleets.member(alpha, "worker", pane="%1")
    full = "database error: database or disk is full"
    container.uow().refuse_commits(CommitRefusal(Unavailable(full)), after=1)  # after the send's

    response = send(client, alpha.fleet.fleet_id, to_agent_id=worker, text="stored first")

    assert response.status_code == 200, response.text
    body = response.json()
    assert body == {"task_id": body["task_id"], "status": "input_required", "unrecorded": full}
    assert fleets.message(body["task_id"]).text == "stored first"


def test_send_accepts_the_administrators_own_id_as_from_agent(client, fleets, alpha) -> None:
    response = send(
        client,
        alpha.fleet.fleet_id,
        to_agent_id=alpha.director.agent_id,
        text="hi",
        from_agent_id=alpha.administrator.agent_id,
    )

    assert response.status_code == 200
    assert fleets.message(response.json()["task_id"]).from_agent_id == (
        alpha.administrator.agent_id
    )


def test_the_administrator_may_message_itself(client, fleets, alpha) -> None:
    response = send(
        client, alpha.fleet.fleet_id, to_agent_id=alpha.administrator.agent_id, text="note"
    )

    assert response.status_code == 200


def test_broadcast_reaches_everyone_but_the_administrator(client, container, fleets, alpha) -> None:
    worker = fleets.member(alpha, "worker", pane="%1")
    other = fleets.member(alpha, "other")

    response = send(client, alpha.fleet.fleet_id, to_agent_id="*", text="all hands")

    assert response.status_code == 200
    summary_id = response.json()["task_id"]
    assert response.json() == {"task_id": summary_id, "status": "completed"}
    summary = fleets.message(summary_id)
    assert summary.text == "Broadcast sent to 3 recipients"
    assert summary.from_agent_id == alpha.administrator.agent_id
    store = container.uow()
    deliveries = [
        m
        for m in store.tables.messages.values()
        if m.origin_task_id == summary_id and m.task_id != summary_id
    ]
    assert sorted(m.to_agent_id for m in deliveries) == [alpha.director.agent_id, worker, other]
    assert all(m.state is MessageState.INPUT_REQUIRED for m in deliveries)
    assert any("all hands" in t for t in fleets.server(alpha).panes["%1"].submitted())


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_empty_text_is_refused(client, fleets, alpha, text) -> None:
    for to in (alpha.director.agent_id, "*"):
        response = send(client, alpha.fleet.fleet_id, to_agent_id=to, text=text)

        assert response.status_code == 400
        assert response.json() == {"detail": "text may not be empty"}
    assert fleets.container.uow().tables.messages == {}


@pytest.mark.parametrize("sender", ["director", "other-fleet-admin", "unknown"])
def test_from_agent_must_be_the_fleet_administrator(client, fleets, alpha, sender) -> None:
    other = fleets.create("other")
    from_agent = {
        "director": alpha.director.agent_id,
        "other-fleet-admin": other.administrator.agent_id,
        "unknown": 4040,
    }[sender]

    response = send(
        client,
        alpha.fleet.fleet_id,
        to_agent_id=alpha.director.agent_id,
        text="hi",
        from_agent_id=from_agent,
    )

    assert response.status_code == 400
    assert response.json() == {"detail": "from_agent must be the fleet Administrator"}


def test_a_fleet_without_an_active_administrator_cannot_send(client, fleets, alpha) -> None:
    fleets.deregister(alpha.administrator.agent_id)

    response = send(client, alpha.fleet.fleet_id, to_agent_id=alpha.director.agent_id, text="x")

    assert response.status_code == 400
    assert response.json() == {"detail": "from_agent not in fleet"}


@pytest.mark.parametrize("who", ["unknown", "other-fleet", "deregistered", "largest"])
def test_unknown_recipients_are_not_found(client, fleets, alpha, who) -> None:
    other = fleets.create("other")
    retired = fleets.member(alpha, "retired")
    fleets.deregister(retired)
    to = {
        "unknown": 5555,
        "other-fleet": other.director.agent_id,
        "deregistered": retired,
        "largest": 2**63 - 1,
    }[who]

    response = send(client, alpha.fleet.fleet_id, to_agent_id=to, text="hello")

    assert response.status_code == 404
    assert response.json() == {"detail": "Agent not found"}


@pytest.mark.parametrize(
    "body",
    [
        {"text": "no recipient"},
        {"to_agent_id": 1},
        {"to_agent_id": "all", "text": "x"},
        {"to_agent_id": "1", "text": "x"},
        {"to_agent_id": 1.5, "text": "x"},
        {"to_agent_id": None, "text": "x"},
        {"to_agent_id": 1, "text": 5},
        {"to_agent_id": 1, "text": "x", "from_agent_id": "2"},
    ],
)
def test_malformed_send_bodies_are_validation_errors(client, alpha, body) -> None:
    response = send(client, alpha.fleet.fleet_id, **body)

    assert response.status_code == 422
    assert isinstance(response.json()["detail"], list)


@pytest.mark.parametrize("field", ["to_agent_id", "from_agent_id"])
@pytest.mark.parametrize("agent_id", [0, -3, 2**63, 2**70])
def test_send_ids_outside_the_sqlite_range_are_validation_errors(
    client, fleets, alpha, field, agent_id
) -> None:
    body = {"to_agent_id": alpha.director.agent_id, "text": "x", field: agent_id}

    response = send(client, alpha.fleet.fleet_id, **body)

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][:2] == ["body", field]
    assert fleets.container.uow().tables.messages == {}


@pytest.mark.parametrize(
    ("raw", "echoed"),
    [
        (b'{"to_agent_id": NaN, "text": "x"}', "NaN"),
        (b'{"to_agent_id": Infinity, "text": "x"}', "Infinity"),
        (b'{"to_agent_id": -Infinity, "text": "x"}', "-Infinity"),
        (b'{"to_agent_id": 1e400, "text": "x"}', "Infinity"),
        (b'{"to_agent_id": 1, "text": Infinity}', "Infinity"),
        (b'{"to_agent_id": 1, "text": "x", "from_agent_id": NaN}', "NaN"),
    ],
)
def test_non_finite_json_numbers_are_validation_errors(client, fleets, alpha, raw, echoed) -> None:
    response = client.post(
        "/api/messages/send",
        headers={"X-Fleet-Id": str(alpha.fleet.fleet_id), "Content-Type": "application/json"},
        content=raw,
    )

    assert response.status_code == 422
    assert echoed in [error["input"] for error in response.json()["detail"]]
    assert fleets.container.uow().tables.messages == {}


def test_a_json_integer_beyond_the_decoders_digit_limit_is_a_bad_request(client, alpha) -> None:
    response = client.post(
        "/api/messages/send",
        headers={"X-Fleet-Id": str(alpha.fleet.fleet_id), "Content-Type": "application/json"},
        content=b'{"to_agent_id": %s, "text": "x"}' % (b"9" * 5000),
    )

    assert response.status_code in (400, 422)
    assert "detail" in response.json()


def test_a_body_over_the_size_limit_is_refused_with_the_limit(
    container, make_client, fleets, alpha
) -> None:
    limited = {"CAFLEET_DATABASE_URL": "sqlite://", "CAFLEET_MAX_BODY_BYTES": "10"}
    container.settings.override(providers.Object(Settings.from_environ(limited)))
    container.components.reset()  # the services built so far are built again on these settings
    client = make_client()
    director = alpha.director.agent_id

    fits = send(client, alpha.fleet.fleet_id, to_agent_id=director, text="x" * 10)
    over = send(client, alpha.fleet.fleet_id, to_agent_id=director, text="x" * 11)
    broadcast = send(client, alpha.fleet.fleet_id, to_agent_id="*", text="é" * 6)

    assert fits.status_code == 200
    assert over.status_code == broadcast.status_code == 400
    assert over.json() == {
        "detail": "message body is 11 bytes; the limit is 10 bytes (CAFLEET_MAX_BODY_BYTES)"
    }
    assert broadcast.json()["detail"].startswith("message body is 12 bytes;")
    assert len(fleets.container.uow().tables.messages) == 1


def test_a_body_that_is_not_json_is_a_validation_error(client, alpha) -> None:
    response = client.post(
        "/api/messages/send",
        headers={"X-Fleet-Id": str(alpha.fleet.fleet_id), "Content-Type": "application/json"},
        content=b"{not json",
    )

    assert response.status_code == 422
    assert isinstance(response.json()["detail"], list)


def test_text_with_a_lone_surrogate_is_refused_before_storage(client, alpha) -> None:
    response = client.post(
        "/api/messages/send",
        headers={"X-Fleet-Id": str(alpha.fleet.fleet_id), "Content-Type": "application/json"},
        content=b'{"to_agent_id": %d, "text": "bad \\ud800 text"}' % alpha.director.agent_id,
    )

    assert response.status_code == 422
    assert "surrogate" in response.json()["detail"][0]["msg"]


def test_the_text_is_stored_verbatim(client, fleets, alpha) -> None:
    text = "  keep   spacing\r\nand `ticks` $(x) | pipes  "

    response = send(client, alpha.fleet.fleet_id, to_agent_id=alpha.director.agent_id, text=text)

    assert fleets.message(response.json()["task_id"]).text == text


# --- replies and search -------------------------------------------------------------------


def test_a_reply_joins_the_thread_of_a_message_the_administrator_received(
    client, fleets, alpha
) -> None:
    worker = fleets.member(alpha, "worker", pane="%1")
    question = fleets.send(alpha, worker, alpha.administrator.agent_id, "may I merge?")

    response = send(
        client, alpha.fleet.fleet_id, to_agent_id=worker, text="yes", in_reply_to=question
    )

    assert response.status_code == 200
    reply = fleets.message(response.json()["task_id"])
    assert (reply.in_reply_to, reply.thread_id) == (question, question)


def test_a_reply_to_what_the_administrator_never_saw_is_not_found(client, fleets, alpha) -> None:
    worker = fleets.member(alpha, "worker", pane="%1")
    private = fleets.send(alpha, alpha.director.agent_id, worker, "between us")

    response = send(
        client, alpha.fleet.fleet_id, to_agent_id=worker, text="hm", in_reply_to=private
    )
    broadcast = send(client, alpha.fleet.fleet_id, to_agent_id="*", text="x", in_reply_to=private)

    assert response.status_code == 404
    assert response.json() == {"detail": f"Task {private} not found"}
    assert broadcast.status_code == 400
    assert "broadcast" in broadcast.json()["detail"]


def test_search_finds_ranks_and_marks_messages_of_the_fleet(client, fleets, alpha, scoped) -> None:
    worker = fleets.member(alpha, "worker", pane="%1")
    once = fleets.send(alpha, alpha.director.agent_id, worker, "release notes drafted")
    twice = fleets.send(alpha, worker, alpha.director.agent_id, "release release")
    fleets.send(alpha, worker, alpha.director.agent_id, "other")

    response = client.get(
        "/api/search", params={"q": "RELEASE"}, headers=scoped(alpha.fleet.fleet_id)
    )
    narrowed = client.get(
        "/api/search",
        params={"q": "release", "from_agent_id": alpha.director.agent_id},
        headers=scoped(alpha.fleet.fleet_id),
    )

    assert response.status_code == 200
    hits = response.json()["hits"]
    assert [h["message"]["task_id"] for h in hits] == [twice, once]
    assert list(hits[0]["message"]) == MESSAGE_FIELDS
    assert "«release»" in hits[1]["snippet"]
    assert [h["message"]["task_id"] for h in narrowed.json()["hits"]] == [once]


@pytest.mark.parametrize(
    "params, status",
    [({"q": ""}, 422), ({"q": "x", "since": "soon"}, 400), ({"q": "x", "limit": 0}, 422)],
)
def test_bad_searches_are_client_errors_with_a_detail(
    client, alpha, scoped, params, status
) -> None:
    response = client.get("/api/search", params=params, headers=scoped(alpha.fleet.fleet_id))

    assert response.status_code == status
    assert response.json()["detail"]


def test_a_webui_send_hands_the_rows_queued_behind_it_to_a_drainer_and_returns(
    client, container, fleets, alpha
) -> None:
    worker = fleets.member(alpha, "worker", pane="%1")
    director = alpha.director.agent_id
    # rows queued for the worker by senders that found its pane queue busy (its lock held)
    with container.pane_locks().hold(queue_key(PushTarget.of(placement_of(container, worker))), 1):
        queued = {
            fleets.send(alpha, director, worker, f"queued {n}"): f"queued {n}" for n in range(5)
        }

    response = send(client, alpha.fleet.fleet_id, to_agent_id=worker, text="from the webui")

    assert response.status_code == 200, response.text
    typed = " ".join(fleets.server(alpha).panes["%1"].submitted())
    left = [t for t in queued if fleets.delivery_state(t, worker) is DeliveryState.PENDING]
    assert left  # not every queued row was typed inside the request...
    assert not [queued[t] for t in left if queued[t] in typed]
    assert container.drains().started == [[worker]]  # ...the drainer was handed the rest
