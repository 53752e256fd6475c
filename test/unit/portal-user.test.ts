/**
 * The portal's own rules on their own (src/portal/portal-user.ts): tokens and their digests,
 * Argon2id passwords, what a password must not contain, and the password judge (zxcvbn-ts in a
 * worker thread, its first 64 characters, its time limit). `make mutation` runs it.
 */
import { createHash } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DomainError } from "../../src/errors.ts";
import {
  hashPassword,
  INVITE_ATTEMPTS,
  INVITE_TTL_MS,
  JUDGE_IDLE_MS,
  JUDGE_TIME_LIMIT_MS,
  JUDGE_WAIT_LIMIT_MS,
  JUDGED_LENGTH,
  judgePassword,
  newToken,
  PASSWORD_HASHING,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  PASSWORD_MIN_SCORE,
  type PasswordHashing,
  personalParts,
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  SESSION_TOUCH_MS,
  SIGN_IN_FAILURES,
  secondFactorFirst,
  tokenDigest,
  verifyPassword,
  weakPassword,
} from "../../src/portal/portal-user.ts";

const STRONG = "violet tundra harbor 87 quay";
const PERSON = { email: "dana.ruiz@quokka-logistics.example", name: "Dana Ruiz", providerName: "Quokka Logistics" };
const NAMED = "password must not contain your email address, your name or your provider's name";
const HINT = "a phrase of four or more unrelated words works well";

describe("the portal's numbers", () => {
  it("are the ones the README promises", () => {
    expect(INVITE_TTL_MS).toBe(72 * 3600_000);
    expect(SESSION_IDLE_MS).toBe(12 * 3600_000);
    expect(SESSION_ABSOLUTE_MS).toBe(7 * 24 * 3600_000);
    expect(SESSION_TOUCH_MS).toBe(60_000);
    expect([PASSWORD_MIN_LENGTH, PASSWORD_MAX_LENGTH, PASSWORD_MIN_SCORE]).toEqual([12, 256, 4]);
    expect(SIGN_IN_FAILURES).toEqual({ perAccountPerMinute: 5, perAddressPerMinute: 20 });
    expect(INVITE_ATTEMPTS).toEqual({ perInvitePerMinute: 10, perAddressPerMinute: 30 });
    expect([JUDGED_LENGTH, JUDGE_TIME_LIMIT_MS, JUDGE_WAIT_LIMIT_MS, JUDGE_IDLE_MS]).toEqual([
      64, 2000, 30_000, 60_000,
    ]);
  });
});

describe("tokens", () => {
  it("are 256 random bits in base64url, stored as their SHA-256 digest", () => {
    const { token, digest } = newToken();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(digest).toBe(createHash("sha256").update(token, "utf8").digest("hex"));
    expect(tokenDigest(token)).toBe(digest);
    expect(tokenDigest("é")).toBe(createHash("sha256").update("é", "utf8").digest("hex"));
    expect(new Set(Array.from({ length: 20 }, () => newToken().token)).size).toBe(20);
  });
});

describe("passwords", () => {
  it("are stored as Argon2id (19 MiB, 2 passes, 1 lane) and verified against the hash", async () => {
    // Production's cost: the defaults, in the PHC string, so it cannot drop unnoticed.
    expect(PASSWORD_HASHING).toEqual({ memoryCost: 19456, timeCost: 2, parallelism: 1 });
    const stored = await hashPassword(STRONG);
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await hashPassword(STRONG, PASSWORD_HASHING)).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await hashPassword(STRONG)).not.toBe(stored); // a fresh salt each time
    expect(await verifyPassword(stored, STRONG)).toBe(true);
    expect(await verifyPassword(stored, `${STRONG}!`)).toBe(false);
    // No stored hash (an unknown email, an invited user): refused, after the same work.
    expect(await verifyPassword(null, STRONG)).toBe(false);
    expect(await verifyPassword(null, "")).toBe(false);
    // A malformed stored value is a refusal, not an error.
    expect(await verifyPassword("not a hash", STRONG)).toBe(false);
  });

  it("are hashed at another cost when asked (the unit tests' least), and verified whatever their cost", async () => {
    const least: PasswordHashing = { memoryCost: 8, timeCost: 1, parallelism: 1 };
    const cheap = await hashPassword(STRONG, least);
    expect(cheap).toMatch(/^\$argon2id\$v=19\$m=8,t=1,p=1\$/);
    expect(await hashPassword(STRONG, { memoryCost: 64, timeCost: 3, parallelism: 2 })).toMatch(
      /^\$argon2id\$v=19\$m=64,t=3,p=2\$/,
    );
    // The cost travels with the hash: the one given to verify is the unknown email's decoy's.
    for (const cost of [least, PASSWORD_HASHING]) {
      expect(await verifyPassword(cheap, STRONG, cost)).toBe(true);
      expect(await verifyPassword(cheap, `${STRONG}.`, cost)).toBe(false);
      expect(await verifyPassword(null, STRONG, cost)).toBe(false);
    }
    expect(await verifyPassword(await hashPassword(STRONG), STRONG, least)).toBe(true);
  });

  it("refuses a second factor's absence with its own code while the portal requires one", () => {
    const err = secondFactorFirst();
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({
      kind: "permission_denied",
      code: "second_factor_required",
      message: "set up a second factor (TOTP) first: this portal requires one",
    });
  });
});

