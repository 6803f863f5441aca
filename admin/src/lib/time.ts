// Time formatting for the page.

/** Floors an age the way the CLI does: `<N>s` below a minute, `<N>m` below an hour, else `<N>h`. */
export function humanizeSeconds(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  return `${Math.floor(s / 3600)}h`;
}

/** "just now", "5m ago", "3h ago", then days. */
export function relativeTime(iso: string, now: number = Date.now()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const seconds = (now - t) / 1000;
  if (seconds < 10) return "just now";
  if (seconds < 48 * 3600) return `${humanizeSeconds(seconds)} ago`;
  return `${Math.floor(seconds / 86400)}d ago`;
}

const DATE = new Intl.DateTimeFormat("en-US", { year: "numeric", month: "short", day: "numeric" });
const DATE_TIME = new Intl.DateTimeFormat("en-US", {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
});
const CLOCK = new Intl.DateTimeFormat("en-US", { hour: "2-digit", minute: "2-digit" });
const SECONDS_CLOCK = new Intl.DateTimeFormat("en-GB", {
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  hour12: false,
});

const HOUR_MINUTE = new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit", hour12: false });
const DAY = new Intl.DateTimeFormat("en-US", { weekday: "short", year: "numeric", month: "short", day: "numeric" });

const format = (f: Intl.DateTimeFormat, iso: string): string => {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : f.format(t);
};

export const formatDate = (iso: string): string => format(DATE, iso);
export const formatDateTime = (iso: string): string => format(DATE_TIME, iso);
export const formatClock = (iso: string): string => format(CLOCK, iso);
/** 24-hour local time with seconds, e.g. `12:03:04`. */
export const formatSeconds = (iso: string): string => format(SECONDS_CLOCK, iso);
/** 24-hour local clock time, e.g. `09:05`. */
export const formatHourMinute = (iso: string): string => format(HOUR_MINUTE, iso);

/** The local calendar day of a time, `YYYY-MM-DD` (sortable; "" for a bad date). */
export function localDay(iso: string | number): string {
  const t = typeof iso === "number" ? iso : Date.parse(iso);
  if (Number.isNaN(t)) return "";
  const d = new Date(t);
  const pad = (n: number): string => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** A day separator's words: `Today`, `Yesterday`, else e.g. `Sun, Nov 29, 2026`. */
export function dayLabel(iso: string, now: number = Date.now()): string {
  const day = localDay(iso);
  if (day === localDay(now)) return "Today";
  const yesterday = new Date(now);
  yesterday.setDate(yesterday.getDate() - 1);
  if (day === localDay(yesterday.getTime())) return "Yesterday";
  return format(DAY, iso);
}
