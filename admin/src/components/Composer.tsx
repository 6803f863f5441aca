import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import type { TargetedEvent } from "preact";
import {
  candidatesFor,
  insertMention,
  mentionAt,
  parseMessage,
  slugify,
  type Candidate,
  type Mentionable,
  type MentionQuery,
} from "../lib/mentions";
import { avatarHue, initials } from "../lib/avatar";
import { READ_ONLY_NOTE } from "../lib/fleets";
import { addressed, replyField, type ReplyDraft } from "../lib/reply";
import { CloseIcon, SendIcon, Spinner, UsersIcon } from "./icons";

interface Props {
  /** Active agents that may be mentioned (the Administrator is never one). */
  recipients: Mentionable[];
  /** False when the fleet has no active Administrator to send as. */
  enabled: boolean;
  /** The fleet was deleted: the composer stays disabled and says why. */
  readOnly?: boolean;
  /** The message being answered: the composer is addressed to its other party. */
  reply?: ReplyDraft | null;
  onClearReply?: () => void;
  onSend: (to: number | "*", body: string, inReplyTo: number | null) => Promise<void>;
}

/** "replying to #N" above the composer, with a button that clears it. */
export function ReplyChip({ draft, onClear }: { draft: ReplyDraft; onClear: () => void }) {
  return (
    <div class="reply-chip" data-testid="reply-chip">
      <span>
        replying to <strong>#{draft.taskId}</strong> · @{draft.toName}
      </span>
      <button type="button" class="icon-button icon-button-sm" aria-label="Clear reply" title="Clear reply" onClick={onClear}>
        <CloseIcon />
      </button>
    </div>
  );
}

const LISTBOX_ID = "mention-options";
const optionId = (i: number): string => `mention-option-${i}`;

function CandidateIcon({ candidate }: { candidate: Candidate }) {
  if (candidate.kind === "all") {
    return (
      <span class="avatar avatar-sm avatar-all" aria-hidden="true">
        <UsersIcon />
      </span>
    );
  }
  const { agent } = candidate;
  return (
    <span class="avatar avatar-sm" style={{ "--hue": String(avatarHue(agent.agent_id)) }} aria-hidden="true">
      {initials(agent.name)}
    </span>
  );
}

