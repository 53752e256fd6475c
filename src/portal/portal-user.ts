/**
 * Portal users: a provider's own people, who sign in at /portal/ (issue 27). Their secrets —
 * invite tokens, session tokens, passwords — never reach the database in clear: tokens are kept
 * as SHA-256 digests, passwords as Argon2id PHC strings (@node-rs/argon2).
 */
import { createHash, randomBytes } from "node:crypto";
import { hash, verify } from "@node-rs/argon2";
import type { ZxcvbnFactory } from "@zxcvbn-ts/core";

export type PortalUserStatus = "invited" | "active" | "disabled";

export interface PortalUser {
  readonly id: number;
  readonly providerId: number;
  readonly email: string;
  readonly name: string;
  readonly status: PortalUserStatus;
  /** Whether a second factor (TOTP) is set up. */
  readonly secondFactor: boolean;
  readonly lastSignInAt: Date | null;
  readonly inviteExpiresAt: Date | null;
  readonly createdAt: Date;
}

/** The signed-in person behind a portal request. */
export interface PortalPrincipal {
  readonly userId: number;
  readonly providerId: number;
  readonly email: string;
  /** PORTAL_REQUIRE_2FA is on and this user has no second factor yet: only enrolment is open. */
  readonly mustEnrolSecondFactor: boolean;
}

/** An invite link is good for 72 hours (issue 27). */
export const INVITE_TTL_MS = 72 * 3600_000;
/** A session ends after 12 idle hours, or 7 days after sign-in, whichever is first. */
export const SESSION_IDLE_MS = 12 * 3600_000;
export const SESSION_ABSOLUTE_MS = 7 * 24 * 3600_000;
/** last_seen_at is written at most once a minute per session (idle time is measured to the minute). */
export const SESSION_TOUCH_MS = 60_000;

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;
/**
 * zxcvbn's score (0–4) a password must reach: 4, at least 10^10 guesses ("Summer2026!!!!" scores 3
 * and is refused; a phrase of four unrelated words passes).
 */
export const PASSWORD_MIN_SCORE = 4;

/**
 * Sign-in attempts a minute, per account and per client address. Each attempt is taken before
 * the password is verified (a success gives it back), so this many guesses at most are checked.
 */
export const SIGN_IN_FAILURES = { perAccountPerMinute: 5, perAddressPerMinute: 20 } as const;

/** A random token for a link or a cookie (256 bits, base64url) and the digest that is stored. */
export function newToken(): { token: string; digest: string } {
  const token = randomBytes(32).toString("base64url");
  return { token, digest: tokenDigest(token) };
}

export function tokenDigest(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** Argon2id (@node-rs/argon2's `Algorithm.Argon2id`, a const enum: its value here), 19 MiB, 2 passes (OWASP's minimum). */
const ARGON2ID = 2;

export function hashPassword(password: string): Promise<string> {
  return hash(password, { algorithm: ARGON2ID as never, memoryCost: 19456, timeCost: 2, parallelism: 1 });
}

/** A fixed hash to verify against when the email is unknown, so both answers take as long. */
let decoy: Promise<string> | undefined;

export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  decoy ??= hashPassword(newToken().token);
  const against = stored ?? (await decoy);
  const ok = await verify(against, password).catch(() => false);
  return stored !== null && ok;
}

/**
 * zxcvbn and its dictionaries, loaded when a password is first set: they add about 45 MiB to the
 * process (measured: RSS 42 → 74 MiB for the English dictionary alone), which every request
 * would otherwise carry for a step a portal user takes once (issue 25's RSS budget).
 */
let zxcvbn: Promise<ZxcvbnFactory> | undefined;
function loadZxcvbn(): Promise<ZxcvbnFactory> {
  zxcvbn ??= Promise.all([
    import("@zxcvbn-ts/core"),
    import("@zxcvbn-ts/language-common"),
    import("@zxcvbn-ts/language-en"),
  ]).then(
    ([{ ZxcvbnFactory }, common, en]) =>
      new ZxcvbnFactory({
        dictionary: { ...common.dictionary, ...en.dictionary },
        graphs: common.adjacencyGraphs,
        translations: en.translations,
      }),
  );
  return zxcvbn;
}

/**
 * Why the password is refused (a field error's code and message), or undefined when it is strong
 * enough: 12 to 256 characters, not containing the person's email, name or provider, and
 * zxcvbn's score 4 counting those as guessable words.
 */
export async function weakPassword(
  password: string,
  personal: readonly string[],
): Promise<{ code: "too_short" | "too_long" | "weak_password"; message: string } | undefined> {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH)
    return { code: "too_short", message: `password must be at least ${PASSWORD_MIN_LENGTH} characters` };
  if (length > PASSWORD_MAX_LENGTH)
    return { code: "too_long", message: `password must be at most ${PASSWORD_MAX_LENGTH} characters` };
  const lower = password.toLowerCase();
  if (personal.some((p) => p.length >= 4 && lower.includes(p.toLowerCase()))) {
    return {
      code: "weak_password",
      message: "password must not contain your email address, your name or your provider's name",
    };
  }
  const words = personal.flatMap((p) => p.toLowerCase().split(/[^\p{L}\p{N}]+/u)).filter((w) => w.length >= 3);
  const result = (await loadZxcvbn()).check(password, words);
  if (result.score >= PASSWORD_MIN_SCORE) return undefined;
  const advice = [result.feedback.warning, ...result.feedback.suggestions]
    .filter((t): t is string => Boolean(t))
    .map((t) => t.replace(/\.$/, ""))
    .join("; ");
  return {
    code: "weak_password",
    message: `password is too easy to guess${advice ? ` (${advice})` : ""}; a phrase of four or more unrelated words works well`,
  };
}
