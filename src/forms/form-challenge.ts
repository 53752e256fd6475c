/**
 * The form's bot check: a proof-of-work challenge with ALTCHA (altcha-lib, self-hosted: no call
 * leaves the service), or Cloudflare Turnstile when TURNSTILE_SECRET is set. Each ALTCHA solution
 * is accepted once, within CHALLENGE_TTL_MS of its challenge, on any instance (the used ones are
 * marked in the database until they expire).
 */
import { hkdfSync } from "node:crypto";
import { createChallenge, randomInt } from "altcha-lib";
import { deriveKey } from "altcha-lib/algorithms/pbkdf2";
import { verify } from "altcha-lib/frameworks/shared";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { DomainError } from "../errors.ts";
import { clearExpiredChallenges, markChallengeUsed } from "./form.repository.ts";

export const CHALLENGE_TTL_MS = 5 * 60_000;

/**
 * The work asked of a browser: PBKDF2-SHA-256 at COST iterations per try, and the answer among
 * the first MIN_COUNTER..MAX_COUNTER tries (half of them on average: a fraction of a second on a
 * phone, a cost per lead for a bot). The server checks an answer with one HMAC.
 */
const ALGORITHM = "PBKDF2/SHA-256";
const COST = 500;
const MIN_COUNTER = 500;
const MAX_COUNTER = 2_000;

export interface TurnstileSettings {
  readonly secret: string;
  readonly siteKey: string | undefined;
  /** Cloudflare's siteverify endpoint (configurable for tests and proxies). */
  readonly verifyUrl: string;
}

export interface FormChallengeDeps {
  readonly db: Kysely<Database>;
  /** API_KEY_SECRET: the challenge's signing keys are derived from it. */
  readonly masterSecret: string;
  readonly now: () => Date;
  readonly turnstile?: TurnstileSettings | undefined;
}

export type FormChallenges = ReturnType<typeof createFormChallenges>;

export function challengeInvalid(detail: string): DomainError {
  return new DomainError("invalid_argument", detail, {
    code: "challenge_invalid",
    violations: [{ field: "altcha", code: "challenge_invalid", message: detail }],
  });
}

function derive(secret: string, label: string): string {
  return Buffer.from(hkdfSync("sha256", secret, "lead-provider-forms", label, 32)).toString("hex");
}

export function createFormChallenges(deps: FormChallengeDeps) {
  const signatureSecret = derive(deps.masterSecret, "altcha-challenge-signature");
  const keySecret = derive(deps.masterSecret, "altcha-key-signature");
  let lastSweep = 0;

  const store = {
    get: () => false,
    set: () => undefined,
    // A solution's id is its challenge's nonce; marked until the challenge expires.
    setIfAbsent: async (id: string) => {
      const at = deps.now();
      if (at.getTime() - lastSweep > 60_000) {
        lastSweep = at.getTime();
        await clearExpiredChallenges(deps.db, new Date(at.getTime() - 60_000));
      }
      return markChallengeUsed(deps.db, id, new Date(at.getTime() + CHALLENGE_TTL_MS + 60_000));
    },
  };

  async function verifyTurnstile(token: unknown, clientIp: string | undefined): Promise<void> {
    const t = deps.turnstile;
    if (!t) return;
    if (typeof token !== "string" || token === "" || token.length > 2048) {
      throw challengeInvalid("the bot check was not completed: the form sends its Turnstile token in `turnstile`");
    }
    const body = new URLSearchParams({ secret: t.secret, response: token });
    if (clientIp) body.set("remoteip", clientIp);
    let outcome: { success?: boolean; "error-codes"?: string[] };
    try {
      const res = await fetch(t.verifyUrl, { method: "POST", body, signal: AbortSignal.timeout(5000) });
      outcome = (await res.json()) as typeof outcome;
    } catch (err) {
      throw new DomainError("unavailable", "the bot check could not be verified just now; try again in a moment", {
        code: "service_unavailable",
        retryAfterSeconds: 5,
        cause: err,
      });
    }
    if (outcome.success !== true) {
      throw challengeInvalid(
        `the bot check failed (${(outcome["error-codes"] ?? []).join(", ") || "no reason given"}); complete it again`,
      );
    }
  }

  return {
    /** Which check the form shows: `turnstile` when TURNSTILE_SECRET is set, else `altcha`. */
    kind: (deps.turnstile ? "turnstile" : "altcha") as "altcha" | "turnstile",
    turnstileSiteKey: deps.turnstile?.siteKey ?? null,

    /** A new signed ALTCHA challenge, valid for CHALLENGE_TTL_MS. */
    async challenge() {
      return createChallenge({
        algorithm: ALGORITHM,
        cost: COST,
        counter: randomInt(MAX_COUNTER, MIN_COUNTER),
        deriveKey,
        expiresAt: new Date(deps.now().getTime() + CHALLENGE_TTL_MS),
        hmacSignatureSecret: signatureSecret,
        hmacKeySignatureSecret: keySecret,
      });
    },

    /**
     * Accepts the form's bot check once, or throws challenge_invalid (missing, forged, expired or
     * already used). With Turnstile configured, the token in `turnstile` is verified instead.
     */
    async check(body: Record<string, unknown>, clientIp: string | undefined): Promise<void> {
      if (deps.turnstile) return verifyTurnstile(body.turnstile, clientIp);
      const payload = body.altcha;
      if (payload === undefined || payload === null || payload === "") {
        throw challengeInvalid("the bot check is missing: the form sends the solved challenge in `altcha`");
      }
      if (typeof payload !== "string" || payload.length > 4096) {
        throw challengeInvalid("`altcha` must be the widget's payload (base64 text)");
      }
      const result = await verify(payload, deriveKey, signatureSecret, keySecret, store).catch(() => ({
        error: "invalid",
        verification: null,
      }));
      if (result.error === null) return;
      const v = result.verification as { expired?: boolean } | null;
      if (v?.expired) throw challengeInvalid("the bot check expired (after 5 minutes); it is solved again by itself");
      if (/already used/i.test(result.error)) {
        throw challengeInvalid("this bot check was already used; each solution is accepted once");
      }
      throw challengeInvalid("the bot check's solution is not valid");
    },
  };
}
