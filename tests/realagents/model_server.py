"""A scripted model server for running the real coding-agent CLIs offline.

It speaks the three wire formats the pinned CLIs use, on 127.0.0.1 only:

- Anthropic Messages (Claude Code): `POST /v1/messages[?beta=true]`, streamed (SSE) or plain
  JSON; `HEAD /` and `GET /` answer 200 (Claude may probe them at start-up).
- OpenAI Responses (Codex): `POST /v1/responses`, streamed.
- OpenAI Chat Completions (OpenCode's openai-compatible provider): `POST /v1/chat/completions`,
  streamed or plain JSON; `GET /v1/models` lists `fake-model`.

Every request is turned into a `Conversation` (what arrived since the model's last turn) and
answered by `decide`, a pure function of it, with one shell tool call or a final text:

a. mail as `cafleet message poll` prints it (a poll's output, or hook feedback in a user
   text) → ack every message; answer `ping X` with `pong X`, `pong N` with `ping N+1` while
   the prompt's `while N < R` holds; run a message's `RUN:` lines.
b. a preview header `[cafleet msg <n> from <s> ...]` → `cafleet message poll`.
c. a line `RUN: <cmd>` (or a typed `cafleet message poll ...` line) → run it; `RUN: ESCALATE
   <cmd>` asks Codex to run it outside its sandbox, which needs a person's approval;
   `RUN: BACKGROUND <cmd>` asks Claude Code to run it as a background task.
w. a line `WRITE: <absolute path> <text>` → write the text (and a line break) to that new file
   with the agent's own file tool (Claude's `Write`, OpenCode's `write`; a shell `printf` where
   there is none, as for Codex); the text's `RUN:` lines run once the write's result is back.
d. `DELAY: <seconds>` → wait that long before answering (in a user text, or in polled mail:
   the model thinks after reading its mail, before it acks).
e. otherwise → `FAKE-DONE: <last line>`.
A command Codex left running (its exec tool yields after at most 30 s) is waited for with
`write_stdin` until it ends, whatever else arrived.
A request that offers no tools (a title or other side request) gets a short text.

Run `python tests/realagents/model_server.py --port N --log FILE` for manual trials.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import re
import shlex
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

MODEL = "fake-model"
TITLE = "Fake title"

# --------------------------------------------------------------------------- decision rules


@dataclass(frozen=True)
class Item:
    """One piece of content the model has not answered yet."""

    kind: str  # "user", "system" (a system text after the first prompt) or "tool" (output)
    text: str
    command: str | None = None  # for "tool": the shell command that produced it, when known
    running: int | None = None  # for "tool": the session of a command still running (Codex)


@dataclass(frozen=True)
class Conversation:
    texts: tuple[str, ...]  # every user text of the conversation, oldest first
    new: tuple[Item, ...]  # what arrived since the model's last assistant turn
    has_tools: bool = True


@dataclass(frozen=True)
class Decision:
    rule: str  # "reply" (a), "poll" (b), "run" (c), "write" (w), "done" (e), "title", "wait"
    command: str | None = None
    file: tuple[str, str] | None = None  # for "write": (absolute path, content)
    text: str | None = None
    delay: float = 0.0
    session: int | None = None  # "wait": the running command's session to read on


@dataclass(frozen=True)
class Polled:
    task_id: str
    sender: str
    text: str


IDS_RES = (
    re.compile(r"FLEET ID:\s*(\d+).*?YOUR MEMBER ID:\s*(\d+)", re.S),
    re.compile(r"fleet (\d+) with agent id (\d+)"),  # cafleet demo's MEMBER_PROMPT
)
ROUNDS_RE = re.compile(r"while N < (\d+)")
# Poll output: `[12 | from:1 | origin:8 | 2026-...]` then the text. Headers carrying `state:`
# are acked or sent copies, not pending mail.
POLL_HEADER_RE = re.compile(r"^\[(\d+) \| from:(\d+)((?: \| [^|\]]*)*)\]\s*$", re.M)
PREVIEW_RE = re.compile(r"\[cafleet msg (\d+) from (\d+)[^\]]*\]")
RUN_RE = re.compile(r"(?:^|\s)RUN: (.+?)\s*$", re.M)
TYPED_POLL_RE = re.compile(r"^\s*(cafleet message poll\b.*?)\s*$")  # `member ping` types it
WRITE_RE = re.compile(r"^\s*WRITE: (/\S+) (.*?)\s*$", re.M)
DELAY_RE = re.compile(r"(?:^|\s)DELAY: (\d+(?:\.\d+)?)", re.M)
PING_RE = re.compile(r"^ping (\S.*?)\s*$")
PONG_RE = re.compile(r"^pong (\d+)\s*$")
# Claude Code hands text typed during a tool run over with the next tool result: as a text
# block beside it (2.1.332) or inside it; either way it is user content.
MIDTURN_MARK = "The user sent a new message while you were working:"
OUTPUT_BANNERS = ("Message sent.", "Message acknowledged.")
# Codex's exec tool answers this for a command still running; `write_stdin` reads on
RUNNING_RE = re.compile(r"Process running with session ID (\d+)")
READ_ON = "write_stdin"


def member_ids(texts: Iterable[str]) -> tuple[str, str]:
    """The member's fleet id and agent id from its prompt, else the pane's variables."""
    for text in texts:
        for regex in IDS_RES:
            if found := regex.search(text):
                return found.group(1), found.group(2)
    return '"$CAFLEET_FLEET_ID"', '"$CAFLEET_AGENT_ID"'


def polled_messages(output: str) -> list[Polled]:
    """The pending messages a `cafleet message poll` output lists (any wrapper around it)."""
    lines = output.splitlines()
    starts = [i for i, line in enumerate(lines) if POLL_HEADER_RE.match(line)]
    found = []
    for n, start in enumerate(starts):
        header = POLL_HEADER_RE.match(lines[start])
        assert header is not None
        banner = start > 0 and lines[start - 1].strip().endswith(OUTPUT_BANNERS)
        if "state:" in header.group(3) or banner:
            continue
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        body = []
        for line in lines[start + 1 : end]:
            if line.strip().endswith(OUTPUT_BANNERS):
                break
            body.append(line)
        found.append(Polled(header.group(1), header.group(2), "\n".join(body).strip()))
    return found


def without_previews(text: str) -> str:
    """The text minus every preview (its header line and the one body line after it)."""
    lines = text.splitlines()
    kept, skip = [], False
    for line in lines:
        if PREVIEW_RE.search(line):
            kept.append(PREVIEW_RE.split(line, maxsplit=1)[0])
            skip = True
        elif skip:
            skip = False
        else:
            kept.append(line)
    return "\n".join(kept)


def last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    lines = [ln for ln in lines if not re.fullmatch(r"</?[\w-]+>", ln)]  # <system-reminder>
    return lines[-1] if lines else "(no output)"


def decide(conv: Conversation) -> Decision:
    if not conv.has_tools:
        return Decision("title", text=TITLE)
    running = next((i.running for i in conv.new if i.running is not None), None)
    if running is not None:
        return Decision("wait", session=running)
    fleet, agent = member_ids(conv.texts)
    ident = f"--fleet-id {fleet} --agent-id {agent}"
    rounds = next((int(m.group(1)) for t in conv.texts if (m := ROUNDS_RE.search(t))), None)
    replies: list[str] = []  # rule a
    previews = False  # rule b
    runs: list[str] = []  # rule c
    delay = 0.0
    write = _pending_write(conv)
    for item in conv.new:
        output = item.kind == "tool"
        if output and write is not None and _is_write(item.command, *write):
            runs.extend(_run_lines(without_previews(_writing_text(conv))))
            continue  # the file is written: the RUN lines of its text come next
        if output and item.command is not None and "message poll" not in item.command:
            continue  # only a poll's output lists mail (a send's output shows its copy)
        for msg in polled_messages(item.text):
            replies.append(f"cafleet message ack {ident} --task-id {msg.task_id}")
            replies.extend(_answers(msg, ident, rounds))
            delay += sum(float(m.group(1)) for m in DELAY_RE.finditer(msg.text))
        if output:
            continue
        previews = previews or bool(PREVIEW_RE.search(item.text))
        plain = without_previews(item.text)
        if (wanted := WRITE_RE.search(plain)) and not replies and not previews:
            return Decision("write", file=(wanted.group(1), wanted.group(2) + "\n"))
        runs.extend(_run_lines(plain))
        delay += sum(float(m.group(1)) for m in DELAY_RE.finditer(plain))
    parts = [*replies, *([f"cafleet message poll {ident}"] if previews else []), *runs]
    if parts:
        rule = "reply" if replies else "poll" if previews else "run"
        return Decision(rule, command=" && ".join(parts), delay=delay)
    # The last line the "user" sees: Claude's trailing system blocks are context, not replies.
    said = [i for i in conv.new if i.kind != "system"] or list(conv.new)
    last = said[-1].text if said else ""
    return Decision("done", text=f"FAKE-DONE: {last_line(last)}", delay=delay)


def _run_lines(text: str) -> list[str]:
    """The commands a user text asks to run: its `RUN:` lines and typed poll lines."""
    found = (RUN_RE.search(line) or TYPED_POLL_RE.match(line) for line in text.splitlines())
    return [match.group(1) for match in found if match]


def _writing_text(conv: Conversation) -> str:
    """The latest user text that asks for a file (rule w), or ""."""
    return next((t for t in reversed(conv.texts) if WRITE_RE.search(without_previews(t))), "")


def _pending_write(conv: Conversation) -> tuple[str, str] | None:
    """(path, content) of the file the latest user text asks for, if any."""
    found = WRITE_RE.search(without_previews(_writing_text(conv)))
    return (found.group(1), found.group(2) + "\n") if found else None


def _is_write(command: str | None, path: str, content: str) -> bool:
    """Whether a tool call with this command was the write of `path` (rule w)."""
    return command in WRITE_TOOLS or command == shell_write(path, content)


def _answers(msg: Polled, ident: str, rounds: int | None) -> list[str]:
    out = []
    for raw in msg.text.splitlines():
        line = raw.strip()
        reply = None
        if ping := PING_RE.match(line):
            reply = f"pong {ping.group(1)}"
        elif (pong := PONG_RE.match(line)) and rounds is not None and int(pong.group(1)) < rounds:
            reply = f"ping {int(pong.group(1)) + 1}"
        if reply:
            out.append(
                f"cafleet message send {ident} --to {msg.sender} --text {shlex.quote(reply)}"
            )
        elif run := RUN_RE.match(line):
            out.append(run.group(1))
    return out


# --------------------------------------------------------------------------- reading requests


def _conversation(
    entries: list[tuple[str, str, str | None]],
    commands: dict[str, str],
    has_tools: bool,
    running: dict[str, int] | None = None,
) -> Conversation:
    """entries: (role, text, call id) with role user/system/tool/assistant, oldest first."""
    texts = tuple(text for role, text, _ in entries if role == "user")
    last = max((i for i, (role, _, _) in enumerate(entries) if role == "assistant"), default=-1)
    first_user = next((i for i, (role, _, _) in enumerate(entries) if role == "user"), 0)
    new: list[Item] = []
    for i, (role, text, call_id) in enumerate(entries):
        if i <= last or (role == "system" and i < first_user):  # old, or the system prompt
            continue
        if role == "tool":
            output, _, typed = text.partition(MIDTURN_MARK)
            session = (running or {}).get(call_id or "")
            new.append(Item("tool", output, commands.get(call_id or ""), session))
            if typed:
                new.append(Item("user", typed))
        elif text:
            new.append(Item(role, text))
    return Conversation(texts, tuple(new), has_tools)


def _text_of(content: Any) -> str:
    """A content field as text: a string, or the text of a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(b.get("text", b.get("content", ""))) for b in content)
    return ""


