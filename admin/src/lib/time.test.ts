import { describe, expect, it } from "vitest";
import { dayLabel, formatHourMinute, humanizeSeconds, localDay, relativeTime } from "./time";

/** An ISO time at a local wall-clock time, so the tests hold in any time zone. */
const local = (y: number, month: number, d: number, h = 0, min = 0): string =>
  new Date(y, month - 1, d, h, min).toISOString();

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

describe("clock times and days", () => {
  it("shows a 24-hour HH:MM local time", () => {
    expect(formatHourMinute(local(2026, 11, 29, 9, 5))).toBe("09:05");
    expect(formatHourMinute(local(2026, 11, 29, 23, 59))).toBe("23:59");
    expect(formatHourMinute(local(2026, 11, 29, 0, 0))).toBe("00:00");
    expect(formatHourMinute("not a date")).toBe("not a date");
  });

  it("names the local calendar day", () => {
    expect(localDay(local(2026, 11, 29, 0, 0))).toBe("2026-11-29");
    expect(localDay(local(2026, 11, 29, 23, 59))).toBe("2026-11-29");
    expect(localDay(local(2026, 1, 5, 12, 0))).toBe("2026-01-05");
    expect(localDay("not a date")).toBe("");
  });

  it("says today, yesterday, else the date with its weekday", () => {
    const now = Date.parse(local(2026, 12, 1, 0, 30));
    expect(dayLabel(local(2026, 12, 1, 0, 1), now)).toBe("Today");
    expect(dayLabel(local(2026, 11, 30, 23, 59), now)).toBe("Yesterday");
    expect(dayLabel(local(2026, 11, 29, 12, 0), now)).toBe("Sun, Nov 29, 2026");
    expect(dayLabel(local(2025, 12, 1, 0, 1), now)).toBe("Mon, Dec 1, 2025");
  });
});
