import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, ApiError } from "../api/client";
import { subscribeLive, type LiveEvent } from "../api/events";
import type { Agent, Fleet, Message, MonitorPatch, MonitorRuntime, SearchHit } from "../api/types";
import { isAdministrator } from "../api/types";
import type { Mentionable } from "../lib/mentions";
import { PaneFrames, watchList } from "../lib/panes";
import type { ReplyDraft } from "../lib/reply";
import { routeHash, type DashboardView } from "../lib/route";
import { AgentDrawer, type DrawerFocus } from "./AgentDrawer";
import { Composer } from "./Composer";
import { fleetLabel } from "./FleetPicker";
import { Grid } from "./Grid";
import { Header } from "./Header";
import { SearchBox } from "./SearchBox";
import { Sidebar } from "./Sidebar";
import { Timeline, type Focus } from "./Timeline";

export const POLL_MS = 5000;
const EVENT_DEBOUNCE_MS = 150;

type Part = "fleets" | "agents" | "timeline" | "monitor";
const POLLED: readonly Part[] = ["agents", "timeline", "monitor"];
// `message`: a new message; `state`: message states, deliveries, roster or monitor changed.
const EVENT_PARTS: Record<LiveEvent, readonly Part[]> = {
  message: ["timeline", "agents"],
  state: POLLED,
};

interface Props {
  fleetId: number;
  agentId: number | null;
  mode?: DashboardView;
}