describe("what a password must not contain", { timeout: 120_000 }, () => {
  it("is each name and the email whole and in parts of 4 or more letters or digits, folded", () => {
    expect(personalParts(PERSON)).toEqual([
      "dana.ruiz@quokka-logistics.example",
      "dana",
      "ruiz",
      "quokka",
      "logistics",
      "example",
      "dana.ruiz",
      "quokka-logistics",
      "dana ruiz",
      "quokka logistics",
    ]);
    // Full-width letters fold to plain ones; duplicates go.
    expect(personalParts({ email: "bo@ab.io", name: "Ann-Mari 2026", providerName: "ＡＣＭＥ Co" })).toEqual([
      "bo@ab.io",
      "ann-mari 2026",
      "ann",
      "mari",
      "2026",
      "ａｃｍｅ co".normalize("NFKC"),
      "acme",
    ]);
    expect(personalParts({})).toEqual([]);
  });

  it("counts 3 characters when they are a whole name, local part or domain label; never 1 or 2", () => {
    expect(personalParts({ email: "li@doe.co.uk", name: "Li Doe", providerName: "Fox Freight" })).toEqual([
      "li@doe.co.uk",
      "doe",
      "li doe",
      "fox freight",
      "freight",
    ]);
    expect(personalParts({ email: "ann@jo.mail.com", name: "Al", providerName: "Ace" })).toEqual([
      "ann@jo.mail.com",
      "mail",
      "ann",
      "ace",
    ]);
    // A 3-character piece of the local part, the top-level domain, a piece of the provider's name: not counted.
    expect(personalParts({ email: "j.doe@x.com", name: "Jo", providerName: "Fox Co" })).toEqual([
      "j.doe@x.com",
      "j.doe",
      "fox co",
    ]);
  });

  it("refuses the provider's name, the person's names and email parts with a year, whatever the case", async () => {
    for (const password of [
      "QuokkaLogisticsDanaRuiz2026",
      "quokkalogisticsdanaruiz1987",
      "DANA-RUIZ-QUOKKA-LOGISTICS-2026",
      "correct horse battery ruiz",
      "ｑｕｏｋｋａ staple battery lantern",
      "my dana.ruiz@quokka-logistics.example",
      "example violet tundra harbor",
    ]) {
      expect(await weakPassword(password, PERSON), password).toEqual({ code: "weak_password", message: NAMED });
    }
  });

  it("refuses a surname of 3 letters in another case, inside words or not; ignores 1 or 2 letters", async () => {
    const jane = { email: "jane.doe@acme-freight.example", name: "Jane Doe", providerName: "Acme Freight" };
    for (const password of [`${STRONG} DOE`, "violet tundra DoE harbor 87", "VIOLETDOETUNDRA harbor 87"]) {
      expect(await weakPassword(password, jane), password).toEqual({ code: "weak_password", message: NAMED });
    }
    // The email's whole local part and a domain label of 3 count too.
    expect(await weakPassword(`${STRONG} Ann`, { email: "ann@kiwi.example" })).toMatchObject({ message: NAMED });
    expect(await weakPassword(`${STRONG} KIW`, { email: "x@kiw.example" })).toMatchObject({ message: NAMED });
    // 1 or 2 letters, a top-level domain of 3, a 3-letter piece of a longer local part: fine.
    expect(
      await weakPassword(`li ${STRONG}`, { email: "al@ab.io", name: "Al Li", providerName: "Xy Co" }),
    ).toBeUndefined();
    expect(await weakPassword(`${STRONG} com`, { email: "x@kiwi.com" })).toBeUndefined();
    expect(await weakPassword(`${STRONG} doe`, { email: "j.doe@kiwi.example" })).toBeUndefined();
  });
});

