import { useCallback, useEffect, useState } from "preact/hooks";
import { api } from "../api/client";
import type { Fleet } from "../api/types";
import { fleetSections } from "../lib/fleets";
import { formatDate, formatDateTime } from "../lib/time";
import { Header } from "./Header";

type State = { kind: "loading" } | { kind: "error" } | { kind: "ready"; fleets: Fleet[] };

export const fleetLabel = (fleet: Pick<Fleet, "fleet_id" | "name">): string =>
  fleet.name ?? `Fleet ${fleet.fleet_id}`;

const agentCount = (n: number): string => `${n} agent${n === 1 ? "" : "s"}`;

function SkeletonCards() {
  return (
    <ul class="fleet-grid" aria-hidden="true">
      {[0, 1, 2].map((i) => (
        <li key={i} class="fleet-card skeleton-card">
          <span class="skeleton skeleton-title" />
          <span class="skeleton skeleton-line" />
        </li>
      ))}
    </ul>
  );
}

function FleetCard({ fleet }: { fleet: Fleet }) {
  const deleted = fleet.deleted_at;
  return (
    <li>
      <a
        class={`fleet-card${deleted === null ? "" : " is-deleted"}`}
        href={`#/fleets/${fleet.fleet_id}/agents`}
        data-testid={deleted === null ? "fleet-card" : "deleted-fleet-card"}
      >
        <span class="fleet-card-head">
          <span class="fleet-name">{fleetLabel(fleet)}</span>
          <span class="fleet-id">#{fleet.fleet_id}</span>
        </span>
        {deleted === null ? (
          <span class="fleet-meta" title={formatDateTime(fleet.created_at)}>
            {agentCount(fleet.agent_count)} · created {formatDate(fleet.created_at)}
          </span>
        ) : (
          <span class="fleet-meta" title={formatDateTime(deleted)}>
            created {formatDate(fleet.created_at)} · deleted {formatDate(deleted)}
          </span>
        )}
      </a>
    </li>
  );
}

/** Live fleets, then the deleted ones in their own section (read-only history). */
export function FleetList({ fleets }: { fleets: Fleet[] }) {
  const { live, deleted } = fleetSections(fleets);
  return (
    <>
      {live.length === 0 ? (
        <div class="notice">
          <p>No fleets found.</p>
          <p class="muted">
            Create one from inside a tmux pane with <code>cafleet fleet create --name my-project</code>
          </p>
        </div>
      ) : (
        <ul class="fleet-grid">
          {live.map((fleet) => (
            <FleetCard key={fleet.fleet_id} fleet={fleet} />
          ))}
        </ul>
      )}
      {deleted.length > 0 && (
        <section class="deleted-fleets" aria-labelledby="deleted-fleets-title">
          <h2 id="deleted-fleets-title">Deleted fleets</h2>
          <p class="muted small">Their history stays readable; nothing can be sent or changed.</p>
          <ul class="fleet-grid">
            {deleted.map((fleet) => (
              <FleetCard key={fleet.fleet_id} fleet={fleet} />
            ))}
          </ul>
        </section>
      )}
    </>
  );
}

export function FleetPicker() {
  const [state, setState] = useState<State>({ kind: "loading" });

  const load = useCallback(async () => {
    try {
      setState({ kind: "ready", fleets: await api.fleets() });
    } catch {
      setState({ kind: "error" });
    }
  }, []);

  useEffect(() => {
    document.title = "CAFleet Admin";
    void load();
  }, [load]);

  return (
    <div class="app">
      <Header onRefresh={() => void load()} />
      <main class="picker" aria-busy={state.kind === "loading"}>
        <h1>Select a Fleet</h1>
        {state.kind === "loading" && <SkeletonCards />}
        {state.kind === "error" && (
          <div class="notice notice-error" role="alert">
            <p>Failed to load fleets</p>
            <button type="button" class="button" onClick={() => void load()}>
              Retry
            </button>
          </div>
        )}
        {state.kind === "ready" && <FleetList fleets={state.fleets} />}
      </main>
    </div>
  );
}
