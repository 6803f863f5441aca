// Which fleets the picker shows where.
import type { Fleet } from "../api/types";

export interface FleetSections {
  live: Fleet[];
  /** Deleted fleets, most recently deleted first: their history stays readable. */
  deleted: Fleet[];
}

export function fleetSections(fleets: readonly Fleet[]): FleetSections {
  const live = fleets.filter((f) => f.deleted_at === null);
  const deleted = fleets
    .filter((f) => f.deleted_at !== null)
    .sort((a, b) => Date.parse(b.deleted_at ?? "") - Date.parse(a.deleted_at ?? ""));
  return { live, deleted };
}

/** The composer's and drawer's note for a deleted fleet. */
export const READ_ONLY_NOTE = "Fleet deleted — its history is read-only";
