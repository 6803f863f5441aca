import type { Agent, TaskStatus } from "../api/types";
import { EyeIcon } from "./icons";

export function AdminBadge() {
  return <span class="badge badge-admin">Admin</span>;
}

export function MonitorBadge({ monitor }: { monitor: NonNullable<Agent["monitor"]> }) {
  const hint = monitor.enabled
    ? `Monitoring every ${monitor.interval_seconds}s`
    : "Monitoring disabled";
  return (
    <span class={`badge badge-monitor ${monitor.enabled ? "is-on" : "is-off"}`} title={hint}>
      <EyeIcon off={!monitor.enabled} />
      <span class="visually-hidden">monitoring </span>
      {monitor.enabled ? "on" : "off"}
    </span>
  );
}

export function StatusBadge({ status }: { status: TaskStatus }) {
  return <span class={`badge badge-status status-${status}`}>{status}</span>;
}
