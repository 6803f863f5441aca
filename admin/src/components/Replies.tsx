// The reply action and the "re: #N" marker, shared by the timeline and the drawer's lists.
import type { ReplyDraft } from "../lib/reply";
import { ReplyIcon } from "./icons";

/** "re: #N": the message this entry answers, a button that brings it into view. */
export function ReplyMarker({ taskId, onFocus }: { taskId: number; onFocus?: ((taskId: number) => void) | undefined }) {
  return (
    <button
      type="button"
      class="chip reply-ref"
      title={`In reply to message #${taskId}`}
      onClick={onFocus ? () => onFocus(taskId) : undefined}
    >
      re: #{taskId}
    </button>
  );
}

export function ReplyButton({ draft, onReply }: { draft: ReplyDraft; onReply: (draft: ReplyDraft) => void }) {
  return (
    <button
      type="button"
      class="entry-action"
      aria-label={`Reply to #${draft.taskId}`}
      title={`Reply to @${draft.toName}`}
      onClick={() => onReply(draft)}
    >
      <ReplyIcon /> Reply
    </button>
  );
}

