import type { ComponentChildren } from "preact";
import type { MonitorRuntime } from "../api/types";
import type { DashboardView } from "../lib/route";
import { humanizeSeconds } from "../lib/time";
import { Logo, RefreshIcon, Spinner } from "./icons";
import { ThemeToggle } from "./ThemeToggle";

export interface LiveState {
  connected: boolean;
  polling: boolean;
}

/** The dashboard's two views and where each one is. */
export interface ViewLinks {
  current: DashboardView;
  timeline: string;
  grid: string;
}

interface Props {
  fleet?: { id: number; name: string };
  sendingAsAdministrator?: boolean;
  runtime?: MonitorRuntime | null;
  live?: LiveState;
  views?: ViewLinks;
  /** The search box. */
  search?: ComponentChildren;
  onRefresh: () => void;
}

function ViewSwitch({ current, timeline, grid }: ViewLinks) {
  const links: [DashboardView, string, string][] = [
    ["timeline", timeline, "Timeline"],
    ["grid", grid, "Panes"],
  ];
  return (
    <nav class="view-switch" aria-label="Views">
      {links.map(([view, href, label]) => (
        <a key={view} href={href} class={view === current ? "is-current" : ""} aria-current={view === current ? "page" : undefined}>
          {label}
        </a>
      ))}
    </nav>
  );
}

export const monitorStoppedHint = (fleetId: number): string =>
  `No cafleet monitor running — start it with 'cafleet monitor start --fleet-id ${fleetId}'`;

function monitorRunningHint(runtime: MonitorRuntime): string {
  const parts = [runtime.pid === null ? null : `pid ${runtime.pid}`, runtime.host];
  const where = parts.filter(Boolean).join(" on ");
  const tick = runtime.tick_seconds === null ? "" : `, tick ${runtime.tick_seconds}s`;
  const age =
    runtime.last_tick_age_seconds === null
      ? ""
      : `, last tick ${humanizeSeconds(runtime.last_tick_age_seconds)} ago`;
  return `cafleet monitor running${where ? ` (${where})` : ""}${tick}${age}`;
}

function MonitorPill({ fleetId, runtime }: { fleetId: number; runtime: MonitorRuntime }) {
  const hint = runtime.running ? monitorRunningHint(runtime) : monitorStoppedHint(fleetId);
  return (
    <span
      class={`pill monitor-pill ${runtime.running ? "is-on" : "is-off"}`}
      title={hint}
      data-testid="monitor-pill"
    >
      <span class="dot" aria-hidden="true" />
      {runtime.running ? "Monitor running" : "Monitor stopped"}
    </span>
  );
}

function LiveIndicator({ connected, polling }: LiveState) {
  const hint = connected
    ? "Live: server events connected; also refreshes every 5 s"
    : "Live event stream not connected; auto-refreshing every 5 s";
  return (
    <span
      class={`pill live ${connected ? "is-on" : "is-off"}`}
      title={hint}
      data-testid="live-indicator"
      data-connected={String(connected)}
    >
      {polling ? <Spinner /> : <span class="dot" aria-hidden="true" />}
      Live
    </span>
  );
}

export function Header({ fleet, sendingAsAdministrator, runtime, live, views, search, onRefresh }: Props) {
  return (
    <header class="topbar">
      <a class="brand" href="#/fleets">
        <Logo />
        <span>CAFleet</span>
      </a>
      <nav class="breadcrumb" aria-label="Breadcrumb">
        {fleet ? (
          <>
            <a href="#/fleets">Fleets</a>
            <span class="sep" aria-hidden="true">
              /
            </span>
            <span aria-current="page" class="crumb-current">
              {fleet.name}
            </span>
          </>
        ) : (
          <span aria-current="page" class="crumb-current">
            Fleets
          </span>
        )}
      </nav>
      {views && <ViewSwitch {...views} />}
      {search}
      <div class="topbar-end">
        {sendingAsAdministrator && (
          <span class="sending-as">
            Sending as <strong>Administrator</strong>
          </span>
        )}
        {fleet && runtime && <MonitorPill fleetId={fleet.id} runtime={runtime} />}
        {live && <LiveIndicator {...live} />}
        <button type="button" class="icon-button" aria-label="Refresh" title="Refresh" onClick={onRefresh}>
          <RefreshIcon />
        </button>
        <ThemeToggle />
      </div>
    </header>
  );
}
