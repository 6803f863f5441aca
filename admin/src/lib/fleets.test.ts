import { describe, expect, it } from "vitest";
import { fleet } from "../test/fixtures";
import { fleetSections } from "./fleets";

describe("fleetSections", () => {
  it("keeps live fleets in the API's order and puts deleted ones apart, latest deletion first", () => {
    const sections = fleetSections([
      fleet({ fleet_id: 4 }),
      fleet({ fleet_id: 3, deleted_at: "2026-11-29T09:00:00.000000+00:00" }),
      fleet({ fleet_id: 2 }),
      fleet({ fleet_id: 1, deleted_at: "2026-11-29T10:00:00.000000+00:00" }),
    ]);
    expect(sections.live.map((f) => f.fleet_id)).toEqual([4, 2]);
    expect(sections.deleted.map((f) => f.fleet_id)).toEqual([1, 3]);
  });

  it("has an empty deleted section when nothing was deleted", () => {
    expect(fleetSections([fleet()]).deleted).toEqual([]);
  });
});
