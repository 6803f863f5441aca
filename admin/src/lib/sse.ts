// A minimal parser for the `text/event-stream` format, fed with decoded text chunks.

export interface ServerEvent {
  event: string;
  data: string;
}

export class EventStreamParser {
  private buffer = "";
  private event = "";
  private data: string[] = [];

  push(chunk: string): ServerEvent[] {
    this.buffer += chunk;
    const out: ServerEvent[] = [];
    let newline = this.buffer.search(/\r\n|\r|\n/);
    while (newline !== -1) {
      const line = this.buffer.slice(0, newline);
      const width = this.buffer.startsWith("\r\n", newline) ? 2 : 1;
      // A lone CR at the end of a chunk may be the first half of CRLF: wait for more.
      if (width === 1 && this.buffer[newline] === "\r" && newline === this.buffer.length - 1) break;
      this.buffer = this.buffer.slice(newline + width);
      const dispatched = this.line(line);
      if (dispatched) out.push(dispatched);
      newline = this.buffer.search(/\r\n|\r|\n/);
    }
    return out;
  }

  private line(line: string): ServerEvent | null {
    if (line === "") {
      // Lenient: an `event:` line alone is enough to count as an event.
      const hasData = this.data.length > 0 || this.event !== "";
      const ev = { event: this.event || "message", data: this.data.join("\n") };
      this.event = "";
      this.data = [];
      return hasData ? ev : null;
    }
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.event = value;
    else if (field === "data") this.data.push(value);
    return null;
  }
}
