// API objects for tests: sensible defaults, any field replaced.
import type { Agent, Delivery, Fleet, Message } from "../api/types";

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
  coding_agent: "claude",
  unread: 0,
  ...over,
});

export const message = (over: Partial<Message> = {}): Message => ({
  task_id: 7,
  from_agent_id: 1,
  from_agent_name: "Director",
  to_agent_id: 3,
  to_agent_name: "coder",
  type: "unicast",
  status: "input_required",
  created_at: "2026-11-29T08:00:00.000000+00:00",
  status_timestamp: "2026-11-29T08:00:00.000000+00:00",
  origin_task_id: null,
  body: "hello",
  delivery: null,
  deliveries: [],
  sender_verified: false,
  in_reply_to: null,
  thread_id: over.task_id ?? 7,
  ...over,
});
