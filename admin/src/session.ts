/**
 * The administrator's JWT lives in sessionStorage only (never a cookie, never a URL): it is gone
 * when the tab closes. A token handed over once in the URL fragment (`/admin/#token=<jwt>`) is
 * moved here and removed from the address bar before anything else runs.
 */
const KEY = "lead-provider-admin-token";

export function getToken(): string | null {
  return sessionStorage.getItem(KEY);
}

export function setToken(token: string): void {
  sessionStorage.setItem(KEY, token.trim());
}

export function clearToken(): void {
  sessionStorage.removeItem(KEY);
}

const SIGNED_OUT = "lead-provider-admin-signed-out";

/** Why the console signed out (a refused or expired token), for the sign-in page to say. */
export function rememberSignOut(reason: string): void {
  sessionStorage.setItem(SIGNED_OUT, reason);
}

/** The reason of the last sign-out, once: reading it forgets it. */
export function takeSignOutReason(): string | null {
  const reason = sessionStorage.getItem(SIGNED_OUT);
  sessionStorage.removeItem(SIGNED_OUT);
  return reason;
}

/**
 * Takes `#token=…` from the address bar, keeps it, and rewrites the URL without it. When this tab
 * is already signed in with another token, the person is asked first: a link cannot silently
 * swap whose session this is.
 */
export function adoptTokenFromFragment(confirmReplace: (message: string) => boolean = (m) => window.confirm(m)): void {
  const match = /(?:^#|&)token=([^&]+)/.exec(window.location.hash);
  if (!match?.[1]) return;
  const offered = decodeURIComponent(match[1]).trim();
  const current = getToken();
  const who = (token: string | null) => String(claimsOf(token).sub ?? "an unnamed administrator");
  if (
    current === null ||
    current === offered ||
    confirmReplace(
      `This link signs you in as ${who(offered)}. You are signed in as ${who(current)} in this tab. Replace that session?`,
    )
  ) {
    setToken(offered);
  }
  const rest = window.location.hash.replace(/(^#|&)token=[^&]+/, "").replace(/^#&?/, "");
  window.history.replaceState(
    null,
    "",
    `${window.location.pathname}${window.location.search}${rest ? `#${rest}` : ""}`,
  );
}

/** The token's claims, read without verifying (the service verifies; this only labels the UI). */
export function claimsOf(token: string | null): Record<string, unknown> {
  try {
    const payload = token?.split(".")[1];
    if (!payload) return {};
    return JSON.parse(atob(payload.replace(/-/g, "+").replace(/_/g, "/"))) as Record<string, unknown>;
  } catch {
    return {};
  }
}
