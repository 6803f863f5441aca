// Hash routes: `#/fleets` and `#/fleets/<fleetId>/agents[/<agentId>]`.

export type Route =
  | { view: "fleets" }
  | { view: "dashboard"; fleetId: number; agentId: number | null };

const ID = /^[1-9][0-9]{0,15}$/;

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/").filter(Boolean);
  const [root, fleet, agents, agent, ...extra] = parts;
  if (root === "fleets" && fleet && ID.test(fleet) && extra.length === 0) {
    if (agents === undefined || (agents === "agents" && agent === undefined)) {
      return { view: "dashboard", fleetId: Number(fleet), agentId: null };
    }
    if (agents === "agents" && agent && ID.test(agent)) {
      return { view: "dashboard", fleetId: Number(fleet), agentId: Number(agent) };
    }
  }
  return { view: "fleets" };
}

export function routeHash(route: Route): string {
  if (route.view === "fleets") return "#/fleets";
  const base = `#/fleets/${route.fleetId}/agents`;
  return route.agentId === null ? base : `${base}/${route.agentId}`;
}
