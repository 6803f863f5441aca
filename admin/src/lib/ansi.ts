// A pane's screen as `tmux capture-pane -e` gives it (text with ANSI SGR escapes) turned into
// HTML. Colours and attributes become spans; every other escape and control character is
// dropped, and all text is HTML-escaped, so nothing a pane shows can add markup to the page.
// The 16 basic colours are classes (each theme has its palette); 256 and true colours are
// inline rgb() values computed here from numbers, never copied from the input.

type Color = { kind: "index"; n: number } | { kind: "rgb"; r: number; g: number; b: number };

interface Style {
  fg: Color | null;
  bg: Color | null;
  bold: boolean;
  dim: boolean;
  italic: boolean;
  underline: boolean;
  inverse: boolean;
}

const PLAIN: Style = {
  fg: null,
  bg: null,
  bold: false,
  dim: false,
  italic: false,
  underline: false,
  inverse: false,
};

// CSI (7-bit or C1), OSC and the string sequences up to their terminator, any other escape,
// then lone control characters (tab and newline are kept).
const TOKENS =
  /(?:\x1b\[|\x9b)([0-?]*)[ -/]*([@-~])|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[PX^_][^\x1b\x9c]*(?:\x1b\\|\x9c)?|\x1b[ -/]*[0-~]?|[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

const HTML_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);

const CUBE = [0, 95, 135, 175, 215, 255];

/** The xterm 256-colour palette beyond the first 16: a 6×6×6 cube, then 24 greys. */
export function xterm256(n: number): [number, number, number] {
  if (n >= 232) {
    const v = 8 + 10 * (n - 232);
    return [v, v, v];
  }
  const i = n - 16;
  return [CUBE[Math.floor(i / 36)] ?? 0, CUBE[Math.floor(i / 6) % 6] ?? 0, CUBE[i % 6] ?? 0];
}

const byte = (text: string | undefined): number | null => {
  if (text === undefined || !/^\d{1,3}$/.test(text)) return null;
  const n = Number(text);
  return n <= 255 ? n : null;
};

/** `5;n` or `2;r;g;b` (after 38/48), from `args`; null when malformed. */
function extendedColor(args: readonly (string | undefined)[]): Color | null {
  if (args[0] === "5") {
    const n = byte(args[1]);
    return n === null ? null : { kind: "index", n };
  }
  if (args[0] === "2") {
    // the colon form may carry a colour-space id first: 38:2::r:g:b or 38:2:id:r:g:b
    const rgb = args.length >= 5 ? args.slice(2, 5) : args.slice(1, 4);
    const [r, g, b] = rgb.map(byte);
    return r == null || g == null || b == null ? null : { kind: "rgb", r, g, b };
  }
  return null;
}

/** The style after one SGR sequence (`params` as between `ESC [` and `m`). */
export function applySgr(style: Style, params: string): Style {
  const next = { ...style };
  const parts = params === "" ? ["0"] : params.split(";");
  for (let i = 0; i < parts.length; i++) {
    const sub = (parts[i] ?? "").split(":");
    const code = sub[0] === "" ? 0 : Number(sub[0]);
    if (code === 38 || code === 48 || code === 58) {
      let color: Color | null;
      if (sub.length > 1) {
        color = extendedColor(sub.slice(1));
      } else {
        const kind = parts[i + 1];
        const length = kind === "5" ? 2 : kind === "2" ? 4 : 1;
        color = extendedColor(parts.slice(i + 1, i + 1 + length));
        i += length;
      }
      if (color && code === 38) next.fg = color;
      if (color && code === 48) next.bg = color;
      continue; // 58: the underline colour, not shown
    }
    if (code === 0) Object.assign(next, PLAIN);
    else if (code === 1) next.bold = true;
    else if (code === 2) next.dim = true;
    else if (code === 3) next.italic = true;
    else if (code === 4) next.underline = sub[1] !== "0";
    else if (code === 7) next.inverse = true;
    else if (code === 21) next.underline = true;
    else if (code === 22) next.bold = next.dim = false;
    else if (code === 23) next.italic = false;
    else if (code === 24) next.underline = false;
    else if (code === 27) next.inverse = false;
    else if (code >= 30 && code <= 37) next.fg = { kind: "index", n: code - 30 };
    else if (code === 39) next.fg = null;
    else if (code >= 40 && code <= 47) next.bg = { kind: "index", n: code - 40 };
    else if (code === 49) next.bg = null;
    else if (code >= 90 && code <= 97) next.fg = { kind: "index", n: code - 90 + 8 };
    else if (code >= 100 && code <= 107) next.bg = { kind: "index", n: code - 100 + 8 };
  }
  return next;
}

function paint(color: Color | null, layer: "fg" | "bg", classes: string[], styles: string[]): void {
  if (color === null) return;
  if (color.kind === "index" && color.n < 16) {
    classes.push(`ansi-${layer}-${color.n}`);
    return;
  }
  const [r, g, b] = color.kind === "rgb" ? [color.r, color.g, color.b] : xterm256(color.n);
  styles.push(`${layer === "fg" ? "color" : "background-color"}:rgb(${r},${g},${b})`);
}

/** The opening tag for a style, or "" for the terminal's own colours and no attributes. */
export function openTag(style: Style): string {
  const classes: string[] = [];
  const styles: string[] = [];
  const fg = style.inverse ? style.bg : style.fg;
  const bg = style.inverse ? style.fg : style.bg;
  if (style.inverse && fg === null) classes.push("ansi-fg-inverse");
  if (style.inverse && bg === null) classes.push("ansi-bg-inverse");
  paint(fg, "fg", classes, styles);
  paint(bg, "bg", classes, styles);
  if (style.bold) classes.push("ansi-bold");
  if (style.dim) classes.push("ansi-dim");
  if (style.italic) classes.push("ansi-italic");
  if (style.underline) classes.push("ansi-underline");
  if (classes.length === 0 && styles.length === 0) return "";
  const cls = classes.length ? ` class="${classes.join(" ")}"` : "";
  const css = styles.length ? ` style="${styles.join(";")}"` : "";
  return `<span${cls}${css}>`;
}

/** The screen as HTML: escaped text in spans, one per run of the same style. */
export function ansiToHtml(screen: string): string {
  let html = "";
  let style = PLAIN;
  let open = "";
  const emit = (text: string): void => {
    if (text === "") return;
    const tag = openTag(style);
    if (tag !== open) {
      if (open) html += "</span>";
      html += tag;
      open = tag;
    }
    html += escapeHtml(text);
  };
  let last = 0;
  for (const match of screen.matchAll(TOKENS)) {
    emit(screen.slice(last, match.index));
    last = match.index + match[0].length;
    // SGR only: a private sequence ending in m (CSI > 4 ; 2 m, key modes) sets no style
    if (match[2] === "m" && /^[\d;:]*$/.test(match[1] ?? "")) style = applySgr(style, match[1] ?? "");
  }
  emit(screen.slice(last));
  return open ? `${html}</span>` : html;
}
