import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError } from "../api/client";
import type { Agent, Message, MonitorPatch } from "../api/types";
import { isAdministrator } from "../api/types";
import { formatDateTime } from "../lib/time";
import { Avatar } from "./Avatar";
import { AdminBadge, AgentStatusBadge } from "./Badges";
import { CloseIcon } from "./icons";
import { MessageList } from "./MessageList";
import { READ_ONLY_NOTE } from "../lib/fleets";
import { hasPane, type PaneFrames } from "../lib/panes";
import type { ReplyDraft } from "../lib/reply";
import { LivePane } from "./LivePane";
import { MonitorSettings } from "./MonitorSettings";

export type Tab = "inbox" | "sent";

/** A message the drawer should show: in this tab, brought into view. */
export interface DrawerFocus {
  taskId: number;
  tab: Tab;
  seq: number;
}
type ListState = { kind: "loading" } | { kind: "error"; text: string } | { kind: "ready"; messages: Message[] };

interface Props {
  fleetId: number;
  agentId: number;
  /** undefined while the roster is loading or when the id is not in it. */
  agent: Agent | undefined;
  rosterLoaded: boolean;
  /** Changes whenever fresh data should be fetched. */
  version: number;
  now: number;
  onClose: () => void;
  onPatchMonitor: (agentId: number, patch: MonitorPatch) => Promise<void>;
  onFleetMissing: () => void;
  /** The fleet was deleted: its schedules went with it and nothing can be changed. */
  fleetDeleted?: boolean;
  /** The live panes the event stream sends. */
  frames?: PaneFrames;
  administratorId?: number | undefined;
  /** Absent: no reply can be sent (no Administrator, or the fleet is read-only). */
  onReply?: ((draft: ReplyDraft) => void) | undefined;
  focus?: DrawerFocus | null;
}

const TABS: { id: Tab; label: string }[] = [
  { id: "inbox", label: "Inbox" },
  { id: "sent", label: "Sent" },
];

function useMessages(props: Props, tab: Tab): ListState {
  const { fleetId, agentId, version, onFleetMissing } = props;
  const [state, setState] = useState<ListState>({ kind: "loading" });
  const key = `${fleetId}/${agentId}/${tab}`;
  const shownKey = useRef("");

  useEffect(() => {
    let current = true;
    if (shownKey.current !== key) setState({ kind: "loading" });
    const load = tab === "inbox" ? api.inbox : api.sent;
    load(fleetId, agentId).then(
      (messages) => {
        if (!current) return;
        shownKey.current = key;
        setState({ kind: "ready", messages });
      },
      (err: unknown) => {
        if (!current) return;
        if (err instanceof ApiError && err.fleetMissing) onFleetMissing();
        const text = err instanceof ApiError && err.status === 404 ? "Agent not found" : "Failed to load messages";
        setState({ kind: "error", text });
      },
    );
    return () => {
      current = false;
    };
  }, [key, version]);

  return state;
}

