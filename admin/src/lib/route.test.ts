import { describe, expect, it } from "vitest";
import { parseRoute, routeHash } from "./route";

const dashboard = (fleetId: number, agentId: number | null, mode: "timeline" | "grid" = "timeline") => ({
  view: "dashboard",
  fleetId,
  agentId,
  mode,
});

describe("routes", () => {
  it("parses the picker and dashboard routes", () => {
    expect(parseRoute("")).toEqual({ view: "fleets" });
    expect(parseRoute("#/fleets")).toEqual({ view: "fleets" });
    expect(parseRoute("#/fleets/3/agents")).toEqual(dashboard(3, null));
    expect(parseRoute("#/fleets/3")).toEqual(dashboard(3, null));
    expect(parseRoute("#/fleets/3/agents/12")).toEqual(dashboard(3, 12));
  });

  it("parses the grid, with or without a drawer", () => {
    expect(parseRoute("#/fleets/3/grid")).toEqual(dashboard(3, null, "grid"));
    expect(parseRoute("#/fleets/3/grid/12")).toEqual(dashboard(3, 12, "grid"));
  });

  it("sends anything else to the picker", () => {
    for (const bad of [
      "#/fleets/x/agents",
      "#/fleets/0/agents",
      "#/fleets/1/agents/y",
      "#/other",
      "#/fleets/1/agents/2/3",
      "#/fleets/1/grid/x",
      "#/fleets/1/toString",
      "#/fleets/1/constructor/2",
    ]) {
      expect(parseRoute(bad)).toEqual({ view: "fleets" });
    }
  });

  it("round-trips", () => {
    expect(routeHash({ view: "dashboard", fleetId: 1, agentId: 4, mode: "timeline" })).toBe("#/fleets/1/agents/4");
    expect(routeHash({ view: "dashboard", fleetId: 1, agentId: null, mode: "timeline" })).toBe("#/fleets/1/agents");
    expect(routeHash({ view: "dashboard", fleetId: 1, agentId: 4, mode: "grid" })).toBe("#/fleets/1/grid/4");
    expect(routeHash({ view: "dashboard", fleetId: 1, agentId: null, mode: "grid" })).toBe("#/fleets/1/grid");
    expect(routeHash({ view: "fleets" })).toBe("#/fleets");
  });
});
