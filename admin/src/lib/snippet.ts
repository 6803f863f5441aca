// A search hit's snippet marks each matched word as «word» (the server's marks). The page
// shows them as <mark>; the parts are rendered as text, so the body can never add markup.

export interface SnippetPart {
  text: string;
  marked: boolean;
}

/** The snippet cut at its marks; an unpaired mark is kept as text. */
export function snippetParts(snippet: string): SnippetPart[] {
  const parts: SnippetPart[] = [];
  const push = (text: string, marked: boolean): void => {
    if (text === "") return;
    const previous = parts.at(-1);
    if (previous && previous.marked === marked) previous.text += text;
    else parts.push({ text, marked });
  };
  let rest = snippet;
  for (;;) {
    const open = rest.indexOf("«");
    const close = open === -1 ? -1 : rest.indexOf("»", open + 1);
    if (open === -1 || close === -1) break;
    push(rest.slice(0, open), false);
    push(rest.slice(open + 1, close), true);
    rest = rest.slice(close + 1);
  }
  push(rest, false);
  return parts;
}
