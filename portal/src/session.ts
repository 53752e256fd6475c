/**
 * What the portal keeps in the browser: nothing secret but an invite or reset token on its way to the
 * password page (sessionStorage, this tab only). The session itself is the HttpOnly cookie the
 * service sets, which no script here can read.
 */
const INVITE = "portal.invite";
const RESET = "portal.reset";
const SIGNED_OUT = "portal.signedOut";

/** Moves `#invite=…` out of the address bar into this tab's storage and opens the password page. */
export function adoptInviteFromFragment(): void {
  const match = /^#invite=([A-Za-z0-9_-]+)$/.exec(window.location.hash);
  if (!match?.[1]) return;
  sessionStorage.setItem(INVITE, match[1]);
  window.history.replaceState(null, "", "/portal/invite");
}

/** Moves `#reset=…` (an e-mailed password-reset link) the same way, and opens the new-password page. */
export function adoptResetFromFragment(): void {
  const match = /^#reset=([A-Za-z0-9_-]+)$/.exec(window.location.hash);
  if (!match?.[1]) return;
  sessionStorage.setItem(RESET, match[1]);
  window.history.replaceState(null, "", "/portal/reset");
}

export const resetToken = (): string | null => sessionStorage.getItem(RESET);
export const forgetReset = (): void => sessionStorage.removeItem(RESET);

export const inviteToken = (): string | null => sessionStorage.getItem(INVITE);
export const forgetInvite = (): void => sessionStorage.removeItem(INVITE);

/** Why the user was signed out, shown once on the sign-in page. */
export function rememberSignOut(reason: string): void {
  if (!sessionStorage.getItem(SIGNED_OUT)) sessionStorage.setItem(SIGNED_OUT, reason);
}
export function takeSignOutReason(): string | null {
  const reason = sessionStorage.getItem(SIGNED_OUT);
  sessionStorage.removeItem(SIGNED_OUT);
  return reason;
}
