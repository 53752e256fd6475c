/**
 * Sign-in with email and password (and a TOTP code when the account has one). The service sets
 * an HttpOnly session cookie; checking the session is asking the service who is signed in.
 */
import { type AuthProvider, HttpError } from "react-admin";
import { api, data, type Schemas } from "./api.ts";
import { rememberSignOut } from "./session.ts";

export type Me = Schemas["PortalMe"];
/** Where a user goes while PORTAL_REQUIRE_2FA waits for its second factor. */
export const ACCOUNT_PATH = "/account";

let current: Promise<Me> | null = null;
/** The signed-in user and provider (one request per page load; sign-in and sign-out reset it). */
export function me(): Promise<Me> {
  current ??= data(api.GET("/api/v1/portal/me/")).catch((err) => {
    current = null;
    throw err;
  });
  return current;
}

/** Thrown when the password was right and the account asks for its authenticator code. */
export class SecondFactorNeeded extends Error {}

export const authProvider: AuthProvider = {
  async login({ email, password, totp_code }: { email: string; password: string; totp_code?: string }) {
    current = null;
    const body = { email, password, ...(totp_code ? { totp_code } : {}) };
    try {
      await data(api.POST("/api/v1/portal/sign_in/", { body }));
    } catch (err) {
      if (err instanceof HttpError && (err.body as { code?: string })?.code === "second_factor_required") {
        throw new SecondFactorNeeded(err.message);
      }
      throw err;
    }
    const signedIn = await me();
    return { redirectTo: signedIn.second_factor_required && !signedIn.user.second_factor ? ACCOUNT_PATH : "/" };
  },
  async logout() {
    current = null;
    await api.POST("/api/v1/portal/sign_out/").catch(() => undefined);
  },
  async checkAuth() {
    try {
      await me();
    } catch {
      // Not signed in yet is not an error: sign-in opens without a red toast.
      throw { message: false };
    }
  },
  async checkError(error: { status?: number; message?: string; body?: { code?: string } }) {
    if (error?.status === 401) {
      current = null;
      rememberSignOut(`Signed out: ${error.message ?? "the session ended"}.`);
      throw new Error(error.message ?? "the session ended");
    }
    if (error?.status === 403 && error.body?.code === "second_factor_required") {
      throw { redirectTo: ACCOUNT_PATH, logoutUser: false };
    }
  },
  async getIdentity() {
    const m = await me();
    return { id: m.user.id, fullName: m.user.name, provider: m.provider.name, role: m.user.role };
  },
  async getPermissions() {
    return null;
  },
};
