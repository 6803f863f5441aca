import type { Agent } from "../api/types";
import { gridAgents, MAX_WATCHED, type PaneFrames } from "../lib/panes";
import { LivePane } from "./LivePane";

interface Props {
  agents: Agent[] | null;
  frames: PaneFrames;
  selectedId: number | null;
  onOpen: (agentId: number) => void;
}

/** `coder · idle · 2 unread`: what a tile's title says of its member. */
export function tileTitle(agent: Agent): string {
  return `${agent.name} · ${agent.agent_status ?? "no status"} · ${agent.unread} unread`;
}

/** Every member's live pane at once; a tile opens its member's drawer. */
export function Grid({ agents, frames, selectedId, onOpen }: Props) {
  const members = gridAgents(agents);
  return (
    <section class="grid-view" aria-label="Live panes" data-testid="pane-grid">
      {agents === null && <p class="muted list-empty">Loading…</p>}
      {agents !== null && members.length === 0 && (
        <p class="muted list-empty">No member has a pane. Start one with `cafleet member create`.</p>
      )}
      {members.length > 0 && (
        <ul class="tiles">
          {members.map((agent, i) => (
            <li
              key={agent.agent_id}
              class={`tile${agent.agent_status === "waiting" ? " is-waiting" : ""}${selectedId === agent.agent_id ? " is-selected" : ""}`}
              data-testid="grid-tile"
              data-agent-id={agent.agent_id}
              onClick={() => onOpen(agent.agent_id)}
            >
              <button
                type="button"
                class="tile-title"
                title={`Open ${agent.name}'s details`}
                onClick={(e) => {
                  e.stopPropagation();
                  onOpen(agent.agent_id);
                }}
              >
                {tileTitle(agent)}
              </button>
              {i < MAX_WATCHED ? (
                <LivePane frames={frames} agentId={agent.agent_id} name={agent.name} compact />
              ) : (
                <p class="pane-note muted">Not live: at most {MAX_WATCHED} panes are watched at once.</p>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