def _command_of(name: str, arguments: Any) -> str:
    args = arguments if isinstance(arguments, dict) else _json_or_empty(arguments)
    command = args.get("cmd", args.get("command", ""))
    if isinstance(command, list):  # `shell`: ["bash", "-lc", "..."]
        return command[-1] if command[:1] in (["bash"], ["sh"]) else shlex.join(command)
    return str(command) if command else name


def _json_or_empty(text: Any) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def anthropic_conversation(body: dict[str, Any]) -> Conversation:
    entries: list[tuple[str, str, str | None]] = []
    commands: dict[str, str] = {}
    for message in body.get("messages", []):
        role, content = message.get("role"), message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        texts = []
        for block in blocks or []:
            kind = block.get("type")
            if kind == "tool_use":
                commands[block.get("id", "")] = _command_of(block["name"], block.get("input"))
            elif kind == "tool_result":
                entries.append(("tool", _text_of(block.get("content")), block.get("tool_use_id")))
            elif kind == "text":
                texts.append(block.get("text", ""))
        if role == "assistant":
            entries.append(("assistant", "\n".join(texts), None))
        elif texts:
            entries.append(("system" if role == "system" else "user", "\n".join(texts), None))
    return _conversation(entries, commands, bool(body.get("tools")))


def responses_conversation(body: dict[str, Any]) -> Conversation:
    entries: list[tuple[str, str, str | None]] = []
    commands: dict[str, str] = {}
    sessions: dict[int, str] = {}  # a running command's session -> the command
    running: dict[str, int] = {}  # call id -> the session its command still runs in
    items = body.get("input", [])
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    for item in items:
        kind = item.get("type", "message")
        if kind == "function_call":
            call_id, args = item.get("call_id", ""), _json_or_empty(item.get("arguments"))
            if item["name"] == READ_ON and args.get("session_id") in sessions:
                commands[call_id] = sessions[args["session_id"]]  # more of the same command
            else:
                commands[call_id] = _command_of(item["name"], item.get("arguments"))
            entries.append(("assistant", "", None))
        elif kind == "function_call_output":
            output, call_id = _text_of(item.get("output")), item.get("call_id", "")
            if found := RUNNING_RE.search(output.partition("\nOutput:\n")[0]):
                sessions[int(found.group(1))] = commands.get(call_id, "")
                running[call_id] = int(found.group(1))
            if output.startswith("Chunk ID:"):  # exec_command's wrapper: keep the output
                output = output.partition("\nOutput:\n")[2]
            entries.append(("tool", output, call_id))
        elif kind == "message":
            role = item.get("role")
            role = "assistant" if role == "assistant" else "user" if role == "user" else "system"
            entries.append((role, _text_of(item.get("content")), None))
        elif kind == "reasoning":
            entries.append(("assistant", "", None))
    return _conversation(entries, commands, bool(body.get("tools")), running)


