import { describe, expect, it } from "vitest";
import {
  candidatesFor,
  ERR_ALL_COMBINED,
  ERR_EMPTY_BODY,
  ERR_MULTI,
  ERR_NO_MENTION,
  insertMention,
  mentionAt,
  parseMessage,
  slugify,
} from "./mentions";

const agents = [
  { agent_id: 1, name: "Director" },
  { agent_id: 3, name: "coder" },
  { agent_id: 4, name: "Code Reviewer" },
  { agent_id: 5, name: "twin" },
  { agent_id: 6, name: "Twin" },
];

describe("slugify", () => {
  it("lowercases and turns non-alphanumerics into dashes", () => {
    expect(slugify("Director")).toBe("director");
    expect(slugify("Code Reviewer")).toBe("code-reviewer");
    expect(slugify("qa_bot.v2")).toBe("qa-bot-v2");
    expect(slugify("a  &  b")).toBe("a-b");
  });
});

describe("parseMessage", () => {
  it("sends to one agent by slug, case-insensitively", () => {
    expect(parseMessage("@coder please review", agents)).toEqual({ ok: true, to: 3, body: "please review" });
    expect(parseMessage("  @Code-Reviewer  look\nat this  ", agents)).toEqual({
      ok: true,
      to: 4,
      body: "look\nat this",
    });
  });

  it("broadcasts with @all", () => {
    expect(parseMessage("@all standup in 5", agents)).toEqual({ ok: true, to: "*", body: "standup in 5" });
    expect(parseMessage("@ALL hi", agents)).toEqual({ ok: true, to: "*", body: "hi" });
  });

  it("requires a leading mention", () => {
    expect(parseMessage("hello @coder", agents)).toEqual({ ok: false, error: ERR_NO_MENTION });
    expect(parseMessage("", agents)).toEqual({ ok: false, error: ERR_NO_MENTION });
    expect(parseMessage("@ hi", agents)).toEqual({ ok: false, error: ERR_NO_MENTION });
    expect(ERR_NO_MENTION).toBe("Start the message with @<agent> or @all");
  });

  it("names unknown and ambiguous mentions", () => {
    expect(parseMessage("@nobody hi", agents)).toEqual({ ok: false, error: "No active agent named '@nobody'" });
    expect(parseMessage("@twin hi", agents)).toEqual({ ok: false, error: "Ambiguous mention '@twin'" });
  });

  it("rejects an empty body", () => {
    expect(parseMessage("@coder   ", agents)).toEqual({ ok: false, error: ERR_EMPTY_BODY });
    expect(parseMessage("@all\n", agents)).toEqual({ ok: false, error: ERR_EMPTY_BODY });
    expect(ERR_EMPTY_BODY).toBe("Message body is empty");
  });

  it("rejects several recipients and @all mixed with names", () => {
    expect(parseMessage("@coder @director hi", agents)).toEqual({ ok: false, error: ERR_MULTI });
    expect(ERR_MULTI).toBe("Multi-recipient unicast not supported in first cut; use @all for broadcast");
    expect(parseMessage("@all @coder hi", agents)).toEqual({ ok: false, error: ERR_ALL_COMBINED });
  });
});

describe("mentionAt", () => {
  it("finds the token around the caret", () => {
    expect(mentionAt("@co", 3)).toEqual({ query: "co", start: 0, end: 3 });
    expect(mentionAt("hi @codx there", 6)).toEqual({ query: "co", start: 3, end: 8 });
    expect(mentionAt("@", 1)).toEqual({ query: "", start: 0, end: 1 });
  });

  it("ignores e-mail like text and plain words", () => {
    expect(mentionAt("me@host", 7)).toBeNull();
    expect(mentionAt("hello", 3)).toBeNull();
    expect(mentionAt("@coder hi", 9)).toBeNull();
  });
});

describe("candidatesFor", () => {
  it("puts all first and caps the list at six", () => {
    const many = Array.from({ length: 9 }, (_, i) => ({ agent_id: i + 10, name: `a${i}` }));
    const list = candidatesFor("", many);
    expect(list).toHaveLength(6);
    expect(list[0]).toEqual({ kind: "all", slug: "all" });
  });

  it("filters by prefix", () => {
    expect(candidatesFor("co", agents).map((c) => c.slug)).toEqual(["coder", "code-reviewer"]);
    expect(candidatesFor("a", agents).map((c) => c.slug)).toEqual(["all"]);
    expect(candidatesFor("zz", agents)).toEqual([]);
  });
});

describe("insertMention", () => {
  it("replaces the whole token and places the caret after a space", () => {
    const text = "@cod rest";
    const m = mentionAt(text, 2);
    expect(m).not.toBeNull();
    expect(insertMention(text, m!, "coder")).toEqual({ text: "@coder rest", caret: 7 });
    expect(insertMention("@a", mentionAt("@a", 2)!, "all")).toEqual({ text: "@all ", caret: 5 });
  });
});
