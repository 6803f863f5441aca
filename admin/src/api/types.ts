// Shapes of the JSON API under /api (behavior spec §11.3).

export interface Fleet {
  fleet_id: number;
  director_agent_id: number | null;
  name: string | null;
  created_at: string;
  agent_count: number;
  /** Set once the fleet was deleted: its history stays readable, writes are refused (409). */
  deleted_at: string | null;
}

export interface MonitorConfig {
  interval_seconds: number;
  last_ping_at: string | null;
  enabled: boolean;
}

/** As the CLI says it (`member show`, `member list --all`). */
export type AgentKind = "director" | "administrator" | "monitor" | "member";
export type AgentStatus = "active" | "deregistered";
/** What a member's coding agent is doing (`member list`'s agent status). */
export type AgentActivity = "starting" | "working" | "idle" | "waiting" | "exited" | "unknown";
export type CodingAgent = "claude" | "codex" | "opencode" | "custom";

export interface Agent {
  agent_id: number;
  name: string;
  description: string;
  status: AgentStatus;
  registered_at: string;
  kind: AgentKind;
  monitor: MonitorConfig | null;
  /** null for an agent without a member pane (the Director, the Administrator). */
  agent_status: AgentActivity | null;
  agent_status_since: string | null;
  /** The coding agent its pane runs; null without a recorded pane. */
  coding_agent: CodingAgent | null;
  /** Messages it owns and has not acknowledged yet. */
  unread: number;
}

export interface MonitorRuntime {
  running: boolean;
  pid: number | null;
  host: string | null;
  tick_seconds: number | null;
  last_tick_at: string | null;
  last_tick_age_seconds: number | null;
  started_at: string | null;
}

export type TaskStatus = "input_required" | "completed" | "canceled";
export type DeliveryState = "pending" | "sent" | "skipped" | "failed";

/** How a push reached (or tried to reach) the agent. */
export type DeliveryChannel = "claude-hook" | "opencode-http" | "codex-queue" | "herdr-prompt" | "keys";

export interface Delivery {
  state: DeliveryState;
  channel: DeliveryChannel | null;
  attempt: number;
  transport: string | null;
  error: string | null;
  attempted_at: string | null;
  /** When the agent itself said it took the message in. */
  confirmed_at: string | null;
}

export interface Message {
  task_id: number;
  from_agent_id: number;
  from_agent_name: string | null;
  to_agent_id: number | null;
  to_agent_name: string | null;
  type: "unicast" | "broadcast_summary";
  status: TaskStatus;
  created_at: string;
  status_timestamp: string;
  origin_task_id: number | null;
  body: string;
  /** The last push attempt. */
  delivery: Delivery | null;
  /** Every push attempt, first to last. */
  deliveries: Delivery[];
  sender_verified: boolean;
  /** The message this one answers. */
  in_reply_to: number | null;
  /** The message that started this one's thread. */
  thread_id: number;
}

/** One search result: the message, its rank and the body around the match. */
export interface SearchHit {
  message: Message;
  score: number;
  /** Matched words are wrapped in « and ». */
  snippet: string;
}

/** A watched agent's pane, from `event: pane` on the event stream. */
export interface PaneFrame {
  agent_id: number;
  /** The screen with its ANSI colour escapes; null when it could not be read. */
  ansi: string | null;
  /** Why there is no screen (gone, not placed, refused): one line. */
  error: string | null;
  captured_at: string;
}

export interface SendResult {
  task_id: number;
  status: TaskStatus;
  /** Set when the store failed after the message was stored: it is sent, do not resend. */
  unrecorded?: string | null;
}

export interface MonitorPatch {
  interval_seconds?: number;
  enabled?: boolean;
}

export const isAdministrator = (agent: Agent): boolean => agent.kind === "administrator";
