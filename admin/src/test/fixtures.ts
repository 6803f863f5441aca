// API objects for tests: sensible defaults, any field replaced.
import type { Agent, Delivery, Fleet } from "../api/types";

export const fleet = (over: Partial<Fleet> = {}): Fleet => ({
  fleet_id: 1,
  director_agent_id: 1,
  name: "proj",
  created_at: "2026-11-29T08:00:00.000000+00:00",
  agent_count: 2,
  deleted_at: null,
  ...over,
});

export const delivery = (over: Partial<Delivery> = {}): Delivery => ({
  state: "sent",
  channel: "keys",
  attempt: 1,
  transport: "tmux",
  error: null,
  attempted_at: null,
  confirmed_at: null,
  ...over,
});

export const agent = (over: Partial<Agent> = {}): Agent => ({
  agent_id: 3,
  name: "coder",
  description: "Writes code",
  status: "active",
  registered_at: "2026-11-29T08:00:00.000000+00:00",
  kind: "member",
  monitor: null,
  agent_status: null,
  agent_status_since: null,
  ...over,
});
