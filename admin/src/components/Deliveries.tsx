import type { Delivery } from "../api/types";
import { attemptOutcome } from "../lib/agentStatus";
import { formatDateTime } from "../lib/time";

const attemptTitle = (d: Delivery): string =>
  [
    `attempt ${d.attempt}`,
    d.transport && `over ${d.transport}`,
    d.attempted_at && `at ${formatDateTime(d.attempted_at)}`,
    d.confirmed_at && `taken in ${formatDateTime(d.confirmed_at)}`,
  ]
    .filter(Boolean)
    .join(", ");

/** Each push attempt of one message: its channel and whether the agent confirmed it. */
export function DeliveryAttempts({ deliveries }: { deliveries: readonly Delivery[] }) {
  if (deliveries.length === 0) return null;
  return (
    <ol class="attempts" aria-label="Delivery attempts">
      {deliveries.map((d) => (
        <li
          key={d.attempt}
          class={`attempt attempt-${d.state}${d.confirmed_at ? " is-confirmed" : ""}`}
          title={attemptTitle(d)}
        >
          {d.channel && <span class="attempt-channel">{d.channel}</span>}
          <span class="attempt-outcome">{attemptOutcome(d)}</span>
        </li>
      ))}
    </ol>
  );
}
