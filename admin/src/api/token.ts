// Access token for a server bound off loopback (behavior spec §5.3): asked once, kept for the
// browser session.

const KEY = "cafleet-admin-token";

/** Shows the token dialog; resolves with what the user entered. */
export type TokenPrompt = (rejected: boolean) => Promise<string>;

let prompt: TokenPrompt | null = null;
let pending: Promise<string> | null = null;

export function setTokenPrompt(fn: TokenPrompt | null): void {
  prompt = fn;
}

export function storedToken(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function authHeader(): Record<string, string> {
  const token = storedToken();
  return token ? { Authorization: `Bearer ${token}` } : {};
}

/**
 * Called after a 401. Every request that fails at the same time waits for the same dialog.
 * `sentToken` is the token the failed request carried: if another request already replaced
 * it, the caller can just retry.
 */
export async function requestToken(sentToken: string | null): Promise<boolean> {
  const current = storedToken();
  if (current !== sentToken && current !== null) return true;
  if (!prompt) return false;
  if (!pending) {
    const ask = prompt;
    pending = ask(sentToken !== null).finally(() => {
      pending = null;
    });
  }
  const token = await pending;
  try {
    sessionStorage.setItem(KEY, token);
  } catch {
    return false;
  }
  return true;
}
