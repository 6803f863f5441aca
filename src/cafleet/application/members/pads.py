"""What a member's launch pad keeps of its agent's conversation: the one-line notes, and
the OpenCode session or Codex thread found once and kept there (read by the channels, the
receipts, the status and the shell alike)."""

from __future__ import annotations

from cafleet.application.ports.agents import CodexThreads, LaunchPad
from cafleet.domain.agents.profile import SESSION_FILE, SPAWN_FILE, TRANSCRIPT_FILE, SpawnFacts
from cafleet.domain.agents.server import HttpFacts


def note_of(pad: LaunchPad, name: str) -> str:
    """A one-line note the pad keeps (a session id, a path); empty when there is none."""
    return (pad.read(name) or "").strip()


def known_session(pad: LaunchPad, http: HttpFacts) -> str | None:
    """The member's OpenCode session: kept in the pad, or found now on its own server and
    kept. Its server lists every session of the project (other members' too), so the one
    found is the only one started in the member's directory since its spawn whose first
    prompt is its spawn prompt; None while there is none, or more than one."""
    kept = note_of(pad, SESSION_FILE)
    if kept:
        return kept
    spawn = SpawnFacts.parse(pad.read(SPAWN_FILE))
    if spawn is None:  # started before CAFleet kept what finds it
        return None
    listing = pad.get(http.sessions_path, http.user)
    found = [
        session
        for session in http.sessions_since(listing, spawn.cwd, spawn.started_at)
        if http.begun_with(_history(pad, http, session), spawn.prompt)
    ]
    if len(found) != 1:
        return None
    pad.remember(SESSION_FILE, found[0])
    return found[0]


def _history(pad: LaunchPad, http: HttpFacts, session: str) -> str | None:
    return pad.get(http.history_path.format(session=session), http.user)


def known_thread(pad: LaunchPad, spawn: SpawnFacts, threads: CodexThreads) -> str | None:
    """The member's Codex conversation: kept in the pad, or found now and kept."""
    kept = note_of(pad, SESSION_FILE)
    if kept:
        return kept
    found = threads.find(spawn.home, spawn.cwd, spawn.prompt, spawn.started_at)
    if found is None:
        return None
    pad.remember(SESSION_FILE, found.thread_id)
    pad.remember(TRANSCRIPT_FILE, found.transcript)
    return found.thread_id


def known_transcript(pad: LaunchPad, threads: CodexThreads) -> str | None:
    """The transcript of the member's Codex conversation, found once from what the pad kept
    of the spawn (here, by the status or by the channel); None while it is not found."""
    kept = note_of(pad, TRANSCRIPT_FILE)
    if kept:
        return kept
    spawn = SpawnFacts.parse(pad.read(SPAWN_FILE))
    if spawn is None or known_thread(pad, spawn, threads) is None:
        return None
    return note_of(pad, TRANSCRIPT_FILE) or None
