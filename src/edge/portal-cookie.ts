/**
 * The provider portal's session cookie, `__Host-portal`: HttpOnly (no script reads it), Secure
 * (over plain http chromium keeps it from http://localhost, 127.0.0.1 and [::1], not from 0.0.0.0
 * or another name for the machine: test/portal-cookie.test.ts; so development on loopback
 * behaves like production), SameSite=Strict, Path=/ and no Domain (what the `__Host-` prefix
 * demands). Its value is a random token; the server keeps only its digest.
 */
import { parse, serialize } from "cookie";

export const PORTAL_COOKIE = "__Host-portal";

/** The session token from a Cookie header, if there is one. */
export function portalSessionToken(cookieHeader: string | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  const value = parse(cookieHeader)[PORTAL_COOKIE];
  return value === undefined || value === "" ? undefined : value;
}

export function portalCookie(token: string, expiresAt: Date, now: Date): string {
  return serialize(PORTAL_COOKIE, token, {
    httpOnly: true,
    secure: true,
    sameSite: "strict",
    path: "/",
    maxAge: Math.max(0, Math.round((expiresAt.getTime() - now.getTime()) / 1000)),
  });
}

export function clearedPortalCookie(): string {
  return serialize(PORTAL_COOKIE, "", { httpOnly: true, secure: true, sameSite: "strict", path: "/", maxAge: 0 });
}