export function Dashboard({ fleetId, agentId, mode = "timeline" }: Props) {
  const [fleets, setFleets] = useState<Fleet[] | null>(null);
  const [agents, setAgents] = useState<Agent[] | null>(null);
  const [messages, setMessages] = useState<Message[] | null>(null);
  const [runtime, setRuntime] = useState<MonitorRuntime | null>(null);
  const [failed, setFailed] = useState(false);
  const [polling, setPolling] = useState(false);
  const [connected, setConnected] = useState(false);
  const [version, setVersion] = useState(0);
  const [scrollSignal, setScrollSignal] = useState(0);
  const [now, setNow] = useState(Date.now);
  const [reply, setReply] = useState<ReplyDraft | null>(null);
  const [focus, setFocus] = useState<Focus | null>(null);
  const [drawerFocus, setDrawerFocus] = useState<DrawerFocus | null>(null);
  const frames = useMemo(() => new PaneFrames(), [fleetId]);
  const inFlight = useRef(0);
  const alive = useRef(true);
  const focusSeq = useRef(0);

  const leaveFleet = useCallback(() => window.location.replace(routeHash({ view: "fleets" })), []);

  const refresh = useCallback(
    async (parts: readonly Part[]): Promise<void> => {
      const loaders: Record<Part, () => Promise<void>> = {
        fleets: async () => setFleets(await api.fleets()),
        agents: async () => setAgents(await api.agents(fleetId)),
        timeline: async () => setMessages(await api.timeline(fleetId)),
        monitor: async () => setRuntime(await api.monitor(fleetId)),
      };
      inFlight.current += 1;
      setPolling(true);
      const results = await Promise.allSettled(parts.map((p) => loaders[p]()));
      inFlight.current -= 1;
      if (!alive.current) return;
      const errors = results.flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
      if (errors.some((e) => e instanceof ApiError && e.fleetMissing)) {
        leaveFleet();
        return;
      }
      setFailed(errors.length > 0);
      setNow(Date.now());
      if (inFlight.current === 0) setPolling(false);
    },
    [fleetId, leaveFleet],
  );

  const refreshAll = useCallback(() => {
    setVersion((v) => v + 1);
    void refresh(["fleets", ...POLLED]);
  }, [refresh]);

  useEffect(() => {
    alive.current = true;
    void refresh(["fleets", ...POLLED]);
    const timer = setInterval(() => {
      if (inFlight.current > 0) return;
      setVersion((v) => v + 1);
      void refresh(POLLED);
    }, POLL_MS);
    return () => {
      alive.current = false;
      clearInterval(timer);
    };
  }, [fleetId, refresh]);

  // The event stream, with the live panes this view shows: another list is another stream.
  const watch = watchList(agents, mode === "grid", agentId);
  const watchKey = watch.join(",");
  useEffect(() => {
    let pending = new Set<Part>();
    let debounce: ReturnType<typeof setTimeout> | undefined;
    const close = subscribeLive(
      fleetId,
      {
        onConnected: setConnected,
        onEvent: (kind) => {
          for (const part of EVENT_PARTS[kind]) pending.add(part);
          clearTimeout(debounce);
          debounce = setTimeout(() => {
            const parts = [...pending];
            pending = new Set();
            setVersion((v) => v + 1);
            void refresh(parts);
          }, EVENT_DEBOUNCE_MS);
        },
        onPane: (frame) => frames.set(frame),
      },
      watch,
    );
    return () => {
      clearTimeout(debounce);
      close();
    };
  }, [fleetId, watchKey, refresh, frames]);

  const fleet = fleets?.find((f) => f.fleet_id === fleetId);
  const fleetDeleted = fleet !== undefined && fleet.deleted_at !== null;
  const fleetName = fleetLabel({ fleet_id: fleetId, name: fleet?.name ?? null });
  useEffect(() => {
    document.title = `${fleetName} · CAFleet Admin`;
  }, [fleetName]);

  const administrator = agents?.find((a) => isAdministrator(a) && a.status === "active");
  const recipients: Mentionable[] = (agents ?? [])
    .filter((a) => a.status === "active" && !isAdministrator(a))
    .map(({ agent_id, name }) => ({ agent_id, name }));

  const send = async (to: number | "*", body: string, inReplyTo: number | null): Promise<void> => {
    await api.send(fleetId, to, body, inReplyTo);
    setScrollSignal((s) => s + 1);
    setVersion((v) => v + 1);
    await refresh(["timeline", "agents"]);
  };

  const patchMonitor = async (id: number, patch: MonitorPatch): Promise<void> => {
    const monitor = await api.patchMonitor(fleetId, id, patch);
    setAgents((prev) => prev && prev.map((a) => (a.agent_id === id ? { ...a, monitor } : a)));
    void refresh(["agents"]);
  };

  const go = (next: DashboardView, id: number | null): void => {
    window.location.hash = routeHash({ view: "dashboard", fleetId, agentId: id, mode: next });
  };
  const openAgent = (id: number | null): void => go(mode, id);
  const closeDrawer = useCallback(() => openAgent(null), [fleetId, mode]);

  const canReply = administrator !== undefined && !fleetDeleted;
  const startReply = (draft: ReplyDraft): void => {
    setReply(draft);
    if (mode !== "timeline") go("timeline", agentId); // the composer lives beside the timeline
  };

  // A search hit in context: the timeline entry when the timeline holds it, else the
  // recipient's inbox in the drawer (older messages, or ones no agent of the fleet sent).
  const showMessage = (m: Message): void => {
    focusSeq.current += 1;
    const seq = focusSeq.current;
    const inTimeline = messages?.some((t) => t.task_id === m.task_id) ?? false;
    if (inTimeline) {
      setFocus({ taskId: m.task_id, seq });
      if (mode !== "timeline") go("timeline", agentId);
      return;
    }
    const owner = m.to_agent_id ?? m.from_agent_id;
    setDrawerFocus({ taskId: m.task_id, tab: m.to_agent_id === null ? "sent" : "inbox", seq });
    go(mode, owner);
  };
  const focusTask = (taskId: number): void => {
    focusSeq.current += 1;
    setFocus({ taskId, seq: focusSeq.current });
  };

  return (
    <div class="app">
      <Header
        fleet={{ id: fleetId, name: fleetName }}
        sendingAsAdministrator={administrator !== undefined}
        runtime={runtime}
        live={{ connected, polling }}
        views={{
          current: mode,
          timeline: routeHash({ view: "dashboard", fleetId, agentId, mode: "timeline" }),
          grid: routeHash({ view: "dashboard", fleetId, agentId, mode: "grid" }),
        }}
        search={<SearchBox fleetId={fleetId} onPick={(hit: SearchHit) => showMessage(hit.message)} />}
        onRefresh={refreshAll}
      />
      <div class={`dashboard${agentId === null ? "" : " has-drawer"}${mode === "grid" ? " is-grid" : ""}`}>
        <Sidebar agents={agents} selectedId={agentId} now={now} onSelect={openAgent} />
        <main class="main">
          {failed && (
            <div class="banner" role="alert">
              Some data could not be loaded; retrying every 5 s.
            </div>
          )}
          {mode === "grid" ? (
            <Grid agents={agents} frames={frames} selectedId={agentId} onOpen={openAgent} />
          ) : (
            <>
              <Timeline
                messages={messages}
                scrollSignal={scrollSignal}
                now={now}
                administratorId={administrator?.agent_id}
                onReply={canReply ? startReply : undefined}
                focus={focus}
                onFocus={focusTask}
              />
              <Composer
                recipients={recipients}
                enabled={agents === null || administrator !== undefined}
                readOnly={fleetDeleted}
                reply={reply}
                onClearReply={() => setReply(null)}
                onSend={send}
              />
            </>
          )}
        </main>
        {agentId !== null && (
          <AgentDrawer
            fleetId={fleetId}
            agentId={agentId}
            agent={agents?.find((a) => a.agent_id === agentId)}
            rosterLoaded={agents !== null}
            version={version}
            now={now}
            onClose={closeDrawer}
            onPatchMonitor={patchMonitor}
            onFleetMissing={leaveFleet}
            fleetDeleted={fleetDeleted}
            frames={frames}
            administratorId={administrator?.agent_id}
            onReply={canReply ? startReply : undefined}
            focus={drawerFocus}
          />
        )}
      </div>
    </div>
  );
}
