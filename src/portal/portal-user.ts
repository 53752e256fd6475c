/**
 * Portal users: a provider's own people, who sign in at /portal/ (docs/portal.md). Their secrets —
 * invite tokens, session tokens, passwords — never reach the database in clear: tokens are kept
 * as SHA-256 digests, passwords as Argon2id PHC strings (@node-rs/argon2).
 */
import { createHash, randomBytes } from "node:crypto";
import { Worker } from "node:worker_threads";
import { hash, verify } from "@node-rs/argon2";
import { type PortalPrincipal, secondFactorFirst } from "../edge/identity.ts";

export type PortalUserStatus = "invited" | "active" | "disabled";
/** `admin` may also manage its own provider's people (list, invite, disable, re-invite); `member` may not. */
export type PortalRole = "admin" | "member";
export const PORTAL_ROLES: readonly PortalRole[] = ["admin", "member"];

export interface PortalUser {
  readonly id: number;
  readonly providerId: number;
  readonly email: string;
  readonly name: string;
  readonly status: PortalUserStatus;
  readonly role: PortalRole;
  /** Whether a second factor (TOTP) is set up. */
  readonly secondFactor: boolean;
  readonly lastSignInAt: Date | null;
  readonly inviteExpiresAt: Date | null;
  readonly createdAt: Date;
}

export { type PortalPrincipal, secondFactorFirst };

/** An invite link is good for 72 hours. */
export const INVITE_TTL_MS = 72 * 3600_000;
/** A password-reset link is good for 1 hour. */
export const RESET_TTL_MS = 3600_000;
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

/** Attempts with invite links (reading one, choosing a password) a minute, per link and per client address. */
export const INVITE_ATTEMPTS = { perInvitePerMinute: 10, perAddressPerMinute: 30 } as const;

/**
 * zxcvbn judges this many characters of a password (its first ones): the estimator's work grows
 * steeply with length (its l33t and repeat matchers: 256 symbols took seconds), so a longer
 * password is long enough when its first 64 characters are strong on their own.
 */
export const JUDGED_LENGTH = 64;
/**
 * The CPU time one judgement may take (the judge's thread's own, so a busy machine does not
 * shorten it); past it the password is refused as too costly to judge.
 */
export const JUDGE_TIME_LIMIT_MS = 2000;
/** However little CPU it got, a judgement not done after this long is refused too. */
export const JUDGE_WAIT_LIMIT_MS = 30_000;
/** How often the judge's CPU time is read while it judges (a usual judgement is done before the first look). */
const JUDGE_POLL_MS = 50;
/** The judge's thread, and the dictionaries it holds, end after this long without a password to judge. */
export const JUDGE_IDLE_MS = 60_000;

/** A random token for a link or a cookie (256 bits, base64url) and the digest that is stored. */
export function newToken(): { token: string; digest: string } {
  const token = randomBytes(32).toString("base64url");
  return { token, digest: tokenDigest(token) };
}