def chat_conversation(body: dict[str, Any]) -> Conversation:
    entries: list[tuple[str, str, str | None]] = []
    commands: dict[str, str] = {}
    for message in body.get("messages", []):
        role = message.get("role")
        if role == "assistant":
            for call in message.get("tool_calls") or []:
                fn = call.get("function", {})
                commands[call.get("id", "")] = _command_of(fn.get("name"), fn.get("arguments"))
            entries.append(("assistant", _text_of(message.get("content")), None))
        elif role == "tool":
            entries.append(("tool", _text_of(message.get("content")), message.get("tool_call_id")))
        else:
            kind = "user" if role == "user" else "system"
            entries.append((kind, _text_of(message.get("content")), None))
    return _conversation(entries, commands, bool(body.get("tools")))


# --------------------------------------------------------------------------- the shell tool

SHELL_TOOLS = ("Bash", "bash", "exec_command", "shell_command", "shell")
# the agents' own tools that write a whole file: name -> (path argument, content argument)
WRITE_TOOLS = {"Write": ("file_path", "content"), "write": ("filePath", "content")}
ESCALATE = "ESCALATE "
BACKGROUND = "BACKGROUND "
EXEC_YIELD_MS = 30_000  # Codex's most: a longer command goes on running (RUNNING_RE)
ESCALATION = {
    "sandbox_permissions": "require_escalated",
    "justification": "Run the scripted command outside the sandbox?",
}


