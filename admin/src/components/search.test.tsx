import { renderToString } from "preact-render-to-string";
import { describe, expect, it } from "vitest";
import { snippetParts } from "../lib/snippet";
import { message } from "../test/fixtures";
import { SearchHitView } from "./SearchBox";

const NOW = Date.parse("2026-11-29T08:05:00.000Z");

describe("snippetParts", () => {
  it("cuts the snippet at the server's marks", () => {
    expect(snippetParts("please «review» the «login» form")).toEqual([
      { text: "please ", marked: false },
      { text: "review", marked: true },
      { text: " the ", marked: false },
      { text: "login", marked: true },
      { text: " form", marked: false },
    ]);
  });

  it("keeps an unpaired mark as text", () => {
    expect(snippetParts("a « b")).toEqual([{ text: "a « b", marked: false }]);
    expect(snippetParts("«x» and » y")).toEqual([
      { text: "x", marked: true },
      { text: " and » y", marked: false },
    ]);
    expect(snippetParts("")).toEqual([]);
  });
});

describe("SearchHitView", () => {
  it("shows sender → recipient, the time and the snippet with <mark>", () => {
    const hit = {
      message: message({ task_id: 42, created_at: "2026-11-29T08:00:00.000000+00:00" }),
      score: 3.2,
      snippet: "deploy «staging» now",
    };
    const html = renderToString(<SearchHitView hit={hit} now={NOW} />);
    expect(html).toContain("<strong>Director</strong>");
    expect(html).toContain("<strong>coder</strong>");
    expect(html).toContain("→");
    expect(html).toContain("#42");
    expect(html).toContain(">5m ago</time>");
    expect(html).toContain('<span class="hit-snippet">deploy <mark>staging</mark> now</span>');
  });

  it("escapes whatever the body holds, marked words included", () => {
    const hit = { message: message(), score: 1, snippet: `<img src=x onerror=alert(1)> «<b>bold</b>»` };
    const html = renderToString(<SearchHitView hit={hit} now={NOW} />);
    expect(html).not.toContain("<img");
    expect(html).not.toContain("<b>");
    expect(html).toContain("&lt;img src=x onerror=alert(1)>");
    expect(html).toContain("<mark>&lt;b>bold&lt;/b></mark>");
  });

  it("names a broadcast copy's recipient and an unnamed agent by id", () => {
    const hit = { message: message({ to_agent_name: null, to_agent_id: 9 }), score: 1, snippet: "x" };
    expect(renderToString(<SearchHitView hit={hit} now={NOW} />)).toContain("<strong>agent 9</strong>");
  });
});
