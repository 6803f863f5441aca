import { describe, expect, it } from "vitest";
import { initials } from "./avatar";

describe("avatar initials", () => {
  it("uses two letters", () => {
    expect(initials("Director")).toBe("DI");
    expect(initials("code reviewer")).toBe("CR");
    expect(initials("qa-bot")).toBe("QB");
    expect(initials("x")).toBe("X");
    expect(initials("")).toBe("?");
  });
});
