import type { Message } from "../api/types";
import { formatDateTime, relativeTime } from "../lib/time";
import { StatusBadge } from "./Badges";
import { DeliveryAttempts } from "./Deliveries";

interface Props {
  messages: Message[];
  direction: "inbox" | "sent";
  now: number;
}

const counterpart = (m: Message, direction: Props["direction"]): string =>
  direction === "inbox"
    ? `from ${m.from_agent_name ?? `agent ${m.from_agent_id}`}`
    : `to ${m.to_agent_name ?? (m.to_agent_id === null ? "everyone" : `agent ${m.to_agent_id}`)}`;

export function MessageList({ messages, direction, now }: Props) {
  if (messages.length === 0) return <p class="muted list-empty">No messages</p>;
  return (
    <ul class="message-list">
      {messages.map((m) => (
        <li key={m.task_id} class="message-row" data-task-id={m.task_id}>
          <div class="message-row-head">
            <span class="message-peer">{counterpart(m, direction)}</span>
            <StatusBadge status={m.status} />
            <time dateTime={m.created_at} title={formatDateTime(m.created_at)}>
              {relativeTime(m.created_at, now)}
            </time>
          </div>
          <p class={`message-body${m.status === "canceled" ? " is-canceled" : ""}`}>{m.body}</p>
          <DeliveryAttempts deliveries={m.deliveries} />
        </li>
      ))}
    </ul>
  );
}
