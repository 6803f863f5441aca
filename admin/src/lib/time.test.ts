import { describe, expect, it } from "vitest";
import { humanizeSeconds, relativeTime } from "./time";

describe("humanized times", () => {
  it("floors like the CLI", () => {
    expect(humanizeSeconds(0)).toBe("0s");
    expect(humanizeSeconds(59.9)).toBe("59s");
    expect(humanizeSeconds(60)).toBe("1m");
    expect(humanizeSeconds(3599)).toBe("59m");
    expect(humanizeSeconds(3600)).toBe("1h");
    expect(humanizeSeconds(-5)).toBe("0s");
  });

  it("says how long ago", () => {
    const now = Date.parse("2026-11-29T12:00:00Z");
    expect(relativeTime("2026-11-29T11:59:55.000000+00:00", now)).toBe("just now");
    expect(relativeTime("2026-11-29T11:59:00+00:00", now)).toBe("1m ago");
    expect(relativeTime("2026-11-29T09:30:00+00:00", now)).toBe("2h ago");
    expect(relativeTime("2026-11-25T12:00:00+00:00", now)).toBe("4d ago");
    expect(relativeTime("not a date", now)).toBe("not a date");
  });
});
