// `npm run dev:mock`: an in-memory stand-in for the `cafleet server` API (behavior spec §11.3), so
// the page can be worked on without Python. It keeps no state across restarts.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Plugin } from "vite";
import type { Agent, Delivery, Fleet, Message, MonitorRuntime } from "../src/api/types";

const iso = (offsetSeconds = 0): string => new Date(Date.now() + offsetSeconds * 1000).toISOString();

function seed() {
  const fleets: Fleet[] = [
    { fleet_id: 1, director_agent_id: 1, name: "my-project", created_at: iso(-86400), agent_count: 4, deleted_at: null },
    { fleet_id: 2, director_agent_id: 6, name: "docs-sprint", created_at: iso(-3600), agent_count: 2, deleted_at: null },
  ];
  const agent = (agent_id: number, name: string, extra: Partial<Agent> = {}): Agent => ({
    agent_id,
    name,
    description: `${name} agent`,
    status: "active",
    registered_at: iso(-80000),
    kind: "member",
    monitor: { interval_seconds: 720, last_ping_at: null, enabled: true },
    agent_status: null,
    agent_status_since: null,
    coding_agent: "claude",
    unread: 0,
    ...extra,
  });
  const agents: Agent[] = [
    agent(1, "Director", { kind: "director", description: "Root Director for this fleet", monitor: { interval_seconds: 180, last_ping_at: iso(-40), enabled: true } }),
    agent(2, "Administrator", { kind: "administrator", monitor: null, coding_agent: null, description: "Built-in administrator agent for fleet 1" }),
    agent(3, "coder", { description: "Writes code", agent_status: "working", agent_status_since: iso(-130) }),
    agent(4, "code reviewer", { description: "Reviews pull requests", monitor: { interval_seconds: 720, last_ping_at: null, enabled: false }, agent_status: "waiting", agent_status_since: iso(-45) }),
    agent(5, "old-helper", { status: "deregistered", monitor: null, coding_agent: null }),
  ];
  const fleetOf = new Map<number, number>([[1, 1], [2, 1], [3, 1], [4, 1], [5, 1]]);
  return { fleets, agents, fleetOf, messages: [] as Message[], nextTask: 1 };
}

type Db = ReturnType<typeof seed>;

function addMessage(
  db: Db,
  from: number,
  to: number | null,
  body: string,
  origin: number | null,
  inReplyTo: number | null = null,
): Message {
  const name = (id: number | null) => db.agents.find((a) => a.agent_id === id)?.name ?? null;
  const delivery: Delivery | null =
    to === null
      ? null
      : {
          state: to === 2 ? "skipped" : "sent",
          channel: to === 2 ? null : "keys",
          attempt: 1,
          transport: "tmux",
          error: to === 2 ? "no-placement" : null,
          attempted_at: iso(),
          confirmed_at: to === 3 ? iso() : null,
        };
  const taskId = db.nextTask++;
  const answered = db.messages.find((m) => m.task_id === inReplyTo);
  const m: Message = {
    task_id: taskId,
    from_agent_id: from,
    from_agent_name: name(from),
    to_agent_id: to,
    to_agent_name: name(to),
    type: to === null ? "broadcast_summary" : "unicast",
    status: to === null ? "completed" : "input_required",
    created_at: iso(),
    status_timestamp: iso(),
    origin_task_id: origin,
    body,
    delivery,
    deliveries: delivery ? [delivery] : [],
    sender_verified: false,
    in_reply_to: answered ? answered.task_id : null,
    thread_id: answered ? answered.thread_id : taskId,
  };
  db.messages.push(m);
  return m;
}

function broadcast(db: Db, from: number, body: string): Message {
  const summary = addMessage(db, from, null, "", null);
  summary.origin_task_id = summary.task_id;
  const targets = db.agents.filter((a) => a.status === "active" && a.kind !== "administrator" && a.agent_id !== from);
  summary.body = `Broadcast sent to ${targets.length} recipients`;
  for (const t of targets) addMessage(db, from, t.agent_id, body, summary.task_id);
  return summary;
}

function seedMessages(db: Db): void {
  addMessage(db, 1, 3, "Please implement the login form.", null);
  addMessage(db, 3, 1, "Done — PR #12 is ready for review.", null);
  const first = db.messages[0];
  if (first) Object.assign(first, { status: "completed", status_timestamp: iso(-30) });
  broadcast(db, 1, "Stand-up in 5 minutes.");
}

/** A made-up terminal screen with colours, a little different every second. */
function fakeScreen(agent: Agent): string {
  const t = new Date().toISOString().slice(11, 19);
  return [
    `\x1b[1;34m${agent.name}\x1b[0m \x1b[2m(${agent.coding_agent ?? "no agent"})\x1b[0m`,
    `\x1b[32m✓\x1b[0m 12 tests passed  \x1b[33m!\x1b[0m 1 warning`,
    `\x1b[38;5;208mbuilding\x1b[0m \x1b[38;2;120;160;255mstep 3/5\x1b[0m`,
    `\x1b[7m ${t} \x1b[0m <not markup> & more`,
  ].join("\n");
}

/** `«word»` around the first occurrence of the query in the body. */
function snippetOf(body: string, q: string): string {
  const at = body.toLowerCase().indexOf(q.toLowerCase());
  return at < 0 ? body : `${body.slice(0, at)}«${body.slice(at, at + q.length)}»${body.slice(at + q.length)}`;
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let raw = "";
  for await (const chunk of req) raw += String(chunk);
  return raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
}

