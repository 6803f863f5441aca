import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError } from "../api/client";
import { subscribeLive, type LiveEvent } from "../api/events";
import type { Agent, Fleet, Message, MonitorPatch, MonitorRuntime } from "../api/types";
import { isAdministrator } from "../api/types";
import type { Mentionable } from "../lib/mentions";
import { routeHash } from "../lib/route";
import { AgentDrawer } from "./AgentDrawer";
import { Composer } from "./Composer";
import { fleetLabel } from "./FleetPicker";
import { Header } from "./Header";
import { Sidebar } from "./Sidebar";
import { Timeline } from "./Timeline";

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
}

export function Dashboard({ fleetId, agentId }: Props) {
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
  const inFlight = useRef(0);
  const alive = useRef(true);

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

    let pending = new Set<Part>();
    let debounce: ReturnType<typeof setTimeout> | undefined;
    const close = subscribeLive(fleetId, {
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
    });
    return () => {
      alive.current = false;
      clearInterval(timer);
      clearTimeout(debounce);
      close();
    };
  }, [fleetId, refresh]);

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

  const send = async (to: number | "*", body: string): Promise<void> => {
    await api.send(fleetId, to, body);
    setScrollSignal((s) => s + 1);
    setVersion((v) => v + 1);
    await refresh(["timeline", "agents"]);
  };

  const patchMonitor = async (id: number, patch: MonitorPatch): Promise<void> => {
    const monitor = await api.patchMonitor(fleetId, id, patch);
    setAgents((prev) => prev && prev.map((a) => (a.agent_id === id ? { ...a, monitor } : a)));
    void refresh(["agents"]);
  };

  const openAgent = (id: number | null): void => {
    window.location.hash = routeHash({ view: "dashboard", fleetId, agentId: id });
  };
  const closeDrawer = useCallback(() => openAgent(null), [fleetId]);

  return (
    <div class="app">
      <Header
        fleet={{ id: fleetId, name: fleetName }}
        sendingAsAdministrator={administrator !== undefined}
        runtime={runtime}
        live={{ connected, polling }}
        onRefresh={refreshAll}
      />
      <div class={`dashboard${agentId === null ? "" : " has-drawer"}`}>
        <Sidebar agents={agents} selectedId={agentId} now={now} onSelect={openAgent} />
        <main class="main">
          {failed && (
            <div class="banner" role="alert">
              Some data could not be loaded; retrying every 5 s.
            </div>
          )}
          <Timeline messages={messages} scrollSignal={scrollSignal} now={now} />
          <Composer
            recipients={recipients}
            enabled={agents === null || administrator !== undefined}
            readOnly={fleetDeleted}
            onSend={send}
          />
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
          />
        )}
      </div>
    </div>
  );
}
