// Turns the API's newest-first message list into timeline entries (behavior spec §11.4).
import type { Delivery, Message, TaskStatus } from "../api/types";
import { dayLabel, localDay } from "./time";

export interface RecipientState {
  task_id: number;
  agent_id: number | null;
  name: string;
  status: TaskStatus;
  status_timestamp: string;
  delivery: Delivery | null;
  deliveries: Delivery[];
}

export interface TimelineEntry {
  key: string;
  broadcast: boolean;
  task_id: number;
  from_agent_id: number;
  from_name: string;
  created_at: string;
  body: string;
  /** The message this one answers (a broadcast answers none). */
  in_reply_to: number | null;
  recipients: RecipientState[];
}

const nameOf = (name: string | null, id: number | null): string =>
  name ?? (id === null ? "unknown" : `agent ${id}`);

const byTimeThenId = (a: { created_at: string; task_id: number }, b: typeof a): number =>
  a.created_at === b.created_at
    ? a.task_id - b.task_id
    : Date.parse(a.created_at) - Date.parse(b.created_at);

/** Oldest first; broadcast deliveries sharing an origin become one entry. */
export function groupTimeline(messages: readonly Message[]): TimelineEntry[] {
  const entries = new Map<string, TimelineEntry>();
  const ordered = messages
    .filter((m) => m.type !== "broadcast_summary")
    .slice()
    .sort(byTimeThenId);
  for (const m of ordered) {
    const broadcast = m.origin_task_id !== null;
    const key = broadcast ? `b${m.origin_task_id}` : `t${m.task_id}`;
    let entry = entries.get(key);
    if (!entry) {
      entry = {
        key,
        broadcast,
        task_id: m.origin_task_id ?? m.task_id,
        from_agent_id: m.from_agent_id,
        from_name: nameOf(m.from_agent_name, m.from_agent_id),
        created_at: m.created_at,
        body: m.body,
        in_reply_to: m.in_reply_to,
        recipients: [],
      };
      entries.set(key, entry);
    }
    entry.recipients.push({
      task_id: m.task_id,
      agent_id: m.to_agent_id,
      name: nameOf(m.to_agent_name, m.to_agent_id),
      status: m.status,
      status_timestamp: m.status_timestamp,
      delivery: m.delivery,
      deliveries: m.deliveries,
    });
  }
  return [...entries.values()];
}

/** Whether the entry is, or carries, this message (a broadcast carries one copy per recipient). */
export const holdsTask = (entry: TimelineEntry, taskId: number): boolean =>
  entry.task_id === taskId || entry.recipients.some((r) => r.task_id === taskId);

/** True when the push was given up: the preview never reached the pane. */
export const notDelivered = (delivery: Delivery | null): boolean =>
  delivery !== null && (delivery.state === "skipped" || delivery.state === "failed");

export const allCanceled = (entry: TimelineEntry): boolean =>
  entry.recipients.length > 0 && entry.recipients.every((r) => r.status === "canceled");

export const ackTooltip = (r: RecipientState): string => `@${r.name} — ${r.status_timestamp}`;

export const undeliveredReason = (delivery: Delivery | null): string =>
  delivery?.error ?? delivery?.state ?? "";

export type TimelineItem =
  | { kind: "day"; key: string; label: string }
  | { kind: "entry"; key: string; entry: TimelineEntry };

/** The entries (oldest first) with a day separator before the first entry of each local day. */
export function withDaySeparators(entries: readonly TimelineEntry[], now: number): TimelineItem[] {
  const items: TimelineItem[] = [];
  let shownDay: string | null = null;
  for (const entry of entries) {
    const day = localDay(entry.created_at);
    if (day !== shownDay) {
      items.push({ kind: "day", key: `d${day}`, label: dayLabel(entry.created_at, now) });
      shownDay = day;
    }
    items.push({ kind: "entry", key: entry.key, entry });
  }
  return items;
}
