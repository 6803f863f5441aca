"""`cafleet doctor`: every section of the environment, with problems counted, not fatal."""

from __future__ import annotations

import os
import shlex
from typing import TYPE_CHECKING, Any

import click

from cafleet.entrypoints.cli.app import CafleetCommand, app_of, fail

if TYPE_CHECKING:
    from cafleet.composition import Components


@click.command(
    "doctor",
    cls=CafleetCommand,
    help="Report the multiplexer, the database and the installed skills.",
)
@click.pass_context
def doctor(ctx: click.Context) -> None:
    from cafleet.domain.errors import CafleetError

    try:
        components = app_of(ctx).components
    except CafleetError as exc:
        fail(exc.message)
    report: dict[str, Any] = {
        "multiplexer": _multiplexer(components),
        "database": _database(components),
        "skills": _skills(components),
        "agents": _agents(components),
        "director": _director(components),
    }
    report["hosts"] = _hosts(components, report["database"])
    report["on_path"] = _on_path(components)
    report["next"] = _next(report)
    ok = (
        report["multiplexer"]["error"] is None
        and report["database"]["revision"] == report["database"]["head"]
        and bool(report["skills"]["installs"])
        and all(i["current"] for i in report["skills"]["installs"])
    )
    app = app_of(ctx)
    app.emit(_text(report), lambda: {"ok": ok, **report})
    ctx.exit(0 if ok else 1)


def _multiplexer(components: Components) -> dict[str, Any]:
    from cafleet.domain.errors import CafleetError

    env = components.env
    var = "HERDR_ENV" if env.get("HERDR_ENV", "") not in ("", "0") else "TMUX"
    section: dict[str, Any] = {
        "backend": None,
        "session": None,
        "window_id": None,
        "pane_id": None,
        "presence_var": None,
        "presence_value": None,
        "error": None,
    }
    try:
        pane = components.locator.current_pane()
    except CafleetError as exc:
        section["error"] = exc.message
        return section
    section.update(
        backend=pane.backend.value,
        session=pane.session,
        window_id=pane.window_id,
        pane_id=pane.pane_id,
        presence_var=var,
        presence_value=env.get(var),
    )
    return section


def _database(components: Components) -> dict[str, Any]:
    from cafleet.adapters.store.select import store_revision, store_url
    from cafleet.adapters.store.sqlite.schema import HEAD_REVISION, journal_mode
    from cafleet.domain.errors import CafleetError

    settings = components.settings
    section: dict[str, Any] = {
        "url": store_url(settings),
        "revision": None,
        "head": HEAD_REVISION,
        "journal_mode": None,
        "pending_deliveries": None,
    }
    path = settings.database_path
    if path is None and not settings.on_postgres:
        return section
    try:
        section["revision"] = store_revision(settings)
        section["journal_mode"] = journal_mode(path) if path else None
        if section["revision"] == HEAD_REVISION:
            section["pending_deliveries"] = components.skills.pending_deliveries()
    except CafleetError as exc:
        section["problem"] = exc.message  # an unreadable database is not a missing one
    return section


def _hosts(components: Components, database: dict[str, Any]) -> dict[str, Any]:
    """This host's name, and every host of the store with its relay (a shared store); the
    hosts are read only from a store at head (the database section says what is amiss)."""
    from cafleet.adapters.system.hosts import this_host
    from cafleet.application.relay.service import hosts_of
    from cafleet.domain.errors import CafleetError
    from cafleet.entrypoints.cli.rendering import iso

    section: dict[str, Any] = {"this_host": None, "hosts": []}
    try:
        section["this_host"] = this_host(components.env)
        if database["revision"] != database["head"]:
            return section
        hosts = hosts_of(components.uow, components.clock.now())
    except CafleetError as exc:
        section["problem"] = exc.message
        return section
    section["hosts"] = [
        {
            "host": h.relay.host,
            "panes": h.panes,
            "relay_alive": h.relay.alive,
            "relay_pid": None if h.relay.beat is None else h.relay.beat.pid,
            "relay_seen_at": None if h.relay.beat is None else iso(h.relay.beat.seen_at),
            "relay_pane_id": None
            if h.relay.beat is None or h.relay.beat.pane is None
            else h.relay.beat.pane.pane_id,
        }
        for h in hosts
    ]
    return section


