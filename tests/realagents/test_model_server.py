"""The scripted model server: its decision rules, and each wire format over real HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from realagents.model_server import (
    Conversation,
    Item,
    ScriptedModelServer,
    anthropic_conversation,
    chat_conversation,
    decide,
    iter_log,
    polled_messages,
    responses_answer,
    responses_conversation,
    shell_call,
    shell_write,
    write_call,
)

PROMPT = "You are w. FLEET ID: 1. YOUR MEMBER ID: 4. DIRECTOR ID: 1."
DEMO = (
    "You are bob, a member of CAFleet fleet 2 with agent id 5; the Director is 3. ... and"
    " `pong N` with `ping N+1` while N < 3, using `cafleet message send`."
)
TS = "2026-12-01T16:43:11.525416+00:00"
POLL = "cafleet message poll --fleet-id 1 --agent-id 4"
MIDDLE = f"[cafleet msg 3 from 1 {TS}]\nping 1"  # a preview typed while the agent worked
MAIL = f"[2 | from:1 | {TS}]\nping 4"


def conv(*new: Item, prompt: str = PROMPT, tools: bool = True) -> Conversation:
    return Conversation(texts=(prompt,), new=new, has_tools=tools)


def poll_output(*messages: tuple[int, int, str], extra: str = "") -> Item:
    text = "\n\n".join(f"[{t} | from:{s}{extra} | {TS}]\n{body}" for t, s, body in messages)
    return Item("tool", text, POLL)


# --------------------------------------------------------------------------- decision rules


def test_a_run_line_runs_exactly_that_command() -> None:
    decision = decide(conv(Item("user", f"{PROMPT}\nRUN: echo 'a b' > /tmp/x && ls")))
    assert (decision.rule, decision.command) == ("run", "echo 'a b' > /tmp/x && ls")


def test_a_run_line_may_follow_text_on_the_same_line() -> None:
    decision = decide(conv(Item("user", f"{PROMPT} RUN: {POLL}")))
    assert decision.command == POLL


def test_poll_output_is_acked_and_pings_are_answered() -> None:
    decision = decide(conv(poll_output((7, 1, "ping 1"), (8, 2, "hello"))))
    assert decision.rule == "reply"
    assert decision.command == (
        "cafleet message ack --fleet-id 1 --agent-id 4 --task-id 7"
        " && cafleet message send --fleet-id 1 --agent-id 4 --to 1 --text 'pong 1'"
        " && cafleet message ack --fleet-id 1 --agent-id 4 --task-id 8"
    )


def test_broadcast_copies_are_acked_too() -> None:
    decision = decide(conv(poll_output((9, 1, "ping 3"), extra=" | origin:8")))
    assert decision.command == (
        "cafleet message ack --fleet-id 1 --agent-id 4 --task-id 9"
        " && cafleet message send --fleet-id 1 --agent-id 4 --to 1 --text 'pong 3'"
    )


def test_the_demo_prompt_gives_the_ids_and_the_rounds() -> None:
    more = decide(conv(poll_output((4, 6, "pong 2")), prompt=DEMO))
    assert more.command == (
        "cafleet message ack --fleet-id 2 --agent-id 5 --task-id 4"
        " && cafleet message send --fleet-id 2 --agent-id 5 --to 6 --text 'ping 3'"
    )
    last = decide(conv(poll_output((5, 6, "pong 3")), prompt=DEMO))
    assert last.command == "cafleet message ack --fleet-id 2 --agent-id 5 --task-id 5"


def test_a_run_line_in_a_message_is_run_after_the_ack() -> None:
    decision = decide(conv(poll_output((3, 1, "please\nRUN: touch /tmp/done"))))
    assert decision.command == (
        "cafleet message ack --fleet-id 1 --agent-id 4 --task-id 3 && touch /tmp/done"
    )


def test_no_messages_found_ends_the_turn() -> None:
    decision = decide(conv(Item("tool", "No messages found.", POLL)))
    assert (decision.rule, decision.text) == ("done", "FAKE-DONE: No messages found.")


def test_sent_and_acked_copies_in_an_output_are_not_mail() -> None:
    output = (
        f"Message acknowledged.\n[3 | from:1 | state:completed | {TS}]\nping 1\n"
        f"Message sent.\n[5 | from:4 | {TS}]\npong 1\n"
        f"[6 | from:2 | {TS}]\nping 2"
    )
    assert [m.task_id for m in polled_messages(output)] == ["6"]
    # and a command that was no poll is never read as one
    send = Item("tool", f"Message sent.\n[5 | from:4 | {TS}]\npong 1", "cafleet message send")
    assert decide(conv(send)).rule == "done"


def test_mail_in_hook_feedback_is_answered_like_a_poll_output() -> None:
    feedback = (
        f"<system-reminder>\nStop hook feedback:\nNew cafleet mail:\n{MAIL}\n</system-reminder>"
    )
    decision = decide(conv(Item("user", feedback)))
    assert decision.command == (
        "cafleet message ack --fleet-id 1 --agent-id 4 --task-id 2"
        " && cafleet message send --fleet-id 1 --agent-id 4 --to 1 --text 'pong 4'"
    )
    echoed = f"<bash-stdout>Message sent.\n[5 | from:4 | {TS}]\nping 1</bash-stdout>"
    assert decide(conv(Item("user", echoed))).rule == "done"  # a send's copy is no mail


def test_a_typed_poll_line_is_run() -> None:
    assert decide(conv(Item("user", f"  {POLL}"))).command == POLL


def test_previews_trigger_one_poll_and_their_text_is_not_run() -> None:
    preview = f"[cafleet msg 12 from 1 {TS}]\nRUN: rm -rf /\n[cafleet msg 13 from 2 {TS}]\nhi"
    decision = decide(conv(Item("user", preview)))
    assert (decision.rule, decision.command) == ("poll", POLL)


def test_a_preview_queued_next_to_a_poll_result_is_not_lost() -> None:
    typed = f"[cafleet msg 8 from 1 {TS}]\nping 2"
    decision = decide(conv(poll_output((7, 1, "ping 1")), Item("user", typed)))
    assert decision.command is not None
    assert decision.command.startswith("cafleet message ack --fleet-id 1 --agent-id 4 --task-id 7")
    assert decision.command.endswith(f"--text 'pong 1' && {POLL}")


def test_delay_is_taken_and_the_last_line_is_echoed() -> None:
    decision = decide(conv(Item("user", "DELAY: 1.5\nhello slow")))
    assert (decision.rule, decision.delay, decision.text) == ("done", 1.5, "FAKE-DONE: hello slow")


def test_a_delay_in_polled_mail_holds_the_reply_but_not_in_a_preview() -> None:
    mail = f"[7 | from:1 | {TS}]\nDELAY: 4\nRUN: true"
    polled = decide(conv(Item("tool", mail, POLL)))
    previewed = decide(conv(Item("user", f"[cafleet msg 7 from 1 {TS}]\nDELAY: 4⏎RUN: true")))

    assert (polled.rule, polled.delay) == ("reply", 4.0)
    assert polled.command == "cafleet message ack --fleet-id 1 --agent-id 4 --task-id 7 && true"
    assert (previewed.rule, previewed.delay) == ("poll", 0.0)


def test_trailing_system_context_is_not_echoed() -> None:
    decision = decide(conv(Item("tool", "ok\n", "echo ok"), Item("system", "# Environment")))
    assert decision.text == "FAKE-DONE: ok"


def test_without_ids_the_pane_variables_are_used() -> None:
    decision = decide(conv(Item("user", f"[cafleet msg 1 from 2 {TS}]\nx"), prompt="hi"))
    assert decision.command == (
        'cafleet message poll --fleet-id "$CAFLEET_FLEET_ID" --agent-id "$CAFLEET_AGENT_ID"'
    )


def test_a_request_without_tools_gets_a_title() -> None:
    assert decide(conv(Item("user", "RUN: ls"), tools=False)).rule == "title"


# --------------------------------------------------------------------------- reading requests


def bash_use(call_id: str, command: str) -> dict[str, Any]:
    block = {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}}
    return {"role": "assistant", "content": [block]}


def bash_result(call_id: str, content: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": content}


def test_claude_conversation_only_new_content_counts() -> None:
    reminder = {"type": "text", "text": f"<system-reminder>\n{MIDDLE}\n</system-reminder>"}
    done = [{"type": "text", "text": "No messages found."}]
    body = {
        "tools": [{"name": "Bash"}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": f"{PROMPT}\nRUN: {POLL}"}]},
            bash_use("t1", POLL),
            {"role": "user", "content": [bash_result("t1", done), reminder]},
            {"role": "system", "content": "IMPORTANT: address the user's message above."},
        ],
    }
    got = anthropic_conversation(body)
    assert got.texts[0].startswith(PROMPT)
    kinds = [(i.kind, i.command) for i in got.new]
    assert kinds == [("tool", POLL), ("user", None), ("system", None)]
    assert decide(got).command == POLL  # the preview, not the old RUN line


def test_claude_text_typed_during_a_tool_run_is_user_content() -> None:
    result = f"done\nThe user sent a new message while you were working:\n{MIDDLE}\n\nThis is"
    body = {
        "tools": [{"name": "Bash"}],
        "messages": [
            {"role": "user", "content": PROMPT},
            bash_use("t", "sleep 5"),
            {"role": "user", "content": [bash_result("t", result)]},
        ],
    }
    got = anthropic_conversation(body)
    assert [i.kind for i in got.new] == ["tool", "user"]
    assert decide(got).command == POLL


def said(role: str, text: str) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}


def test_codex_input_items() -> None:
    output = f"Chunk ID: 1\nProcess exited with code 0\nOutput:\n{MAIL}"
    body = {
        "tools": [{"type": "function", "name": "exec_command"}],
        "input": [
            said("developer", "RUN: no"),  # instructions before the prompt are not new content
            said("user", PROMPT),
            {"type": "reasoning", "summary": []},
            {"type": "function_call", "name": "exec_command", "call_id": "c1",
             "arguments": json.dumps({"cmd": POLL})},
            {"type": "function_call_output", "call_id": "c1", "output": output},
            said("user", MIDDLE),
        ],
    }  # fmt: skip
    got = responses_conversation(body)
    assert got.new[0] == Item("tool", MAIL, POLL)  # exec_command's wrapper is dropped
    assert decide(got).command == (
        "cafleet message ack --fleet-id 1 --agent-id 4 --task-id 2"
        " && cafleet message send --fleet-id 1 --agent-id 4 --to 1 --text 'pong 4'"
        f" && {POLL}"
    )


def test_a_command_codex_left_running_is_read_on_until_it_ends() -> None:
    """Codex's exec tool yields after at most 30 s; `write_stdin` with the session id reads
    on, and its output counts as the same command's."""
    command = "cafleet member create --name slow"
    running = "Chunk ID: 1\nWall time: 30 s\nProcess running with session ID 77\nOutput:\n"
    done = "Chunk ID: 2\nProcess exited with code 0\nOutput:\n3 slow coding_agent=codex pane=%2"
    tools = [fn("exec_command", cmd={}, yield_time_ms={}), fn("write_stdin", session_id={})]
    start = [
        said("user", f"RUN: {command}"),
        {"type": "function_call", "name": "exec_command", "call_id": "c1",
         "arguments": json.dumps({"cmd": command})},
        {"type": "function_call_output", "call_id": "c1", "output": running},
    ]  # fmt: skip

    first = responses_conversation({"tools": tools, "input": start})
    assert first.new == (Item("tool", "", command, running=77),)
    decision = decide(first)
    assert (decision.rule, decision.session) == ("wait", 77)
    events = [json.loads(line[6:]) for line in responses_answer({"tools": tools}, decision)[1]
              .decode().splitlines() if line.startswith("data: ")]  # fmt: skip
    [call] = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    read_on = {"session_id": 77, "chars": "", "yield_time_ms": 30_000}
    assert (call["name"], json.loads(call["arguments"])) == ("write_stdin", read_on)

    later = responses_conversation({"tools": tools, "input": [
        *start,
        {"type": "function_call", "name": "write_stdin", "call_id": "c2",
         "arguments": json.dumps(read_on)},
        {"type": "function_call_output", "call_id": "c2", "output": done},
    ]})  # fmt: skip
    assert later.new == (Item("tool", "3 slow coding_agent=codex pane=%2", command),)
    assert decide(later).rule == "done"


