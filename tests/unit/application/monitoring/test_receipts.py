"""The monitor's tick records, as `confirmed_at`, which messages Codex and OpenCode members
took in, from the agents' own records (Codex's transcript, OpenCode's session listing)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from cafleet.adapters.fake.codex_threads import FakeCodexThreads
from cafleet.adapters.fake.launch_pads import FakeLaunchPads
from cafleet.application.messaging.receipts import ReceiptReader, ReceiptRecorder
from cafleet.application.monitoring.service import MonitorService
from cafleet.application.ports.agents import AgentThread
from cafleet.domain.agents.profile import SESSION_FILE, SPAWN_FILE, TRANSCRIPT_FILE, SpawnFacts
from cafleet.domain.agents.registry import AgentProfiles
from cafleet.domain.agents.server import HttpFacts
from cafleet.domain.delivery import Delivery, DeliveryState
from cafleet.domain.placement import CodingAgent

OPENCODE_HTTP = AgentProfiles()[CodingAgent.OPENCODE].server
assert OPENCODE_HTTP is not None
LISTING = OPENCODE_HTTP.messages_path.format(session="ses_1")
T0 = datetime(2026, 12, 2, 8, 0, tzinfo=UTC)


def ms(seconds: float) -> int:
    return int((T0 + timedelta(seconds=seconds)).timestamp() * 1000)


def said(role: str, seconds: float, text: str = "") -> dict[str, Any]:
    return {"info": {"id": f"msg_{role}_{seconds}", "role": role, "time": {"created": ms(seconds)}},
            "parts": [{"type": "text", "text": text}]}  # fmt: skip


def header(task: int) -> str:
    return f"[cafleet msg {task} from 1 2026-12-02T08:00:00.000000+00:00]\nping {task}"


def test_an_opencode_prompt_counts_as_taken_once_an_answer_began_after_it() -> None:
    http: HttpFacts = OPENCODE_HTTP  # type: ignore[assignment]
    listing = [
        said("user", 0, "You are w."),
        said("assistant", 1),
        said("user", 5, header(7)),  # queued behind the step that began at 1 s
        said("user", 6, header(8) + "\n" + header(9)),
        said("assistant", 9),  # the next step: it takes both
        said("user", 12, header(10)),  # still queued
    ]

    taken = http.taken(json.dumps(listing))

    at9 = T0 + timedelta(seconds=9)
    assert taken == {7: at9, 8: at9, 9: at9}
    assert http.taken(None) == {} and http.taken("not json") == {} and http.taken("{}") == {}


def sent(task: int, member: int) -> Delivery:
    return Delivery(task, member, DeliveryState.SENT, T0, "tmux", "%9", T0, channel="keys")


def test_a_tick_confirms_what_the_agents_records_show_taken_once(make_fleet: Any) -> None:
    fleet = make_fleet(members=2)
    codex_id, opencode_id = fleet.members["worker-1"], fleet.members["worker-2"]
    pads, threads = FakeLaunchPads(), FakeCodexThreads()
    codex_pad, opencode_pad = pads.prepare(1, codex_id), pads.prepare(1, opencode_id)
    codex_pad.files[TRANSCRIPT_FILE] = "/codex/rollout-t.jsonl"
    threads.took["/codex/rollout-t.jsonl"] = {1: T0 + timedelta(seconds=3)}
    opencode_pad.files[SESSION_FILE] = "ses_1"
    opencode_pad.endpoint()
    opencode_pad.answers[LISTING] = json.dumps([said("user", 1, header(2)), said("assistant", 4)])
    with fleet.store(write=True) as uow:
        for member, agent, pad in ((codex_id, CodingAgent.CODEX, codex_pad),
                                   (opencode_id, CodingAgent.OPENCODE, opencode_pad)):  # fmt: skip
            placement = uow.placements.get(member)
            uow.placements.save(replace(placement, coding_agent=agent, launch_pad=pad.location))
        for task, member in ((1, codex_id), (2, opencode_id), (3, codex_id)):
            uow.deliveries.add(sent(task, member))
        uow.commit()
    svc = MonitorService(
        fleet.store, fleet.clock, fleet.drivers, fleet.keystrokes(), fleet.process, 600,
        receipts=ReceiptReader(pads, AgentProfiles(), threads),
    )  # fmt: skip
    svc.claim(fleet.fleet_id, 5)

    svc.tick(fleet.fleet_id)

    with fleet.store() as uow:
        confirmed = {t: uow.deliveries.get(t, m).confirmed_at
                     for t, m in ((1, codex_id), (2, opencode_id), (3, codex_id))}  # fmt: skip
    assert confirmed == {1: T0 + timedelta(seconds=3), 2: T0 + timedelta(seconds=4), 3: None}
    threads.took["/codex/rollout-t.jsonl"][1] = T0 + timedelta(seconds=30)  # the first word kept
    svc.tick(fleet.fleet_id)
    with fleet.store() as uow:
        assert uow.deliveries.get(1, codex_id).confirmed_at == T0 + timedelta(seconds=3)


def test_a_codex_member_whose_conversation_is_not_known_yet_is_found_for_its_receipts() -> None:
    pads, threads = FakeLaunchPads(), FakeCodexThreads()
    pad = pads.prepare(1, 3)
    pad.files[SPAWN_FILE] = SpawnFacts("Go.", "/work", "/codex", "/bin/codex", T0).text()
    reader = ReceiptReader(pads, AgentProfiles(), threads)

    assert reader.taken(CodingAgent.CODEX, pad.location) is None  # no conversation yet
    threads.add("/codex", "/work", "Go.", AgentThread("t-1", "/codex/rollout-t-1.jsonl"))
    threads.took["/codex/rollout-t-1.jsonl"] = {4: T0}

    assert reader.taken(CodingAgent.CODEX, pad.location) == {4: T0}
    assert pad.files[TRANSCRIPT_FILE] == "/codex/rollout-t-1.jsonl"
    assert reader.taken(CodingAgent.CUSTOM, pad.location) is None  # keeps no record


def test_a_receipt_for_a_message_still_being_announced_is_written_at_a_later_tick(
    make_fleet: Any,
) -> None:
    fleet = make_fleet(members=1)
    member = fleet.members["worker"]
    pads, threads = FakeLaunchPads(), FakeCodexThreads()
    pad = pads.prepare(1, member)
    pad.files[TRANSCRIPT_FILE] = "/codex/rollout-t.jsonl"
    threads.took["/codex/rollout-t.jsonl"] = {5: T0 + timedelta(seconds=2)}
    announcing = Delivery(5, member, DeliveryState.PENDING, T0, attempted_at=T0)
    with fleet.store(write=True) as uow:
        placement = uow.placements.get(member)
        placement = replace(placement, coding_agent=CodingAgent.CODEX, launch_pad=pad.location)
        uow.placements.save(placement)
        uow.deliveries.add(announcing)
        uow.commit()
    recorder = ReceiptRecorder(fleet.store, ReceiptReader(pads, AgentProfiles(), threads))

    recorder.record([placement])  # the sender has not recorded its announcement yet
    with fleet.store(write=True) as uow:
        assert uow.deliveries.get(5, member).confirmed_at is None
        uow.deliveries.save(sent(5, member))
        uow.commit()
    recorder.record([placement])

    with fleet.store() as uow:
        assert uow.deliveries.get(5, member).confirmed_at == T0 + timedelta(seconds=2)