def _skills(components: Components) -> dict[str, Any]:
    from cafleet import __version__
    from cafleet.domain.errors import CafleetError
    from cafleet.entrypoints.cli.rendering import iso

    try:
        installs = components.skills.installs()
    except CafleetError:
        installs = []
    return {
        "cli_version": __version__,
        "installs": [
            {
                "coding_agent": i.coding_agent,
                "cafleet_version": i.cafleet_version,
                "installed_at": iso(i.installed_at),
                "current": i.is_current(__version__),
            }
            for i in installs
        ],
    }


def _agents(components: Components) -> list[dict[str, Any]]:
    """Each coding agent's resolved profile (with the user's overrides) and its binary."""
    from cafleet.adapters.agents.programs import SystemPrograms
    from cafleet.adapters.runtime.locks import runtime_path
    from cafleet.adapters.system.git_dirs import git_directories
    from cafleet.domain.agents.custom import SpawnIdentity
    from cafleet.domain.agents.launch import LaunchSpec
    from cafleet.domain.placement import CodingAgent

    programs = SystemPrograms(components.env)
    database = components.settings.database_path
    git_dirs = git_directories(os.getcwd(), components.env)  # what a member started here gets
    agents = []
    for agent in CodingAgent:
        if agent is CodingAgent.CUSTOM:
            continue
        profile = components.settings.profiles[agent]
        binary = programs.which(agent.value)
        argv = LaunchSpec(agent, "<name>").argv(
            binary=binary or agent.value,
            prompt="<prompt>",
            identity=SpawnIdentity(0, 0, 0),
            profile=profile,
            database_dir=str(database.absolute().parent) if database else None,
            runtime_dir=str(runtime_path(components.env)),
            git_dirs=git_dirs,
            hook_settings="<hook settings>" if profile.uses_hooks else None,
            http_port=0 if profile.server else None,
        )
        shown = ["<free port>" if flag == "--port" else word for flag, word in _pairs(argv)]
        agents.append({
            "coding_agent": agent.value,
            "binary": binary,
            "argv": shown,
            "foreground_names": list(profile.foreground_names),
            "ready_rules": [rule.value for rule in profile.ready_rules],
            "channels": [channel.value for channel in profile.ladder],
            "submit_delay": profile.submit_delay,
            "submit_checked": profile.checks_submit,  # Enter again if the text stayed
            "notes": profile.notes,
        })  # fmt: skip
    return agents


def _director(components: Components) -> list[dict[str, Any]]:
    """What Claude Code and Codex need in their own settings to run `cafleet` as the
    Director, and whether they have it (not counted as a problem: either may not be used)."""
    return [
        {"coding_agent": g.coding_agent.value, "granted": g.granted, "detail": g.line}
        for g in components.director_grants()
    ]


def _on_path(components: Components) -> dict[str, str | None]:
    """Where each agent binary is, the demo agent's included (None: not on PATH)."""
    from cafleet.adapters.agents.programs import SystemPrograms
    from cafleet.domain.agents.custom import DEMO_AGENT
    from cafleet.domain.skills import AGENT_HOMES

    programs = SystemPrograms(components.env)
    return {name: programs.which(name) for name in [*(a.value for a in AGENT_HOMES), DEMO_AGENT]}


def _next(report: dict[str, Any]) -> str:
    from cafleet.application.setup import Readiness, next_step

    installs = report["skills"]["installs"]
    return next_step(
        Readiness(
            multiplexer_ok=report["multiplexer"]["error"] is None,
            database_current=report["database"]["revision"] == report["database"]["head"],
            skills_current=bool(installs) and all(i["current"] for i in installs),
            skill_homes=frozenset(i["coding_agent"] for i in installs),
            on_path={name: path is not None for name, path in report["on_path"].items()},
        )
    )


def _channel_words(channel: str) -> str:
    """A channel for the text report; herdr's prompt reaches only members on herdr."""
    return f"{channel} (on herdr)" if channel == "herdr-prompt" else channel


