// Live panes: which agents a page watches over the event stream, and the frames it got.
import type { Agent, PaneFrame } from "../api/types";

/** The server refuses a longer watch list (400). */
export const MAX_WATCHED = 32;

/** Agents whose pane can be shown: active, with a recorded pane. */
export const hasPane = (agent: Agent): boolean => agent.status === "active" && agent.coding_agent !== null;

/** The grid's agents: every active member with a pane (not the Director's own terminal), by id. */
export function gridAgents(agents: readonly Agent[] | null): Agent[] {
  const member = (a: Agent): boolean => a.kind === "member" || a.kind === "monitor";
  return (agents ?? []).filter((a) => member(a) && hasPane(a)).sort((a, b) => a.agent_id - b.agent_id);
}

/** The ids to watch: the grid's agents when it shows, and the drawer's agent when it has a
 * pane. Only roster agents are named, so a stale id in the address never makes the stream
 * fail; at most MAX_WATCHED, the drawer's first. */
export function watchList(agents: readonly Agent[] | null, grid: boolean, drawerAgentId: number | null): number[] {
  const ids: number[] = [];
  const drawer = agents?.find((a) => a.agent_id === drawerAgentId);
  if (drawer && hasPane(drawer)) ids.push(drawer.agent_id);
  if (grid) for (const a of gridAgents(agents)) if (!ids.includes(a.agent_id)) ids.push(a.agent_id);
  return ids.slice(0, MAX_WATCHED);
}

/** A `pane` event's data, or null when it is not one. */
export function parsePaneEvent(data: string): PaneFrame | null {
  let raw: unknown;
  try {
    raw = JSON.parse(data);
  } catch {
    return null;
  }
  if (!raw || typeof raw !== "object") return null;
  const { agent_id, ansi, error, captured_at } = raw as Record<string, unknown>;
  if (typeof agent_id !== "number" || typeof captured_at !== "string") return null;
  if (typeof ansi !== "string" && typeof error !== "string") return null;
  return {
    agent_id,
    ansi: typeof ansi === "string" ? ansi : null,
    error: typeof error === "string" ? error : null,
    captured_at,
  };
}

/** The latest frame of each agent; a component listens to its agent's only, so a frame
 * re-renders one pane, not the page. */
export class PaneFrames {
  private frames = new Map<number, PaneFrame>();
  private listeners = new Map<number, Set<() => void>>();

  get(agentId: number): PaneFrame | undefined {
    return this.frames.get(agentId);
  }

  set(frame: PaneFrame): void {
    this.frames.set(frame.agent_id, frame);
    for (const listener of this.listeners.get(frame.agent_id) ?? []) listener();
  }

  subscribe(agentId: number, listener: () => void): () => void {
    const set = this.listeners.get(agentId) ?? new Set();
    set.add(listener);
    this.listeners.set(agentId, set);
    return () => {
      set.delete(listener);
    };
  }
}
