import { describe, expect, it } from "vitest";
import { agent } from "../test/fixtures";
import { gridAgents, MAX_WATCHED, PaneFrames, parsePaneEvent, watchList } from "./panes";

const roster = [
  agent({ agent_id: 1, name: "Director", kind: "director" }),
  agent({ agent_id: 2, name: "Administrator", kind: "administrator", coding_agent: null }),
  agent({ agent_id: 5, name: "reviewer" }),
  agent({ agent_id: 3, name: "coder" }),
  agent({ agent_id: 4, name: "gone", status: "deregistered", coding_agent: null }),
  agent({ agent_id: 6, name: "watcher", kind: "monitor" }),
];

describe("watchList", () => {
  it("watches the drawer's agent when it has a pane", () => {
    expect(watchList(roster, false, 3)).toEqual([3]);
    expect(watchList(roster, false, 1)).toEqual([1]); // the Director's pane, in its drawer
    expect(watchList(roster, false, 2)).toEqual([]);
    expect(watchList(roster, false, null)).toEqual([]);
  });

  it("names only roster agents, so a stale id never makes the stream fail", () => {
    expect(watchList(roster, false, 99)).toEqual([]);
    expect(watchList(null, true, 3)).toEqual([]);
  });

  it("watches every member in the grid, the drawer's agent first, at most 32", () => {
    expect(gridAgents(roster).map((a) => a.agent_id)).toEqual([3, 5, 6]);
    expect(watchList(roster, true, null)).toEqual([3, 5, 6]);
    expect(watchList(roster, true, 5)).toEqual([5, 3, 6]);
    expect(watchList(roster, true, 1)).toEqual([1, 3, 5, 6]);
    const many = Array.from({ length: 40 }, (_, i) => agent({ agent_id: i + 10 }));
    expect(watchList(many, true, null)).toHaveLength(MAX_WATCHED);
  });
});

describe("parsePaneEvent", () => {
  it("reads a screen and an error frame", () => {
    const at = "2026-11-29T08:00:00.000000+00:00";
    expect(parsePaneEvent(JSON.stringify({ fleet_id: 1, agent_id: 3, ansi: "x", captured_at: at }))).toEqual({
      agent_id: 3,
      ansi: "x",
      error: null,
      captured_at: at,
    });
    expect(parsePaneEvent(JSON.stringify({ agent_id: 3, error: "pane %4 not found", captured_at: at }))).toEqual({
      agent_id: 3,
      ansi: null,
      error: "pane %4 not found",
      captured_at: at,
    });
  });

  it("refuses anything else", () => {
    for (const data of ["", "not json", "null", "[]", '{"agent_id":"3","ansi":"x","captured_at":"t"}', '{"agent_id":3,"captured_at":"t"}']) {
      expect(parsePaneEvent(data)).toBeNull();
    }
  });
});

describe("PaneFrames", () => {
  it("tells only the listeners of the agent whose frame came", () => {
    const frames = new PaneFrames();
    const heard: number[] = [];
    const stop = frames.subscribe(3, () => heard.push(3));
    frames.subscribe(5, () => heard.push(5));
    const frame = { agent_id: 3, ansi: "a", error: null, captured_at: "t" };
    frames.set(frame);
    expect(heard).toEqual([3]);
    expect(frames.get(3)).toBe(frame);
    stop();
    frames.set({ ...frame, ansi: "b" });
    expect(heard).toEqual([3]);
    expect(frames.get(3)?.ansi).toBe("b");
  });
});
