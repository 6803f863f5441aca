import { describe, expect, it } from "vitest";
import { ansiToHtml, escapeHtml, xterm256 } from "./ansi";

const ESC = "\x1b";
const sgr = (params: string): string => `${ESC}[${params}m`;

describe("ansiToHtml", () => {
  it("leaves plain text as escaped text, newlines and tabs kept", () => {
    expect(ansiToHtml("a\tb\nc")).toBe("a\tb\nc");
    expect(ansiToHtml(`<script>alert("x")</script> & 'q'`)).toBe(
      "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;",
    );
  });

  it("escapes text inside coloured runs too", () => {
    expect(ansiToHtml(`${sgr("31")}<b>${sgr("0")}`)).toBe('<span class="ansi-fg-1">&lt;b&gt;</span>');
  });

  it("maps the 16 basic colours to classes, foreground and background", () => {
    expect(ansiToHtml(`${sgr("32")}ok${sgr("39")} ${sgr("44")}bg${sgr("49")}`)).toBe(
      '<span class="ansi-fg-2">ok</span> <span class="ansi-bg-4">bg</span>',
    );
    expect(ansiToHtml(`${sgr("91;103")}x`)).toBe('<span class="ansi-fg-9 ansi-bg-11">x</span>');
    expect(ansiToHtml(`${sgr("38;5;3")}x`)).toBe('<span class="ansi-fg-3">x</span>');
  });

  it("computes the 256-colour cube and greys as rgb()", () => {
    expect(xterm256(16)).toEqual([0, 0, 0]);
    expect(xterm256(196)).toEqual([255, 0, 0]);
    expect(xterm256(208)).toEqual([255, 135, 0]);
    expect(xterm256(232)).toEqual([8, 8, 8]);
    expect(xterm256(255)).toEqual([238, 238, 238]);
    expect(ansiToHtml(`${sgr("38;5;208")}x`)).toBe('<span style="color:rgb(255,135,0)">x</span>');
    expect(ansiToHtml(`${sgr("48;5;232")}x`)).toBe('<span style="background-color:rgb(8,8,8)">x</span>');
  });

  it("takes true colour in the semicolon and the colon forms", () => {
    expect(ansiToHtml(`${sgr("38;2;10;20;30")}x`)).toBe('<span style="color:rgb(10,20,30)">x</span>');
    expect(ansiToHtml(`${sgr("48:2::1:2:3")}x`)).toBe('<span style="background-color:rgb(1,2,3)">x</span>');
    expect(ansiToHtml(`${sgr("38:2:4:5:6")}x`)).toBe('<span style="color:rgb(4,5,6)">x</span>');
    // a code after the colour is still read
    expect(ansiToHtml(`${sgr("38;2;1;2;3;1")}x`)).toBe('<span class="ansi-bold" style="color:rgb(1,2,3)">x</span>');
  });

  it("ignores malformed colours instead of inventing one", () => {
    expect(ansiToHtml(`${sgr("38;2;300;0;0")}x`)).toBe("x");
    expect(ansiToHtml(`${sgr("38;5")}x`)).toBe("x");
    expect(ansiToHtml(`${sgr("38")}x`)).toBe("x");
  });

  it("shows bold, dim, italic and underline, and turns each off", () => {
    expect(ansiToHtml(`${sgr("1")}b${sgr("22")}${sgr("2")}d${sgr("22")}${sgr("3")}i${sgr("23")}${sgr("4")}u${sgr("24")}n`)).toBe(
      '<span class="ansi-bold">b</span><span class="ansi-dim">d</span><span class="ansi-italic">i</span><span class="ansi-underline">u</span>n',
    );
    expect(ansiToHtml(`${sgr("4:3")}curly${sgr("4:0")}off`)).toBe('<span class="ansi-underline">curly</span>off');
  });

  it("swaps the colours under inverse, the terminal's own ones included", () => {
    expect(ansiToHtml(`${sgr("7")}x`)).toBe('<span class="ansi-fg-inverse ansi-bg-inverse">x</span>');
    expect(ansiToHtml(`${sgr("31;7")}x`)).toBe('<span class="ansi-fg-inverse ansi-bg-1">x</span>');
    expect(ansiToHtml(`${sgr("31;42;7")}x${sgr("27")}y`)).toBe(
      '<span class="ansi-fg-2 ansi-bg-1">x</span><span class="ansi-fg-1 ansi-bg-2">y</span>',
    );
  });

  it("resets with 0 and with an empty SGR", () => {
    expect(ansiToHtml(`${sgr("1;31")}a${sgr("")}b${sgr("1")}c${sgr("0")}d`)).toBe(
      '<span class="ansi-fg-1 ansi-bold">a</span>b<span class="ansi-bold">c</span>d',
    );
  });

  it("merges runs of the same style into one span", () => {
    expect(ansiToHtml(`${sgr("32")}a${sgr("32")}b`)).toBe('<span class="ansi-fg-2">ab</span>');
  });

  it("drops every other escape and control character", () => {
    const screen = [
      `${ESC}]0;window title${ESC}\\`,
      `${ESC}]8;;http://x${ESC}\\link${ESC}]8;;\x07`,
      `${ESC}[2K${ESC}[?25l${ESC}[>4;2m`,
      `${ESC}Pdevice${ESC}\\`,
      `${ESC}(B${ESC}=`,
      "a\rb\x07c\x00d\x7fe",
    ].join("");
    expect(ansiToHtml(screen)).toBe("linkabcde");
  });

  it("reads the one-character CSI (C1) like ESC [", () => {
    expect(ansiToHtml("\x9b31mred\x9b0m")).toBe('<span class="ansi-fg-1">red</span>');
  });

  it("closes an open span at the end", () => {
    expect(ansiToHtml(`${sgr("1")}tail`)).toBe('<span class="ansi-bold">tail</span>');
    expect(ansiToHtml("")).toBe("");
  });
});

describe("escapeHtml", () => {
  it("escapes the five characters that matter in text and attributes", () => {
    expect(escapeHtml(`&<>"'`)).toBe("&amp;&lt;&gt;&quot;&#39;");
  });
});
