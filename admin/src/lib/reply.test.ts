import { describe, expect, it } from "vitest";
import { message } from "../test/fixtures";
import { addressed, NO_BROADCAST_REPLY, replyField, replyToEntry, replyToMessage } from "./reply";
import { groupTimeline } from "./timeline";

const ADMIN = 2;

describe("replyToMessage", () => {
  it("answers a message the Administrator received: to its sender", () => {
    const m = message({ task_id: 8, from_agent_id: 3, from_agent_name: "coder", to_agent_id: ADMIN });
    expect(replyToMessage(m, ADMIN)).toEqual({ taskId: 8, toAgentId: 3, toName: "coder" });
  });

  it("answers a message the Administrator sent: to its recipient", () => {
    const m = message({ task_id: 9, from_agent_id: ADMIN, to_agent_id: 4, to_agent_name: "reviewer" });
    expect(replyToMessage(m, ADMIN)).toEqual({ taskId: 9, toAgentId: 4, toName: "reviewer" });
  });

  it("offers nothing for other agents' messages, summaries, or without an Administrator", () => {
    expect(replyToMessage(message({ from_agent_id: 1, to_agent_id: 3 }), ADMIN)).toBeNull();
    expect(replyToMessage(message({ from_agent_id: ADMIN, to_agent_id: null, type: "broadcast_summary" }), ADMIN)).toBeNull();
    expect(replyToMessage(message({ from_agent_id: 3, to_agent_id: ADMIN }), undefined)).toBeNull();
  });
});

describe("replyToEntry", () => {
  it("answers a unicast entry of the Administrator's", () => {
    const [sent] = groupTimeline([message({ task_id: 5, from_agent_id: ADMIN, to_agent_id: 3 })]);
    expect(replyToEntry(sent!, ADMIN)).toEqual({ taskId: 5, toAgentId: 3, toName: "coder" });
  });

  it("answers a broadcast's copy to the Administrator, not its own broadcast", () => {
    const copies = [
      message({ task_id: 11, from_agent_id: 1, from_agent_name: "Director", to_agent_id: 3, origin_task_id: 10 }),
      message({ task_id: 12, from_agent_id: 1, from_agent_name: "Director", to_agent_id: ADMIN, origin_task_id: 10 }),
    ];
    const [received] = groupTimeline(copies);
    expect(replyToEntry(received!, ADMIN)).toEqual({ taskId: 12, toAgentId: 1, toName: "Director" });
    const own = copies.map((m) => ({ ...m, from_agent_id: ADMIN, to_agent_id: m.task_id === 12 ? 4 : 3 }));
    expect(replyToEntry(groupTimeline(own)[0]!, ADMIN)).toBeNull();
  });
});

describe("the reply state of a send", () => {
  it("adds in_reply_to to a unicast and refuses a broadcast", () => {
    const draft = { taskId: 8, toAgentId: 3, toName: "coder" };
    expect(replyField(3, draft)).toEqual({ ok: true, inReplyTo: 8 });
    expect(replyField(5, draft)).toEqual({ ok: true, inReplyTo: 8 }); // another recipient may be named
    expect(replyField("*", draft)).toEqual({ ok: false, error: NO_BROADCAST_REPLY });
    expect(replyField("*", null)).toEqual({ ok: true, inReplyTo: null });
  });

  it("addresses the draft to the other party, keeping what was typed", () => {
    expect(addressed("", "coder")).toBe("@coder ");
    expect(addressed("@reviewer  looks good", "coder")).toBe("@coder looks good");
    expect(addressed("@all @x hi", "code-reviewer")).toBe("@code-reviewer hi");
    expect(addressed("thanks @bob", "coder")).toBe("@coder thanks @bob");
  });
});
