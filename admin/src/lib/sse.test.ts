import { describe, expect, it } from "vitest";
import { EventStreamParser } from "./sse";

describe("event stream parser", () => {
  it("dispatches named events across chunk boundaries", () => {
    const p = new EventStreamParser();
    expect(p.push(": hello\n\nevent: mess")).toEqual([]);
    expect(p.push('age\ndata: {"task_id":1}\n\nevent: state\r\ndata: x\r')).toEqual([
      { event: "message", data: '{"task_id":1}' },
    ]);
    expect(p.push("\n\r\n")).toEqual([{ event: "state", data: "x" }]);
  });

  it("defaults the event name and joins data lines", () => {
    const p = new EventStreamParser();
    expect(p.push("data: a\ndata: b\n\n")).toEqual([{ event: "message", data: "a\nb" }]);
  });
});
