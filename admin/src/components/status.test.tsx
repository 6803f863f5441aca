import { renderToString } from "preact-render-to-string";
import { describe, expect, it } from "vitest";
import type { Message } from "../api/types";
import { agent, delivery } from "../test/fixtures";
import { AgentDrawer } from "./AgentDrawer";
import { AgentStatusBadge } from "./Badges";
import { DeliveryAttempts } from "./Deliveries";
import { MessageList } from "./MessageList";
import { Sidebar } from "./Sidebar";
import { Timeline } from "./Timeline";

const NOW = Date.parse("2026-11-29T12:10:00.000Z");
const ago = (seconds: number): string => new Date(NOW - seconds * 1000).toISOString();
// a local wall-clock time, so the expected text does not depend on the machine's time zone
const at120304 = new Date(2026, 10, 29, 12, 3, 4).toISOString();

const text = (html: string): string =>
  html
    .replace(/<[^>]+>/g, "")
    .replace(/&#x27;/g, "'")
    .replace(/&amp;/g, "&");

/** Each list item's markup (items do not nest here). */
const items = (html: string): string[] => [...html.matchAll(/<li[^>]*>(.*?)<\/li>/gs)].map((m) => m[0]);

describe("AgentStatusBadge", () => {
  it("shows the status with its age", () => {
    const html = renderToString(<AgentStatusBadge status="working" since={ago(130)} now={NOW} />);
    expect(text(html)).toBe("agent working · 2m");
    expect(html).toContain('data-agent-status="working"');
    expect(html).toContain('title="The agent is in a turn"');
    expect(html).not.toContain("is-alert");
  });

  it("shows the bare status when its start is not known", () => {
    const html = renderToString(<AgentStatusBadge status="unknown" since={null} now={NOW} />);
    expect(text(html)).toBe("agent unknown");
  });

  it("makes waiting stand out: a person is needed", () => {
    const html = renderToString(<AgentStatusBadge status="waiting" since={ago(45)} now={NOW} />);
    expect(html).toContain("is-alert");
    expect(text(html)).toBe("!needs a person: waiting · 45s");
  });
});

describe("Sidebar", () => {
  it("puts a status badge beside each member, none beside agents without a pane", () => {
    const agents = [
      agent({ agent_id: 1, name: "Director" }),
      agent({ agent_id: 3, name: "coder", agent_status: "idle", agent_status_since: ago(600) }),
      agent({ agent_id: 4, name: "reviewer", agent_status: "waiting", agent_status_since: ago(5) }),
    ];
    const html = renderToString(<Sidebar agents={agents} selectedId={null} now={NOW} onSelect={() => {}} />);
    const rows = items(html);
    expect(rows).toHaveLength(3);
    expect(rows[0]).not.toContain("badge-agent");
    expect(text(rows[1]!)).toContain("idle · 10m");
    expect(rows[2]).toContain("agent-row is-waiting");
    expect(text(rows[2]!)).toContain("waiting · 5s");
  });
});

describe("AgentDrawer", () => {
  it("shows the member's status badge in its head", () => {
    const html = renderToString(
      <AgentDrawer
        fleetId={1}
        agentId={3}
        agent={agent({ agent_status: "exited", agent_status_since: null })}
        rosterLoaded
        version={0}
        now={NOW}
        onClose={() => {}}
        onPatchMonitor={async () => {}}
        onFleetMissing={() => {}}
      />,
    );
    const head = html.slice(html.indexOf("drawer-badges"), html.indexOf("drawer-body"));
    expect(head).toContain('data-agent-status="exited"');
    expect(text(head)).toContain("agent exited");
  });
});

const fellBack = [
  delivery({ attempt: 1, channel: "claude-hook", state: "skipped", transport: null, error: "not-taken" }),
  delivery({ attempt: 2, channel: "keys", state: "sent", confirmed_at: at120304 }),
];

describe("DeliveryAttempts", () => {
  it("lists each attempt's channel and whether and when the agent confirmed it", () => {
    const html = renderToString(<DeliveryAttempts deliveries={fellBack} />);
    expect(items(html).map(text)).toEqual(["claude-hookskipped: not-taken", "keysconfirmed 12:03:04"]);
    expect(html).toContain("attempt-sent is-confirmed");
  });

  it("says unconfirmed for a sent attempt the agent has not confirmed", () => {
    const html = renderToString(<DeliveryAttempts deliveries={[delivery({ channel: "opencode-http" })]} />);
    expect(text(html)).toBe("opencode-httpunconfirmed");
    expect(html).not.toContain("is-confirmed");
  });

  it("names no channel for an attempt that never reached one", () => {
    const refused = delivery({ channel: null, state: "skipped", error: "not-agent:bash" });
    const html = renderToString(<DeliveryAttempts deliveries={[refused]} />);
    expect(text(html)).toBe("skipped: not-agent:bash");
  });

  it("renders nothing without attempts", () => {
    expect(renderToString(<DeliveryAttempts deliveries={[]} />)).toBe("");
  });
});

const message = (over: Partial<Message> = {}): Message => ({
  task_id: 7,
  from_agent_id: 1,
  from_agent_name: "Director",
  to_agent_id: 3,
  to_agent_name: "coder",
  type: "unicast",
  status: "input_required",
  created_at: ago(60),
  status_timestamp: ago(60),
  origin_task_id: null,
  body: "hello",
  delivery: fellBack[1]!,
  deliveries: fellBack,
  sender_verified: false,
  in_reply_to: null,
  thread_id: 7,
  ...over,
});

describe("where messages are listed", () => {
  it("the drawer's message list shows every attempt", () => {
    const html = renderToString(<MessageList messages={[message()]} direction="inbox" now={NOW} />);
    expect(text(html)).toContain("claude-hookskipped: not-taken");
    expect(text(html)).toContain("keysconfirmed 12:03:04");
  });

  it("the timeline shows every attempt beside its recipient", () => {
    const html = renderToString(<Timeline messages={[message()]} scrollSignal={0} now={NOW} />);
    const recipient = html.slice(html.indexOf('class="recipient"'));
    expect(text(recipient)).toContain("claude-hookskipped: not-taken");
    expect(text(recipient)).toContain("keysconfirmed 12:03:04");
  });

  it("the timeline shows clock times, the age in their tooltip, and a separator per day", () => {
    const yesterday = new Date(2026, 10, 28, 23, 58).toISOString();
    const today = new Date(2026, 10, 29, 0, 7).toISOString();
    const now = new Date(2026, 10, 29, 0, 10).getTime();
    const list = [message({ task_id: 9, created_at: today }), message({ task_id: 8, created_at: yesterday })];
    const html = renderToString(<Timeline messages={list} scrollSignal={0} now={now} />);
    const marks = /class="day-separator"[^>]*><span>([^<]*)<|<time class="entry-time"[^>]*>([^<]*)</g;
    const shown = [...html.matchAll(marks)].map((m) => (m[1] !== undefined ? `[${m[1]}]` : m[2]));
    expect(shown).toEqual(["[Yesterday]", "23:58", "[Today]", "00:07"]);
    expect(html).toMatch(/<time[^>]*title="3m ago · [^"]+"[^>]*>00:07<\/time>/);
  });

  it("the timeline leaves a push that reached no channel to its not-delivered mark", () => {
    const refused = delivery({ channel: null, state: "skipped", error: "not-agent:bash" });
    const html = renderToString(
      <Timeline messages={[message({ delivery: refused, deliveries: [refused] })]} scrollSignal={0} now={NOW} />,
    );
    expect(html).toContain("not-delivered");
    expect(html).not.toContain('class="attempts"');
  });
});