def _tool_name(tool: dict[str, Any]) -> str:
    return str(tool.get("name") or tool.get("function", {}).get("name") or tool.get("type"))


def shell_call(tools: list[dict[str, Any]], command: str) -> tuple[str, dict[str, Any]] | None:
    """(tool name, arguments) running `command` with the request's shell tool, if it has one."""
    specs = {}
    for tool in tools:
        spec = tool.get("function", tool)  # Chat Completions nests name and schema
        if "name" in spec:
            specs[spec["name"]] = spec.get("input_schema") or spec.get("parameters") or {}
    name = next((n for n in SHELL_TOOLS if n in specs), None)
    if name is None:
        return None
    props = specs[name].get("properties", {})
    steps = command.split(" && ")
    escalate = any(step.startswith(ESCALATE) for step in steps)
    background = any(step.startswith(BACKGROUND) for step in steps)
    command = " && ".join(step.removeprefix(ESCALATE).removeprefix(BACKGROUND) for step in steps)
    if "cmd" in props:  # codex exec_command
        # wait for the command's end (its default yields after 10 s, leaving it running)
        wait = {"yield_time_ms": EXEC_YIELD_MS} if "yield_time_ms" in props else {}
        if escalate and "sandbox_permissions" in props:
            return name, {"cmd": command, **wait, **ESCALATION}
        return name, {"cmd": command, **wait}
    if props.get("command", {}).get("type") == "array":  # codex shell
        return name, {"command": ["bash", "-lc", command]}
    args: dict[str, Any] = {"command": command}
    if "description" in props or name in ("Bash", "bash"):
        args["description"] = "Run the scripted command"
    if background and "run_in_background" in props:
        args["run_in_background"] = True
    return name, args