export function mockApi(): Plugin {
  const db = seed();
  seedMessages(db);
  const streams = new Set<ServerResponse>();
  const emit = (event: "message" | "state"): void => {
    for (const res of streams) res.write(`event: ${event}\ndata: {}\n\n`);
  };
  const runtime: MonitorRuntime = {
    running: false, pid: null, host: null, tick_seconds: 5, last_tick_at: null, last_tick_age_seconds: null, started_at: null,
  };

  return {
    name: "cafleet-mock-api",
    configureServer(server) {
      server.middlewares.use("/api", (req, res) => {
        void (async () => {
          const url = new URL(req.url ?? "/", "http://mock");
          const send = (status: number, body: unknown): void => {
            res.statusCode = status;
            res.setHeader("Content-Type", "application/json");
            res.end(JSON.stringify(body));
          };
          if (url.pathname === "/fleets") return send(200, db.fleets);
          const fleetId = Number(req.headers["x-fleet-id"] ?? url.searchParams.get("fleet_id"));
          if (!db.fleets.some((f) => f.fleet_id === fleetId)) return send(404, { detail: "Fleet not found" });
          const inFleet = db.agents.filter((a) => db.fleetOf.get(a.agent_id) === fleetId);
          const visible = (m: Message) => m.type === "unicast" && inFleet.some((a) => a.agent_id === m.from_agent_id);
          const newest = (list: Message[]) => ({ messages: [...list].reverse().slice(0, 200) });

          if (url.pathname === "/events") {
            res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
            res.write(": connected\n\n");
            streams.add(res);
            const watched = (url.searchParams.get("watch") ?? "")
              .split(",")
              .map(Number)
              .flatMap((id) => inFleet.filter((a) => a.agent_id === id));
            const panes = setInterval(() => {
              for (const a of watched) {
                const frame = a.coding_agent
                  ? { fleet_id: fleetId, agent_id: a.agent_id, ansi: fakeScreen(a), captured_at: iso() }
                  : { fleet_id: fleetId, agent_id: a.agent_id, error: `agent ${a.agent_id} has no pane`, captured_at: iso() };
                res.write(`event: pane\ndata: ${JSON.stringify(frame)}\n\n`);
              }
            }, 1000);
            req.on("close", () => {
              clearInterval(panes);
              streams.delete(res);
            });
            return;
          }
          if (url.pathname === "/search") {
            const q = (url.searchParams.get("q") ?? "").trim();
            if (!q) return send(422, { detail: [{ msg: "q may not be empty" }] });
            const hits = db.messages
              .filter((m) => visible(m) && m.body.toLowerCase().includes(q.toLowerCase()))
              .reverse()
              .map((message) => ({ message, score: 1, snippet: snippetOf(message.body, q) }));
            return send(200, { hits });
          }
          if (url.pathname === "/agents") return send(200, { agents: inFleet });
          if (url.pathname === "/monitor") return send(200, runtime);
          if (url.pathname === "/timeline") return send(200, newest(db.messages.filter(visible)));
          if (url.pathname === "/messages/send" && req.method === "POST") {
            const body = await readJson(req);
            const text = typeof body["text"] === "string" ? body["text"] : "";
            if (!text.trim()) return send(400, { detail: "text may not be empty" });
            const admin = inFleet.find((a) => a.kind === "administrator");
            if (!admin) return send(400, { detail: "from_agent not in fleet" });
            if (body["to_agent_id"] === "*") {
              const summary = broadcast(db, admin.agent_id, text);
              emit("message");
              return send(200, { task_id: summary.task_id, status: "completed" });
            }
            const to = inFleet.find((a) => a.agent_id === body["to_agent_id"] && a.status === "active");
            if (!to) return send(404, { detail: "Agent not found" });
            const replyTo = typeof body["in_reply_to"] === "number" ? body["in_reply_to"] : null;
            const m = addMessage(db, admin.agent_id, to.agent_id, text, null, replyTo);
            emit("message");
            return send(200, { task_id: m.task_id, status: m.status });
          }
          const match = /^\/agents\/(\d+)\/(inbox|sent|monitor)$/.exec(url.pathname);
          const target = match && inFleet.find((a) => a.agent_id === Number(match[1]));
          if (match && match[2] === "monitor") {
            if (!target?.monitor) return send(404, { detail: "Agent not enrolled" });
            if (req.method === "PATCH") {
              const patch = await readJson(req);
              const interval = patch["interval_seconds"];
              if (typeof interval === "number" && interval < 1) return send(422, { detail: [{ msg: "Input should be greater than or equal to 1" }] });
              if (typeof interval === "number") target.monitor.interval_seconds = interval;
              if (typeof patch["enabled"] === "boolean") target.monitor.enabled = patch["enabled"];
              emit("state");
            }
            return send(200, target.monitor);
          }
          if (match && target) {
            const own = (m: Message) => (match[2] === "inbox" ? m.to_agent_id : m.from_agent_id) === target.agent_id;
            return send(200, newest(db.messages.filter((m) => m.type === "unicast" && own(m))));
          }
          if (match) return send(404, { detail: "Agent not found" });
          return send(404, { detail: "Not Found" });
        })();
      });
    },
  };
}