export function Composer({
  recipients,
  enabled: canSend,
  readOnly = false,
  reply = null,
  onClearReply = () => {},
  onSend,
}: Props) {
  const enabled = canSend && !readOnly;
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  const [mention, setMention] = useState<MentionQuery | null>(null);
  const [active, setActive] = useState(0);
  const area = useRef<HTMLTextAreaElement>(null);
  const caretAfterRender = useRef<number | null>(null);
  const refocus = useRef(false);

  useEffect(() => {
    // A reply was picked: address the draft to the other party and put the caret at its end.
    if (reply === null) return;
    const next = addressed(text, slugify(reply.toName));
    setError(null);
    if (next !== text) {
      caretAfterRender.current = next.length; // placed once the new text is rendered
      setText(next);
      return;
    }
    area.current?.focus();
    area.current?.setSelectionRange(next.length, next.length);
  }, [reply?.taskId]);

  useEffect(() => {
    // The textarea is disabled while sending, which drops the focus: give it back.
    if (!sending && refocus.current) {
      refocus.current = false;
      area.current?.focus();
    }
  }, [sending]);

  const candidates = useMemo(
    () => (mention ? candidatesFor(mention.query, recipients) : []),
    [mention, recipients],
  );
  const open = candidates.length > 0;
  const activeIndex = Math.min(active, Math.max(candidates.length - 1, 0));

  useLayoutEffect(() => {
    const el = area.current;
    if (!el) return;
    el.style.height = "auto";
    el.style.height = `${Math.min(el.scrollHeight, 180)}px`;
    const caret = caretAfterRender.current;
    if (caret !== null) {
      caretAfterRender.current = null;
      el.focus();
      el.setSelectionRange(caret, caret);
    }
  }, [text]);

  const syncMention = (el: HTMLTextAreaElement): void => {
    const next = el.selectionStart === el.selectionEnd ? mentionAt(el.value, el.selectionStart) : null;
    if (next?.start !== mention?.start || next?.query !== mention?.query) setActive(0);
    setMention(next);
  };

  const pick = (candidate: Candidate): void => {
    if (!mention) return;
    const next = insertMention(text, mention, candidate.slug);
    caretAfterRender.current = next.caret;
    setText(next.text);
    setMention(null);
    setError(null);
  };

  const submit = async (): Promise<void> => {
    if (!enabled || sending) return;
    const parsed = parseMessage(text, recipients);
    if (!parsed.ok) {
      setError(parsed.error);
      return;
    }
    const answer = replyField(parsed.to, reply);
    if (!answer.ok) {
      setError(answer.error);
      return;
    }
    setSending(true);
    setError(null);
    try {
      await onSend(parsed.to, parsed.body, answer.inReplyTo);
      setText("");
      setMention(null);
      if (reply !== null) onClearReply();
    } catch (err) {
      setError(err instanceof Error ? err.message : "Failed to send message.");
    } finally {
      setSending(false);
      refocus.current = true;
    }
  };

  const onKeyDown = (e: KeyboardEvent): void => {
    if (e.isComposing) return;
    if (open && (e.key === "ArrowDown" || e.key === "ArrowUp")) {
      e.preventDefault();
      const step = e.key === "ArrowDown" ? 1 : -1;
      setActive((activeIndex + step + candidates.length) % candidates.length);
      return;
    }
    if (open && (e.key === "Enter" || e.key === "Tab") && !e.shiftKey) {
      e.preventDefault();
      const candidate = candidates[activeIndex];
      if (candidate) pick(candidate);
      return;
    }
    if (open && e.key === "Escape") {
      e.preventDefault();
      setMention(null);
      return;
    }
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      void submit();
    }
  };

  const onInput = (e: TargetedEvent<HTMLTextAreaElement>): void => {
    const el = e.currentTarget;
    setText(el.value);
    setError(null);
    syncMention(el);
  };

  const onCaretMove = (e: Event): void => {
    if (e instanceof KeyboardEvent && ["ArrowUp", "ArrowDown", "Enter", "Tab", "Escape"].includes(e.key)) return;
    syncMention(e.currentTarget as HTMLTextAreaElement);
  };

  return (
    <form
      class="composer"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      {open && (
        <ul class="mention-menu" id={LISTBOX_ID} role="listbox" aria-label="Mention suggestions">
          {candidates.map((c, i) => (
            <li
              key={c.slug + (c.kind === "agent" ? c.agent.agent_id : "")}
              id={optionId(i)}
              role="option"
              aria-selected={i === activeIndex}
              class={`mention-option${i === activeIndex ? " is-active" : ""}`}
              onMouseDown={(e) => {
                e.preventDefault();
                pick(c);
              }}
              onMouseEnter={() => setActive(i)}
            >
              <CandidateIcon candidate={c} />
              <span class="mention-slug">@{c.slug}</span>
              <span class="mention-name">{c.kind === "all" ? "Everyone (broadcast)" : c.agent.name}</span>
            </li>
          ))}
        </ul>
      )}
      {reply && enabled && <ReplyChip draft={reply} onClear={onClearReply} />}
      <div class={`composer-box${enabled ? "" : " is-disabled"}`}>
        <label class="visually-hidden" for="composer-input">
          Message
        </label>
        <textarea
          id="composer-input"
          ref={area}
          rows={1}
          value={text}
          placeholder={
            enabled
              ? "@agent or @all message..."
              : readOnly
                ? READ_ONLY_NOTE
                : "Administrator unavailable — messaging disabled"
          }
          disabled={!enabled || sending}
          aria-autocomplete="list"
          aria-controls={LISTBOX_ID}
          aria-activedescendant={open ? optionId(activeIndex) : undefined}
          aria-invalid={error !== null}
          aria-describedby="composer-hint composer-error"
          onInput={onInput}
          onKeyDown={onKeyDown}
          onKeyUp={onCaretMove}
          onClick={onCaretMove}
          onBlur={() => setMention(null)}
        />
        <button
          type="submit"
          class="send-button"
          aria-label="Send"
          title="Send"
          disabled={!enabled || sending || text.trim() === ""}
        >
          {sending ? <Spinner size={16} /> : <SendIcon />}
        </button>
      </div>
      <div class="composer-foot">
        {readOnly ? (
          <p id="composer-hint" class="hint" data-testid="read-only-note">
            {READ_ONLY_NOTE}: the timeline can be read, nothing can be sent.
          </p>
        ) : (
          <p id="composer-hint" class="hint">
            <kbd>Enter</kbd> to send · <kbd>Shift+Enter</kbd> newline
          </p>
        )}
        <p id="composer-error" class="composer-error" role="alert">
          {error}
        </p>
      </div>
    </form>
  );
}
