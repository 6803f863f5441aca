import { describe, expect, it } from "vitest";
import { parseRoute, routeHash } from "./route";

describe("routes", () => {
  it("parses the picker and dashboard routes", () => {
    expect(parseRoute("")).toEqual({ view: "fleets" });
    expect(parseRoute("#/fleets")).toEqual({ view: "fleets" });
    expect(parseRoute("#/fleets/3/agents")).toEqual({ view: "dashboard", fleetId: 3, agentId: null });
    expect(parseRoute("#/fleets/3")).toEqual({ view: "dashboard", fleetId: 3, agentId: null });
    expect(parseRoute("#/fleets/3/agents/12")).toEqual({ view: "dashboard", fleetId: 3, agentId: 12 });
  });

  it("sends anything else to the picker", () => {
    for (const bad of ["#/fleets/x/agents", "#/fleets/0/agents", "#/fleets/1/agents/y", "#/other", "#/fleets/1/agents/2/3"]) {
      expect(parseRoute(bad)).toEqual({ view: "fleets" });
    }
  });

  it("round-trips", () => {
    expect(routeHash({ view: "dashboard", fleetId: 1, agentId: 4 })).toBe("#/fleets/1/agents/4");
    expect(routeHash({ view: "dashboard", fleetId: 1, agentId: null })).toBe("#/fleets/1/agents");
    expect(routeHash({ view: "fleets" })).toBe("#/fleets");
  });
});
