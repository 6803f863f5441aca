import { describe, expect, it } from "vitest";
import type { Message } from "../api/types";
import { delivery } from "../test/fixtures";
import {
  ackTooltip,
  allCanceled,
  groupTimeline,
  notDelivered,
  undeliveredReason,
  withDaySeparators,
} from "./timeline";

let nextId = 1;
function msg(over: Partial<Message>): Message {
  const task_id = over.task_id ?? nextId++;
  return {
    task_id,
    from_agent_id: 2,
    from_agent_name: "Administrator",
    to_agent_id: 3,
    to_agent_name: "coder",
    type: "unicast",
    status: "input_required",
    created_at: `2026-11-29T08:00:${String(task_id).padStart(2, "0")}.000000+00:00`,
    status_timestamp: `2026-11-29T08:00:${String(task_id).padStart(2, "0")}.000000+00:00`,
    origin_task_id: null,
    body: `body ${task_id}`,
    delivery: delivery(),
    deliveries: [delivery()],
    sender_verified: false,
    in_reply_to: null,
    thread_id: task_id,
    ...over,
  };
}

describe("groupTimeline", () => {
  it("orders oldest first from the API's newest-first list", () => {
    const list = [msg({ task_id: 3 }), msg({ task_id: 2 }), msg({ task_id: 1 })];
    expect(groupTimeline(list).map((e) => e.task_id)).toEqual([1, 2, 3]);
  });

  it("groups broadcast deliveries by origin into one entry with every recipient", () => {
    const list = [
      msg({ task_id: 9, body: "after" }),
      msg({ task_id: 8, origin_task_id: 5, to_agent_id: 4, to_agent_name: "reviewer", body: "hi all" }),
      msg({ task_id: 6, origin_task_id: 5, to_agent_id: 1, to_agent_name: "Director", body: "hi all" }),
      msg({ task_id: 7, origin_task_id: 5, to_agent_id: 3, to_agent_name: "coder", body: "hi all" }),
      msg({ task_id: 4, body: "before" }),
    ];
    const entries = groupTimeline(list);
    expect(entries.map((e) => e.key)).toEqual(["t4", "b5", "t9"]);
    const group = entries[1]!;
    expect(group.broadcast).toBe(true);
    expect(group.task_id).toBe(5);
    expect(group.body).toBe("hi all");
    expect(group.recipients.map((r) => r.name)).toEqual(["Director", "coder", "reviewer"]);
  });

  it("drops broadcast summaries and breaks timestamp ties by id", () => {
    const ts = "2026-11-29T08:00:00.000000+00:00";
    const list = [
      msg({ task_id: 12, created_at: ts }),
      msg({ task_id: 11, created_at: ts }),
      msg({ task_id: 10, type: "broadcast_summary", to_agent_id: null, origin_task_id: 10 }),
    ];
    expect(groupTimeline(list).map((e) => e.task_id)).toEqual([11, 12]);
  });

  it("names deregistered or unknown agents", () => {
    const [entry] = groupTimeline([msg({ from_agent_name: null, from_agent_id: 7, to_agent_name: null })]);
    expect(entry?.from_name).toBe("agent 7");
    expect(entry?.recipients[0]?.name).toBe("agent 3");
  });
});

describe("entry helpers", () => {
  it("strikes an entry only when every delivery is canceled", () => {
    const [one] = groupTimeline([msg({ status: "canceled" })]);
    expect(allCanceled(one!)).toBe(true);
    const [mixed] = groupTimeline([
      msg({ origin_task_id: 50, status: "canceled" }),
      msg({ origin_task_id: 50, status: "completed" }),
    ]);
    expect(allCanceled(mixed!)).toBe(false);
  });

  it("builds the ack tooltip from the recipient and ack time", () => {
    const [entry] = groupTimeline([
      msg({ status: "completed", status_timestamp: "2026-11-29T09:00:00.000000+00:00" }),
    ]);
    expect(ackTooltip(entry!.recipients[0]!)).toBe("@coder — 2026-11-29T09:00:00.000000+00:00");
  });

  it("marks skipped and failed pushes as not delivered, with the reason", () => {
    const skipped = delivery({ state: "skipped", transport: null, error: "not-agent:bash" });
    expect(notDelivered(skipped)).toBe(true);
    expect(undeliveredReason(skipped)).toBe("not-agent:bash");
    expect(notDelivered(delivery({ state: "failed" }))).toBe(true);
    expect(notDelivered(delivery({ state: "pending", transport: null }))).toBe(false);
    expect(notDelivered(delivery())).toBe(false);
    expect(notDelivered(null)).toBe(false);
  });
});

describe("withDaySeparators", () => {
  const at = (d: number, h: number): string => new Date(2026, 10, d, h, 0).toISOString();
  const now = new Date(2026, 10, 30, 12, 0).getTime();
  const shape = (items: ReturnType<typeof withDaySeparators>): string[] =>
    items.map((i) => (i.kind === "day" ? `[${i.label}]` : `#${i.entry.task_id}`));

  it("puts one separator before the first message of each local day", () => {
    const list = [
      msg({ task_id: 40, created_at: at(30, 9) }),
      msg({ task_id: 31, created_at: at(29, 23) }),
      msg({ task_id: 30, created_at: at(29, 0) }),
      msg({ task_id: 20, created_at: at(27, 8) }),
    ];
    expect(shape(withDaySeparators(groupTimeline(list), now))).toEqual([
      "[Fri, Nov 27, 2026]",
      "#20",
      "[Yesterday]",
      "#30",
      "#31",
      "[Today]",
      "#40",
    ]);
  });

  it("gives every item its own key and nothing for no messages", () => {
    const list = [msg({ task_id: 51, created_at: at(30, 8) }), msg({ task_id: 50, created_at: at(29, 8) })];
    const keys = withDaySeparators(groupTimeline(list), now).map((i) => i.key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(withDaySeparators([], now)).toEqual([]);
  });
});
