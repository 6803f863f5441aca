import { useEffect, useRef, useState } from "preact/hooks";
import { setTokenPrompt } from "../api/token";

interface Ask {
  rejected: boolean;
  resolve: (token: string) => void;
}

/** Asks for the server's access token when the API answers 401 (none given, or a wrong one). */
export function TokenGate() {
  const [ask, setAsk] = useState<Ask | null>(null);
  useEffect(() => {
    setTokenPrompt((rejected) => new Promise<string>((resolve) => setAsk({ rejected, resolve })));
    return () => setTokenPrompt(null);
  }, []);
  if (!ask) return null;
  return (
    <TokenDialog
      rejected={ask.rejected}
      onSubmit={(token) => {
        setAsk(null);
        ask.resolve(token);
      }}
    />
  );
}

function TokenDialog({ rejected, onSubmit }: { rejected: boolean; onSubmit: (token: string) => void }) {
  const [value, setValue] = useState("");
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  return (
    <div class="modal-backdrop" role="dialog" aria-modal="true" aria-labelledby="token-title">
      <form
        class="modal"
        onSubmit={(e) => {
          e.preventDefault();
          if (value.trim()) onSubmit(value.trim());
        }}
      >
        <h2 id="token-title">Access token required</h2>
        <p class="muted">
          The admin WebUI always needs its access token. Open the address <code>cafleet server</code> printed (it
          ends in <code>?token=</code>), or enter that token, the one in the server&apos;s token file, or your{" "}
          <code>CAFLEET_WEBUI_TOKEN</code>. It is kept for this browser session only.
        </p>
        {rejected && (
          <p class="form-error" role="alert">
            That token was not accepted.
          </p>
        )}
        <label for="token-input">Access token</label>
        <input
          id="token-input"
          ref={input}
          type="password"
          autoComplete="off"
          required
          value={value}
          onInput={(e) => setValue(e.currentTarget.value)}
        />
        <button type="submit" class="button button-primary">
          Continue
        </button>
      </form>
    </div>
  );
}
