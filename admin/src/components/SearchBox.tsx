import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api/client";
import type { Message, SearchHit } from "../api/types";
import { snippetParts } from "../lib/snippet";
import { formatDateTime, relativeTime } from "../lib/time";

const DEBOUNCE_MS = 250;

type Results = { kind: "idle" } | { kind: "loading" } | { kind: "error"; text: string } | { kind: "ready"; hits: SearchHit[] };

const senderOf = (m: Message): string => m.from_agent_name ?? `agent ${m.from_agent_id}`;
const recipientOf = (m: Message): string =>
  m.to_agent_name ?? (m.to_agent_id === null ? "everyone" : `agent ${m.to_agent_id}`);

/** One hit: sender → recipient, when, and the snippet with its matched words marked. */
export function SearchHitView({ hit, now }: { hit: SearchHit; now: number }) {
  const m = hit.message;
  return (
    <>
      <span class="hit-head">
        <span class="hit-route">
          <strong>{senderOf(m)}</strong> → <strong>{recipientOf(m)}</strong>
        </span>
        <span class="hit-id">#{m.task_id}</span>
        <time dateTime={m.created_at} title={formatDateTime(m.created_at)}>
          {relativeTime(m.created_at, now)}
        </time>
      </span>
      <span class="hit-snippet">
        {snippetParts(hit.snippet).map((part, i) => (part.marked ? <mark key={i}>{part.text}</mark> : part.text))}
      </span>
    </>
  );
}

interface Props {
  fleetId: number;
  onPick: (hit: SearchHit) => void;
}

/** The header's search over the fleet's messages (`/api/search`), results as you type. */
export function SearchBox({ fleetId, onPick }: Props) {
  const [query, setQuery] = useState("");
  const [results, setResults] = useState<Results>({ kind: "idle" });
  const [open, setOpen] = useState(false);
  const root = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const q = query.trim();
    if (q === "") {
      setResults({ kind: "idle" });
      return;
    }
    const controller = new AbortController();
    setResults({ kind: "loading" });
    const timer = setTimeout(() => {
      api.search(fleetId, q, controller.signal).then(
        (hits) => setResults({ kind: "ready", hits }),
        (err: unknown) => {
          if (controller.signal.aborted) return;
          setResults({ kind: "error", text: err instanceof Error ? err.message : "Search failed" });
        },
      );
    }, DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [fleetId, query]);

  useEffect(() => {
    const onDown = (e: MouseEvent): void => {
      if (root.current && !root.current.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener("mousedown", onDown);
    return () => document.removeEventListener("mousedown", onDown);
  }, []);

  const pick = (hit: SearchHit): void => {
    setOpen(false);
    onPick(hit);
  };

  const onKeyDown = (e: KeyboardEvent): void => {
    if (e.key === "Escape") {
      e.preventDefault(); // the drawer must not close as well
      setOpen(false);
    } else if (e.key === "Enter" && results.kind === "ready" && results.hits[0]) {
      e.preventDefault();
      pick(results.hits[0]);
    } else if (e.key === "ArrowDown") {
      e.preventDefault();
      root.current?.querySelector<HTMLButtonElement>(".search-hit")?.focus();
    }
  };

  const onListKey = (e: KeyboardEvent): void => {
    const items = [...(root.current?.querySelectorAll<HTMLButtonElement>(".search-hit") ?? [])];
    const at = items.indexOf(document.activeElement as HTMLButtonElement);
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      const next = at + (e.key === "ArrowDown" ? 1 : -1);
      if (next < 0) root.current?.querySelector<HTMLInputElement>("input")?.focus();
      else items[Math.min(next, items.length - 1)]?.focus();
    } else if (e.key === "Escape") {
      e.preventDefault();
      setOpen(false);
      root.current?.querySelector<HTMLInputElement>("input")?.focus();
    }
  };

  const now = Date.now();
  return (
    <div class="search" role="search" ref={root}>
      <label class="visually-hidden" for="search-input">
        Search messages
      </label>
      <input
        id="search-input"
        type="search"
        placeholder="Search messages"
        autocomplete="off"
        value={query}
        onInput={(e) => {
          setQuery(e.currentTarget.value);
          setOpen(true);
        }}
        onFocus={() => setOpen(true)}
        onKeyDown={onKeyDown}
      />
      {open && results.kind !== "idle" && (
        <div class="search-results" data-testid="search-results" onKeyDown={onListKey}>
          {results.kind === "loading" && <p class="muted search-note">Searching…</p>}
          {results.kind === "error" && (
            <p class="form-error search-note" role="alert">
              {results.text}
            </p>
          )}
          {results.kind === "ready" && results.hits.length === 0 && <p class="muted search-note">No messages match</p>}
          {results.kind === "ready" && results.hits.length > 0 && (
            <ul aria-label="Search results">
              {results.hits.map((hit) => (
                <li key={hit.message.task_id}>
                  <button
                    type="button"
                    class="search-hit"
                    data-task-id={hit.message.task_id}
                    onClick={() => pick(hit)}
                  >
                    <SearchHitView hit={hit} now={now} />
                  </button>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </div>
  );
}
