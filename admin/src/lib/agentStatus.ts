// Words for a member's agent status and for each delivery attempt.
import type { AgentActivity, Delivery } from "../api/types";
import { formatSeconds, humanizeSeconds } from "./time";

/** `working · 2m`; the bare status when its start is not known. */
export function agentStatusLabel(status: AgentActivity, since: string | null, now: number): string {
  const t = since === null ? Number.NaN : Date.parse(since);
  return Number.isNaN(t) ? status : `${status} · ${humanizeSeconds((now - t) / 1000)}`;
}

const HINTS: Record<AgentActivity, string> = {
  starting: "The agent has not taken its first prompt yet",
  working: "The agent is in a turn",
  idle: "The agent waits for a prompt",
  waiting: "The agent waits for a person: a permission request or a question",
  exited: "The agent ended, or its pane is gone",
  unknown: "Nothing tells what the agent is doing",
};

export const agentStatusHint = (status: AgentActivity): string => HINTS[status];

/** What one attempt came to: `confirmed 12:03:04`, `unconfirmed`, or the state and reason. */
export function attemptOutcome(d: Delivery): string {
  if (d.state === "sent") return d.confirmed_at ? `confirmed ${formatSeconds(d.confirmed_at)}` : "unconfirmed";
  if (d.state === "pending") return "pending";
  return d.error ? `${d.state}: ${d.error}` : d.state;
}