def test_opencode_messages() -> None:
    call = {
        "id": "k1",
        "type": "function",
        "function": {"name": "bash", "arguments": '{"command": "ls"}'},
    }
    body = {
        "tools": [{"type": "function", "function": {"name": "bash"}}],
        "messages": [
            {"role": "system", "content": "You are opencode. RUN: never"},
            {"role": "user", "content": [{"type": "text", "text": "RUN: ls"}]},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "k1", "content": "a\nb\n"},
        ],
    }  # fmt: skip
    got = chat_conversation(body)
    assert got.new == (Item("tool", "a\nb\n", "ls"),)
    assert decide(got).text == "FAKE-DONE: b"
    first = chat_conversation({**body, "messages": body["messages"][:2]})
    assert [i.text for i in first.new] == ["RUN: ls"]  # the system prompt is not new content


def fn(name: str, **props: Any) -> dict[str, Any]:
    return {"type": "function", "name": name, "parameters": {"properties": props}}


DESCRIBED = {"command": "ls", "description": "Run the scripted command"}


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ({"name": "Bash", "input_schema": {"properties": {"command": {}}}}, DESCRIBED),
        (fn("exec_command", cmd={}), {"cmd": "ls"}),
        (fn("shell", command={"type": "array"}), {"command": ["bash", "-lc", "ls"]}),
        (fn("shell_command", command={"type": "string"}), {"command": "ls"}),
        ({"type": "function", "function": fn("bash", command={}, description={})}, DESCRIBED),
    ],
)
def test_the_shell_tool_is_chosen_from_the_request(
    tool: dict[str, Any], args: dict[str, Any]
) -> None:
    name = tool.get("name") or tool["function"]["name"]
    assert shell_call([{"name": "Read"}, tool], "ls") == (name, args)


