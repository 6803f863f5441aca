// Composer mentions: `@<slug>` / `@all` at the start of a message (behavior spec §11.4).

export interface Mentionable {
  agent_id: number;
  name: string;
}

export type ParsedMessage =
  | { ok: true; to: number | "*"; body: string }
  | { ok: false; error: string };

export const ALL = "all";
export const MAX_CANDIDATES = 6;

export const ERR_NO_MENTION = "Start the message with @<agent> or @all";
export const ERR_EMPTY_BODY = "Message body is empty";
export const ERR_MULTI = "Multi-recipient unicast not supported in first cut; use @all for broadcast";
export const ERR_ALL_COMBINED = "@all cannot be combined with other mentions";
export const errUnknown = (token: string): string => `No active agent named '@${token}'`;
export const errAmbiguous = (token: string): string => `Ambiguous mention '@${token}'`;

/** Name lowercased, every run of non-alphanumerics turned into one `-`. */
export function slugify(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, "-");
}

const LEADING_MENTION = /^@([A-Za-z0-9_-]+)(?=\s|$)/;

/** Validates a composer text against the agents that may receive it. */
export function parseMessage(text: string, recipients: readonly Mentionable[]): ParsedMessage {
  let rest = text.trimStart();
  const tokens: string[] = [];
  for (let m = LEADING_MENTION.exec(rest); m; m = LEADING_MENTION.exec(rest)) {
    tokens.push(m[1] ?? "");
    rest = rest.slice(m[0].length).trimStart();
  }
  if (tokens.length === 0) return { ok: false, error: ERR_NO_MENTION };

  const body = rest.trimEnd();
  const isAll = (t: string): boolean => t.toLowerCase() === ALL;
  if (tokens.some(isAll)) {
    if (!tokens.every(isAll)) return { ok: false, error: ERR_ALL_COMBINED };
    return body ? { ok: true, to: "*", body } : { ok: false, error: ERR_EMPTY_BODY };
  }
  if (new Set(tokens.map((t) => t.toLowerCase())).size > 1) return { ok: false, error: ERR_MULTI };

  const token = tokens[0] ?? "";
  const matches = recipients.filter((r) => slugify(r.name) === token.toLowerCase());
  const [target] = matches;
  if (!target) return { ok: false, error: errUnknown(token) };
  if (matches.length > 1) return { ok: false, error: errAmbiguous(token) };
  return body ? { ok: true, to: target.agent_id, body } : { ok: false, error: ERR_EMPTY_BODY };
}

export interface MentionQuery {
  /** What follows the `@` up to the caret. */
  query: string;
  /** Index of the `@`. */
  start: number;
  /** End of the whole token (the caret may sit inside it). */
  end: number;
}

const TOKEN_CHAR = /[A-Za-z0-9_-]/;

/** The `@token` the caret is in, if any (an `@` at the start or after whitespace). */
export function mentionAt(text: string, caret: number): MentionQuery | null {
  let start = caret;
  while (start > 0 && TOKEN_CHAR.test(text.charAt(start - 1))) start -= 1;
  if (start === 0 || text.charAt(start - 1) !== "@") return null;
  const at = start - 1;
  if (at > 0 && !/\s/.test(text.charAt(at - 1))) return null;
  let end = caret;
  while (end < text.length && TOKEN_CHAR.test(text.charAt(end))) end += 1;
  return { query: text.slice(start, caret), start: at, end };
}

export type Candidate = { kind: "all"; slug: string } | { kind: "agent"; slug: string; agent: Mentionable };

/** Autocomplete list: `all` first, then matching agents; at most six. */
export function candidatesFor(query: string, recipients: readonly Mentionable[]): Candidate[] {
  const q = query.toLowerCase();
  const list: Candidate[] = [];
  if (ALL.startsWith(q)) list.push({ kind: "all", slug: ALL });
  for (const agent of recipients) {
    const slug = slugify(agent.name);
    if (slug.startsWith(q) || agent.name.toLowerCase().startsWith(q)) {
      list.push({ kind: "agent", slug, agent });
    }
  }
  return list.slice(0, MAX_CANDIDATES);
}

/** Replaces the mention token with `@<slug> ` and returns the new text and caret. */
export function insertMention(
  text: string,
  mention: MentionQuery,
  slug: string,
): { text: string; caret: number } {
  const replacement = `@${slug} `;
  const tail = text.slice(mention.end).replace(/^ /, "");
  return {
    text: text.slice(0, mention.start) + replacement + tail,
    caret: mention.start + replacement.length,
  };
}
