import { renderToString } from "preact-render-to-string";
import { describe, expect, it } from "vitest";
import { fleet } from "../test/fixtures";
import { Composer } from "./Composer";
import { FleetList } from "./FleetPicker";

const DELETED = "2026-11-29T10:00:00.000000+00:00";

describe("FleetList", () => {
  it("lists deleted fleets in their own section, after the live ones", () => {
    const html = renderToString(
      <FleetList fleets={[fleet({ fleet_id: 2, name: "live" }), fleet({ fleet_id: 1, name: "old", deleted_at: DELETED })]} />,
    );
    const section = html.slice(html.indexOf('class="deleted-fleets"'));
    expect(section).toContain("Deleted fleets");
    expect(section).toContain('data-testid="deleted-fleet-card"');
    expect(section).toContain("old");
    expect(section).not.toContain("live");
    expect(html.indexOf("live")).toBeLessThan(html.indexOf('class="deleted-fleets"'));
    expect(section).toContain('href="#/fleets/1/agents"');
  });

  it("has no deleted section when nothing was deleted", () => {
    expect(renderToString(<FleetList fleets={[fleet()]} />)).not.toContain("Deleted fleets");
  });

  it("still says how to create a fleet when only deleted ones exist", () => {
    const html = renderToString(<FleetList fleets={[fleet({ deleted_at: DELETED })]} />);
    expect(html).toContain("No fleets found.");
    expect(html).toContain('data-testid="deleted-fleet-card"');
  });
});

describe("Composer", () => {
  it("is disabled with the read-only note in a deleted fleet", () => {
    const html = renderToString(<Composer recipients={[]} enabled readOnly onSend={async () => {}} />);
    expect(html).toMatch(/<textarea[^>]*disabled/);
    expect(html).toContain('placeholder="Fleet deleted — its history is read-only"');
    expect(html).toContain('data-testid="read-only-note"');
  });

  it("is enabled in a live fleet with an Administrator", () => {
    const html = renderToString(<Composer recipients={[]} enabled onSend={async () => {}} />);
    expect(html).not.toMatch(/<textarea[^>]*disabled/);
    expect(html).not.toContain("read-only-note");
  });
});
