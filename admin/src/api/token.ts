// The server's access token. `cafleet server` prints the address that opens the page with
// `?token=`; the page keeps it for the browser session, takes it out of the address bar, and
// sends it on every API call. Without one (or after a 401) the token dialog asks for it.

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

/** The token a `?token=` in `href` carries, and the same-origin address without it. */
export function splitAddressToken(href: string): { token: string | null; address: string } | null {
  const url = new URL(href);
  if (!url.searchParams.has("token")) return null;
  const token = url.searchParams.get("token")?.trim() || null;
  url.searchParams.delete("token");
  return { token, address: url.pathname + url.search + url.hash };
}

/**
 * Keeps the address's token for this browser session and removes it from the address bar,
 * so it is neither in the history nor shared with a copied link.
 */
export function adoptAddressToken(): void {
  const found = splitAddressToken(window.location.href);
  if (!found) return;
  if (found.token) {
    try {
      sessionStorage.setItem(KEY, found.token);
    } catch {
      // storage refused: the dialog asks on the first 401
    }
  }
  window.history.replaceState(window.history.state, "", found.address);
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
