// Hash routes: `#/fleets`, `#/fleets/<fleetId>/agents[/<agentId>]` (the timeline) and
// `#/fleets/<fleetId>/grid[/<agentId>]` (every member's live pane), each with the agent drawer
// when an agent id is given.

export type DashboardView = "timeline" | "grid";

export type Route =
  | { view: "fleets" }
  | { view: "dashboard"; fleetId: number; agentId: number | null; mode: DashboardView };

const ID = /^[1-9][0-9]{0,15}$/;
const SEGMENT: Record<string, DashboardView> = { agents: "timeline", grid: "grid" };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/").filter(Boolean);
  const [root, fleet, section, agent, ...extra] = parts;
  if (root === "fleets" && fleet && ID.test(fleet) && extra.length === 0) {
    const fleetId = Number(fleet);
    if (section === undefined) return { view: "dashboard", fleetId, agentId: null, mode: "timeline" };
    const mode = Object.hasOwn(SEGMENT, section) ? SEGMENT[section] : undefined;
    if (mode && agent === undefined) return { view: "dashboard", fleetId, agentId: null, mode };
    if (mode && agent && ID.test(agent)) return { view: "dashboard", fleetId, agentId: Number(agent), mode };
  }
  return { view: "fleets" };
}

export function routeHash(route: Route): string {
  if (route.view === "fleets") return "#/fleets";
  const base = `#/fleets/${route.fleetId}/${route.mode === "grid" ? "grid" : "agents"}`;
  return route.agentId === null ? base : `${base}/${route.agentId}`;
}
