import { useLayoutEffect, useRef } from "preact/hooks";
import type { Message } from "../api/types";
import {
  ackTooltip,
  allCanceled,
  groupTimeline,
  notDelivered,
  undeliveredReason,
  type RecipientState,
  type TimelineEntry,
  withDaySeparators,
} from "../lib/timeline";
import { formatDateTime, formatHourMinute, relativeTime } from "../lib/time";
import { Avatar } from "./Avatar";
import { DeliveryAttempts } from "./Deliveries";
import { UsersIcon } from "./icons";

interface Props {
  messages: Message[] | null;
  /** Bumped to force a jump to the newest entry (e.g. after sending). */
  scrollSignal: number;
  now: number;
}

const NEAR_BOTTOM_PX = 96;

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

function Entry({ entry, now }: { entry: TimelineEntry; now: number }) {
  const canceled = allCanceled(entry);
  return (
    <li class={`entry${entry.broadcast ? " is-broadcast" : ""}`} data-task-id={entry.task_id}>
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

export function Timeline({ messages, scrollSignal, now }: Props) {
  const scroller = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const entries = messages ? groupTimeline(messages) : null;
  const lastKey = entries?.at(-1)?.key ?? "";

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
                <Entry key={item.key} entry={item.entry} now={now} />
              ),
            )}
          </ol>
        )}
      </div>
    </section>
  );
}