describe("the length of a password", { timeout: 120_000 }, () => {
  it("is 12 to 256 characters, counted as characters (not UTF-16 units)", async () => {
    expect(await weakPassword("short phrase", {})).not.toMatchObject({ code: "too_short" });
    expect(await weakPassword("short phras", {})).toEqual({
      code: "too_short",
      message: "password must be at least 12 characters",
    });
    expect(await weakPassword("𝒜".repeat(11), {})).toMatchObject({ code: "too_short" });
    expect(await weakPassword("𝒜".repeat(12), {})).not.toMatchObject({ code: "too_short" });
    expect(await weakPassword(`${STRONG} ${"z".repeat(PASSWORD_MAX_LENGTH - STRONG.length - 1)}`, {})).toBeUndefined();
    expect(await weakPassword(`${STRONG} ${"z".repeat(PASSWORD_MAX_LENGTH - STRONG.length)}`, {})).toEqual({
      code: "too_long",
      message: "password must be at most 256 characters",
    });
    expect(await weakPassword("𝒜".repeat(257), {})).toMatchObject({ code: "too_long" });
  });
});

// The judge's thread loads its dictionaries at the lowest CPU priority: on a busy machine (a
// mutation run) that takes tens of seconds each time a test makes it start afresh.
describe("the password judge", { timeout: 120_000 }, () => {
  it("passes a phrase of unrelated words and refuses a guessable one with the estimator's advice", async () => {
    expect(await weakPassword(STRONG, PERSON)).toBeUndefined();
    expect(await weakPassword("Summer2026!!!!", PERSON)).toEqual({
      code: "weak_password",
      message: `password is too easy to guess; ${HINT}`,
    });
    expect(await weakPassword("password1234", PERSON)).toEqual({
      code: "weak_password",
      message: `password is too easy to guess (This is similar to a commonly used password; Add more words that are less common); ${HINT}`,
    });
  });

  it("counts the person's words of 3 or more characters as guessable", async () => {
    // 3-letter pieces of the local part and of the provider's name are not refused outright (see
    // above), but the estimator knows them.
    const phrase = "zorquiflayol";
    expect((await judgePassword(phrase, []))?.score).toBe(4);
    expect((await judgePassword(phrase, ["zor", "qui", "fla", "yol"]))?.score).toBe(3);
    expect(await weakPassword(phrase, { email: "zor.qui@ab.io", providerName: "Fla Yol" })).toEqual({
      code: "weak_password",
      message: `password is too easy to guess; ${HINT}`,
    });
    expect(await weakPassword(phrase, { email: "x@ab.io", name: "Ann Bo", providerName: "Cy Co" })).toBeUndefined();
    expect(await weakPassword(phrase, { email: "x@ab.io", name: "Zo Qu", providerName: "Fl Yo" })).toBeUndefined();
  });

  it("judges the first 64 characters only: a strong start carries the rest, a weak start is refused", async () => {
    expect(await weakPassword(`${STRONG}${"a".repeat(200)}`, {})).toBeUndefined();
    expect(await weakPassword(`${"a".repeat(JUDGED_LENGTH)}${STRONG}`, {})).toMatchObject({ code: "weak_password" });
    expect(await weakPassword(`${"a".repeat(JUDGED_LENGTH - STRONG.length)}${STRONG}`, {})).toBeUndefined();
    // 64 characters, not 64 UTF-16 units: an astral start is cut after its 64th character.
    expect(await weakPassword(`${"𝒜".repeat(JUDGED_LENGTH)}${STRONG}`, {})).toMatchObject({ code: "weak_password" });
  });

  it("answers in order, several at once, while its thread starts and once it is running", async () => {
    const passwords = [STRONG, "password1234", STRONG, "qwertyuiop12"];
    const strong = [true, false, true, false];
    // Asked before the thread is ready: they wait for it.
    const verdicts = await Promise.all(passwords.map((p) => judgePassword(p, [])));
    expect(verdicts.map((v) => (v?.score ?? -1) >= PASSWORD_MIN_SCORE)).toEqual(strong);
    expect(verdicts[1]?.advice).toEqual([
      "This is similar to a commonly used password.",
      "Add more words that are less common.",
    ]);
    // Asked of a ready thread: the first is judged at once, the others wait their turn behind it.
    const again = await Promise.all(passwords.map((p) => judgePassword(p, [])));
    expect(again.map((v) => (v?.score ?? -1) >= PASSWORD_MIN_SCORE)).toEqual(strong);
    expect(again[1]?.advice).toEqual(verdicts[1]?.advice);
  });

  it("gives no verdict past its time limit, refuses the password, and judges the next one afresh", async () => {
    const slow = Array.from({ length: 64 }, (_, i) => String.fromCharCode(33 + (i % 90))).join("");
    expect(await weakPassword(slow, {}, 1)).toEqual({
      code: "weak_password",
      message: `password could not be judged in time (long runs of symbols, digits or repeats are slow to judge); ${HINT}`,
    });
    // Two waiting behind one that runs out of time are still judged, by a new thread.
    const [late, next, after] = await Promise.all([
      judgePassword(slow, [], 1),
      judgePassword(STRONG, []),
      judgePassword("password1234", []),
    ]);
    expect(late).toBeUndefined();
    expect(next?.score).toBe(4);
    expect(after?.score).toBeLessThan(4);
  });
  it("rejects what it was judging and what waited when its thread fails, and judges the next afresh", async () => {
    expect((await judgePassword(STRONG, []))?.score).toBe(4); // a thread that is ready
    // A word the estimator cannot read makes the thread throw: no caller passes one (each is text),
    // so it stands for any failure of the thread.
    const unreadable = [null] as unknown as string[];
    const results = await Promise.allSettled([
      judgePassword(STRONG, unreadable),
      judgePassword(STRONG, []),
      judgePassword("password1234", []),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected"]);
    for (const r of results) expect(String((r as PromiseRejectedResult).reason)).toMatch(/^TypeError: /);
    expect((await judgePassword(STRONG, []))?.score).toBe(4);
    expect(await weakPassword("password1234", PERSON)).toMatchObject({ code: "weak_password" });
  });

  describe("its thread's minute without a password", () => {
    // Only the judge's own timers are faked (setTimeout: its idle minute); its CPU-time polling
    // (setInterval) and the thread itself run for real.
    const fakeIdleClock = () =>
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"], shouldClearNativeTimers: true });
    afterEach(() => {
      vi.useRealTimers();
    });

    it("starts when the last verdict is given, and is put off by a password that comes within it", async () => {
      fakeIdleClock();
      expect((await judgePassword(STRONG, []))?.score).toBe(4);
      expect(vi.getTimerCount()).toBe(1); // the thread ends a minute from now unless a password comes
      const judging = judgePassword("password1234", []);
      vi.advanceTimersByTime(JUDGE_IDLE_MS);
      // The minute that ran out was the one before this password: its thread still answers.
      expect((await judging)?.score).toBeLessThan(PASSWORD_MIN_SCORE);
      expect(vi.getTimerCount()).toBe(1);
      vi.advanceTimersByTime(JUDGE_IDLE_MS);
      expect(vi.getTimerCount()).toBe(0);
      // Ended: the next password starts a new thread.
      expect((await judgePassword(STRONG, []))?.score).toBe(4);
    });

    it("passes without harm after a judgement that ran out of time ended the thread", async () => {
      fakeIdleClock();
      const slow = Array.from({ length: 64 }, (_, i) => String.fromCharCode(33 + (i % 90))).join("");
      expect(await judgePassword(slow, [], 1)).toBeUndefined();
      expect(vi.getTimerCount()).toBe(1);
      vi.advanceTimersByTime(JUDGE_IDLE_MS); // no thread left to end
      expect(vi.getTimerCount()).toBe(0);
      expect((await judgePassword(STRONG, []))?.score).toBe(4);
    });
  });
});
