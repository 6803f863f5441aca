import { useLayoutEffect, useRef, useState } from "preact/hooks";
import type { Message } from "../api/types";
import {
  ackTooltip,
  allCanceled,
  groupTimeline,
  holdsTask,
  notDelivered,
  undeliveredReason,
  type RecipientState,
  type TimelineEntry,
  withDaySeparators,
} from "../lib/timeline";
import type { ReplyDraft } from "../lib/reply";
import { replyToEntry } from "../lib/reply";
import { formatDateTime, formatHourMinute, relativeTime } from "../lib/time";
import { Avatar } from "./Avatar";
import { DeliveryAttempts } from "./Deliveries";
import { UsersIcon } from "./icons";
import { ReplyButton, ReplyMarker } from "./Replies";

/** A message to bring into view; `seq` changes on every request, even for the same message. */
export interface Focus {
  taskId: number;
  seq: number;
}

interface Props {
  messages: Message[] | null;
  /** Bumped to force a jump to the newest entry (e.g. after sending). */
  scrollSignal: number;
  now: number;
  /** The Administrator's id: its messages, sent or received, can be answered. */
  administratorId?: number | undefined;
  onReply?: ((draft: ReplyDraft) => void) | undefined;
  focus?: Focus | null;
  /** A "re: #N" marker asks to bring message N into view. */
  onFocus?: ((taskId: number) => void) | undefined;
}

const NEAR_BOTTOM_PX = 96;

interface EntryProps {
  entry: TimelineEntry;
  now: number;
  focused: boolean;
  reply: ReplyDraft | null;
  onReply?: ((draft: ReplyDraft) => void) | undefined;
  onFocus?: ((taskId: number) => void) | undefined;
}

function Recipient({ r }: { r: RecipientState }) {
  const canceled = r.status === "canceled";
  return (
    <span class="recipient">
      <span class={`chip mention${canceled ? " is-canceled" : ""}`} title={canceled ? "canceled" : undefined}>
        @{r.name}
      </span>
      {r.status === "completed" && (
        <span class="chip ack" title={ackTooltip(r)}>
          [ack]
        </span>
      )}
      {notDelivered(r.delivery) && (
        <span class="not-delivered" title={undeliveredReason(r.delivery)}>
          not delivered
        </span>
      )}
      {/* an attempt that never reached a channel is the "not delivered" above */}
      <DeliveryAttempts deliveries={r.deliveries.filter((d) => d.channel !== null)} />
    </span>
  );
}

function Entry({ entry, now, focused, reply, onReply, onFocus }: EntryProps) {
  const canceled = allCanceled(entry);
  return (
    <li
      class={`entry${entry.broadcast ? " is-broadcast" : ""}${focused ? " is-focused" : ""}`}
      data-task-id={entry.task_id}
      data-task-ids={entry.recipients.map((r) => r.task_id).join(" ")}
    >
      <Avatar agentId={entry.from_agent_id} name={entry.from_name} />
      <div class="entry-main">
        <div class="entry-head">
          <strong class="entry-from">{entry.from_name}</strong>
          <span class="arrow" aria-hidden="true">
            →
          </span>
          <span class="visually-hidden">to</span>
          {entry.broadcast && (
            <span class="chip broadcast-tag" title="Broadcast">
              <UsersIcon /> broadcast
            </span>
          )}
          <span class="recipients">
            {entry.recipients.map((r) => (
              <Recipient key={r.task_id} r={r} />
            ))}
          </span>
          {entry.in_reply_to !== null && <ReplyMarker taskId={entry.in_reply_to} onFocus={onFocus} />}
          {reply && onReply && <ReplyButton draft={reply} onReply={onReply} />}
          <time
            class="entry-time"
            dateTime={entry.created_at}
            title={`${relativeTime(entry.created_at, now)} · ${formatDateTime(entry.created_at)}`}
          >
            {formatHourMinute(entry.created_at)}
          </time>
        </div>
        <p class={`entry-body${canceled ? " is-canceled" : ""}`}>{entry.body}</p>
      </div>
    </li>
  );
}

export function Timeline({ messages, scrollSignal, now, administratorId, onReply, focus = null, onFocus }: Props) {
  const scroller = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const [focusedKey, setFocusedKey] = useState<string | null>(null);
  const entries = messages ? groupTimeline(messages) : null;
  const lastKey = entries?.at(-1)?.key ?? "";
  const loaded = entries !== null;

  useLayoutEffect(() => {
    if (focus === null || !entries) return;
    const entry = entries.find((e) => holdsTask(e, focus.taskId));
    setFocusedKey(entry?.key ?? null);
    if (!entry) return;
    stick.current = false; // stay on the message when the list refreshes
    const el = scroller.current?.querySelector(`[data-task-id="${entry.task_id}"]`);
    el?.scrollIntoView({ block: "center" });
  }, [focus?.seq, loaded]);

  useLayoutEffect(() => {
    stick.current = true;
  }, [scrollSignal]);

  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [lastKey, entries?.length, scrollSignal]);

  const onScroll = (): void => {
    const el = scroller.current;
    if (el) stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_BOTTOM_PX;
  };

  return (
    <section class="timeline" aria-label="Timeline">
      <div class="timeline-scroll" ref={scroller} onScroll={onScroll}>
        {entries === null && (
          <div class="timeline-empty" aria-busy="true">
            <span class="skeleton skeleton-line" />
            <span class="skeleton skeleton-line" />
          </div>
        )}
        {entries !== null && entries.length === 0 && (
          <div class="timeline-empty">
            <p>No messages yet</p>
          </div>
        )}
        {entries !== null && entries.length > 0 && (
          <ol class="entries">
            {withDaySeparators(entries, now).map((item) =>
              item.kind === "day" ? (
                <li key={item.key} class="day-separator" role="separator" aria-label={item.label}>
                  <span>{item.label}</span>
                </li>
              ) : (
                <Entry
                  key={item.key}
                  entry={item.entry}
                  now={now}
                  focused={item.key === focusedKey}
                  reply={onReply ? replyToEntry(item.entry, administratorId) : null}
                  onReply={onReply}
                  onFocus={onFocus}
                />
              ),
            )}
          </ol>
        )}
      </div>
    </section>
  );
}
