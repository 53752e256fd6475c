/**
 * Sign-in with the administrator's JWT from the company's identity provider. The token is checked
 * against the Management API before the console opens: a refused token is reported with the
 * service's reason; a valid token without the admin position opens the "lacks the admin position"
 * page instead of any data.
 */
import type { AuthProvider } from "react-admin";
import { api } from "./api.ts";
import { claimsOf, clearToken, getToken, rememberSignOut, setToken } from "./session.ts";

export const FORBIDDEN_PATH = "/forbidden";

/**
 * A development admin token from the service itself (`GET /admin/dev-token`), which gives one only
 * in development on the development secret; null anywhere else. The console holds no secret.
 */
export async function developmentToken(): Promise<string | null> {
  try {
    const response = await fetch("/admin/dev-token", { headers: { accept: "application/json" } });
    if (!response.ok) return null;
    const body = (await response.json()) as { token?: unknown };
    return typeof body.token === "string" ? body.token : null;
  } catch {
    return null;
  }
}

/** What the service says about the token: ok, forbidden (valid, not admin), or refused with its reason. */
async function probe(): Promise<{ kind: "ok" } | { kind: "forbidden" } | { kind: "refused"; reason: string }> {
  const { response, error } = await api.GET("/api/v1/lead_providers/", { params: { query: { page_size: 1 } } });
  if (response.ok) return { kind: "ok" };
  if (response.status === 403) return { kind: "forbidden" };
  const detail = (error as { detail?: string } | undefined)?.detail;
  return { kind: "refused", reason: detail ?? `the service answered ${response.status}` };
}

/**
 * No getPermissions: the console reads the token's claims itself (session.ts). With `requireAuth`,
 * react-admin's signed-out catch-all logs out on mount, and a getPermissions that resolves at once
 * re-rendered it after each redirect: a loop of some two thousand navigations to /login, a blank
 * page for 10–20 s before sign-in.
 */
export const authProvider: AuthProvider = {
  async login({ token }: { token: string }) {
    if (!token?.trim()) throw new Error("Paste a JWT first.");
    setToken(token);
    const result = await probe();
    if (result.kind === "refused") {
      clearToken();
      throw new Error(`The service refused this token: ${result.reason}`);
    }
    if (result.kind === "forbidden") return { redirectTo: FORBIDDEN_PATH };
    return { redirectTo: "/" };
  },
  async logout() {
    clearToken();
  },
  async checkAuth() {
    // Not signed in yet is not an error: sign-in opens without a red toast (react-admin shows
    // none for `message: false`); a refused token still says why (checkError, login).
    if (!getToken()) throw { message: false };
  },
  async checkError(error: { status?: number; message?: string }) {
    if (error?.status === 401) {
      const hadToken = getToken() !== null;
      clearToken();
      const reason = `Signed out: ${error.message ?? "the token was refused"}. Sign in again.`;
      // The sign-in page says it (a toast on the way there is easily missed, or not shown at all);
      // only the first refusal of a session counts, not the other requests that were in flight.
      if (hadToken) rememberSignOut(reason);
      throw new Error(reason);
    }
    if (error?.status === 403) throw { redirectTo: FORBIDDEN_PATH, logoutUser: false };
  },
  async getIdentity() {
    const claims = claimsOf(getToken());
    const sub = String(claims.sub ?? "administrator");
    return { id: sub, fullName: String(claims.name ?? sub) };
  },
};