def test_a_background_step_runs_as_claudes_background_task() -> None:
    props = {"command": {}, "run_in_background": {}}
    bash = {"name": "Bash", "input_schema": {"properties": props}}
    assert shell_call([bash], "BACKGROUND sleep 300") == (
        "Bash",
        {**DESCRIBED, "command": "sleep 300", "run_in_background": True},
    )
    codex = fn("exec_command", cmd={})
    assert shell_call([codex], "BACKGROUND ls") == ("exec_command", {"cmd": "ls"})


def test_codex_prefers_exec_command_when_several_are_offered() -> None:
    tools = [fn("shell", command={"type": "array"}), fn("exec_command", cmd={})]
    assert shell_call(tools, "ls") == ("exec_command", {"cmd": "ls"})


WRITING = f"{PROMPT}\nWRITE: /w/note.txt it's done\nRUN: git add note.txt"


def test_a_write_line_is_written_first_and_its_run_lines_after() -> None:
    first = decide(conv(Item("user", WRITING), prompt=WRITING))
    assert (first.rule, first.file, first.command) == (
        "write",
        ("/w/note.txt", "it's done\n"),
        None,
    )

    for tool in ("Write", "write", shell_write("/w/note.txt", "it's done\n")):
        then = decide(conv(Item("tool", "", tool), prompt=WRITING))
        assert (then.rule, then.command) == ("run", "git add note.txt"), tool
    # any other tool's output still ends the turn
    assert decide(conv(Item("tool", "ok", "git add note.txt"), prompt=WRITING)).rule == "done"


