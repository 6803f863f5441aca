import { renderToString } from "preact-render-to-string";
import { describe, expect, it } from "vitest";
import { PaneFrames } from "../lib/panes";
import { agent, message } from "../test/fixtures";
import { AgentDrawer } from "./AgentDrawer";
import { Composer } from "./Composer";
import { Grid, tileTitle } from "./Grid";
import { LivePane, PaneScreen } from "./LivePane";
import { MessageList } from "./MessageList";
import { Timeline } from "./Timeline";

const NOW = Date.parse("2026-11-29T12:10:00.000Z");
const AT = "2026-11-29T12:09:59.000000+00:00";
const ADMIN = 2;
const noop = (): void => {};

describe("PaneScreen", () => {
  it("renders the screen's colours as spans, its text escaped", () => {
    const frame = { agent_id: 3, ansi: "\x1b[32m$\x1b[0m echo <hi>", error: null, captured_at: AT };
    const html = renderToString(<PaneScreen frame={frame} name="coder" />);
    expect(html).toContain('aria-label="Live pane of coder"');
    expect(html).toContain('<span class="ansi-fg-2">$</span> echo &lt;hi&gt;</pre>');
  });

  it("says why there is no screen, and that it is still coming", () => {
    const gone = { agent_id: 3, ansi: null, error: "pane %4 not found", captured_at: AT };
    expect(renderToString(<PaneScreen frame={gone} name="coder" />)).toContain("pane %4 not found");
    expect(renderToString(<PaneScreen frame={undefined} name="coder" />)).toContain("Connecting to the pane");
  });

  it("shows the frame the store holds for its agent", () => {
    const frames = new PaneFrames();
    frames.set({ agent_id: 3, ansi: "ready", error: null, captured_at: AT });
    expect(renderToString(<LivePane frames={frames} agentId={3} name="coder" />)).toContain(">ready</pre>");
  });
});

describe("Grid", () => {
  it("titles each member's tile with name · status · unread", () => {
    const roster = [
      agent({ agent_id: 1, name: "Director", kind: "director" }),
      agent({ agent_id: 3, name: "coder", agent_status: "working", unread: 2 }),
      agent({ agent_id: 4, name: "reviewer", agent_status: "waiting" }),
    ];
    expect(tileTitle(roster[1]!)).toBe("coder · working · 2 unread");
    const html = renderToString(<Grid agents={roster} frames={new PaneFrames()} selectedId={4} onOpen={noop} />);
    expect(html.match(/data-testid="grid-tile"/g)).toHaveLength(2);
    expect(html).toContain("coder · working · 2 unread");
    expect(html).toContain('class="tile is-waiting is-selected"');
    expect(html).not.toContain("Director ·");
  });

  it("says so when no member has a pane", () => {
    const html = renderToString(<Grid agents={[]} frames={new PaneFrames()} selectedId={null} onOpen={noop} />);
    expect(html).toContain("No member has a pane");
  });
});

describe("replies", () => {
  it("marks a reply in the timeline and offers Reply on the Administrator's messages", () => {
    const messages = [
      message({ task_id: 5, from_agent_id: 3, from_agent_name: "coder", to_agent_id: ADMIN, to_agent_name: "Administrator", in_reply_to: 4, created_at: AT }),
      message({ task_id: 6, from_agent_id: 1, to_agent_id: 3, created_at: AT }),
    ];
    const html = renderToString(
      <Timeline messages={messages} scrollSignal={0} now={NOW} administratorId={ADMIN} onReply={noop} />,
    );
    expect(html).toContain("re: #4");
    expect(html.match(/aria-label="Reply to #5"/g)).toHaveLength(1);
    expect(html).not.toContain("Reply to #6");
  });

  it("offers no Reply without a handler (no Administrator, or a deleted fleet)", () => {
    const messages = [message({ task_id: 5, from_agent_id: 3, to_agent_id: ADMIN, created_at: AT })];
    expect(renderToString(<Timeline messages={messages} scrollSignal={0} now={NOW} administratorId={ADMIN} />)).not.toContain(
      "Reply to",
    );
  });

  it("offers Reply in the drawer's lists too", () => {
    const inbox = [message({ task_id: 9, from_agent_id: ADMIN, to_agent_id: 3, in_reply_to: 8, created_at: AT })];
    const html = renderToString(
      <MessageList messages={inbox} direction="inbox" now={NOW} administratorId={ADMIN} onReply={noop} focusTaskId={9} />,
    );
    expect(html).toContain('aria-label="Reply to #9"');
    expect(html).toContain("re: #8");
    expect(html).toContain('class="message-row is-focused"');
  });

  it("shows the composer's reply chip, which can be cleared", () => {
    const reply = { taskId: 12, toAgentId: 3, toName: "coder" };
    const html = renderToString(
      <Composer recipients={[{ agent_id: 3, name: "coder" }]} enabled reply={reply} onClearReply={noop} onSend={async () => {}} />,
    );
    expect(html).toContain('data-testid="reply-chip"');
    expect(html).toContain("replying to <strong>#12</strong> · @coder");
    expect(html).toContain('aria-label="Clear reply"');
    const plain = renderToString(<Composer recipients={[]} enabled onSend={async () => {}} />);
    expect(plain).not.toContain("reply-chip");
  });
});

describe("AgentDrawer", () => {
  it("shows the member's coding agent, status, unread count and live pane", () => {
    const frames = new PaneFrames();
    frames.set({ agent_id: 3, ansi: "\x1b[1mbuilding\x1b[0m", error: null, captured_at: AT });
    const coder = agent({ agent_status: "idle", unread: 4, coding_agent: "codex" });
    const html = renderToString(
      <AgentDrawer
        fleetId={1}
        agentId={3}
        agent={coder}
        rosterLoaded
        version={0}
        now={NOW}
        onClose={noop}
        onPatchMonitor={async () => {}}
        onFleetMissing={noop}
        frames={frames}
      />,
    );
    expect(html).toContain('<dd data-testid="coding-agent">codex</dd>');
    expect(html).toContain('<dd data-testid="agent-status">idle</dd>');
    expect(html).toContain('<dd data-testid="unread">4</dd>');
    expect(html).toContain('<span class="ansi-bold">building</span>');
  });

  it("has no pane section for an agent without a pane", () => {
    const admin = agent({ agent_id: 2, kind: "administrator", coding_agent: null });
    const html = renderToString(
      <AgentDrawer
        fleetId={1}
        agentId={2}
        agent={admin}
        rosterLoaded
        version={0}
        now={NOW}
        onClose={noop}
        onPatchMonitor={async () => {}}
        onFleetMissing={noop}
        frames={new PaneFrames()}
      />,
    );
    expect(html).not.toContain("pane-section");
    expect(html).not.toContain("coding-agent");
  });
});