export function AgentDrawer(props: Props) {
  const { agent, agentId, rosterLoaded, now, onClose, onPatchMonitor, frames, focus = null } = props;
  const [tab, setTab] = useState<Tab>("inbox");
  const list = useMessages(props, tab);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    if (focus) setTab(focus.tab);
  }, [focus?.seq]);

  useEffect(() => {
    heading.current?.focus();
  }, [agentId]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      if (e.key === "Escape" && !e.defaultPrevented) onClose();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [onClose]);

  const onTabKey = (e: KeyboardEvent): void => {
    if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
      e.preventDefault();
      const next: Tab = tab === "inbox" ? "sent" : "inbox";
      setTab(next);
      document.getElementById(`tab-${next}`)?.focus();
    }
  };

  const gone = agent?.status === "deregistered";
  return (
    <aside class="drawer" aria-label="Agent details" data-testid="agent-drawer">
      <div class="drawer-head">
        {agent && <Avatar agentId={agent.agent_id} name={agent.name} size="lg" muted={gone} />}
        <div class="drawer-title">
          <h2 ref={heading} tabIndex={-1}>
            {agent ? agent.name : rosterLoaded ? "Agent not found" : "Loading…"}
          </h2>
          {agent && (
            <span class="drawer-badges">
              <span class={`badge ${gone ? "badge-off" : "badge-on"}`}>{gone ? "Deregistered" : "Active"}</span>
              {isAdministrator(agent) && <AdminBadge />}
              {agent.agent_status && (
                <AgentStatusBadge status={agent.agent_status} since={agent.agent_status_since} now={now} />
              )}
            </span>
          )}
        </div>
        <button
          type="button"
          class="icon-button"
          aria-label="Close agent details"
          title="Close"
          onClick={onClose}
        >
          <CloseIcon />
        </button>
      </div>
      {agent && (
        <div class="drawer-body">
          {agent.description && <p class="drawer-description">{agent.description}</p>}
          <dl class="details">
            <dt>Agent ID</dt>
            <dd>{agent.agent_id}</dd>
            <dt>Status</dt>
            <dd>{gone ? "Deregistered" : "Active"}</dd>
            <dt>Registered</dt>
            <dd>
              <time dateTime={agent.registered_at}>{formatDateTime(agent.registered_at)}</time>
            </dd>
            {agent.coding_agent && (
              <>
                <dt>Coding agent</dt>
                <dd data-testid="coding-agent">{agent.coding_agent}</dd>
              </>
            )}
            {agent.agent_status && (
              <>
                <dt>Agent status</dt>
                <dd data-testid="agent-status">{agent.agent_status}</dd>
              </>
            )}
            <dt>Unread</dt>
            <dd data-testid="unread">{agent.unread}</dd>
          </dl>
          {frames && hasPane(agent) && (
            <section class="drawer-section pane-section" aria-labelledby="pane-title">
              <div class="pane-head">
                <h3 id="pane-title">Pane</h3>
                <span class="badge badge-live" title="Refreshed over the event stream while this drawer is open">
                  live
                </span>
              </div>
              <LivePane frames={frames} agentId={agent.agent_id} name={agent.name} />
            </section>
          )}
          {agent.monitor ? (
            <MonitorSettings
              agentId={agent.agent_id}
              monitor={agent.monitor}
              now={now}
              onPatch={(patch) => onPatchMonitor(agent.agent_id, patch)}
            />
          ) : (
            <section class="drawer-section" aria-labelledby="monitoring-title">
              <h3 id="monitoring-title">Monitoring</h3>
              <p class="muted small">
                {props.fleetDeleted ? `${READ_ONLY_NOTE}; its monitoring ended.` : "Not enrolled in monitoring."}
              </p>
            </section>
          )}
          <div class="tabs" role="tablist" aria-label="Messages">
            {TABS.map((t) => (
              <button
                key={t.id}
                id={`tab-${t.id}`}
                type="button"
                role="tab"
                class="tab"
                aria-selected={tab === t.id}
                aria-controls="drawer-tabpanel"
                tabIndex={tab === t.id ? 0 : -1}
                onClick={() => setTab(t.id)}
                onKeyDown={onTabKey}
              >
                {t.label}
                {tab === t.id && list.kind === "ready" && <span class="count">{list.messages.length}</span>}
              </button>
            ))}
          </div>
          <div id="drawer-tabpanel" role="tabpanel" aria-labelledby={`tab-${tab}`} class="tabpanel">
            {list.kind === "loading" && <p class="muted list-empty">Loading…</p>}
            {list.kind === "error" && <p class="form-error list-empty">{list.text}</p>}
            {list.kind === "ready" && (
              <MessageList
                messages={list.messages}
                direction={tab}
                now={now}
                administratorId={props.administratorId}
                onReply={props.onReply}
                focusTaskId={focus?.tab === tab ? focus.taskId : null}
              />
            )}
          </div>
        </div>
      )}
    </aside>
  );
}