def _pairs(argv: list[str]) -> list[tuple[str, str]]:
    """Each word with the word before it (the port is only chosen at spawn)."""
    return list(zip(["", *argv[:-1]], argv, strict=True))


def _text(report: dict[str, Any]) -> str:
    from cafleet.adapters.store.sqlite.schema import newer_than_head
    from cafleet.entrypoints.cli.rendering import labelled

    mux, db, skills = report["multiplexer"], report["database"], report["skills"]
    lines = ["multiplexer:"]
    if mux["error"] is not None:
        lines.append(labelled([("error", mux["error"])], 15, indent="  "))
    else:
        lines.append(
            labelled(
                [
                    ("backend", mux["backend"]),
                    ("session", mux["session"]),
                    ("window_id", mux["window_id"]),
                    ("pane_id", mux["pane_id"]),
                    ("presence", f"{mux['presence_var']}={mux['presence_value']}"),
                ],
                15,
                indent="  ",
            )
        )
    if "problem" in db:
        revision = f"unreadable: {db['problem']}"
    elif db["revision"] is None:
        revision = "missing (run 'cafleet setup')"
    elif db["revision"] == db["head"]:
        revision = f"{db['revision']} (head)"
    elif newer_than_head(db["revision"]):
        revision = f"{db['revision']} (newer than head {db['head']}; upgrade cafleet)"
    else:
        revision = f"{db['revision']} (behind head {db['head']})"
    pending = "-" if db["pending_deliveries"] is None else f"{db['pending_deliveries']} deliveries"
    lines += [
        "database:",
        labelled(
            [
                ("url", db["url"]),
                ("revision", revision),
                ("journal_mode", db["journal_mode"] or "-"),
                ("pending", pending),
            ],
            15,
            indent="  ",
        ),
    ]
    lines += ["skills:", labelled([("cli_version", skills["cli_version"])], 13, indent="  ")]
    if not skills["installs"]:
        lines.append("  (no skills install recorded; run 'cafleet setup')")
    for i in skills["installs"]:
        state = "ok" if i["current"] else "STALE"
        lines.append(
            labelled(
                [(i["coding_agent"], f"{i['cafleet_version']} ({i['installed_at']}) {state}")],
                13,
                indent="  ",
            )
        )
    lines.append("agents:")
    for a in report["agents"]:
        found = a["binary"] or "not found on PATH"
        lines.append(f"  {a['coding_agent']}: {found}")
        lines.append(
            labelled(
                [
                    ("runs", shlex.join(a["argv"])),
                    ("ready by", ", ".join(a["ready_rules"])),
                    ("delivers", ", then ".join(map(_channel_words, a["channels"]))),
                    ("in front", ", ".join(a["foreground_names"])),
                    ("submit", _submit_words(a)),
                ],
                10,
                indent="    ",
            )
        )
    lines.append("as the Director (docs/agents.md):")
    for grant in report["director"]:
        mark = "ok" if grant["granted"] else "missing"
        lines.append(f"  {grant['coding_agent']}: {mark}: {grant['detail']}")
    lines += _hosts_text(report["hosts"])
    lines.append("on PATH:")
    width = max(map(len, report["on_path"])) + 2
    found = [(name, path or "not found") for name, path in report["on_path"].items()]
    lines.append(labelled(found, width, indent="  "))
    lines.append(f"next: {report['next']}")
    return "\n".join(lines)


def _hosts_text(section: dict[str, Any]) -> list[str]:
    lines = ["hosts:", f"  this host:  {section['this_host'] or '-'}"]
    if "problem" in section:
        return [*lines, f"  unreadable: {section['problem']}"]
    for h in section["hosts"]:
        panes = f"{h['panes']} pane{'' if h['panes'] == 1 else 's'}"
        if h["relay_alive"]:
            relay = f"relay alive (pid {h['relay_pid']})"
        elif h["relay_seen_at"] is None:
            relay = "no relay seen"
        else:
            relay = f"relay down (last seen {h['relay_seen_at']})"
        lines.append(f"  {h['host']}: {panes}, {relay}")
    return lines


def _submit_words(agent: dict[str, Any]) -> str:
    words = f"{agent['submit_delay']:g}s after the text"
    return words + ", then checked" if agent["submit_checked"] else words
