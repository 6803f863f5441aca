import { useLayoutEffect, useRef } from "preact/hooks";
import type { Message } from "../api/types";
import type { ReplyDraft } from "../lib/reply";
import { replyToMessage } from "../lib/reply";
import { formatDateTime, relativeTime } from "../lib/time";
import { StatusBadge } from "./Badges";
import { DeliveryAttempts } from "./Deliveries";
import { ReplyButton, ReplyMarker } from "./Replies";

interface Props {
  messages: Message[];
  direction: "inbox" | "sent";
  now: number;
  /** The Administrator's id: its messages, sent or received, can be answered. */
  administratorId?: number | undefined;
  onReply?: ((draft: ReplyDraft) => void) | undefined;
  /** A message to bring into view and mark (a search hit). */
  focusTaskId?: number | null;
}

const counterpart = (m: Message, direction: Props["direction"]): string =>
  direction === "inbox"
    ? `from ${m.from_agent_name ?? `agent ${m.from_agent_id}`}`
    : `to ${m.to_agent_name ?? (m.to_agent_id === null ? "everyone" : `agent ${m.to_agent_id}`)}`;

export function MessageList({ messages, direction, now, administratorId, onReply, focusTaskId = null }: Props) {
  const list = useRef<HTMLUListElement>(null);
  const shown = messages.some((m) => m.task_id === focusTaskId);

  useLayoutEffect(() => {
    if (focusTaskId === null || !shown) return;
    list.current?.querySelector(`[data-task-id="${focusTaskId}"]`)?.scrollIntoView({ block: "center" });
  }, [focusTaskId, shown]);

  if (messages.length === 0) return <p class="muted list-empty">No messages</p>;
  return (
    <ul class="message-list" ref={list}>
      {messages.map((m) => {
        const reply = onReply ? replyToMessage(m, administratorId) : null;
        return (
          <li
            key={m.task_id}
            class={`message-row${m.task_id === focusTaskId ? " is-focused" : ""}`}
            data-task-id={m.task_id}
          >
            <div class="message-row-head">
              <span class="message-peer">{counterpart(m, direction)}</span>
              <StatusBadge status={m.status} />
              {m.in_reply_to !== null && <ReplyMarker taskId={m.in_reply_to} />}
              {reply && onReply && <ReplyButton draft={reply} onReply={onReply} />}
              <time dateTime={m.created_at} title={formatDateTime(m.created_at)}>
                {relativeTime(m.created_at, now)}
              </time>
            </div>
            <p class={`message-body${m.status === "canceled" ? " is-canceled" : ""}`}>{m.body}</p>
            <DeliveryAttempts deliveries={m.deliveries} />
          </li>
        );
      })}
    </ul>
  );
}