def shell_write(path: str, content: str) -> str:
    """The shell command that writes `content` to `path`, for an agent without a file tool."""
    line = shlex.quote(content.removesuffix("\n"))
    return f"printf '%s\\n' {line} > {shlex.quote(path)}"


def write_call(
    tools: list[dict[str, Any]], path: str, content: str
) -> tuple[str, dict[str, Any]] | None:
    """(tool name, arguments) writing the file with the agent's own tool, else its shell."""
    names = {_tool_name(tool) for tool in tools}
    for name, (path_arg, content_arg) in WRITE_TOOLS.items():
        if name in names:
            return name, {path_arg: path, content_arg: content}
    return shell_call(tools, shell_write(path, content))


# --------------------------------------------------------------------------- answers per wire

_ids = itertools.count(1)


def _id(prefix: str) -> str:
    return f"{prefix}_{next(_ids):06d}"


def _sse(event: str | None, data: dict[str, Any] | str) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data)
    return (f"event: {event}\n" if event else "").encode() + f"data: {payload}\n\n".encode()


def _call_or_text(
    decision: Decision, tools: list[dict[str, Any]]
) -> tuple[tuple[str, dict[str, Any]] | None, str]:
    if decision.file is not None:
        call = write_call(tools, *decision.file)
    else:
        call = shell_call(tools, decision.command) if decision.command else None
    if decision.session is not None and READ_ON in {_tool_name(t) for t in tools}:
        read_on = {"session_id": decision.session, "chars": "", "yield_time_ms": EXEC_YIELD_MS}
        call = (READ_ON, read_on)
    text = decision.text or ("" if call else f"FAKE-DONE: no shell tool for {decision.command}")
    return call, text


def _title_text(body: dict[str, Any]) -> str | None:
    """A side request asking for JSON (Claude's session title) gets a matching object."""
    fmt = (body.get("output_config") or {}).get("format") or {}
    props = (fmt.get("schema") or {}).get("properties")
    return json.dumps(dict.fromkeys(props, TITLE)) if props else None


def anthropic_answer(body: dict[str, Any], decision: Decision) -> tuple[str, bytes]:
    call, text = _call_or_text(decision, body.get("tools") or [])
    if decision.rule == "title":
        text = _title_text(body) or text
    block: dict[str, Any]
    if call:
        block = {"type": "tool_use", "id": _id("toolu"), "name": call[0], "input": call[1]}
        empty = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(call[1])}
    else:
        block = {"type": "text", "text": text}
        empty = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": text}
    stop = "tool_use" if call else "end_turn"
    message = {
        "id": _id("msg"),
        "type": "message",
        "role": "assistant",
        "model": body.get("model", MODEL),
        "content": [block],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    if not body.get("stream"):
        return "application/json", json.dumps(message).encode()
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}},
        {"type": "content_block_start", "index": 0, "content_block": empty},
        {"type": "content_block_delta", "index": 0, "delta": delta},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    ]
    return "text/event-stream", b"".join(_sse(e["type"], e) for e in events)


