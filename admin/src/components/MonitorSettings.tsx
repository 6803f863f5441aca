import { useEffect, useState } from "preact/hooks";
import type { MonitorConfig, MonitorPatch } from "../api/types";
import { formatDateTime, relativeTime } from "../lib/time";
import { parseInterval } from "../lib/interval";

interface Props {
  agentId: number;
  monitor: MonitorConfig;
  now: number;
  onPatch: (patch: MonitorPatch) => Promise<void>;
}

export const ERR_INTERVAL = "Interval must be a whole number ≥ 1.";
export const ERR_UPDATE = "Failed to update interval.";
export const ERR_TOGGLE = "Failed to toggle monitoring.";

export function MonitorSettings({ agentId, monitor, now, onPatch }: Props) {
  const [draft, setDraft] = useState(String(monitor.interval_seconds));
  const [dirty, setDirty] = useState(false);
  const [busy, setBusy] = useState<"interval" | "toggle" | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);

  useEffect(() => {
    setDirty(false);
    setError(null);
    setSaved(false);
  }, [agentId]);

  useEffect(() => {
    if (!dirty) setDraft(String(monitor.interval_seconds));
  }, [monitor.interval_seconds, dirty, agentId]);

  const save = async (): Promise<void> => {
    setSaved(false);
    const value = parseInterval(draft);
    if (value === null) {
      setError(ERR_INTERVAL);
      return;
    }
    setBusy("interval");
    setError(null);
    try {
      await onPatch({ interval_seconds: value });
      setDirty(false);
      setDraft(String(value));
      setSaved(true);
    } catch {
      setError(ERR_UPDATE);
    } finally {
      setBusy(null);
    }
  };

  const toggle = async (): Promise<void> => {
    setSaved(false);
    setBusy("toggle");
    setError(null);
    try {
      await onPatch({ enabled: !monitor.enabled });
    } catch {
      setError(ERR_TOGGLE);
    } finally {
      setBusy(null);
    }
  };

  const inputId = `interval-${agentId}`;
  return (
    <section class="drawer-section" aria-labelledby="monitoring-title">
      <div class="section-head">
        <h3 id="monitoring-title">Monitoring</h3>
        <span class={`badge ${monitor.enabled ? "badge-on" : "badge-off"}`}>
          {monitor.enabled ? "Enabled" : "Disabled"}
        </span>
        <button type="button" class="button button-small" disabled={busy !== null} onClick={() => void toggle()}>
          {monitor.enabled ? "Disable" : "Enable"}
        </button>
      </div>
      <form
        class="interval-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <label for={inputId}>Interval (s)</label>
        <input
          id={inputId}
          type="number"
          min={1}
          step={1}
          inputMode="numeric"
          value={draft}
          aria-invalid={error === ERR_INTERVAL}
          onInput={(e) => {
            setDraft(e.currentTarget.value);
            setDirty(true);
            setError(null);
            setSaved(false);
          }}
        />
        <button type="submit" class="button button-primary" disabled={busy !== null}>
          Save
        </button>
      </form>
      <p class="form-error" role="alert">
        {error}
      </p>
      {saved && <p class="form-ok" role="status">Interval saved.</p>}
      <p class="muted small">
        Last ping:{" "}
        {monitor.last_ping_at ? (
          <time dateTime={monitor.last_ping_at} title={formatDateTime(monitor.last_ping_at)}>
            {relativeTime(monitor.last_ping_at, now)}
          </time>
        ) : (
          "never"
        )}
      </p>
    </section>
  );
}
