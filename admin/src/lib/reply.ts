// Replying as the Administrator: only to a message it sent or received (the server's rule),
// addressed to the other party, never as a broadcast.
import type { Message } from "../api/types";
import type { TimelineEntry } from "./timeline";

export interface ReplyDraft {
  /** The message answered: the new one joins its thread (`in_reply_to`). */
  taskId: number;
  toAgentId: number;
  toName: string;
}

export const NO_BROADCAST_REPLY = "A reply goes to one agent: clear the reply to broadcast";

/** The reply to one message, or null when the Administrator is not one of its two ends. */
export function replyToMessage(m: Message, administratorId: number | undefined): ReplyDraft | null {
  if (administratorId === undefined || m.type !== "unicast" || m.to_agent_id === null) return null;
  if (m.from_agent_id === administratorId && m.to_agent_id !== administratorId) {
    return { taskId: m.task_id, toAgentId: m.to_agent_id, toName: m.to_agent_name ?? `agent ${m.to_agent_id}` };
  }
  if (m.to_agent_id === administratorId && m.from_agent_id !== administratorId) {
    return { taskId: m.task_id, toAgentId: m.from_agent_id, toName: m.from_agent_name ?? `agent ${m.from_agent_id}` };
  }
  return null;
}

/** The reply to a timeline entry: to the one recipient of what the Administrator sent, or to
 * the sender of what it received (a broadcast's copy to it included). */
export function replyToEntry(entry: TimelineEntry, administratorId: number | undefined): ReplyDraft | null {
  if (administratorId === undefined) return null;
  if (entry.from_agent_id === administratorId) {
    const [only, ...more] = entry.recipients;
    if (entry.broadcast || !only || more.length > 0 || only.agent_id === null) return null;
    return { taskId: only.task_id, toAgentId: only.agent_id, toName: only.name };
  }
  const mine = entry.recipients.find((r) => r.agent_id === administratorId);
  return mine ? { taskId: mine.task_id, toAgentId: entry.from_agent_id, toName: entry.from_name } : null;
}

/** What a send adds for the draft: `in_reply_to`, or why it cannot go (a broadcast). */
export function replyField(
  to: number | "*",
  draft: ReplyDraft | null,
): { ok: true; inReplyTo: number | null } | { ok: false; error: string } {
  if (draft === null) return { ok: true, inReplyTo: null };
  if (to === "*") return { ok: false, error: NO_BROADCAST_REPLY };
  return { ok: true, inReplyTo: draft.taskId };
}

/** The composer's text addressed to `slug`: leading mentions replaced, the body kept. */
export function addressed(text: string, slug: string): string {
  return `@${slug} ${text.replace(/^\s*(?:@[A-Za-z0-9_-]+\s*)*/, "")}`;
}
