// Live updates: the server-sent event stream `GET /api/events?fleet_id=<id>[&watch=3,5]`.
// Read with fetch rather than EventSource so the request can carry the same headers as every
// other call (X-Fleet-Id and, off loopback, the access token). `watch` names the agents whose
// live panes the stream also sends (`event: pane`); another list means another stream.
import { fleetHeaders } from "./client";
import { parsePaneEvent } from "../lib/panes";
import { EventStreamParser } from "../lib/sse";
import type { PaneFrame } from "./types";

export type LiveEvent = "message" | "state";

export interface LiveHandlers {
  onEvent: (kind: LiveEvent) => void;
  onConnected: (connected: boolean) => void;
  onPane?: (frame: PaneFrame) => void;
}

export function eventsUrl(fleetId: number, watch: readonly number[] = []): string {
  const base = `/api/events?fleet_id=${fleetId}`;
  return watch.length ? `${base}&watch=${watch.join(",")}` : base;
}

const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 30000;

/** Keeps the stream open (reconnecting with back-off) until the returned function is called. */
export function subscribeLive(
  fleetId: number,
  handlers: LiveHandlers,
  watch: readonly number[] = [],
): () => void {
  const controller = new AbortController();
  let retry = RETRY_MIN_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const connect = async (): Promise<void> => {
    try {
      const res = await fetch(eventsUrl(fleetId, watch), {
        headers: { Accept: "text/event-stream", ...fleetHeaders(fleetId) },
        signal: controller.signal,
        cache: "no-store",
      });
      const type = res.headers.get("Content-Type") ?? "";
      if (!res.ok || !res.body || !type.startsWith("text/event-stream")) {
        throw new Error(`event stream unavailable (${res.status})`);
      }
      handlers.onConnected(true);
      retry = RETRY_MIN_MS;
      const parser = new EventStreamParser();
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const ev of parser.push(value)) {
          if (ev.event === "message" || ev.event === "state") handlers.onEvent(ev.event);
          else if (ev.event === "pane") {
            const frame = parsePaneEvent(ev.data);
            if (frame) handlers.onPane?.(frame);
          }
        }
      }
    } catch {
      // network error, abort or no stream: retry below unless closed
    }
    if (controller.signal.aborted) return;
    handlers.onConnected(false);
    timer = setTimeout(() => void connect(), retry);
    retry = Math.min(retry * 2, RETRY_MAX_MS);
  };

  void connect();
  return () => {
    controller.abort();
    if (timer !== undefined) clearTimeout(timer);
  };
}