def responses_answer(body: dict[str, Any], decision: Decision) -> tuple[str, bytes]:
    call, text = _call_or_text(decision, body.get("tools") or [])
    base = {"id": _id("resp"), "object": "response", "created_at": int(time.time())}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**base, "status": "in_progress", "output": []}}
    ]
    if call:
        args = json.dumps(call[1])
        item: dict[str, Any] = {
            "type": "function_call",
            "id": _id("fc"),
            "call_id": _id("call"),
            "name": call[0],
        }
        at: dict[str, Any] = {"item_id": item["id"], "output_index": 0}
        added = {**item, "arguments": "", "status": "in_progress"}
        events += [
            {"type": "response.output_item.added", "output_index": 0, "item": added},
            {"type": "response.function_call_arguments.delta", **at, "delta": args},
            {"type": "response.function_call_arguments.done", **at, "arguments": args},
        ]
        done = {**item, "arguments": args, "status": "completed"}
    else:
        item = {"type": "message", "id": _id("msg"), "role": "assistant"}
        part = {"type": "output_text", "text": "", "annotations": []}
        at = {"item_id": item["id"], "output_index": 0, "content_index": 0}
        added = {**item, "status": "in_progress", "content": []}
        events += [
            {"type": "response.output_item.added", "output_index": 0, "item": added},
            {"type": "response.content_part.added", **at, "part": part},
            {"type": "response.output_text.delta", **at, "delta": text},
            {"type": "response.output_text.done", **at, "text": text},
            {"type": "response.content_part.done", **at, "part": {**part, "text": text}},
        ]
        done = {**item, "status": "completed", "content": [{**part, "text": text}]}
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    completed = {**base, "status": "completed", "output": [done], "usage": usage}
    events += [
        {"type": "response.output_item.done", "output_index": 0, "item": done},
        {"type": "response.completed", "response": completed},
    ]
    chunks = [_sse(e["type"], {**e, "sequence_number": n}) for n, e in enumerate(events)]
    return "text/event-stream", b"".join(chunks)


