/**
 * API keys on their own: the format and checksum, masking, the digest and encryption
 * (src/api-keys/api-key.ts), and the verifier's rules against a real in-memory database
 * (src/api-keys/api-key.service.ts). `make mutation` runs it.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { insertKey, retireKeys } from "../../src/api-keys/api-key.repository.ts";
import { type ApiKeyVerifier, createApiKeyVerifier } from "../../src/api-keys/api-key.service.ts";
import { createKeyCrypto, generateKey, isWellFormedKey, KEY_PREFIXES, maskKey } from "../../src/api-keys/api-key.ts";
import type { DatabaseHandle } from "../../src/db/database.ts";
import { DomainError } from "../../src/errors.ts";
import { insertProvider, updateProvider } from "../../src/providers/provider.repository.ts";
import { openUnitDatabase } from "../helpers/unit-database.ts";

const crypto = createKeyCrypto("unit-test-master-secret-0123456789abcdef");

describe("key format", () => {
  it("is lp_live_/lp_test_ + 43 base62 characters + a 6-character checksum", () => {
    const live = generateKey();
    const test = generateKey("test");
    expect(live).toMatch(/^lp_live_[0-9A-Za-z]{49}$/);
    expect(test).toMatch(/^lp_test_[0-9A-Za-z]{49}$/);
    expect(KEY_PREFIXES).toEqual({ live: "lp_live_", test: "lp_test_" });
    expect(new Set(Array.from({ length: 50 }, () => generateKey())).size).toBe(50);
    // All of the alphabet turns up, and the body is not zero-padded junk.
    const bodies = Array.from({ length: 200 }, () => generateKey().slice(8, 51)).join("");
    expect(new Set(bodies).size).toBe(62);
  });

  it("is well-formed only with its own checksum, prefix and length", () => {
    const key = generateKey();
    expect(isWellFormedKey(key)).toBe(true);
    expect(isWellFormedKey(generateKey("test"))).toBe(true);
    const body = key.slice(8, 51);
    const sum = key.slice(51);
    const flip = (c: string) => (c === "A" ? "B" : "A");
    expect(isWellFormedKey(`lp_live_${flip(body[0] as string)}${body.slice(1)}${sum}`)).toBe(false); // a typo
    expect(isWellFormedKey(`lp_live_${body}${sum.slice(0, 5)}${flip(sum[5] as string)}`)).toBe(false);
    expect(isWellFormedKey(`lp_prod_${body}${sum}`)).toBe(false);
    expect(isWellFormedKey(`${key}A`)).toBe(false);
    expect(isWellFormedKey(key.slice(0, -1))).toBe(false);
    expect(isWellFormedKey(` ${key}`)).toBe(false);
    expect(isWellFormedKey(`lp_live_${body.slice(0, 42)}!${sum}`)).toBe(false);
    expect(isWellFormedKey("")).toBe(false);
    // The same body under the other prefix still checks (the checksum covers the body).
    expect(isWellFormedKey(`lp_test_${body}${sum}`)).toBe(true);
  });

  it("masks to the prefix, four characters, an ellipsis and the last four", () => {
    const key = "lp_live_3kTq9ZbW1xP0vR7mN2cL8sD4fG6hJ5yK9uE1oA3iQ7w4LSUy0";
    expect(maskKey(key)).toBe("lp_live_3kTq…SUy0");
  });
});

describe("key crypto", () => {
  it("digests deterministically per master secret, and encrypts so only it decrypts", () => {
    const key = generateKey();
    expect(crypto.digest(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(crypto.digest(key)).toBe(crypto.digest(key));
    expect(crypto.digest(key)).not.toBe(crypto.digest(generateKey()));
    const other = createKeyCrypto("another-master-secret-0123456789abcdef");
    expect(other.digest(key)).not.toBe(crypto.digest(key));
    const sealed = crypto.encrypt(key);
    expect(sealed).not.toContain(key.slice(8));
    expect(sealed.split(".")).toHaveLength(3);
    expect(crypto.encrypt(key)).not.toBe(sealed); // a fresh IV each time
    expect(crypto.decrypt(sealed)).toBe(key);
    expect(() => other.decrypt(sealed)).toThrow();
    const [iv, tag, data] = sealed.split(".") as [string, string, string];
    expect(() => crypto.decrypt(`${iv}.${tag}`)).toThrow("malformed key ciphertext");
    const tampered = Buffer.from(data, "base64url");
    tampered[0] = (tampered[0] as number) ^ 1;
    expect(() => crypto.decrypt(`${iv}.${tag}.${tampered.toString("base64url")}`)).toThrow();
  });
});

describe("the verifier", () => {
  let handle: DatabaseHandle;
  let clock = Date.UTC(2026, 10, 25, 12, 0, 0);
  const now = () => new Date(clock);
  let verifier: ApiKeyVerifier;
  let providerId: number;

  const issue = async (mode: "live" | "test" = "live", expiresAt: Date | null = null) => {
    const key = generateKey(mode);
    const row = await insertKey(handle.db, {
      providerId,
      mode,
      digest: crypto.digest(key),
      ciphertext: crypto.encrypt(key),
      masked: maskKey(key),
      expiresAt,
    });
    return { key, id: row.id };
  };
  const refusal = async (key: string | undefined) => {
    const err = await verifier.verify(key).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).kind).toBe("unauthenticated");
    return (err as DomainError).code;
  };
  const lastUsed = async (id: number) =>
    (await handle.db.selectFrom("api_keys").select("last_used_at").where("id", "=", id).executeTakeFirstOrThrow())
      .last_used_at;

  beforeAll(async () => {
    handle = await openUnitDatabase();
    providerId = (await insertProvider(
      handle.db,
      { name: "Unit Keys", rateLimitPerMinute: 7 },
      { perMinute: 60, perDay: 2000 },
    )) as number;
  });
  beforeEach(() => {
    verifier = createApiKeyVerifier({ db: handle.db, crypto, now, cacheTtlMs: 0 });
  });
  afterAll(() => handle.close());

  it("names the provider, the mode, the key and the limits of a good key", async () => {
    const live = await issue();
    expect(await verifier.verify(live.key)).toEqual({
      providerId,
      livemode: true,
      keyId: live.id,
      perMinute: 7,
      perDay: 2000,
    });
    const test = await issue("test");
    expect((await verifier.verify(test.key)).livemode).toBe(false);
  });

  it("refuses missing, malformed, unknown, revoked keys and inactive providers alike", async () => {
    expect(await refusal(undefined)).toBe("invalid_api_key");
    expect(await refusal("lp_live_nope")).toBe("invalid_api_key");
    expect(await refusal(generateKey())).toBe("invalid_api_key"); // well-formed, never issued
    const revoked = await issue();
    await retireKeys(handle.db, providerId, "live", new Date(clock - 1000));
    expect(await refusal(revoked.key)).toBe("invalid_api_key");
    // Revoked from a moment still to come: it works until then (a grace period).
    const graced = await issue();
    await retireKeys(handle.db, providerId, "live", new Date(clock + 60_000));
    expect((await verifier.verify(graced.key)).keyId).toBe(graced.id);
    clock += 60_000; // exactly at the revocation
    expect(await refusal(graced.key)).toBe("invalid_api_key");
    const active = await issue();
    await updateProvider(handle.db, providerId, { isActive: false });
    expect(await refusal(active.key)).toBe("invalid_api_key");
    await updateProvider(handle.db, providerId, { isActive: true });
    expect((await verifier.verify(active.key)).keyId).toBe(active.id);
  });

  it("says expired_api_key for a genuine key at or past its expiry", async () => {
    const soon = await issue("live", new Date(clock + 30_000));
    expect((await verifier.verify(soon.key)).keyId).toBe(soon.id);
    clock += 30_000;
    expect(await refusal(soon.key)).toBe("expired_api_key");
    await expect(verifier.verify(soon.key)).rejects.toThrow("the API key has expired");
    // Without an injected clock, the real one decides.
    const real = createApiKeyVerifier({ db: handle.db, crypto, cacheTtlMs: 0 });
    const past = await issue("live", new Date(Date.now() - 1000));
    await expect(real.verify(past.key)).rejects.toThrow("the API key has expired");
    const future = await issue("live", new Date(Date.now() + 60_000));
    expect((await real.verify(future.key)).keyId).toBe(future.id);
  });

  it("records each key's use on its own: one key's write never touches another", async () => {
    const a = await issue();
    const b = await issue();
    await verifier.verify(a.key);
    await verifier.flush();
    const aFirst = await lastUsed(a.id);
    clock += 61_000;
    await verifier.verify(b.key);
    await verifier.flush();
    expect((await lastUsed(b.id))?.getTime()).toBe(clock);
    expect((await lastUsed(a.id))?.getTime()).toBe(aFirst?.getTime());
  });

  it("reports a failed last_used_at write, and answers the request anyway", async () => {
    const errors: unknown[] = [];
    const cached = createApiKeyVerifier({
      db: handle.db,
      crypto,
      now,
      cacheTtlMs: 60_000,
      onTouchError: (e) => errors.push(e),
    });
    const k = await issue();
    await cached.verify(k.key);
    await cached.flush();
    const quiet = createApiKeyVerifier({ db: handle.db, crypto, now, cacheTtlMs: 60_000 });
    await quiet.verify(k.key);
    await quiet.flush();
    await handle.db.schema.alterTable("api_keys").renameTo("api_keys_away").execute();
    try {
      clock += 61_000;
      expect((await cached.verify(k.key)).keyId).toBe(k.id); // from the cache
      await cached.flush();
      expect(errors).toHaveLength(1);
      // Without an onTouchError hook the failure is swallowed, never an unhandled rejection.
      expect((await quiet.verify(k.key)).keyId).toBe(k.id);
      await expect(quiet.flush()).resolves.toBeUndefined();
    } finally {
      await handle.db.schema.alterTable("api_keys_away").renameTo("api_keys").execute();
    }
  });

  it("records last_used_at at most once a minute per key, by the injected clock", async () => {
    const k = await issue();
    expect(await lastUsed(k.id)).toBeNull();
    await verifier.verify(k.key);
    await verifier.flush();
    const first = await lastUsed(k.id);
    expect(first?.getTime()).toBe(clock);
    clock += 59_000;
    await verifier.verify(k.key);
    await verifier.flush();
    expect((await lastUsed(k.id))?.getTime()).toBe(first?.getTime());
    clock += 1_000; // a minute after the first
    await verifier.verify(k.key);
    await verifier.flush();
    expect((await lastUsed(k.id))?.getTime()).toBe(clock);
  });

  it("caches lookups for a few seconds by default, a refused one too, until forgotten", async () => {
    const byDefault = createApiKeyVerifier({ db: handle.db, crypto, now });
    const k = await issue();
    await byDefault.verify(k.key);
    await retireKeys(handle.db, providerId, "live", new Date(clock - 1));
    expect((await byDefault.verify(k.key)).keyId).toBe(k.id); // the cached lookup
    // A key that was unknown when looked up is remembered as unknown…
    const later = generateKey();
    await expect(byDefault.verify(later)).rejects.toThrow("the API key is missing or invalid");
    const row = await insertKey(handle.db, {
      providerId,
      mode: "live",
      digest: crypto.digest(later),
      ciphertext: crypto.encrypt(later),
      masked: maskKey(later),
      expiresAt: null,
    });
    await expect(byDefault.verify(later)).rejects.toThrow("the API key is missing or invalid");
    // …until any provider's keys change here, which forgets every unknown.
    byDefault.forgetProvider(providerId + 1000);
    expect((await byDefault.verify(later)).keyId).toBe(row.id);
  });

  it("caches lookups for cacheTtlMs and forgets a provider's keys on demand", async () => {
    const cached = createApiKeyVerifier({ db: handle.db, crypto, now, cacheTtlMs: 60_000 });
    const k = await issue();
    await cached.verify(k.key);
    await retireKeys(handle.db, providerId, "live", new Date(clock - 1));
    expect((await cached.verify(k.key)).keyId).toBe(k.id); // still cached
    cached.forgetProvider(providerId + 1000); // another provider: no effect
    expect((await cached.verify(k.key)).keyId).toBe(k.id);
    cached.forgetProvider(providerId);
    await expect(cached.verify(k.key)).rejects.toThrow("the API key is missing or invalid");
  });
});
