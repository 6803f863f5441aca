import { describe, expect, it } from "vitest";
import { parseInterval } from "./interval";

describe("interval input", () => {
  it("accepts whole numbers of at least 1", () => {
    expect(parseInterval("60")).toBe(60);
    expect(parseInterval(" 1 ")).toBe(1);
    for (const bad of ["0", "-1", "1.5", "", "abc", "1e3"]) expect(parseInterval(bad)).toBeNull();
  });
});