@pytest.mark.parametrize(
    ("tools", "call"),
    [
        ([{"name": "Bash"}, {"name": "Write"}], ("Write", {"file_path": "/w/a", "content": "x\n"})),
        (
            [{"type": "function", "function": fn("write")}],
            ("write", {"filePath": "/w/a", "content": "x\n"}),
        ),
        ([fn("exec_command", cmd={})], ("exec_command", {"cmd": "printf '%s\\n' x > /w/a"})),
    ],
)
def test_a_file_is_written_with_the_agents_own_tool_else_its_shell(
    tools: list[dict[str, Any]], call: tuple[str, dict[str, Any]]
) -> None:
    assert write_call(tools, "/w/a", "x\n") == call


def test_the_shell_write_writes_the_text_as_it_is(tmp_path: Path) -> None:
    target = tmp_path / "it's here.txt"
    text = "a 'quoted' $HOME and a \\ back\n"

    subprocess.run(["bash", "-c", shell_write(str(target), text)], check=True)

    assert target.read_text() == text


# --------------------------------------------------------------------------- over HTTP


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(log_path=tmp_path_factory.mktemp("ms") / "log.jsonl") as running:
        yield running


def post(server: ScriptedModelServer, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
    request = urllib.request.Request(
        server.url + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers["Content-Type"], response.read()


def sse(payload: bytes) -> list[tuple[str | None, Any]]:
    """(event name, parsed data) per server-sent event."""
    events = []
    for chunk in payload.decode().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in chunk.splitlines() if ": " in line)
        if "data" in fields:
            data = fields["data"]
            events.append((fields.get("event"), data if data == "[DONE]" else json.loads(data)))
    return events


BASH = {"name": "Bash", "input_schema": {"properties": {"command": {}, "description": {}}}}


def test_probes_answer(server: ScriptedModelServer) -> None:
    for method in ("HEAD", "GET"):
        with urllib.request.urlopen(urllib.request.Request(server.url + "/", method=method)) as r:
            assert r.status == 200


def test_anthropic_stream_with_a_tool_call(server: ScriptedModelServer) -> None:
    body = {
        "model": "m",
        "stream": True,
        "tools": [BASH],
        "messages": [{"role": "user", "content": "RUN: ls -1"}],
    }
    ctype, payload = post(server, "/v1/messages?beta=true", body)
    assert ctype == "text/event-stream"
    events = sse(payload)
    assert [e for e, _ in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(name == data["type"] for name, data in events)
    assert events[1][1]["content_block"]["name"] == "Bash"
    assert json.loads(events[2][1]["delta"]["partial_json"])["command"] == "ls -1"
    assert events[4][1]["delta"]["stop_reason"] == "tool_use"
    assert server.requests[-1]["decision"]["command"] == "ls -1"


def test_anthropic_plain_json_text(server: ScriptedModelServer) -> None:
    body = {"model": "m", "tools": [BASH], "messages": [{"role": "user", "content": "hello"}]}
    ctype, payload = post(server, "/v1/messages", body)
    message = json.loads(payload)
    assert ctype == "application/json"
    assert (message["stop_reason"], message["content"]) == (
        "end_turn",
        [{"type": "text", "text": "FAKE-DONE: hello"}],
    )


def test_anthropic_title_request_gets_the_json_it_asks_for(server: ScriptedModelServer) -> None:
    schema = {"type": "object", "properties": {"title": {"type": "string"}}}
    body = {
        "messages": [{"role": "user", "content": "name it"}],
        "output_config": {"format": {"type": "json_schema", "schema": schema}},
    }
    message = json.loads(post(server, "/v1/messages", body)[1])
    assert json.loads(message["content"][0]["text"]) == {"title": "Fake title"}


def test_responses_stream_with_a_function_call(server: ScriptedModelServer) -> None:
    body = {
        "stream": True,
        "tools": [fn("exec_command", cmd={})],
        "input": [said("user", "RUN: pwd")],
    }
    events = sse(post(server, "/v1/responses", body)[1])
    assert [e for e, _ in events] == [
        "response.created",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    item = events[4][1]["item"]
    assert (item["type"], item["name"]) == ("function_call", "exec_command")
    assert json.loads(item["arguments"]) == {"cmd": "pwd"}
    completed = events[5][1]["response"]
    assert completed["status"] == "completed"
    assert completed["usage"]["total_tokens"] > 0


def test_responses_stream_with_text(server: ScriptedModelServer) -> None:
    body = {"stream": True, "tools": [fn("shell")], "input": [said("user", "all done")]}
    events = dict(sse(post(server, "/v1/responses", body)[1]))
    assert events["response.output_text.delta"]["delta"] == "FAKE-DONE: all done"
    message = events["response.output_item.done"]["item"]
    assert message["content"][0]["text"] == "FAKE-DONE: all done"


CHAT_BASH = {"type": "function", "function": fn("bash", command={}, description={})}


def test_chat_stream_with_a_tool_call(server: ScriptedModelServer) -> None:
    body = {
        "stream": True,
        "tools": [CHAT_BASH],
        "messages": [{"role": "user", "content": "RUN: date"}],
    }
    ctype, payload = post(server, "/v1/chat/completions", body)
    events = [data for _, data in sse(payload)]
    assert ctype == "text/event-stream"
    assert events[-1] == "[DONE]"
    first, more, finish, usage = events[:-1]
    call = first["choices"][0]["delta"]["tool_calls"][0]
    assert (call["function"]["name"], call["id"] is not None) == ("bash", True)
    rest = more["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
    args = json.loads(call["function"]["arguments"] + rest)
    assert args == {"command": "date", "description": "Run the scripted command"}
    assert finish["choices"][0]["finish_reason"] == "tool_calls"
    assert (usage["choices"], usage["usage"]["total_tokens"]) == ([], 15)


def test_chat_plain_json_and_models(server: ScriptedModelServer) -> None:
    body = {"tools": [CHAT_BASH], "messages": [{"role": "user", "content": "hi"}]}
    reply = json.loads(post(server, "/v1/chat/completions", body)[1])
    assert reply["choices"][0]["message"]["content"] == "FAKE-DONE: hi"
    assert reply["choices"][0]["finish_reason"] == "stop"
    with urllib.request.urlopen(server.url + "/v1/models") as r:
        assert [m["id"] for m in json.load(r)["data"]] == ["fake-model"]


def test_every_request_is_in_the_jsonl_log(server: ScriptedModelServer) -> None:
    assert server.log_path is not None
    logged = list(iter_log(server.log_path))
    assert [r["path"] for r in logged] == [r["path"] for r in server.requests]
    assert {"anthropic", "responses", "chat", "probe"} <= {r["endpoint"] for r in logged}


def test_the_script_serves_in_the_foreground(tmp_path: Path) -> None:
    script = Path(__file__).with_name("model_server.py")
    log = tmp_path / "log.jsonl"
    proc = subprocess.Popen(
        [sys.executable, str(script), "--port", "0", "--log", str(log)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        head = urllib.request.Request(url + "/", method="HEAD")
        with urllib.request.urlopen(head, timeout=10) as r:
            assert r.status == 200
        assert next(iter_log(log))["endpoint"] == "probe"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