def chat_answer(body: dict[str, Any], decision: Decision) -> tuple[str, bytes]:
    call, text = _call_or_text(decision, body.get("tools") or [])
    cid, created = _id("chatcmpl"), int(time.time())
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    if call:
        fn = {"name": call[0], "arguments": json.dumps(call[1])}
        tool_call = {"id": _id("call"), "type": "function", "function": fn}
        message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [tool_call]}
        finish = "tool_calls"
    else:
        message, finish = {"role": "assistant", "content": text}, "stop"
    base = {"id": cid, "created": created, "model": body.get("model", MODEL)}
    if not body.get("stream"):
        choice = {"index": 0, "message": message, "finish_reason": finish}
        return "application/json", json.dumps(
            {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
        ).encode()
    if call:
        first = {**tool_call, "index": 0, "function": {"name": call[0], "arguments": ""}}
        deltas = [
            {"role": "assistant", "content": None, "tool_calls": [first]},
            {"tool_calls": [{"index": 0, "function": {"arguments": fn["arguments"]}}]},
        ]
    else:
        deltas = [{"role": "assistant", "content": ""}, {"content": text}]
    chunk = {**base, "object": "chat.completion.chunk"}
    out = [{**chunk, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    out.append({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    out.append({**chunk, "choices": [], "usage": usage})
    return "text/event-stream", b"".join(_sse(None, c) for c in out) + _sse(None, "[DONE]")


WIRES: dict[str, tuple[str, Callable[..., Conversation], Callable[..., tuple[str, bytes]]]] = {
    "/v1/messages": ("anthropic", anthropic_conversation, anthropic_answer),
    "/v1/responses": ("responses", responses_conversation, responses_answer),
    "/v1/chat/completions": ("chat", chat_conversation, chat_answer),
}

# --------------------------------------------------------------------------- the server


@dataclass
class ScriptedModelServer:
    """Threaded HTTP server on 127.0.0.1; `port=0` lets the system choose."""

    log_path: Path | None = None
    port: int = 0
    requests: list[dict[str, Any]] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> ScriptedModelServer:
        handler = type("Handler", (_Handler,), {"model_server": self})
        self._httpd = _Server(("127.0.0.1", self.port), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def record(self, entry: dict[str, Any]) -> None:
        entry = {"time": time.time(), **entry}
        with self._lock:
            self.requests.append(entry)
            if self.log_path is not None:
                with open(self.log_path, "a", encoding="utf-8") as log:
                    log.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def model_requests(self, since: int = 0) -> list[dict[str, Any]]:
        """The records of model calls (not probes), from index `since` on."""
        with self._lock:
            return [r for r in self.requests[since:] if "decision" in r]

    def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float, since: int = 0
    ) -> dict[str, Any]:
        """The first model-call record matching predicate; AssertionError after timeout s."""
        deadline = time.monotonic() + timeout
        while True:
            found = next((r for r in self.model_requests(since) if predicate(r)), None)
            if found is not None:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"no matching model request within {timeout}s")
            time.sleep(0.1)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # an agent hung up: normal
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    model_server: ScriptedModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the JSONL log says it
        pass

    def do_HEAD(self) -> None:
        self._probe(body=False)

    def do_GET(self) -> None:
        if urlsplit(self.path).path.rstrip("/") == "/v1/models":
            listing = {"object": "list", "data": [{"id": MODEL, "object": "model"}]}
            self.model_server.record({"method": "GET", "path": self.path, "endpoint": "models"})
            self._send(200, "application/json", json.dumps(listing).encode())
        else:
            self._probe(body=True)

    def _probe(self, body: bool) -> None:
        self.model_server.record({"method": self.command, "path": self.path, "endpoint": "probe"})
        known = urlsplit(self.path).path in ("/", "")
        self._send(200 if known else 404, "text/plain", b"ok" if known else b"not found", body)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding") == "gzip":
            raw = gzip.decompress(raw)
        path = urlsplit(self.path).path.rstrip("/")
        entry: dict[str, Any] = {"method": "POST", "path": self.path}
        if path == "/v1/messages/count_tokens":
            self.model_server.record({**entry, "endpoint": "count_tokens"})
            self._send(200, "application/json", b'{"input_tokens": 10}')
            return
        if path not in WIRES:
            self.model_server.record({**entry, "endpoint": "unknown"})
            self._send(404, "application/json", b'{"error": {"message": "not found"}}')
            return
        wire, read, answer = WIRES[path]
        try:
            body = json.loads(raw or b"{}")
            conv = read(body)
            decision = decide(conv)
        except Exception as exc:  # a request the server cannot read: say so in the log
            self.model_server.record({**entry, "endpoint": wire, "error": repr(exc)})
            self._send(500, "application/json", b'{"error": {"message": "unreadable"}}')
            return
        self.model_server.record(
            {
                **entry,
                "endpoint": wire,
                "model": body.get("model"),
                "stream": bool(body.get("stream")),
                "tools": [_tool_name(t) for t in body.get("tools") or []],
                "new": [asdict(item) for item in conv.new],
                "decision": asdict(decision),
            }
        )
        if decision.delay:
            time.sleep(decision.delay)  # the model "thinks"
        ctype, payload = answer(body, decision)
        self._send(200, ctype, payload)

    def _send(self, status: int, ctype: str, payload: bytes, body: bool = True) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(payload)))
        if ctype == "text/event-stream":
            self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        if body:
            self.wfile.write(payload)


def iter_log(path: Path) -> Iterator[dict[str, Any]]:
    """The records of a JSONL request log."""
    with open(path, encoding="utf-8") as log:
        for line in log:
            if line.strip():
                yield json.loads(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", type=Path, default=None, help="JSONL request log")
    args = parser.parse_args()
    server = ScriptedModelServer(log_path=args.log, port=args.port).start()
    print(server.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
