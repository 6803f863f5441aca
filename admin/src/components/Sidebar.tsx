import type { Agent } from "../api/types";
import { isAdministrator } from "../api/types";
import { Avatar } from "./Avatar";
import { AdminBadge, AgentStatusBadge, MonitorBadge } from "./Badges";

interface Props {
  agents: Agent[] | null;
  selectedId: number | null;
  now: number;
  onSelect: (agentId: number) => void;
}

const rank = (a: Agent): number => (a.status === "active" ? 0 : 1);

export function Sidebar({ agents, selectedId, now, onSelect }: Props) {
  const sorted = agents ? [...agents].sort((a, b) => rank(a) - rank(b) || a.agent_id - b.agent_id) : [];
  const active = sorted.filter((a) => a.status === "active").length;
  return (
    <nav class="sidebar" aria-label="Agents">
      <h2 class="sidebar-title">
        Agents {agents && <span class="count">{active}</span>}
      </h2>
      {agents === null && (
        <ul class="agent-list" aria-hidden="true">
          {[0, 1, 2].map((i) => (
            <li key={i} class="agent-row skeleton-row">
              <span class="skeleton skeleton-avatar" />
              <span class="skeleton skeleton-line" />
            </li>
          ))}
        </ul>
      )}
      {agents !== null && agents.length === 0 && (
        <p class="sidebar-empty">No agents registered in this fleet. Use the cafleet CLI to add one.</p>
      )}
      {sorted.length > 0 && (
        <ul class="agent-list">
          {sorted.map((agent) => {
            const gone = agent.status === "deregistered";
            const waiting = agent.agent_status === "waiting";
            return (
              <li key={agent.agent_id}>
                <button
                  type="button"
                  class={`agent-row${gone ? " is-deregistered" : ""}${waiting ? " is-waiting" : ""}${selectedId === agent.agent_id ? " is-selected" : ""}`}
                  aria-current={selectedId === agent.agent_id ? "true" : undefined}
                  data-agent-id={agent.agent_id}
                  title={gone ? `${agent.name} (deregistered)` : agent.name}
                  onClick={() => onSelect(agent.agent_id)}
                >
                  <Avatar agentId={agent.agent_id} name={agent.name} muted={gone} />
                  <span class="agent-text">
                    <span class="agent-name">{agent.name}</span>
                    <span class="agent-sub">
                      #{agent.agent_id}
                      {gone && " · deregistered"}
                      {agent.agent_status && (
                        <AgentStatusBadge status={agent.agent_status} since={agent.agent_status_since} now={now} />
                      )}
                    </span>
                  </span>
                  <span class="agent-badges">
                    {isAdministrator(agent) && <AdminBadge />}
                    {agent.monitor && <MonitorBadge monitor={agent.monitor} />}
                  </span>
                </button>
              </li>
            );
          })}
        </ul>
      )}
    </nav>
  );
}