export function tokenDigest(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** Argon2id (@node-rs/argon2's `Algorithm.Argon2id`, a const enum: its value here). */
const ARGON2ID = 2;

/** Argon2id's cost: memory in KiB, passes over it, lanes. */
export interface PasswordHashing {
  readonly memoryCost: number;
  readonly timeCost: number;
  readonly parallelism: number;
}

/**
 * What every stored password costs: 19 MiB, 2 passes, 1 lane (OWASP's minimum for Argon2id). The
 * service uses it unless its dependencies name another cost, which only the unit tests do.
 */
export const PASSWORD_HASHING: PasswordHashing = { memoryCost: 19456, timeCost: 2, parallelism: 1 };

/** A PHC string (`$argon2id$v=19$m=19456,t=2,p=1$…`): the cost travels with the hash. */
export function hashPassword(password: string, cost: PasswordHashing = PASSWORD_HASHING): Promise<string> {
  return hash(password, {
    algorithm: ARGON2ID as never,
    memoryCost: cost.memoryCost,
    timeCost: cost.timeCost,
    parallelism: cost.parallelism,
  });
}

/** A fixed hash, of the cost new passwords get, to verify against when the email is unknown, so both answers take as long. */
let decoy: { readonly cost: PasswordHashing; readonly hash: Promise<string> } | undefined;

/** Whether `password` is the one `stored` was made from (its own cost, from the PHC string); never for null. */
export async function verifyPassword(
  stored: string | null,
  password: string,
  cost: PasswordHashing = PASSWORD_HASHING,
): Promise<boolean> {
  if (decoy?.cost !== cost) decoy = { cost, hash: hashPassword(newToken().token, cost) };
  const against = stored ?? (await decoy.hash);
  const ok = await verify(against, password).catch(() => false);
  return stored !== null && ok;
}

/** What the judge's thread answers for one password: zxcvbn's score (0–4) and its advice. */
export interface Verdict {
  readonly score: number;
  readonly advice: readonly string[];
}

/** The judgement the thread is on, and the timer that reads its CPU time. */
interface Running {
  readonly judgement: Judgement;
  timer: NodeJS.Timeout | undefined;
}

interface Judgement {
  readonly password: string;
  readonly words: readonly string[];
  readonly timeLimitMs: number;
  resolve(verdict: Verdict | undefined): void;
  reject(err: unknown): void;
}

/**
 * The password judge: zxcvbn-ts in a worker_threads thread of its own, so that judging never
 * holds the event loop (one judgement of a hostile 256-character password took seconds there,
 * and every other request waited). The thread judges at the lowest CPU priority, so the thread
 * answering requests comes first on a busy machine. One password at a time, in order; each may
 * use at most its time limit of the thread's CPU time (read every 50 ms; so a starved judge is
 * not cut short), and at most JUDGE_WAIT_LIMIT_MS of wall time, after which the thread is ended
 * and the password gets no verdict (undefined). The thread and its dictionaries (about 45 MiB) are
 * loaded when a password is first judged and dropped after JUDGE_IDLE_MS without one, so a
 * process that is not onboarding anyone does not carry them (the resident-size budget, docs/decisions/0026-memory.md).
 */
const judge: {
  thread: Worker | undefined;
  ready: boolean;
  queue: Judgement[];
  running: Running | undefined;
  idle: NodeJS.Timeout | undefined;
} = { thread: undefined, ready: false, queue: [], running: undefined, idle: undefined };

/** zxcvbn's verdict on `password` (with `words` as guessable), or undefined when it took longer than the limit. */
export function judgePassword(
  password: string,
  words: readonly string[],
  timeLimitMs = JUDGE_TIME_LIMIT_MS,
): Promise<Verdict | undefined> {
  return new Promise((resolve, reject) => {
    judge.queue.push({ password, words, timeLimitMs, resolve, reject });
    nextJudgement();
  });
}

function nextJudgement(): void {
  if (judge.running !== undefined || judge.queue.length === 0) return;
  clearTimeout(judge.idle);
  judge.thread ??= startJudge();
  const thread = judge.thread;
  if (!judge.ready) return; // its "ready" message comes back here
  const judgement = judge.queue.shift() as Judgement;
  const running: Running = { judgement, timer: undefined };
  judge.running = running;
  const since = performance.now();
  const timeUp = () => {
    endJudge(thread);
    settleJudgement(undefined);
  };
  // The thread's CPU time so far first: the limit counts this judgement's own.
  void thread.cpuUsage().then(
    (base) => {
      if (judge.running !== running) return;
      thread.postMessage({ password: judgement.password, words: judgement.words });
      running.timer = setInterval(() => {
        void thread.cpuUsage().then(
          (used) => {
            if (judge.running !== running) return;
            const spent = cpuMs(used) - cpuMs(base);
            if (spent > judgement.timeLimitMs || performance.now() - since > JUDGE_WAIT_LIMIT_MS) timeUp();
          },
          () => undefined, // the thread is gone: its error or exit settles the judgement
        );
      }, JUDGE_POLL_MS);
    },
    () => {
      if (judge.running === running) timeUp();
    },
  );
}

const cpuMs = (usage: { user: number; system: number }) => (usage.user + usage.system) / 1000;

function settleJudgement(verdict: Verdict | undefined, err?: unknown): void {
  const running = judge.running;
  if (running === undefined) return;
  clearInterval(running.timer);
  judge.running = undefined;
  if (err === undefined) running.judgement.resolve(verdict);
  else running.judgement.reject(err);
  if (judge.queue.length > 0) nextJudgement();
  else judge.idle = setTimeout(() => endJudge(judge.thread), JUDGE_IDLE_MS).unref();
}

function startJudge(): Worker {
  const thread = new Worker(new URL("./password-judge.worker.ts", import.meta.url));
  thread.unref(); // never what keeps the process alive
  judge.ready = false;
  thread.on("message", (m: { ready: true } | Verdict) => {
    if (thread !== judge.thread) return;
    if ("ready" in m) {
      judge.ready = true;
      nextJudgement();
    } else settleJudgement(m);
  });
  thread.on("error", (err) => {
    if (thread !== judge.thread) return;
    endJudge(thread);
    // Nothing can judge these now: the next password starts a new thread.
    settleJudgement(undefined, err);
    for (const waiting of judge.queue.splice(0)) waiting.reject(err);
  });
  return thread;
}

function endJudge(thread: Worker | undefined): void {
  if (thread === undefined) return;
  if (judge.thread === thread) {
    judge.thread = undefined;
    judge.ready = false;
  }
  void thread.terminate();
}

/** Folds text for comparison: compatibility forms (full-width letters, ligatures) and case. */
const fold = (text: string) => text.normalize("NFKC").toLowerCase();

/** Whose password is judged: what it must not contain. */
export interface Personal {
  readonly email?: string;
  readonly name?: string;
  readonly providerName?: string;
}

/** A text's words: its runs of letters and digits, folded. */
const wordsOf = (text: string) =>
  fold(text)
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== "");

/**
 * What a password must not contain, whatever the case: the person's email, name and provider
 * name whole (3 or more characters), every word of them of 4 or more letters or digits, and these
 * parts of 3: each word of the person's name (a first or last name such as "Doe"), the email's
 * whole local part, and each of its domain's labels but the last (the top-level domain, such as
 * "com", which is no one's own). Parts of 1 or 2 characters never count, nor 3-character words
 * that are only a piece of the local part or of the provider's name ("Fox" in "Fox Freight").
 * So "QuokkaLogisticsDanaRuiz2026" is refused for Dana Ruiz of Quokka Logistics, and
 * "violet DOE harbor" for Jane Doe.
 */
export function personalParts(person: Personal): string[] {
  const parts: string[] = [];
  const keep = (min: number, ...ws: string[]) => parts.push(...ws.filter((w) => w.length >= min));
  const { email, name, providerName } = person;
  if (email) {
    const folded = fold(email);
    const at = folded.lastIndexOf("@");
    keep(3, folded);
    keep(4, ...wordsOf(folded));
    if (at > 0) {
      keep(3, folded.slice(0, at));
      keep(
        3,
        ...folded
          .slice(at + 1)
          .split(".")
          .slice(0, -1),
      );
    }
  }
  if (name) keep(3, fold(name), ...wordsOf(name));
  if (providerName) {
    keep(3, fold(providerName));
    keep(4, ...wordsOf(providerName));
  }
  return [...new Set(parts)];
}

/**
 * Why the password is refused (a field error's code and message), or undefined when it is strong
 * enough: 12 to 256 characters, not containing the person's email, name or provider or a part of
 * them (see personalParts), and zxcvbn's score 4 for its first JUDGED_LENGTH characters, counting
 * those names as guessable words. A judgement that takes more than JUDGE_TIME_LIMIT_MS of CPU refuses.
 */
export async function weakPassword(
  password: string,
  person: Personal,
  timeLimitMs = JUDGE_TIME_LIMIT_MS,
): Promise<{ code: "too_short" | "too_long" | "weak_password"; message: string } | undefined> {
  const characters = [...password];
  if (characters.length < PASSWORD_MIN_LENGTH)
    return { code: "too_short", message: `password must be at least ${PASSWORD_MIN_LENGTH} characters` };
  if (characters.length > PASSWORD_MAX_LENGTH)
    return { code: "too_long", message: `password must be at most ${PASSWORD_MAX_LENGTH} characters` };
  const folded = fold(password);
  if (personalParts(person).some((part) => folded.includes(part))) {
    return {
      code: "weak_password",
      message: "password must not contain your email address, your name or your provider's name",
    };
  }
  const words = [person.email, person.name, person.providerName]
    .flatMap((p) => (p ? wordsOf(p) : []))
    .filter((w) => w.length >= 3);
  const verdict = await judgePassword(characters.slice(0, JUDGED_LENGTH).join(""), words, timeLimitMs);
  const hint = "a phrase of four or more unrelated words works well";
  if (verdict === undefined) {
    const message = `password could not be judged in time (long runs of symbols, digits or repeats are slow to judge); ${hint}`;
    return { code: "weak_password", message };
  }
  if (verdict.score >= PASSWORD_MIN_SCORE) return undefined;
  const advice = verdict.advice.map((t) => t.replace(/\.$/, "")).join("; ");
  return {
    code: "weak_password",
    message: `password is too easy to guess${advice ? ` (${advice})` : ""}; ${hint}`,
  };
}
