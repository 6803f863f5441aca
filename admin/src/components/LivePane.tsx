import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import type { PaneFrame } from "../api/types";
import { ansiToHtml } from "../lib/ansi";
import type { PaneFrames } from "../lib/panes";
import { formatDateTime } from "../lib/time";

const NEAR_BOTTOM_PX = 24;

/** The agent's latest frame; re-renders only when that agent's pane changed. */
export function usePaneFrame(frames: PaneFrames, agentId: number): PaneFrame | undefined {
  const [frame, setFrame] = useState(() => frames.get(agentId));
  useEffect(() => {
    setFrame(frames.get(agentId));
    return frames.subscribe(agentId, () => setFrame(frames.get(agentId)));
  }, [frames, agentId]);
  return frame;
}

interface ScreenProps {
  frame: PaneFrame | undefined;
  /** Who the pane belongs to, for its accessible name. */
  name: string;
  compact?: boolean;
}

/** A pane's screen, read-only with its colours, kept scrolled to the bottom unless the reader
 * scrolled up. */
export function PaneScreen({ frame, name, compact = false }: ScreenProps) {
  const box = useRef<HTMLPreElement>(null);
  const stick = useRef(true);
  const html = useMemo(() => (frame?.ansi == null ? "" : ansiToHtml(frame.ansi)), [frame?.ansi]);

  useLayoutEffect(() => {
    const el = box.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [html]);

  if (frame === undefined) {
    return (
      <p class="pane-note muted" data-testid="pane-waiting">
        Connecting to the pane…
      </p>
    );
  }
  if (frame.error !== null) {
    return (
      <p class="pane-note pane-error" data-testid="pane-error" title={frame.error}>
        {frame.error}
      </p>
    );
  }
  const onScroll = (): void => {
    const el = box.current;
    if (el) stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_BOTTOM_PX;
  };
  return (
    <pre
      ref={box}
      class={`terminal${compact ? " is-compact" : ""}`}
      tabIndex={0}
      aria-label={`Live pane of ${name}`}
      title={`Captured ${formatDateTime(frame.captured_at)}`}
      data-testid="live-pane"
      onScroll={onScroll}
      // ansiToHtml escapes every character of the screen; only its own spans are markup
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}

interface LivePaneProps {
  frames: PaneFrames;
  agentId: number;
  name: string;
  compact?: boolean;
}

export function LivePane({ frames, agentId, name, compact = false }: LivePaneProps) {
  const frame = usePaneFrame(frames, agentId);
  return <PaneScreen frame={frame} name={name} compact={compact} />;
}
