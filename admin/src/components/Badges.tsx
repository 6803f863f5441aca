import type { AgentActivity, Agent, TaskStatus } from "../api/types";
import { agentStatusHint, agentStatusLabel } from "../lib/agentStatus";
import { EyeIcon } from "./icons";

export function AdminBadge() {
  return <span class="badge badge-admin">Admin</span>;
}

export function MonitorBadge({ monitor }: { monitor: NonNullable<Agent["monitor"]> }) {
  const hint = monitor.enabled
    ? `Monitoring every ${monitor.interval_seconds}s`
    : "Monitoring disabled";
  return (
    <span class={`badge badge-monitor ${monitor.enabled ? "is-on" : "is-off"}`} title={hint}>
      <EyeIcon off={!monitor.enabled} />
      <span class="visually-hidden">monitoring </span>
      {monitor.enabled ? "on" : "off"}
    </span>
  );
}

export function StatusBadge({ status }: { status: TaskStatus }) {
  return <span class={`badge badge-status status-${status}`}>{status}</span>;
}

interface AgentStatusProps {
  status: AgentActivity;
  since: string | null;
  now: number;
}

/** A member's agent status with its age; `waiting` (a person is needed) stands out. */
export function AgentStatusBadge({ status, since, now }: AgentStatusProps) {
  const waiting = status === "waiting";
  return (
    <span
      class={`badge badge-agent agent-${status}${waiting ? " is-alert" : ""}`}
      title={agentStatusHint(status)}
      data-agent-status={status}
    >
      {waiting && (
        <span class="alert-mark" aria-hidden="true">
          !
        </span>
      )}
      <span class="visually-hidden">{waiting ? "needs a person: " : "agent "}</span>
      {agentStatusLabel(status, since, now)}
    </span>
  );
}
