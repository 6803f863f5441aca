// JSON API client. Every fleet-scoped call sends `X-Fleet-Id` (behavior spec §11.2).
import { authHeader, requestToken, storedToken } from "./token";
import type {
  Agent,
  Fleet,
  Message,
  MonitorConfig,
  MonitorPatch,
  MonitorRuntime,
  SearchHit,
  SendResult,
} from "./types";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
    this.name = "ApiError";
  }

  get fleetMissing(): boolean {
    return this.status === 404 && this.detail === "Fleet not found";
  }
}

interface RequestOptions {
  fleetId?: number;
  method?: "GET" | "POST" | "PATCH";
  body?: unknown;
  signal?: AbortSignal;
}

async function errorDetail(res: Response): Promise<string> {
  try {
    const payload: unknown = await res.json();
    if (payload && typeof payload === "object" && "detail" in payload) {
      const { detail } = payload;
      return typeof detail === "string" ? detail : JSON.stringify(detail);
    }
  } catch {
    // not JSON: fall through
  }
  return `${res.status} ${res.statusText}`.trim();
}

export function fleetHeaders(fleetId?: number): Record<string, string> {
  return fleetId === undefined ? authHeader() : { ...authHeader(), "X-Fleet-Id": String(fleetId) };
}

async function request<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const { fleetId, method = "GET", body, signal } = options;
  for (;;) {
    const sentToken = storedToken();
    const headers: Record<string, string> = { Accept: "application/json", ...fleetHeaders(fleetId) };
    const init: RequestInit = { method, headers };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    if (signal) init.signal = signal;
    const res = await fetch(path, init);
    if (res.status === 401 && (await requestToken(sentToken))) continue;
    if (!res.ok) throw new ApiError(res.status, await errorDetail(res));
    return (await res.json()) as T;
  }
}

const pageQuery = "?limit=200";

export const api = {
  /** Live and deleted fleets (the picker lists the deleted ones in their own section). */
  fleets: (signal?: AbortSignal) =>
    request<Fleet[]>("/api/fleets?include_deleted=true", signal ? { signal } : {}),

  agents: async (fleetId: number): Promise<Agent[]> =>
    (await request<{ agents: Agent[] }>("/api/agents", { fleetId })).agents,

  monitor: (fleetId: number) => request<MonitorRuntime>("/api/monitor", { fleetId }),

  timeline: async (fleetId: number): Promise<Message[]> =>
    (await request<{ messages: Message[] }>(`/api/timeline${pageQuery}`, { fleetId })).messages,

  inbox: async (fleetId: number, agentId: number): Promise<Message[]> =>
    (await request<{ messages: Message[] }>(`/api/agents/${agentId}/inbox${pageQuery}`, { fleetId }))
      .messages,

  sent: async (fleetId: number, agentId: number): Promise<Message[]> =>
    (await request<{ messages: Message[] }>(`/api/agents/${agentId}/sent${pageQuery}`, { fleetId }))
      .messages,

  patchMonitor: (fleetId: number, agentId: number, patch: MonitorPatch) =>
    request<MonitorConfig>(`/api/agents/${agentId}/monitor`, {
      fleetId,
      method: "PATCH",
      body: patch,
    }),

  /** `inReplyTo`: a message the Administrator sent or received, whose thread it joins. */
  send: (fleetId: number, to: number | "*", text: string, inReplyTo: number | null = null) =>
    request<SendResult>("/api/messages/send", {
      fleetId,
      method: "POST",
      body: inReplyTo === null ? { to_agent_id: to, text } : { to_agent_id: to, text, in_reply_to: inReplyTo },
    }),

  search: async (fleetId: number, q: string, signal?: AbortSignal): Promise<SearchHit[]> =>
    (
      await request<{ hits: SearchHit[] }>(`/api/search?limit=20&q=${encodeURIComponent(q)}`, {
        fleetId,
        ...(signal ? { signal } : {}),
      })
    ).hits,
};
